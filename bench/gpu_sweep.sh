#!/usr/bin/env bash
# On a GPU machine: the GPU tests, the CLI proofs on every backend, compute-
# sanitizer memcheck on the GPU test binary, and the 2^32 benchmark against the
# PyTorch peer, in one go (a device lease is short). Writes logs to $OUT (or
# ./gpu-sweep-out) and prints a summary last.
#
#   BIN=<dir with bitproof_gpu_tests [and bitproof, bitproof-cuda]> bench/gpu_sweep.sh
#
# BIN defaults to build/; QUICK=1 skips the PyTorch peer and memcheck, SKIP_TORCH=1 the peer. LD_LIBRARY_PATH may point at carried libraries
# (libfmt.so.9, libcrypto.so.3) where the machine lacks Debian's.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build}
OUT=${OUT:-gpu-sweep-out}
GPU_TESTS=$BIN/bitproof_gpu_tests
[ -x "$GPU_TESTS" ] || GPU_TESTS=$BIN/tests/gpu/bitproof_gpu_tests
mkdir -p "$OUT"
. bench/steps.sh

log "machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; uname -r;
  grep -m1 "model name" /proc/cpuinfo; nproc; grep -o -w 'avx512f\|avx512fp16' /proc/cpuinfo | sort -u | tr '\n' ' ';
  echo; compute-sanitizer --version | tail -1; python3 -c 'import torch; print("torch", torch.__version__)'; } \
  2>&1 | tee -a "$OUT/summary.txt"

step gpu_tests 300 "$GPU_TESTS" -s
grep -E "test cases|assertions|ERROR|MESSAGE: .*(cuda|hold)" "$OUT/gpu_tests.log" | head -60 | tee -a "$OUT/summary.txt"

# The proofs on both backends (bitproof_gpu_tests --prove prints them as `bitproof prove` does).
step prove_dsv4 60 "$GPU_TESTS" --prove proofs/dsv4-mxfp4-fp16-fold.json
cat "$OUT/prove_dsv4.log" | tee -a "$OUT/summary.txt"
step prove_controls 120 "$GPU_TESTS" --prove tests/gpu/specs/fp16-hmul-controls.json
grep -v "^cpu: \|^cuda: " "$OUT/prove_controls.log" | head -40 | tee -a "$OUT/summary.txt"
# The 2^32 claim; the claim sweep kernel timed over 20 launches.
step bench_bitproof 120 "$GPU_TESTS" --prove proofs/fp16-hmul-vs-fp32-round.json 20
cat "$OUT/bench_bitproof.log" | tee -a "$OUT/summary.txt"
# The same claim with the kernels linked for its two recipes alone (--specialize on).
step bench_specialized 120 "$GPU_TESTS" --prove proofs/fp16-hmul-vs-fp32-round.json 20 specialized
grep -o '"kernels":{[^}]*}\|"sweep":{[^}]*}' "$OUT/bench_specialized.log" | tee -a "$OUT/summary.txt"
# The hand-written peer in the same run, and the claim kernel against its last
# recorded figure (bench/gpu_recorded.json): a regression shows here when it happens.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O3 -arch=sm_90 -o "$OUT/gpu_peer_hand" bench/gpu_peer_hand.cu     >"$OUT/peer_hand_build.log" 2>&1
  step bench_hand 60 "$OUT/gpu_peer_hand"
fi
python3 bench/gpu_ratio.py "$OUT/bench_bitproof.log" "$OUT/bench_specialized.log" "$OUT/bench_hand.log" \
  bench/gpu_recorded.json | tee -a "$OUT/summary.txt"
# The same 2^32 claim with a user recipe (bench/user-hmul: a user's __hmul through NVRTC), 20 launches.
step bench_user 300 "$GPU_TESTS" --prove bench/user-hmul/proof.json 20
cat "$OUT/bench_user.log" | tee -a "$OUT/summary.txt"
if [ -x "$BIN/bitproof" ]; then
  step cli_cuda 60 tests/gpu/cli_cuda.sh "$BIN/bitproof" proofs/dsv4-mxfp4-fp16-fold.json
  cat "$OUT/cli_cuda.log" | tee -a "$OUT/summary.txt"
fi
if [ -x "$BIN/bitproof" ]; then
  # Shards on the GPU merge to the CPU's whole result (copy-back and on-device domains).
  step shards_cuda 300 tests/gpu/shards_cuda.sh "$BIN/bitproof" "$OUT/shards-cuda" tests/cli/data/shardable.json \
    proofs/fp16-hmul-vs-fp32-round.json
  cat "$OUT/shards_cuda.log" | tee -a "$OUT/summary.txt"
  # Shards on every backend (cpu and cuda sweep each slice and must agree), N = 1, 2, 3, 7.
  "$BIN/bitproof" prove tests/cli/data/shardable.json --backend cpu --report "$OUT/shard-whole.json" --quiet
  for n in 1 2 3 7; do
    step "shards_all_$n" 120 tests/render/shards.sh "$BIN/bitproof" tests/cli/data/shardable.json "$n" \
      "$OUT/shards-all-$n" "$OUT/shard-whole.json"
    tail -1 "$OUT/shards_all_$n.log" | tee -a "$OUT/summary.txt"
  done
  # Every committed proof on every backend: the summary lines and the backends' agreement.
  mkdir -p "$OUT/reports"
  for spec in proofs/*.json; do
    name=$(basename "$spec" .json)
    # Issue 18's domains: 2^48 triples (4-6 minutes each on one GPU: bench/fma_device.sh whole),
    # and 2^32 pairs of recipes the CPU sweeps only one case at a time (GPU only here).
    backend=all
    case "$name" in
      *-fma-routes | *-fma-*-route | *-fma-rto | *-hfma-exact | *-bfma-exact) continue ;;
      fp16-hadd-vs-fp32-round | fp16-hsub-vs-fp32-round | bf16-b*-vs-fp32-round) backend=cuda ;;
    esac
    step "proof_$name" 300 "$BIN/bitproof" prove "$spec" --backend "$backend" --report "$OUT/reports/$name.json"
    grep -vE "^  " "$OUT/proof_$name.log" | head -12 | tee -a "$OUT/summary.txt"
  done
fi
if [ "${QUICK:-0}" = 1 ]; then log "QUICK=1: torch peer and memcheck skipped"; exit 0; fi
if [ "${SKIP_TORCH:-0}" != 1 ]; then
  step bench_torch 180 python3 bench/gpu_peer_torch.py 1024 5
  tail -1 "$OUT/bench_torch.log" | tee -a "$OUT/summary.txt"
fi

step memcheck 240 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
  "$GPU_TESTS" --test-case-exclude='2^32*'
tail -6 "$OUT/memcheck.log" | tee -a "$OUT/summary.txt"
step memcheck_prove 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$GPU_TESTS" --prove proofs/dsv4-mxfp4-fp16-fold.json
tail -4 "$OUT/memcheck_prove.log" | tee -a "$OUT/summary.txt"
