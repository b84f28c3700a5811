#!/usr/bin/env bash
# The progress bar: on stderr only, erased at the end, never with --quiet, never
# when stderr is not a terminal (unless BITPROOF_PROGRESS=always), and it never
# changes stdout.   progress.sh BITPROOF SPEC OVER   (SPEC: several chunks; OVER: the input domain sweeps)
set -u
bp=$1 spec=$2 over=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bp" prove "$spec" --backend cpu >"$dir/plain.out" 2>"$dir/plain.err" || fail "plain run: exit $?"
[ -s "$dir/plain.err" ] && fail "stderr is not a terminal, yet something was drawn: $(head -c 200 "$dir/plain.err")"
BITPROOF_PROGRESS=always "$bp" prove "$spec" --backend cpu >"$dir/bar.out" 2>"$dir/bar.err" || fail "bar run: exit $?"
cmp -s "$dir/plain.out" "$dir/bar.out" || fail "the bar changed stdout"
grep -qE "\[[#.]{24}\] +[0-9]+%  [0-9.e+]+ of [0-9.e+]+ cases" "$dir/bar.err" || fail "no bar on stderr: $(head -c 200 "$dir/bar.err")"
[ "$(tail -c 4 "$dir/bar.err" | od -An -tx1 | tr -d ' \n')" = "0d1b5b4b" ] || fail "the bar is not erased at the end"
BITPROOF_PROGRESS=always "$bp" prove "$spec" --backend cpu --quiet >/dev/null 2>"$dir/quiet.err" || fail "quiet run: exit $?"
[ -s "$dir/quiet.err" ] && fail "--quiet drew a bar"
BITPROOF_PROGRESS=always "$bp" domain "$spec" --over "$over" >/dev/null 2>"$dir/domain.err"
grep -q "domain over" "$dir/domain.err" || fail "no bar for domain discovery"
echo "ok: bar drawn and erased on stderr; none without a terminal or with --quiet; stdout unchanged"
