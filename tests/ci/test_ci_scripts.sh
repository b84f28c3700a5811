#!/usr/bin/env bash
# shellcheck disable=SC2015,SC2016  # ok never fails; the patterns are literal
# Usage: tests/ci/test_ci_scripts.sh PART BITPROOF SOURCE_DIR WORK_DIR [TARBALL]
# The shell logic action.yml runs, on this machine, with fake GITHUB_* files:
#   PART prove:   scripts/ci/prove.sh on specs that hold, are refuted, are bad input, match
#                 nothing, or need a missing backend: exit status, outputs, summary, comment cut;
#                 user recipes refused unless ALLOW_USER_CODE=true (nothing of theirs compiled);
#                 PR_NUMBER written for the workflow_run comment job.
#   PART key:     scripts/ci/cache-key.sh: stable, content-based, blind to docs, changed by a
#                 source file or the backend flavour.
#   PART install: scripts/ci/install-bitproof.sh from the cpack tarball TARBALL (file://), its
#                 SHA-256 check (required, 64 hex digits) and refusals; then prove.sh with the
#                 installed command on a user recipe (the GPU-less runner's route).
#   PART release: scripts/ci/release-packages.sh (what .github/workflows/release.yml runs) on the
#                 build directory given as TARBALL's place: the .tar.gz, the .deb and SHA256SUMS;
#                 the .deb's tree (under /usr) proves a user recipe; a tag that is not the version,
#                 and a used output directory, are refused.
# Exit 0 when every check holds; 1 otherwise (each failure printed).
set -uo pipefail
part=$1 bitproof=$2 src=$3 work=$4 tarball=${5:-}
ci="$src/scripts/ci"
fails=0
ok() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  fails=$((fails + 1))
}
# expect RC WHAT -- CMD...: CMD exits RC.
expect() {
  local want=$1 what=$2
  shift 3
  "$@" >"$work/last.log" 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else
    fail "$what: exit $rc, expected $want"
    sed 's/^/    /' "$work/last.log" | tail -20
  fi
}
# has FILE PATTERN WHAT: FILE has a line matching the extended regex PATTERN.
has() { if grep -Eq -- "$2" "$1"; then ok "$3"; else fail "$3: no /$2/ in $1"; fi; }
hasnt() { if grep -Eq -- "$2" "$1"; then fail "$3: /$2/ in $1"; else ok "$3"; fi; }

rm -rf "$work"
mkdir -p "$work"

# A repository with specs of every outcome; a user recipe among the holding ones.
make_repo() {
  local repo=$1
  mkdir -p "$repo/good/sub" "$repo/kernel"
  cp "$src/proofs/dsv4-mxfp4-fp16-fold.json" "$repo/good/a.json"
  cp "$src/tests/package/kernel/"*.cuh "$repo/kernel/"
  cp "$src/tests/package/proofs/fp4-user.json" "$repo/good/sub/b.json"
  sed -i 's#"\.\./kernel/adapters\.cuh"#"../../kernel/adapters.cuh"#' "$repo/good/sub/b.json"
  cp "$src/tests/cli/data/refuted.json" "$repo/refuted.json"
  cp "$src/tests/cli/data/bad-unknown-key.json" "$repo/bad.json"
}

# run_prove DIR OUTFILE ENV...: prove.sh in DIR with fresh GITHUB_OUTPUT/STEP_SUMMARY files.
run_prove() {
  local dir=$1 tag=$2
  shift 2
  : >"$work/$tag.output"
  : >"$work/$tag.summary"
  (cd "$dir" && env GITHUB_OUTPUT="$work/$tag.output" GITHUB_STEP_SUMMARY="$work/$tag.summary" \
    XDG_CACHE_HOME="$work/cache" BITPROOF="$bitproof" OUT_DIR="out-$tag" "$@" bash "$ci/prove.sh")
}

case "$part" in
  prove)
    repo="$work/repo"
    make_repo "$repo"
    expect 0 "specs that hold" -- run_prove "$repo" hold SPECS="good/**/*.json" COMMENT_KEY=k1 ALLOW_USER_CODE=true
    has "$work/hold.output" '^status=0$' "status=0 in GITHUB_OUTPUT"
    has "$work/hold.output" '^total=2$' "both specs under good/ matched (** recursive)"
    has "$work/hold.output" '^passed=2$' "passed=2"
    has "$work/hold.output" "^summary=$repo/out-hold/summary.md\$" "summary= is absolute"
    has "$work/hold.output" '^marker=<!-- bitproof:k1 -->$' "marker= carries the comment key"
    if [ "$(head -1 "$repo/out-hold/comment.md")" = "<!-- bitproof:k1 -->" ]; then ok "the comment's first line is the marker"; else
      fail "the comment's first line is not the marker"
    fi
    has "$work/hold.summary" '^## bitproof: all hold$' "job summary verdict"
    has "$work/hold.summary" '^\| `good/sub/b.json` \| holds \| 0 \|$' "job summary row of the user recipe spec"
    has "$work/hold.summary" '<details><summary>good/a.json</summary>' "job summary carries each report"
    for f in good.a.json good.a.md good.a.xml good.sub.b.json good.sub.b.xml good.sub.b.log; do
      if [ -s "$repo/out-hold/$f" ]; then ok "wrote $f"; else fail "no $f"; fi
    done

    expect 2 "user code refused by default" -- run_prove "$repo" nouser SPECS="good/**/*.json" \
      XDG_CACHE_HOME="$work/cache-nouser"
    has "$work/nouser.output" '^bad=1$' "bad=1: the user recipe spec"
    has "$work/nouser.output" '^passed=1$' "passed=1: the catalogue spec still proven"
    has "$work/nouser.summary" '^\| `good/sub/b.json` \| \*\*bad input\*\*: .*user_recipes\[0\] \(team.e2m1_fp16.decode\).*refused by BITPROOF_NO_USER_CODE=1' \
      "the refused row names the recipe and the switch"
    # The allowed run above filled its cache with the worker (the control); the refused run's cache stays empty.
    if [ -n "$(find "$work/cache" -path '*bitproof/user/*' -type f 2>/dev/null)" ] &&
      [ -z "$(find "$work/cache-nouser" -path '*bitproof/user/*' -type f 2>/dev/null)" ]; then
      ok "nothing compiled for the refused spec (the allowed run's cache has its worker)"
    else fail "the refused spec was compiled, or the allowed run cached nothing"; fi
    expect 2 "ALLOW_USER_CODE=false refuses too" -- run_prove "$repo" nouser2 SPECS="good/sub/b.json" ALLOW_USER_CODE=false
    expect 2 "ALLOW_USER_CODE neither true nor false" -- run_prove "$repo" nouser3 SPECS="good/a.json" ALLOW_USER_CODE=yes
    has "$work/last.log" 'ALLOW_USER_CODE=yes: expected true or false' "says which value it did not take"
    expect 0 "PR_NUMBER is kept for the comment job" -- run_prove "$repo" pr SPECS="good/a.json" PR_NUMBER=42
    has "$repo/out-pr/pr-number" '^42$' "out/pr-number holds the number"
    expect 2 "a PR_NUMBER that is not a number" -- run_prove "$repo" pr2 SPECS="good/a.json" PR_NUMBER='1;x'

    expect 1 "a refuted spec fails" -- run_prove "$repo" refuted SPECS="good/a.json refuted.json"
    has "$work/refuted.output" '^status=1$' "status=1"
    has "$work/refuted.output" '^refuted=1$' "refuted=1"
    has "$work/refuted.summary" '^## bitproof: FAILED$' "FAILED verdict"
    has "$work/refuted.summary" '^\| `refuted.json` \| \*\*refuted\*\* \| 1 \|$' "the refuted row"

    expect 2 "bad input outranks a refutation" -- run_prove "$repo" bad SPECS="good/a.json bad.json refuted.json"
    has "$work/bad.output" '^bad=1$' "bad=1"
    has "$work/bad.summary" '^\| `bad.json` \| \*\*bad input\*\*: .*unknown key' "the bad row names the error"

    expect 2 "no spec matches" -- run_prove "$repo" none SPECS="nothing/*.json"
    has "$work/last.log" 'no spec matches SPECS="nothing/\*\.json"' "says which glob matched nothing"
    has "$work/none.output" '^status=2$' "status=2 even when stopping early"

    expect 0 "a missing backend is a skip" -- run_prove "$repo" skip SPECS="good/sub/b.json" BACKEND=cuda ALLOW_USER_CODE=true
    has "$work/skip.output" '^skipped=1$' "skipped=1"
    has "$work/skip.summary" '^## bitproof: hold where run$' "verdict says not everything ran"
    expect 3 "... and a failure with FAIL_ON_SKIP" -- run_prove "$repo" skip2 SPECS="good/sub/b.json" BACKEND=cuda \
      FAIL_ON_SKIP=true ALLOW_USER_CODE=true

    expect 0 "a small comment limit" -- run_prove "$repo" cut SPECS="good/**/*.json" MAX_COMMENT=400 ALLOW_USER_CODE=true
    size=$(wc -c <"$repo/out-cut/comment.md")
    full=$(wc -c <"$repo/out-cut/summary.md")
    if [ "$size" -le 400 ] && [ "$full" -gt 400 ]; then ok "comment cut to $size of $full bytes"; else
      fail "comment $size bytes, summary $full, limit 400"
    fi
    has "$repo/out-cut/comment.md" 'cut to fit a comment' "the cut comment says so"
    has "$repo/out-cut/comment.md" '^<!-- bitproof:bitproof -->$' "the cut comment keeps its marker"
    hasnt "$repo/out-hold/comment.md" 'cut to fit' "an uncut comment says nothing of cutting"

    expect 0 "extra ARGS reach prove" -- run_prove "$repo" args SPECS="good/a.json" ARGS="--expect 208/208 --keep 2"
    expect 1 "... and can fail it" -- run_prove "$repo" args2 SPECS="good/a.json" ARGS="--expect 207/208"
    expect 2 "an unknown backend" -- run_prove "$repo" tpu SPECS="good/a.json" BACKEND=tpu
    expect 2 "a command that does not run" -- run_prove "$repo" nobin SPECS="good/a.json" BITPROOF=/nonexistent/bitproof
    ;;

  key)
    k1=$(bash "$ci/cache-key.sh" source "$src" cpu)
    k2=$(bash "$ci/cache-key.sh" source "$src" cpu)
    if [[ "$k1" =~ ^bitproof-[A-Za-z]+-[a-z0-9_]+-cpu-[0-9a-f]{40}$ ]]; then ok "key $k1"; else fail "key format: $k1"; fi
    [ "$k1" = "$k2" ] && ok "stable" || fail "two runs: $k1 vs $k2"
    copy="$work/copy"
    mkdir -p "$copy/reports" "$copy/scripts"
    cp -r "$src/CMakeLists.txt" "$src/cmake" "$src/src" "$src/kernels" "$copy/"
    cp "$src/reports/schema.json" "$copy/reports/"
    cp "$src/scripts/setup.sh" "$copy/scripts/"
    k3=$(bash "$ci/cache-key.sh" source "$copy" cpu)
    [ "$k3" = "$k1" ] && ok "the same sources elsewhere: the same key" || fail "a copy: $k3 vs $k1"
    mkdir -p "$copy/docs" && echo "notes" >"$copy/docs/x.md"
    k4=$(bash "$ci/cache-key.sh" source "$copy" cpu)
    [ "$k4" = "$k1" ] && ok "docs do not change the key" || fail "docs changed the key"
    echo "// a change" >>"$copy/src/hd.hpp"
    k5=$(bash "$ci/cache-key.sh" source "$copy" cpu)
    [ "$k5" != "$k1" ] && ok "a source change changes the key" || fail "src/hd.hpp changed, key did not"
    kc=$(bash "$ci/cache-key.sh" source "$src" cuda)
    [ "$kc" != "$k1" ] && [[ "$kc" == *-cuda-* ]] && ok "the cuda flavour has its own key" || fail "cuda key $kc"
    t1=$(bash "$ci/cache-key.sh" tarball https://host/b.tar.gz aa)
    t2=$(bash "$ci/cache-key.sh" tarball https://host/b.tar.gz bb)
    [ "$t1" != "$t2" ] && [[ "$t1" == *-tarball-* ]] && ok "tarball keys follow the checksum" || fail "tarball keys $t1 $t2"
    expect 2 "not a source tree" -- bash "$ci/cache-key.sh" source "$work" cpu
    expect 2 "bad usage" -- bash "$ci/cache-key.sh" frobnicate
    ;;

  install)
    [ -f "$tarball" ] || { fail "no tarball $tarball (the package.tarball test makes it)"; exit 1; }
    sha=$(sha256sum "$tarball" | cut -d' ' -f1)
    expect 2 "a wrong SHA-256 is refused" -- bash "$ci/install-bitproof.sh" "$work/wrong" --tarball "file://$tarball" \
      --sha256 0000000000000000000000000000000000000000000000000000000000000000
    has "$work/last.log" "SHA-256 mismatch: the download's is $sha, tarball-sha256 \(--sha256\) is 0{64}; refused" \
      "the refusal names both hashes"
    [ ! -e "$work/wrong/bin/bitproof" ] && ok "... and nothing unpacked" || fail "unpacked despite a wrong SHA-256"
    expect 2 "a missing tarball" -- bash "$ci/install-bitproof.sh" "$work/missing" --tarball "file://$work/nope.tar.gz" \
      --sha256 "$sha"
    expect 2 "no SHA-256" -- bash "$ci/install-bitproof.sh" "$work/nosha" --tarball "file://$tarball"
    has "$work/last.log" "--sha256: expected the tarball's SHA-256" "says the SHA-256 is required"
    [ ! -e "$work/nosha" ] && ok "... and nothing made" || fail "made $work/nosha without a SHA-256"
    expect 2 "an upper-case or short SHA-256" -- bash "$ci/install-bitproof.sh" "$work/badsha" --tarball "file://$tarball" \
      --sha256 "${sha:0:63}"
    expect 2 "both routes at once" -- bash "$ci/install-bitproof.sh" "$work/both" --tarball "file://$tarball" --source "$src"
    mkdir -p "$work/full" && touch "$work/full/x"
    expect 2 "a non-empty prefix" -- bash "$ci/install-bitproof.sh" "$work/full" --tarball "file://$tarball" --sha256 "$sha"
    expect 0 "the release tarball installs" -- bash "$ci/install-bitproof.sh" "$work/prefix" --tarball "file://$tarball" \
      --sha256 "$sha"
    for f in bin/bitproof include/bitproof/bitproof_cuda_host.h share/bitproof/schema.json \
      lib/cmake/bitproof/bitproofConfig.cmake; do
      [ -f "$work/prefix/$f" ] && ok "installed $f" || fail "no $f"
    done
    repo="$work/repo"
    make_repo "$repo"
    expect 0 "a user recipe proven with the installed command" -- run_prove "$repo" inst SPECS="good/sub/b.json" \
      BITPROOF="$work/prefix/bin/bitproof" ALLOW_USER_CODE=true
    has "$repo/out-inst/good.sub.b.json" "\"-I$work/prefix/include/bitproof\"" "compiled against the installed header"
    ;;
  release)
    build=$tarball # this part's fifth argument: the build directory to package
    version=$(sed -n 's/^project(bitproof VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
    expect 2 "a tag that is not the version" -- bash "$ci/release-packages.sh" v9.9.9 "$work/wrongtag" "$build"
    has "$work/last.log" "tag v9\.9\.9 is not v$version" "names the tag and the version"
    [ ! -e "$work/wrongtag" ] && ok "... and nothing written" || fail "wrote $work/wrongtag for a wrong tag"
    expect 0 "the release assets" -- bash "$ci/release-packages.sh" "v$version" "$work/dist" "$build"
    tgz="$work/dist/bitproof-$version-Linux-$(uname -m).tar.gz"
    deb=$(find "$work/dist" -name "bitproof_${version}_*.deb")
    [ -f "$tgz" ] && ok "made $(basename "$tgz")" || fail "no $tgz"
    [ -n "$deb" ] && [ -f "$deb" ] && ok "made $(basename "$deb")" || fail "no bitproof_${version}_*.deb"
    [ "$(find "$work/dist" -mindepth 1 | wc -l)" -eq 3 ] && ok "three files, nothing else" || fail "dist holds: $(ls "$work/dist")"
    expect 0 "SHA256SUMS checks" -- sh -c "cd '$work/dist' && sha256sum -c SHA256SUMS"
    [ "$(wc -l <"$work/dist/SHA256SUMS")" -eq 2 ] && ok "SHA256SUMS lists both" || fail "SHA256SUMS: $(cat "$work/dist/SHA256SUMS")"
    expect 0 "the .deb's fields" -- dpkg-deb -f "$deb" Package Version Depends
    has "$work/last.log" '^Depends: g\+\+$' "the .deb depends on g++ (user recipes)"
    has "$work/last.log" "^Version: $version\$" "the .deb's version"
    tar -tzf "$tgz" >"$work/tgz.list"
    has "$work/tgz.list" "^bitproof-$version-Linux-$(uname -m)/bin/bitproof\$" "the tarball has bin/bitproof under its top directory"
    mkdir -p "$work/root"
    dpkg-deb -x "$deb" "$work/root"
    for f in usr/bin/bitproof usr/include/bitproof/bitproof_cuda_host.h usr/share/bitproof/schema.json \
      usr/lib/cmake/bitproof/bitproofConfig.cmake; do
      [ -f "$work/root/$f" ] && ok "the .deb holds /$f" || fail "the .deb has no /$f"
    done
    repo="$work/repo"
    make_repo "$repo"
    expect 0 "a user recipe proven with the .deb's command" -- run_prove "$repo" deb SPECS="good/sub/b.json" \
      BITPROOF="$work/root/usr/bin/bitproof" ALLOW_USER_CODE=true
    has "$repo/out-deb/good.sub.b.json" "\"-I$work/root/usr/include/bitproof\"" "compiled against the .deb's header"
    expect 2 "an output directory that holds files" -- bash "$ci/release-packages.sh" "v$version" "$work/dist" "$build"
    ;;
  *)
    echo "unknown part $part"
    exit 2
    ;;
esac

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
