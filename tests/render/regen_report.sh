#!/usr/bin/env bash
# Regenerates the committed reports of one proof spec and compares them:
#   regen_report.sh BITPROOF SOURCE_DIR NAME OUT_DIR
# reports/NAME.json          result part byte-identical to a fresh `prove` (CPU)
# reports/NAME.domain.json   result part byte-identical to a fresh `domain`, if committed
# reports/NAME.md, .svg      byte-identical to `report render` of the committed JSON, if committed
set -uo pipefail
bp=$1 src=$2 name=$3 out=$4
py=/usr/bin/python3
[ -x "$py" ] || py=python3
same=$src/tests/cli/same_result.py
spec=$src/proofs/$name.json
status=0
mkdir -p "$out"

"$bp" prove "$spec" --backend cpu --report "$out/$name.json" >/dev/null
rc=$?
if [ "$rc" -ne 0 ]; then echo "FAIL: prove $name exited $rc (every committed spec must pass: claims hold, findings refuted as recorded)"; exit 1; fi
"$py" "$same" "$src/reports/$name.json" "$out/$name.json" || status=1

if [ -f "$src/reports/$name.domain.json" ]; then
  over=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["over"]["input"])' "$src/reports/$name.domain.json")
  "$bp" domain "$spec" --over "$over" --report "$out/$name.domain.json" >/dev/null
  [ $? -gt 1 ] && { echo "FAIL: domain $name"; exit 1; }
  "$py" "$same" "$src/reports/$name.domain.json" "$out/$name.domain.json" || status=1
fi
for kind in md svg; do
  committed=$src/reports/$name.$kind
  [ -f "$committed" ] || continue
  flag=--markdown
  [ "$kind" = svg ] && flag=--svg
  source=$src/reports/$name.json
  [ "$kind" = svg ] && [ -f "$src/reports/$name.domain.json" ] && source=$src/reports/$name.domain.json
  "$bp" report render "$source" "$flag" "$out/$name.$kind" >/dev/null || { echo "FAIL: render $name.$kind"; exit 1; }
  if cmp -s "$committed" "$out/$name.$kind"; then
    echo "$name.$kind: identical"
  else
    echo "FAIL: reports/$name.$kind differs from its rendering:"; diff "$committed" "$out/$name.$kind" | head -5; status=1
  fi
done
exit $status
