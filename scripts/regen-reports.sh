#!/bin/sh
# Regenerates every committed report in reports/ with the built tool, then
# docs/catalogue.md:   scripts/regen-reports.sh [BITPROOF]   (default build/bitproof)
# For each proofs/<name>.json with a committed reports/<name>.json: the proof
# report and its Markdown (CPU backend), the domain report over the input the
# committed domain report sweeps (else `scale`, else `element`), and the SVG map.
set -u
BP=${1:-build/bitproof}
cd "$(dirname "$0")/.."
for report in reports/*.json; do
  name=$(basename "$report" .json)
  spec=proofs/$name.json
  [ -f "$spec" ] || continue
  "$BP" prove "$spec" --backend cpu --report "reports/$name.json" --markdown "reports/$name.md" > /dev/null
  echo "prove  $name: exit $?"
  # The swept input: as the committed domain report has it, else scale, else element.
  over=element
  grep -q '"name": *"scale"' "$spec" && over=scale
  if [ -f "reports/$name.domain.json" ]; then
    over=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["over"]["input"])' \
      "reports/$name.domain.json" 2>/dev/null || echo "$over")
  fi
  "$BP" domain "$spec" --over "$over" --report "reports/$name.domain.json" > /dev/null
  echo "domain $name (over $over): exit $?"
  "$BP" report render "reports/$name.domain.json" --svg "reports/$name.svg" > /dev/null 2>&1 || rm -f "reports/$name.svg"
done
"$BP" domain proofs/llama-mxfp4-fp32.json --over element --report reports/llama-mxfp4-fp32.element.domain.json > /dev/null
/usr/bin/python3 scripts/catalogue.py --write docs/catalogue.md
