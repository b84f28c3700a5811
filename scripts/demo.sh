#!/usr/bin/env bash
# The main job: set up, then prove the DeepSeek V4 MXFP4 exponent fold
# (208/208 FP16 bit patterns equal) and write its report to out/.
# Builds only the command it runs (`bitproof`: no test suites, no CUDA kernels);
# scripts/test.sh builds and runs everything else in the same build/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --target bitproof >/dev/null
mkdir -p out
build/bitproof prove proofs/dsv4-mxfp4-fp16-fold.json \
  --report out/dsv4-mxfp4-fp16-fold.json --markdown out/dsv4-mxfp4-fp16-fold.md
echo "report: out/dsv4-mxfp4-fp16-fold.json (Markdown: out/dsv4-mxfp4-fp16-fold.md)"
echo "where the fold stays exact: build/bitproof domain proofs/dsv4-mxfp4-fp16-fold.json"
