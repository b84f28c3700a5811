#!/usr/bin/env python3
"""The house order: every room under src/ includes only itself and rooms below it.

A room is a directory directly under src/ (src/proof, src/report, ...); the files
directly in src/ (error.hpp, strict_json.hpp, ...) are the room "base". ORDER lists
the rooms from the top of the house down; rooms on one level are peers and may not
include each other either (a peer include is how a cycle starts). A room that is
not in ORDER is an error: a new room must be given its place here and in
docs/architecture.md, whose "Order:" line this test also compares with ORDER.

Usage:
  check_includes.py SRC_DIR [ARCHITECTURE_MD]   exit 0: the order holds; 1: it does not
  check_includes.py --control SRC_DIR           the negative controls: copies of SRC_DIR
                                                 with one wrong include each must fail
"""
import pathlib
import re
import shutil
import sys
import tempfile

# Top of the house first. docs/architecture.md says what each room owns.
ORDER = [
    ("cli",),
    ("audit", "backend"),
    ("report",),
    ("proof", "timing"),
    ("user",),
    ("operator",),
    ("ptx",),
    ("recipes",),
    ("oracle",),
    ("arith", "format"),
    ("hash", "checkpoint"),
    ("base",),
]
LEVEL = {room: level for level, rooms in enumerate(ORDER) for room in rooms}
SOURCE_SUFFIXES = {".hpp", ".cpp", ".cuh", ".cu", ".h", ".def", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(src: pathlib.Path, path: pathlib.Path) -> str:
    parts = path.relative_to(src).parts
    return "base" if len(parts) == 1 else parts[0]


def resolve(src: pathlib.Path, including: pathlib.Path, name: str):
    """The file an #include "name" reads: beside the including file, else under src/
    (the library's include directory). None: not a file of src/ (a generated or
    system header), which the order does not govern."""
    for candidate in (including.parent / name, src / name):
        if candidate.is_file():
            resolved = candidate.resolve()
            if src.resolve() in resolved.parents:
                return src / resolved.relative_to(src.resolve())
    return None


def violations(src: pathlib.Path):
    found = []
    files = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
    for path in files:
        room = room_of(src, path)
        if room not in LEVEL:
            found.append(f"{path}: room '{room}' has no place in the order (tests/layout/check_includes.py "
                         "ORDER and docs/architecture.md)")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in INCLUDE.finditer(text):
            target = resolve(src, path, match.group(1))
            if target is None:
                continue
            to = room_of(src, target)
            if to == room or to not in LEVEL:
                continue  # a room's own file; an unplaced room is reported for its own files
            if LEVEL[to] < LEVEL[room]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path}:{line}: {room} includes {match.group(1)}, but {to} is above {room}")
            elif LEVEL[to] == LEVEL[room]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path}:{line}: {room} includes {match.group(1)}, but {to} is its peer "
                             "(peers include neither way)")
    return found


def order_line() -> str:
    return "Order: " + " → ".join(" | ".join(rooms) for rooms in ORDER)


def check_document(doc: pathlib.Path):
    lines = [l.strip().strip("`") for l in doc.read_text(encoding="utf-8").splitlines()]
    written = [l for l in lines if l.startswith("Order:")]
    if written != [order_line()]:
        return [f"{doc}: its order line is {written or 'missing'}, the test's is '{order_line()}'"]
    return []


def control(src: pathlib.Path) -> int:
    """Each mutation must be caught, and only by its own line."""
    mutations = [
        ("format/format.hpp", '#include "cli/cli.hpp"\n', "format includes cli/cli.hpp, but cli is above"),
        ("proof/engine.hpp", '#include "timing/verdict.hpp"\n', "proof includes timing/verdict.hpp, but timing is its peer"),
        ("hash/digest.hpp", '#include "checkpoint/safetensors.hpp"\n', "is its peer"),
        ("error.hpp", '#include "format/format.hpp"\n', "base includes format/format.hpp, but format is above"),
        ("newroom/thing.hpp", "#pragma once\n", "room 'newroom' has no place in the order"),
    ]
    failed = 0
    for relative, line, expected in mutations:
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp) / "src"
            shutil.copytree(src, copy)
            target = copy / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text((target.read_text() if target.exists() else "") + line)
            found = violations(copy)
            caught = len(found) == 1 and expected in found[0]
            print(f"control {relative} + {line.strip()}: {'caught' if caught else 'NOT CAUGHT'}: {found}")
            failed += not caught
    with tempfile.TemporaryDirectory() as tmp:  # a document whose order line differs from ORDER
        doc = pathlib.Path(tmp) / "architecture.md"
        doc.write_text("```\n" + order_line().replace("proof | timing", "timing | proof") + "\n```\n")
        found = check_document(doc)
        print(f"control architecture.md with peers reordered: {'caught' if found else 'NOT CAUGHT'}: {found}")
        failed += not found
    return 1 if failed else 0


def main(argv) -> int:
    if len(argv) >= 2 and argv[1] == "--control":
        return control(pathlib.Path(argv[2]))
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = violations(pathlib.Path(argv[1]))
    if len(argv) > 2:
        found += check_document(pathlib.Path(argv[2]))
    for v in found:
        print(v)
    rooms = sorted({room_of(pathlib.Path(argv[1]), p) for p in pathlib.Path(argv[1]).rglob("*") if p.is_file()})
    print(f"{len(found)} include(s) against the order; rooms: {', '.join(rooms)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
