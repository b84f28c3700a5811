#!/usr/bin/env bash
# Runs one bitproof command and checks what a user would see.
#   check.sh RC PATTERN [--absent FILE] -- COMMAND...
# RC: the exit code demanded. For RC 2 and 3, stderr must be exactly one line
# matching PATTERN (an extended regex) and stdout empty; otherwise stdout must
# match PATTERN. --absent: a file that must not exist afterwards (no
# half-written report).
set -u
want_rc=$1 pattern=$2
shift 2
absent=""
if [ "${1:-}" = "--absent" ]; then absent=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
[ -n "$absent" ] && rm -f "$absent"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
fail() { echo "FAIL: $*"; echo "--- command: $*"; echo "--- stdout:"; head -20 "$out"; echo "--- stderr:"; head -20 "$err"; exit 1; }
[ "$rc" = "$want_rc" ] || fail "exit code $rc, expected $want_rc"
if [ "$want_rc" = 2 ] || [ "$want_rc" = 3 ]; then
  [ "$(wc -l <"$err")" = 1 ] || fail "stderr is not exactly one line"
  [ -s "$out" ] && fail "stdout is not empty"
  grep -qE -- "$pattern" "$err" || fail "stderr does not match: $pattern"
else
  grep -qE -- "$pattern" "$out" || fail "stdout does not match: $pattern"
fi
if [ -n "$absent" ] && [ -e "$absent" ]; then fail "$absent was written"; fi
echo "ok: exit $rc, $(head -c 200 "$([ "$want_rc" = 2 ] || [ "$want_rc" = 3 ] && echo "$err" || echo "$out")" | head -1)"
