#!/usr/bin/env python3
"""check_package.py MODE BUILD_DIR SOURCE_DIR WORK_DIR VERSION HAS_TWIN CMAKE CTEST CPACK

Proves that an installed bitproof works in a kernel repository's own CMake project
(tests/package/CMakeLists.txt) and reads nothing from the tree it was built in.

MODE install: `cmake --install BUILD_DIR --prefix WORK/staged`, then the tree is moved to
  WORK/prefix (an installed tree is relocatable).
MODE tarball: `cpack` in BUILD_DIR makes bitproof-VERSION-Linux-<machine>.tar.gz, which is
  unpacked into WORK/unpacked.
Then, on that tree: exactly the expected files; no text file names the staging prefix or the
source tree; tests/package configured with CMAKE_PREFIX_PATH at the tree, built, and run with
ctest, whose outcomes must be exactly fp4_user, dsv4_fold passed, fp4_broken failed (exit 1),
fp4_user_cuda skipped (exit 3), and ctest itself failing; the user recipe's worker compiled
with -I<tree>/include/bitproof and no header from SOURCE_DIR/src; find_package with a version
that must not match fails. MODE install adds the negative control of the header lookup: the
tree without its CUDA host header refuses user recipes (exit 2) instead of reading the source
tree; with the source tree's src/ hidden (unshare -m, where permitted), the installed command
proves examples/marlin-fp4 and the build tree's cannot; and bin/bitproof hands --backend cuda to the bin/bitproof-cuda beside it (a fake twin).
Exit 0 when every check holds, 1 otherwise (each failure printed).
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

mode, build, source, work, version, has_twin, cmake, ctest, cpack = sys.argv[1:10]
has_twin = has_twin == "1"
build, source, work = os.path.abspath(build), os.path.abspath(source), os.path.abspath(work)
project = os.path.join(source, "tests", "package")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def run(args, env=None, cwd=None):
    p = subprocess.run(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def clean_env(cache):
    env = dict(os.environ)
    for k in ("BITPROOF_INCLUDE_DIRS", "BITPROOF_CUDA_TWIN", "CMAKE_PREFIX_PATH"):
        env.pop(k, None)
    env["XDG_CACHE_HOME"] = cache  # a fresh cache: the worker is compiled here, from this tree
    return env


EXPECTED = {
    "bin/bitproof",
    "include/bitproof/bitproof_cuda_host.h", "include/bitproof/cuda.h", "include/bitproof/cuda_bf16.h",
    "include/bitproof/cuda_fp16.h", "include/bitproof/cuda_fp4.h", "include/bitproof/cuda_fp8.h",
    "include/bitproof/cuda_runtime.h", "include/bitproof/hd.hpp", "include/bitproof/arith/soft_arith.hpp",
    "include/bitproof/arith/soft_float.hpp",
    "include/bitproof/nvrtc/cstdint", "include/bitproof/nvrtc/stdint.h",
    "share/bitproof/schema.json",
    "lib/cmake/bitproof/bitproofConfig.cmake", "lib/cmake/bitproof/bitproofConfigVersion.cmake",
    "lib/cmake/bitproof/bitproofAddProof.cmake", "lib/cmake/bitproof/bitproofTargets.cmake",
}
if has_twin:
    EXPECTED.add("bin/bitproof-cuda")


def files_of(tree):
    found = set()
    for d, _, names in os.walk(tree):
        for n in names:
            found.add(os.path.relpath(os.path.join(d, n), tree))
    return found


def check_tree(tree, staged):
    found = files_of(tree)
    # One per-configuration targets file (bitproofTargets-release.cmake for a Release build).
    per_config = {f for f in found if f.startswith("lib/cmake/bitproof/bitproofTargets-") and f.endswith(".cmake")}
    check(len(per_config) == 1, f"one per-configuration targets file ({sorted(per_config)})")
    extra, missing = found - EXPECTED - per_config, EXPECTED - found
    check(not extra and not missing, f"the tree holds exactly the expected files (extra {sorted(extra)}, "
          f"missing {sorted(missing)})")
    for f in sorted(found):
        if f.startswith("bin/"):
            check(os.access(os.path.join(tree, f), os.X_OK), f"{f} is executable")
            continue
        text = open(os.path.join(tree, f), encoding="utf-8", errors="replace").read()
        for what, path in (("the staging prefix", staged), ("the source tree", source), ("the build tree", build)):
            if path and path in text:
                check(False, f"{f} names {what} {path}")
    rc, out = run([os.path.join(tree, "bin", "bitproof"), "--version"])
    check(rc == 0 and out.startswith(f"bitproof {version} "), f"bin/bitproof --version: {out.strip()}")


def junit_outcomes(path):
    outcomes = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status")
        if case.find("failure") is not None or status == "fail":
            outcomes[case.get("name")] = "failed"
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            # ctest's message names why: only bitproof's exit 3 counts as the expected skip.
            why = case.find("skipped").get("message", "") if case.find("skipped") is not None else ""
            outcomes[case.get("name")] = "skipped" if why == "SKIP_RETURN_CODE=3" else f"not run ({why or status})"
        else:
            outcomes[case.get("name")] = "passed"
    return outcomes


def check_project(tree, tag):
    proj, cache = os.path.join(work, f"project-{tag}"), os.path.join(work, f"cache-{tag}")
    env = clean_env(cache)
    rc, out = run([cmake, "-S", project, "-B", proj, f"-DCMAKE_PREFIX_PATH={tree}"], env=env)
    if not check(rc == 0, f"{tag}: tests/package configures against the tree"):
        print(out)
        return
    rc, out = run([cmake, "--build", proj], env=env)
    check(rc == 0, f"{tag}: tests/package builds")
    junit = os.path.join(proj, "ctest.xml")
    rc, out = run([ctest, "--test-dir", proj, "--output-junit", junit, "--output-on-failure"], env=env)
    print(out)
    check(rc != 0, f"{tag}: ctest fails (the negative control fp4_broken must fail it): exit {rc}")
    outcomes = junit_outcomes(junit)
    # A GPU machine runs the cuda test (user recipes through NVRTC); elsewhere exit 3 must read as a skip.
    gpu = os.path.exists("/dev/nvidiactl")
    want = {"fp4_user": "passed", "dsv4_fold": "passed", "fp4_broken": "failed",
            "fp4_user_cuda": "passed" if gpu else "skipped"}
    check(outcomes == want, f"{tag}: ctest outcomes {outcomes} (expected {want})")
    counts = {k: sorted(outcomes.values()).count(k) for k in ("passed", "failed", "skipped")}
    expected_counts = {"passed": 3, "failed": 1, "skipped": 0} if gpu else {"passed": 2, "failed": 1, "skipped": 1}
    check(counts == expected_counts, f"{tag}: outcome counts {counts} (expected {expected_counts})")

    reports = os.path.join(proj, "bitproof")
    with open(os.path.join(reports, "fp4_user.json")) as f:
        report = json.load(f)
    flags = report["environment"]["user_recipes"]["flags"]
    include = "-I" + os.path.join(tree, "include", "bitproof")
    check(include in flags, f"{tag}: the worker was compiled with {include} ({flags})")
    src = os.path.join(source, "src")
    check(not any(fl == "-I" + src or fl.startswith("-I" + src + "/") for fl in flags),
          f"{tag}: no include flag names the source tree's src/")
    check(report["result"]["verdict"] == "holds", f"{tag}: fp4_user's report says holds")
    broken = ET.parse(os.path.join(reports, "fp4_broken.xml")).getroot()
    failed = [c for c in broken.iter("testcase") if c.find("failure") is not None]
    check(len(failed) == 1 and "case " in (failed[0].find("failure").text or ""),
          f"{tag}: fp4_broken's JUnit has one failure with its counterexample")
    check(not os.path.exists(os.path.join(reports, "fp4_user_cuda.json")), f"{tag}: NO_REPORTS writes no report")

    # Every file the worker's compile read (the cache's manifests, from the compiler's -M):
    # bitproof's from the tree, none from the source tree's src/.
    deps = []
    user_cache = os.path.join(cache, "bitproof", "user")
    for name in os.listdir(user_cache):
        if name.startswith("manifest-"):
            # Dependency lines: "user|tool|sys CHECK PATH" (src/user/build_text.cpp, manifest_text).
            deps += [line.rstrip("\n").split(" ", 2)[2] for line in open(os.path.join(user_cache, name))
                     if line.split(" ", 1)[0] in ("user", "tool", "sys")]
    ours = [d for d in deps if d.startswith(os.path.join(tree, "include", "bitproof") + "/")]
    check(any(d.endswith("/bitproof_cuda_host.h") for d in ours) and any(d.endswith("/arith/soft_float.hpp")
                                                                           for d in ours),
          f"{tag}: the worker read the tree's CUDA host header and soft arithmetic ({len(ours)} files)")
    stray = [d for d in deps if d.startswith(os.path.join(source, "src") + "/")]
    check(not stray, f"{tag}: the worker read no file of the source tree's src/ ({stray[:3]})")

    # The version file: a version this package cannot satisfy is refused at configure time.
    rc, out = run([cmake, "-S", project, "-B", proj + "-v99", f"-DCMAKE_PREFIX_PATH={tree}",
                   "-DBITPROOF_WANT_VERSION=99.0"], env=env)
    check(rc != 0 and "99.0" in out, f"{tag}: find_package(bitproof 99.0) fails")


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
if mode == "install":
    staged, tree = os.path.join(work, "staged"), os.path.join(work, "prefix")
    rc, out = run([cmake, "--install", build, "--prefix", staged])
    if not check(rc == 0, "cmake --install"):
        print(out)
        sys.exit(1)
    os.rename(staged, tree)  # used from elsewhere than where it was installed
    check_tree(tree, staged)
    check_project(tree, "install")
    # Negative control: without its header, the installed command refuses user recipes
    # (one line, exit 2) rather than falling back to the source tree it was built from.
    hollow = os.path.join(work, "hollow")
    shutil.copytree(tree, hollow, symlinks=True)
    os.remove(os.path.join(hollow, "include", "bitproof", "bitproof_cuda_host.h"))
    rc, out = run([os.path.join(hollow, "bin", "bitproof"), "prove", os.path.join(project, "proofs", "fp4-user.json"),
                   "--backend", "cpu"], env=clean_env(os.path.join(work, "cache-hollow")))
    check(rc == 2 and "CUDA host header is not installed beside" in out,
          f"a tree without its header: exit {rc}: {out.strip()}")
    rc, out = run([os.path.join(hollow, "bin", "bitproof"), "prove", os.path.join(project, "proofs", "dsv4-fold.json"),
                   "--backend", "cpu"], env=clean_env(os.path.join(work, "cache-hollow")))
    check(rc == 0, f"... while catalogue recipes still run there: exit {rc}")
    # With the source tree's src/ hidden (a private mount namespace, where root may make one):
    # the installed command proves examples/marlin-fp4 (user recipes) all the same, while the
    # build tree's command, whose headers are that src/, cannot (the hiding's negative control).
    marlin = os.path.join(work, "marlin-fp4")
    shutil.copytree(os.path.join(source, "examples", "marlin-fp4"), marlin)
    hide = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs none "$0" && exec "$@"', os.path.join(source, "src"),
            "sh", "-c", 'test ! -e "$0/user" && exec "$@"', os.path.join(source, "src")]
    spec = os.path.join(marlin, "proof.json")
    if os.geteuid() == 0 and shutil.which("unshare") and run(hide + ["true"])[0] == 0:
        rc, out = run(hide + [os.path.join(tree, "bin", "bitproof"), "prove", spec, "--backend", "cpu"],
                      env=clean_env(os.path.join(work, "cache-hidden")))
        check(rc == 0 and "team-fp4≡marlin-fp16: 16/16 bit patterns equal" in out,
              f"src/ hidden: the installed command proves examples/marlin-fp4: exit {rc}: {out.strip()}")
        rc, out = run(hide + [os.path.join(build, "bitproof"), "prove", spec, "--backend", "cpu"],
                      env=clean_env(os.path.join(work, "cache-hidden-build")))
        check(rc == 2, f"src/ hidden: the build tree's command cannot (negative control): exit {rc}")
    else:
        print("skip src/ hidden: no private mount namespace here (needs root and unshare)")

    # The CUDA twin in the installed layout: bin/bitproof hands --backend cuda to the
    # bin/bitproof-cuda beside it (a fake here, which records that it ran and exits 7);
    # without one, a CPU-only tree says the backend is missing (exit 3).
    twin_tree = os.path.join(work, "twin")
    shutil.copytree(tree, twin_tree, symlinks=True)
    fake = os.path.join(twin_tree, "bin", "bitproof-cuda")
    if os.path.exists(fake):
        os.remove(fake)
    dsv4 = os.path.join(project, "proofs", "dsv4-fold.json")
    env = clean_env(os.path.join(work, "cache-twin"))
    if not has_twin:
        rc, out = run([os.path.join(twin_tree, "bin", "bitproof"), "prove", dsv4, "--backend", "cuda"], env=env)
        check(rc == 3, f"a CPU-only tree without bitproof-cuda: --backend cuda exits 3: exit {rc}: {out.strip()}")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho \"fake twin ran: $*\"\nexit 7\n")
    os.chmod(fake, 0o755)
    rc, out = run([os.path.join(twin_tree, "bin", "bitproof"), "prove", dsv4, "--backend", "cuda"], env=env)
    check(rc == 7 and out.strip() == f"fake twin ran: prove {dsv4} --backend cuda",
          f"--backend cuda hands off to bin/bitproof-cuda beside the command: exit {rc}: {out.strip()}")
elif mode == "tarball":
    out_dir = os.path.join(work, "cpack")
    rc, out = run([cpack, "--config", os.path.join(build, "CPackConfig.cmake"), "-B", out_dir])
    top = f"bitproof-{version}-Linux-{platform.machine()}"
    tarball = os.path.join(out_dir, top + ".tar.gz")
    if not check(rc == 0 and os.path.isfile(tarball), f"cpack makes {top}.tar.gz"):
        print(out)
        sys.exit(1)
    with tarfile.open(tarball) as t:
        names = t.getnames()
        check(all(n == top or n.startswith(top + "/") for n in names), f"every member is under {top}/")
        t.extractall(os.path.join(work, "unpacked"))
    tree = os.path.join(work, "unpacked", top)
    check_tree(tree, os.path.join(out_dir, "_CPack_Packages"))
    check_project(tree, "tarball")
else:
    sys.exit(f"unknown mode {mode}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
