#!/usr/bin/env bash
# Every PTX file the repository ships (examples, test data, the GPU recorders' kernels) must be PTX
# the GPU's own assembler accepts: bitproof's parser is more lenient than ptxas (it skips DWARF
# sections), so a file edited by hand can prove on the CPU and fail at the driver's JIT (it did:
# gemv-lineinfo.ptx with its .debug_str cut out, "Unresolved label '$L__info_string0'").
# ptxas runs on the CPU. Each file is assembled for the architecture its .target names
# (sm_90a stays sm_90a). Exit 77 (skipped) without ptxas.
#   ptxas_all.sh SOURCE_DIR
set -u
root=$1
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$ptxas" ] || { echo "skipped: no ptxas"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0 n=0
while IFS= read -r f; do
  arch=$(grep -m1 -oE '^\s*\.target\s+sm_[0-9]+a?' "$f" | grep -oE 'sm_[0-9]+a?')
  n=$((n + 1))
  if ! "$ptxas" -arch="${arch:-sm_90}" "$f" -o "$out/x.cubin" 2>"$out/err"; then
    echo "FAIL ${f#"$root"/} (ptxas -arch=${arch:-sm_90}): $(head -1 "$out/err")"
    failed=1
  fi
done < <(find "$root/examples" "$root/tests" -name '*.ptx' -not -path '*/build*' | sort)
[ "$n" -gt 0 ] || { echo "FAIL: no PTX files found under $root"; exit 1; }
[ $failed = 0 ] && echo "ptxas accepts all $n PTX files"
exit $failed
