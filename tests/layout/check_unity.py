#!/usr/bin/env python3
"""Every target's sources compile as one translation unit (the unity build's contract).

The sanitizer build in scripts/test.sh is a unity build (BITPROOF_UNITY: 8 sources a
unit): two sources of one target that each define the same file-local name (a helper in
an anonymous namespace, a static function) compile apart and fail there, which the
Release build never shows. This check includes all of a target's sources in one unit
(a superset of every batching) and runs the compiler's syntax check on it, so the
Release test phase finds such a clash first. Sources with their own compile options
are left out, as CMake leaves them out of unity batches.

Usage:
  check_unity.py BUILD_DIR TARGET...   exit 0: each target is one unit; 1: a clash (the
                                       compiler's first errors are printed)
  check_unity.py --control BUILD_DIR   the negative control: two sources defining one
                                       file-local helper must fail the same check
"""
import collections
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

TARGET_DIR = re.compile(r"CMakeFiles/([\w.\-]+)\.dir/")


def target_sources(build_dir):
    """{target: [(file, compiler argv without -o/-c/the source)]} from compile_commands.json."""
    entries = json.loads((pathlib.Path(build_dir) / "compile_commands.json").read_text())
    targets = collections.defaultdict(list)
    for e in entries:
        match = TARGET_DIR.search(e.get("command", ""))
        if not match or not e["file"].endswith((".cpp", ".cxx")):
            continue
        targets[match.group(1)].append((e["file"], flags_of(shlex.split(e["command"]))))
    return targets


def flags_of(argv):
    """The compiler and the flags that shape the syntax: defines, includes, standard."""
    kept, i = [argv[0]], 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-isystem", "-I", "-D", "-include"):
            if arg != "-include":  # a precompiled header's force-include is the PCH's business
                kept += [arg, argv[i + 1]]
            i += 2
            continue
        if arg.startswith(("-I", "-D", "-std=", "-isystem")):
            kept.append(arg)
        i += 1
    return kept


def one_unit(sources, work):
    """Compiles `sources` [(file, flags)] as one unit; returns (ok, first error lines)."""
    common = collections.Counter(tuple(flags) for _, flags in sources).most_common(1)[0][0]
    unit = pathlib.Path(work) / "unit.cpp"
    unit.write_text("".join(f'#include "{f}"\n' for f, flags in sources if tuple(flags) == common))
    run = subprocess.run(list(common) + ["-fsyntax-only", str(unit)], capture_output=True, text=True)
    errors = [line for line in run.stderr.splitlines() if "error" in line]
    return run.returncode == 0, errors[:12]


def check(build_dir, names):
    targets = target_sources(build_dir)
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            if name not in targets:
                print(f"check_unity: no sources of target {name} in {build_dir}/compile_commands.json")
                return 1
            if any("/Unity/" in f for f, _ in targets[name]):
                print(f"{name}: a unity build, whose own compile is this check")
                continue
            ok, errors = one_unit(targets[name], work)
            print(f"{name}: {len(targets[name])} sources, {'one unit' if ok else 'CLASH'}")
            for line in errors:
                print("  " + line)
            failed |= not ok
    return 1 if failed else 0


def control(build_dir):
    """Two sources, one file-local helper each, with a real target's flags: must clash."""
    flags = next(iter(target_sources(build_dir).values()))[0][1]
    with tempfile.TemporaryDirectory() as work:
        sources = []
        for n in (1, 2):
            path = pathlib.Path(work) / f"s{n}.cpp"
            path.write_text(f"namespace {{\nint helper() {{ return {n}; }}\n}}\nint use{n}() {{ return helper(); }}\n")
            sources.append((str(path), flags))
        ok, errors = one_unit(sources, work)
    if ok:
        print("check_unity --control: two definitions of one file-local helper passed the check")
        return 1
    print(f"check_unity --control: the clash was found ({errors[0].strip() if errors else 'compiler failed'})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--control":
        sys.exit(control(sys.argv[2]))
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[1], sys.argv[2:]))
