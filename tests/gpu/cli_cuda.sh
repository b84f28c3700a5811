#!/usr/bin/env bash
# bitproof prove SPEC --backend cuda, as a user runs it:
#   with a GPU:    exit 0, "208/208 ... (cuda sm_XY)", the three-way line, a report
#                  whose backends name the GPU and hash the kernel image;
#   without one:   exit 3, exactly one line on stderr, nothing on stdout; then
#                  exit 77 so ctest counts the GPU part as skipped.
set -u
bp=$1 spec=$2
out=$(mktemp) err=$(mktemp) report=$(mktemp --suffix=.json)
trap 'rm -f "$out" "$err" "$report"' EXIT
"$bp" prove "$spec" --backend cuda --report "$report" >"$out" 2>"$err"
rc=$?
if [ "$rc" = 3 ]; then
  [ "$(wc -l <"$err")" = 1 ] || { echo "FAIL: exit 3 but stderr is not one line"; cat "$err"; exit 1; }
  [ -s "$out" ] && { echo "FAIL: exit 3 but stdout is not empty"; exit 1; }
  grep -qE "^bitproof: error: --backend cuda: " "$err" || { echo "FAIL: unexpected message"; cat "$err"; exit 1; }
  echo "skipped: no CUDA device ($(cat "$err"))"
  exit 77
fi
[ "$rc" = 0 ] || { echo "FAIL: exit $rc"; cat "$out" "$err"; exit 1; }
grep -qE "208/208 bit patterns equal \(cuda sm_[0-9]+\)$" "$out" || { echo "FAIL: no 208/208 line"; cat "$out"; exit 1; }
grep -qE "hardware ≡ soft model on all 416 recipe evaluations" "$out" || { echo "FAIL: no three-way line"; cat "$out"; exit 1; }
python3 - "$report" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
cuda = r["backends"][0]
assert cuda["name"] == "cuda", cuda["name"]
info = cuda["info"]
assert len(info["kernel_image"]["sha256"]) == 64
for key in ("name", "compute_capability", "driver_version", "runtime_version"):
    assert info["device"][key], key
assert r["agreement"]["holds"] is True
print("ok:", info["device"]["name"], info["device"]["compute_capability"], info["kernel_image"]["sha256"][:16])
PY
cat "$out"
