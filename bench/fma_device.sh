#!/usr/bin/env bash
# On a GPU machine (issue 18): the double-rounding table (all 2^32 pairs of FP16 / BF16
# add, subtract, multiply against the FP32 route) and the FMA routes over all 2^48
# FP16 and BF16 triples, with `bitproof prove --backend cuda`. Writes reports and logs
# to $OUT (default ./fma-device-out) and prints a summary last (also $OUT/summary.txt).
#
#   BIN=<dir with bitproof> bench/fma_device.sh [table|fma|all]     (default all)
#
# The 2^48 domain is swept as slices of the addend c (--codes c=LO:HI): one slice of
# $C_STEP codes (default 256) is 2^16 · 2^16 · C_STEP cases (2^40 at 256), small enough for
# the chunk-sum bookkeeping of one process (2^24 chunks: ~1.6 GB on the device and the
# host; a single 2^48 run would need 2^32 chunks, ~400 GB: see docs/fma.md). Slices
# C_FIRST .. C_LAST (codes, default 0 .. 65535) let a short lease run part of it and a later
# one the rest. FORMATS (default "fp16 bf16"). Each slice's claim counts go to
# $OUT/fma/<format>-c<LO>.json; scripts-free totals: the last lines of the summary
# (python3, standard library) add them up per claim over the slices present.
# Time per slice depends on the model check (SoftArith on the device, every case) and the
# fast-math image: measure one slice first (C_FIRST=0 C_LAST=255) and extrapolate.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build}
OUT=${OUT:-fma-device-out}
WHAT=${1:-all}
BP=$BIN/bitproof
[ -x "$BP" ] || { echo "fma_device.sh: $BP not found (BIN=<build dir>)" >&2; exit 2; }
mkdir -p "$OUT/table" "$OUT/fma"
. bench/steps.sh

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $("$BP" --version)"

if [ "$WHAT" = table ] || [ "$WHAT" = all ]; then
  for spec in fp16-hmul-vs-fp32-round fp16-hadd-vs-fp32-round fp16-hsub-vs-fp32-round \
              bf16-badd-vs-fp32-round bf16-bsub-vs-fp32-round bf16-bmul-vs-fp32-round; do
    step "table_$spec" 300 "$BP" prove "proofs/$spec.json" --backend cuda --report "$OUT/table/$spec.json" \
      --markdown "$OUT/table/$spec.md"
    grep -vE "^  " "$OUT/table_$spec.log" | head -6 | tee -a "$OUT/summary.txt"
  done
fi

if [ "$WHAT" = fma ] || [ "$WHAT" = all ]; then
  c_step=${C_STEP:-256}
  for format in ${FORMATS:-fp16 bf16}; do
    for ((lo = ${C_FIRST:-0}; lo <= ${C_LAST:-65535}; lo += c_step)); do
      hi=$((lo + c_step - 1))
      [ "$hi" -gt 65535 ] && hi=65535
      name=$(printf "%s-c%05d" "$format" "$lo")
      step "fma_$name" 600 "$BP" prove "proofs/$format-fma-routes.json" --backend cuda --codes "c=$lo:$hi" \
        --keep 16 --report "$OUT/fma/$name.json"
      grep -vE "^  " "$OUT/fma_$name.log" | head -6 | tee -a "$OUT/summary.txt"
    done
  done
  # Totals per claim over the slices present (a refuted claim's count is the finding's "refuted").
  python3 - "$OUT/fma" <<'EOF' | tee -a "$OUT/summary.txt"
import glob, json, os, sys
totals = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    fmt = os.path.basename(path).split("-c")[0]
    result = json.load(open(path))["result"]
    for i, claim in enumerate(result["claims"]):
        key = (fmt, i, " = ".join(claim.get("recipes", [])) if isinstance(claim.get("recipes"), list) else str(i))
        t = totals.setdefault(key, {"slices": 0, "cases": 0, "holding": 0, "kinds": {}})
        t["slices"] += 1
        t["cases"] += claim["cases"]
        t["holding"] += claim["holding"]
        for kind, n in claim.get("by_kind", {}).items():
            t["kinds"][kind] = t["kinds"].get(kind, 0) + n
for (fmt, i, recipes), t in sorted(totals.items()):
    print(f"{fmt} claim {i} ({recipes}): {t['holding']}/{t['cases']} hold over {t['slices']} slices; "
          f"refuted {t['cases'] - t['holding']} {t['kinds']}")
EOF
fi
log "done: $OUT"
