#!/usr/bin/env bash
# What action.yml runs to prove a repository's specs; also usable in any CI.
#
# Proves every spec that SPECS matches with `$BITPROOF prove SPEC --backend $BACKEND $ARGS`,
# writing OUT_DIR/<name>.json (report), .md (Markdown), .xml (JUnit) and .log (what it printed),
# where <name> is the spec's path without .json, '/' replaced by '.'. Then writes
#   OUT_DIR/summary.md  a table of every spec's outcome and each spec's Markdown report; its
#                       first line is the hidden marker <!-- bitproof:COMMENT_KEY -->
#   OUT_DIR/comment.md  the same, cut to at most MAX_COMMENT bytes (a PR comment's limit)
# and appends summary.md (up to 1 MB, the job summary's limit) to $GITHUB_STEP_SUMMARY and
# key=value lines (status, total, passed, refuted, bad, skipped, marker, and the absolute paths
# summary and comment) to $GITHUB_OUTPUT, each only when that variable is set.
#
# Exit status: 2 when a spec is bad input, no spec matches, or BITPROOF does not run;
# else 1 when a claim is refuted; else 3 when FAIL_ON_SKIP=true and a spec's backend is
# missing here (bitproof's exit 3; otherwise listed as skipped); else 0.
#
# Environment: BITPROOF (default: bitproof on PATH); SPECS (whitespace-separated globs,
# `**` allowed, default proofs/*.json); BACKEND (cpu|cuda|all, default cpu); ARGS (more prove
# arguments, split on whitespace); OUT_DIR (default bitproof-out); COMMENT_KEY (default
# bitproof); FAIL_ON_SKIP (default false); MAX_COMMENT (default 60000); ALLOW_USER_CODE
# (default false: BITPROOF_NO_USER_CODE=1, so a spec with user recipes, C++ that would be
# compiled and run here with this job's rights, is bad input; true: they run); PR_NUMBER
# (a pull request's number, written to OUT_DIR/pr-number for a workflow_run comment job).
set -uo pipefail
shopt -s nullglob globstar

bitproof=${BITPROOF:-bitproof}
specs_globs=${SPECS:-proofs/*.json}
backend=${BACKEND:-cpu}
out=${OUT_DIR:-bitproof-out}
key=${COMMENT_KEY:-bitproof}
max_comment=${MAX_COMMENT:-60000}
marker="<!-- bitproof:${key} -->"

die() {
  echo "prove.sh: $*" >&2
  [ -z "${GITHUB_OUTPUT:-}" ] || echo "status=2" >>"$GITHUB_OUTPUT"
  exit 2
}

case "$backend" in cpu | cuda | all) ;; *) die "BACKEND=$backend: expected cpu, cuda or all" ;; esac
case "${ALLOW_USER_CODE:-false}" in
  true) ;;
  false) export BITPROOF_NO_USER_CODE=1 ;;
  *) die "ALLOW_USER_CODE=$ALLOW_USER_CODE: expected true or false" ;;
esac
pr_number=${PR_NUMBER:-}
[[ -z "$pr_number" || "$pr_number" =~ ^[1-9][0-9]{0,9}$ ]] || die "PR_NUMBER=$pr_number: expected a pull request number"
version=$("$bitproof" --version 2>&1) || die "cannot run $bitproof: $version"
mkdir -p "$out" || die "cannot make $out"
out_abs=$(cd "$out" && pwd)
[ -z "$pr_number" ] || echo "$pr_number" >"$out/pr-number"

specs=()
read -r -a globs <<<"$specs_globs"
for g in "${globs[@]}"; do
  # shellcheck disable=SC2206  # the glob is meant to expand here
  matched=($g)
  specs+=("${matched[@]}")
done
[ ${#specs[@]} -gt 0 ] || die "no spec matches SPECS=\"$specs_globs\" (in $PWD)"

read -r -a extra <<<"${ARGS:-}"
declare -A seen=()
rows=""
reports=""
passed=0 refuted=0 bad=0 skipped=0
for spec in "${specs[@]}"; do
  name=${spec#./}
  name=${name%.json}
  name=${name//\//.}
  [ -z "${seen[$name]:-}" ] || die "two specs map to the name $name: ${seen[$name]} and $spec"
  seen[$name]=$spec
  rc=0
  "$bitproof" prove "$spec" --backend "$backend" --report "$out/$name.json" --markdown "$out/$name.md" \
    --junit "$out/$name.xml" "${extra[@]}" >"$out/$name.log" 2>&1 || rc=$?
  cat "$out/$name.log"
  case $rc in
    0) outcome="holds" passed=$((passed + 1)) ;;
    1) outcome="**refuted**" refuted=$((refuted + 1)) ;;
    3) outcome="skipped (backend $backend missing here)" skipped=$((skipped + 1)) ;;
    *)
      detail=$(grep -m1 'error' "$out/$name.log" | tr '|' '/' | cut -c1-300)
      outcome="**bad input**: ${detail:-exit $rc}"
      bad=$((bad + 1))
      ;;
  esac
  rows+="| \`$spec\` | $outcome | $rc |"$'\n'
  if [ -s "$out/$name.md" ]; then
    reports+=$'\n'"<details><summary>$spec</summary>"$'\n\n'"$(cat "$out/$name.md")"$'\n\n'"</details>"$'\n'
  fi
done

total=${#specs[@]}
if [ $bad -gt 0 ]; then
  status=2
elif [ $refuted -gt 0 ]; then
  status=1
elif [ $skipped -gt 0 ] && [ "${FAIL_ON_SKIP:-false}" = "true" ]; then
  status=3
else
  status=0
fi
verdict="all hold"
[ $status -eq 0 ] && [ $skipped -gt 0 ] && verdict="hold where run"
[ $status -ne 0 ] && verdict="FAILED"

{
  echo "$marker"
  echo "## bitproof: $verdict"
  echo
  echo "$total specs: $passed hold, $refuted refuted, $bad bad input, $skipped skipped (backend \`$backend\`; ${version%%$'\n'*})"
  echo
  echo "| spec | result | exit |"
  echo "|---|---|---|"
  printf '%s' "$rows"
  printf '%s' "$reports"
} >"$out/summary.md"

# Cut at a line boundary below the limit, with a note; the marker stays the first line.
cut_to() {
  local file=$1 limit=$2 note=$3
  if [ "$(wc -c <"$file")" -le "$limit" ]; then
    cat "$file"
    return
  fi
  head -c $((limit - ${#note} - 2)) "$file" | sed '$d'
  printf '\n%s\n' "$note"
}
cut_to "$out/summary.md" "$max_comment" \
  "_(cut to fit a comment: the job summary and the reports artifact have everything)_" >"$out/comment.md"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cut_to "$out/summary.md" 1000000 "_(cut to the job summary's limit: the reports artifact has everything)_" \
    >>"$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "status=$status"
    echo "total=$total"
    echo "passed=$passed"
    echo "refuted=$refuted"
    echo "bad=$bad"
    echo "skipped=$skipped"
    echo "summary=$out_abs/summary.md"
    echo "comment=$out_abs/comment.md"
    echo "marker=$marker"
  } >>"$GITHUB_OUTPUT"
fi
echo "bitproof: $total specs: $passed hold, $refuted refuted, $bad bad input, $skipped skipped"
exit $status
