#!/usr/bin/env bash
# The hand-off to the CUDA twin (src/cli/cuda_twin.hpp), with a fake twin that
# records its arguments and exits 7:
#   --backend cuda       -> the twin runs, with exactly our arguments; its stdout
#                           and exit code are the command's;
#   --backend all        -> the twin runs where a libcuda.so.1 is on LD_LIBRARY_PATH,
#                           and not where no driver can be (this machine, unless it has one);
#   --backend cpu        -> never;
#   no twin              -> the command runs here (exit 3 for cuda, "(cpu)" for all);
#   a twin that cannot start -> exit 3, one line naming it.
#   cuda_twin.sh BITPROOF SPEC HAS_CUDA_BUILT_IN(0/1)
set -u
bp=$1 spec=$2 built_in=$3
if [ "$built_in" = 1 ]; then
  echo "skipped: this bitproof has the CUDA backend built in; it hands nothing off"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$dir/twin" <<SH
#!/bin/sh
printf '%s\n' "\$@" >"$dir/args"
echo "twin ran"
exit 7
SH
chmod +x "$dir/twin"
mkdir "$dir/lib" && : >"$dir/lib/libcuda.so.1"
driver_here=0
{ [ -e /proc/driver/nvidia ] || [ -e /dev/nvidiactl ] || [ -e /dev/dxg ]; } && driver_here=1

out=$(BITPROOF_CUDA_TWIN="$dir/twin" "$bp" prove "$spec" --backend cuda --keep 3 2>&1)
rc=$?
[ "$rc" = 7 ] || fail "--backend cuda: exit $rc, not the twin's 7: $out"
[ "$out" = "twin ran" ] || fail "--backend cuda: stdout is not the twin's: $out"
printf '%s\n' prove "$spec" --backend cuda --keep 3 | cmp -s - "$dir/args" || fail "the twin got other arguments: $(cat "$dir/args")"

rm -f "$dir/args"
LD_LIBRARY_PATH="$dir/lib" BITPROOF_CUDA_TWIN="$dir/twin" "$bp" prove "$spec" >/dev/null 2>&1
rc=$?
[ "$rc" = 7 ] || fail "--backend all with a libcuda.so.1 on LD_LIBRARY_PATH: exit $rc, no hand-off"

if [ "$driver_here" = 0 ]; then
  out=$(BITPROOF_CUDA_TWIN="$dir/twin" "$bp" prove "$spec" --backend all 2>&1)
  rc=$?
  [ "$rc" = 0 ] || fail "--backend all without a driver: exit $rc: $out"
  echo "$out" | grep -q "208/208 bit patterns equal (cpu)$" || fail "--backend all without a driver did not run here: $out"
fi

out=$(BITPROOF_CUDA_TWIN="$dir/twin" LD_LIBRARY_PATH="$dir/lib" "$bp" prove "$spec" --backend cpu 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "--backend cpu: exit $rc: $out"
echo "$out" | grep -q "208/208 bit patterns equal (cpu)$" || fail "--backend cpu was handed off: $out"

if [ "$driver_here" = 0 ]; then
  err=$(BITPROOF_CUDA_TWIN="$dir/none" "$bp" prove "$spec" --backend cuda 2>&1 >/dev/null)
  rc=$?
  [ "$rc" = 3 ] || fail "--backend cuda with no twin: exit $rc"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "--backend cuda with no twin: not one line: $err"
fi

# A twin without the CUDA backend (here: this very binary) runs the command
# itself after one hand-off, instead of starting itself for ever.
err=$(BITPROOF_CUDA_TWIN="$bp" timeout 10 "$bp" prove "$spec" --backend cuda 2>&1 >/dev/null)
rc=$?
[ "$rc" = 3 ] || fail "a twin without CUDA: exit $rc (124: it kept handing off): $err"
echo "$err" | grep -q "built without the CUDA backend" || fail "a twin without CUDA: $err"

printf 'not a program\n' >"$dir/broken" && chmod +x "$dir/broken"
err=$(BITPROOF_CUDA_TWIN="$dir/broken" "$bp" prove "$spec" --backend cuda 2>&1 >/dev/null)
rc=$?
[ "$rc" = 3 ] || fail "a twin that cannot start: exit $rc: $err"
echo "$err" | grep -q "^bitproof: error: --backend cuda: cannot start the CUDA twin $dir/broken: " ||
  fail "a twin that cannot start: $err"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "a twin that cannot start: not one line: $err"
echo "ok: cuda and all (with a driver) hand off with our arguments; cpu, and all without a driver, run here"
