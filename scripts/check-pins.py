#!/usr/bin/python3
"""Reads every pin of the recipe catalogue in the upstream source it names (Debian's python3, stdlib only).

  scripts/check-pins.py --repos DIR [--bitproof build/bitproof | --pins FILE] [--cuda DIR]
                        [--alias OWNER/NAME=OWNER/NAME ...] [--allow-unchecked]
                        [--record docs/pin-reads.json --date YYYY-MM-DD --by TEXT]

NOT RUN IN CI: it needs the upstream repositories as local git clones and CI has no network.
Run it where they are at hand (the tests in tests/scripts/ check the checker itself on a tiny
repository it makes, and those run in CI).

Pins come from `bitproof recipes --json` (or --pins FILE, a document of the same form). For
every code pin (prose pins name no code and are listed as such):
  - the repository is looked up under DIR as DIR/owner+name/repo (the layout of fetched
    snapshots: a bare git directory), DIR/owner+name, DIR/owner/name or DIR/name, each a
    clone or a bare git directory; --alias A=B also looks B up for pins of A (a fork that
    carries A's history: commits are named by their contents, so the read is the same);
    pins of "NVIDIA CUDA Toolkit" are read under --cuda DIR (a toolkit root whose
    dist-info/ names the runtime release, e.g. nvidia_cuda_runtime-13.0.96.dist-info);
  - the file PATH must exist at REVISION;
  - every line range of the pin ("120-134", "14-28, 81, 91-99") must lie inside the file;
  - every symbol the pin names (comma-separated; of `Ns::f<T>(args)` the last identifier, f)
    must occur as a whole word on the pin's lines, or be defined above them with a body
    (braces; indentation in .py files) that holds the first line of one of the ranges: a pin
    may name a function and point at lines inside it. A symbol that is a description, not an
    identifier ("header comment (...)"), leaves only the line ranges to check.
One line a pin: OK, FAIL (with what is wrong) or UNCHECKED (repository, revision or release
not at hand). Exit 0 when every pin is OK (UNCHECKED allowed with --allow-unchecked), 1 when
any pin fails or is unchecked, 2 on bad usage.

--record FILE keeps, per pin, when it was last read and by what (docs/pin-reads.json, which
scripts/catalogue.py renders into docs/catalogue.md): pins read now get --date and --by; a pin
not at hand keeps its earlier entry; pins no longer in the catalogue are dropped.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

CUDA = "NVIDIA CUDA Toolkit"
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def split_top(text):
    """Splits at commas outside <>, () and quotes."""
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<(":
            depth += 1
        elif not quoted and ch in ">)":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def symbol_names(symbol):
    """The identifier each comma-separated symbol names: `A<T>::f(int)` -> f, `write_result: write` -> write.
    Descriptions ("header comment (no-zero-point case)") name none."""
    names = []
    for part in split_top(symbol):
        head = part.split("(", 1)[0]
        while True:  # drop template arguments, innermost first
            stripped = re.sub(r"<[^<>]*>", "", head)
            if stripped == head:
                break
            head = stripped
        head = head.split("::")[-1].split(": ")[-1].strip()
        if WORD.fullmatch(head):
            names.append(head)
    return names


def block_end(lines, start, python):
    """The last line (0-based) of the definition starting on lines[start]: its braces closed, or
    (python) the lines indented deeper than it; None when it opens no body."""
    if python:
        indent = len(lines[start]) - len(lines[start].lstrip())
        if not re.match(r"\s*(async\s+def|def|class)\s", lines[start]):
            return None
        end = start  # the header may run over several lines, its closing ")" unindented
        while end < len(lines) and not re.sub(r"#.*", "", lines[end]).rstrip().endswith(":"):
            end += 1
        for i in range(end + 1, len(lines)):
            text = lines[i]
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            end = i
        return end
    depth, opened = 0, False
    for i in range(start, len(lines)):
        code = re.sub(r"//.*", "", lines[i])
        for ch in code:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return i
        if not opened and code.rstrip().endswith(";"):
            return None  # a declaration or a call, not a definition
    return None


def found(name, file_lines, ranges, python):
    """'' when name is on the ranges or defined above one with a body holding its first line."""
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    if any(word.search(file_lines[i]) for a, b in ranges for i in range(a - 1, b)):
        return ""
    for first, _ in ranges:
        for i in range(first - 2, -1, -1):
            if word.search(file_lines[i]):
                end = block_end(file_lines, i, python)
                if end is not None and end >= first - 1:
                    return ""
    return name


def line_ranges(lines):
    """[(first, last)] of "120-134, 81"; ValueError when malformed."""
    out = []
    for part in lines.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\s*-\s*(\d+))?\s*", part)
        if not m:
            raise ValueError(f"line range {part.strip()!r} is not N or N-M")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if first < 1 or last < first:
            raise ValueError(f"line range {part.strip()!r} is empty or starts before line 1")
        out.append((first, last))
    return out


def check_text(text, pin):
    """'' when the pin's lines exist in text and hold its symbols, else what is wrong."""
    try:
        ranges = line_ranges(pin.get("lines", ""))
    except ValueError as e:
        return str(e)
    file_lines = text.split("\n")
    if file_lines and file_lines[-1] == "":
        file_lines.pop()
    n = len(file_lines)
    for first, last in ranges:
        if last > n:
            return f"lines {first}-{last} run past the end of the file ({n} lines)"
    python = pin.get("path", "").endswith(".py")
    missing = [m for m in (found(name, file_lines, ranges, python) for name in symbol_names(pin.get("symbol", ""))) if m]
    if missing:
        return f"{', '.join(missing)} neither on lines {pin['lines']} nor around them"
    return ""


def git_dir_candidates(root, repo):
    owner, _, name = repo.partition("/")
    flat = f"{owner}+{name}"
    return [os.path.join(root, flat, "repo"), os.path.join(root, flat), os.path.join(root, owner, name),
            os.path.join(root, name), os.path.join(root, name + ".git")]


def git(path, *args):
    return subprocess.run(["git", "-C", path, *args], capture_output=True)


def find_clone(root, repo, revision, aliases):
    """(git dir holding revision, '') or (None, why not)."""
    seen = []
    for name in [repo] + aliases.get(repo, []):
        for path in git_dir_candidates(root, name):
            if not os.path.isdir(path) or git(path, "rev-parse", "--git-dir").returncode != 0:
                continue
            seen.append(path)
            if git(path, "cat-file", "-e", f"{revision}^{{commit}}").returncode == 0:
                return path, ""
    if not seen:
        return None, f"no clone of {repo} under {root}"
    return None, f"revision {revision[:12]} is in no clone at hand ({', '.join(seen)})"


def read_git(path, revision, file):
    r = git(path, "cat-file", "-p", f"{revision}:{file}")
    if r.returncode != 0:
        return None
    return r.stdout.decode("utf-8", errors="replace")


def read_cuda(root, release, file):
    """(text or None, why not)."""
    if not root:
        return None, "no --cuda toolkit root given"
    info = os.path.join(root, "dist-info", f"nvidia_cuda_runtime-{release}.dist-info")
    if not os.path.isdir(info):
        return None, f"release {release} not confirmed under {root} (no {os.path.relpath(info, root)})"
    full = os.path.join(root, file)
    if not os.path.isfile(full):
        return "", ""
    with open(full, encoding="utf-8", errors="replace") as f:
        return f.read(), ""


def check_pin(pin, args, aliases):
    """(status, where, detail)."""
    if pin.get("kind") != "code":
        return "PROSE", "", "a document, not code: nothing to read"
    if pin["repo"] == CUDA:
        text, why = read_cuda(args.cuda, pin["revision"], pin["path"])
        if text is None:
            return "UNCHECKED", "", why
        if text == "":
            return "FAIL", args.cuda, f"{pin['path']} does not exist in the toolkit"
        where = args.cuda
    else:
        where, why = find_clone(args.repos, pin["repo"], pin["revision"], aliases)
        if where is None:
            return "UNCHECKED", "", why
        text = read_git(where, pin["revision"], pin["path"])
        if text is None:
            return "FAIL", where, f"{pin['path']} does not exist at {pin['revision'][:12]}"
    problem = check_text(text, pin)
    return ("FAIL", where, problem) if problem else ("OK", where, "")


def load_pins(args):
    if args.pins:
        with open(args.pins, encoding="utf-8") as f:
            doc = json.load(f)
    else:
        r = subprocess.run([args.bitproof, "recipes", "--json"], capture_output=True)
        if r.returncode not in (0, 1):
            sys.exit(f"check-pins: {args.bitproof} recipes --json failed: {r.stderr.decode().strip()}")
        doc = json.loads(r.stdout)
    pins = {}
    for card in doc["recipes"]:
        for pin in card.get("pins", []):
            key = pin_key(pin)
            pins.setdefault(key, (pin, []))[1].append(card["name"])
    return pins


def pin_key(pin):
    return (pin["repo"], pin["path"], pin["revision"], pin["symbol"], pin.get("lines", ""))


def where_name(where):
    """A clone's name as the record shows it: owner+name for a fetched snapshot's DIR/owner+name/repo."""
    where = os.path.normpath(where)
    return os.path.basename(os.path.dirname(where)) if os.path.basename(where) == "repo" else where


def record(path, results, date, by):
    old = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for e in json.load(f)["pins"]:
                old[pin_key(e)] = e
    out = []
    for key, (pin, status, where, detail) in sorted(results.items()):
        if status == "PROSE":
            continue
        entry = {"repo": pin["repo"], "path": pin["path"], "revision": pin["revision"], "symbol": pin["symbol"],
                 "lines": pin.get("lines", "")}
        if status in ("OK", "FAIL"):
            entry.update(result=status.lower(), read=date, by=by, detail=detail or f"read in {where_name(where)}")
        elif key in old and old[key].get("read"):
            entry.update({k: old[key][k] for k in ("result", "read", "by", "detail")})
        else:
            entry.update(result="unchecked", read=None, by=None, detail=detail)
        out.append(entry)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"pins": out}, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--repos", required=True, help="directory of upstream git clones")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--bitproof", default="build/bitproof", help="the bitproof whose catalogue is checked")
    src.add_argument("--pins", help="read the cards from this JSON file instead ({\"recipes\": [...]})")
    p.add_argument("--cuda", help="CUDA toolkit root for the toolkit's pins (e.g. /usr/local/cuda)")
    p.add_argument("--alias", action="append", default=[], help="OWNER/NAME=OWNER/NAME: also look for the first in the second")
    p.add_argument("--allow-unchecked", action="store_true", help="pins whose source is not at hand do not fail the run")
    p.add_argument("--record", help="update this record of when each pin was last read")
    p.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).date().isoformat())
    p.add_argument("--by", default="scripts/check-pins.py")
    args = p.parse_args(argv[1:])
    if not os.path.isdir(args.repos):
        p.error(f"--repos {args.repos}: not a directory")
    aliases = {}
    for a in args.alias:
        if a.count("=") != 1:
            p.error(f"--alias {a}: expected OWNER/NAME=OWNER/NAME")
        k, v = a.split("=")
        aliases.setdefault(k, []).append(v)
    results = {}
    counts = {}
    for key, (pin, recipes) in sorted(load_pins(args).items()):
        status, where, detail = check_pin(pin, args, aliases)
        results[key] = (pin, status, where, detail)
        counts[status] = counts.get(status, 0) + 1
        at = f"{pin['repo']}@{pin['revision'][:12]} {pin['path']}" if pin.get("kind") == "code" else pin["repo"]
        line = f"{status:9} {at} lines {pin.get('lines') or '-'} ({pin['symbol']}) [{', '.join(recipes)}]"
        print(line + (f": {detail}" if detail else ""))
    print("; ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())))
    if args.record:
        record(args.record, results, args.date, args.by)
    failed = counts.get("FAIL", 0) + (0 if args.allow_unchecked else counts.get("UNCHECKED", 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
