#!/bin/sh
# Regenerates the catalogue's committed reports and docs/catalogue.md with the built tool:
#   scripts/catalogue-reports.sh [BITPROOF]      (default: build/bitproof)
# For every proofs/<name>.json of the catalogue: reports/<name>.json + .md (prove) and
# reports/<name>.domain.json (domain over the spec's `scale` input, else `element`);
# llama-mxfp4-fp32 also gets reports/llama-mxfp4-fp32.element.domain.json.
set -u
BP=${1:-build/bitproof}
cd "$(dirname "$0")/.."
for spec in $(/usr/bin/python3 scripts/catalogue.py --specs); do
  name=$(basename "$spec" .json)
  "$BP" prove "$spec" --report "reports/$name.json" --markdown "reports/$name.md" > /dev/null
  echo "prove  $name: exit $?"
  over=element
  grep -q '"name": *"scale"' "$spec" && over=scale
  "$BP" domain "$spec" --over "$over" --report "reports/$name.domain.json" > /dev/null
  echo "domain $name (over $over): exit $?"
done
"$BP" domain proofs/llama-mxfp4-fp32.json --over element --report reports/llama-mxfp4-fp32.element.domain.json > /dev/null
echo "domain llama-mxfp4-fp32 (over element): exit $?"
/usr/bin/python3 scripts/catalogue.py --write docs/catalogue.md
