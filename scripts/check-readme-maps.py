#!/usr/bin/env python3
"""Checks the READMEs' maps of the tree against the files git tracks.

Two kinds of map are checked:

- A folder's file map: a table in FOLDER/README.md whose first column is
  headed "file" (server/README.md, client/README.md). Every source file
  tracked under FOLDER (.cc, .h, .py, .sh, .proto, ...; subfolders
  included, except those with a README.md of their own) must be named in
  that column, by its path from FOLDER, in backticks. A header and its .cc
  are one entry: `table.h/.cc`, or either name alone, maps both.
- The top README.md's map "Where things are": its table whose first column
  is headed "path". Every top-level folder must be named in that column
  (`server/`, or a path inside it such as `clients/python/`), and every page
  of docs/ (each tracked docs/**/*.md) by its path.

Every name in those columns must also be there: a row left behind by a
file renamed or removed is as wrong as a file without one. A folder whose
README has no such table has no map, and is not checked.

Prints one line per problem, naming the README and the file, and exits 1
if there is one (0 otherwise, with a one-line summary). Exits 77
(skipped) outside a git checkout.

Usage: scripts/check-readme-maps.py [REPO]   (default: this checkout)
"""

import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

SOURCE_SUFFIXES = {".cc", ".h", ".py", ".pyi", ".sh", ".proto", ".go",
                   ".java", ".in"}
TOP_README = "README.md"
TOP_MAP = "Where things are"
# A header and its implementation share one row of a map.
PAIRS = {".h": ".cc", ".cc": ".h"}


def map_rows(text, first_header):
    """The first-column names of each table in `text` whose first header
    cell is `first_header`: a list of (line number, [names])."""
    rows, in_map, lines = [], False, text.splitlines()
    for n, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            in_map = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not in_map:
            in_map = (cells[0].lower() == first_header and n < len(lines) and
                      re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[n]) is not None)
            continue
        if re.match(r"^[\s:-]+$", cells[0]):
            continue  # the row under the header
        rows.append((n, [name for token in re.findall(r"`([^`]+)`", cells[0])
                         for name in expand(token)]))
    return rows


def expand(token):
    """`server_options.h/.cc` -> server_options.h, server_options.cc."""
    m = re.fullmatch(r"(.*?)(\.\w+)((?:/\.\w+)+)", token)
    if not m:
        return [token]
    stem = m.group(1)
    return [stem + m.group(2)] + [stem + s for s in m.group(3).split("/")[1:]]


def is_source(path):
    return PurePosixPath(path).suffix in SOURCE_SUFFIXES


def check_folder_map(readme, text, tracked, readme_dirs):
    """Problems of the file map in `readme` (FOLDER/README.md)."""
    folder = PurePosixPath(readme).parent
    rows = map_rows(text, "file")
    if not rows:
        return [], 0
    names = {name for _, row in rows for name in row}

    def owner(path):  # the nearest folder above `path` with a README
        for parent in PurePosixPath(path).parents:
            if str(parent) in readme_dirs:
                return parent
        return None

    mine = sorted(p for p in tracked
                  if is_source(p) and owner(p) == folder)
    problems = []
    for path in mine:
        rel = PurePosixPath(path).relative_to(folder)
        twin = rel.with_suffix(PAIRS.get(rel.suffix, rel.suffix))
        if str(rel) not in names and str(twin) not in names:
            row = (f"{rel.with_suffix('.h')}/.cc"
                   if str(folder / twin) in tracked and twin != rel else rel)
            problems.append(
                f"{readme}: {path} is missing from the file map (add a row "
                f"| `{row}` | what it holds |)")
    present = {str(PurePosixPath(p).relative_to(folder)) for p in mine}
    for n, row in rows:
        for name in row:
            if name not in present:
                problems.append(f"{readme}:{n}: the file map names {name}, "
                                f"which is not a tracked source file of {folder}/")
    return problems, len(mine)


def check_top_map(text, tracked):
    """Problems of the top README's "Where things are"."""
    rows = map_rows(text, "path")
    if not rows:
        return [f"{TOP_README}: no table headed \"path\" ({TOP_MAP})"], 0
    names = {name for _, row in rows for name in row}
    folders = sorted({p.split("/")[0] for p in tracked if "/" in p})
    pages = sorted(p for p in tracked
                   if p.startswith("docs/") and p.endswith(".md"))
    problems = []
    for f in folders:
        if not any(name.startswith(f + "/") for name in names):
            problems.append(f"{TOP_README}: the folder {f}/ is missing from "
                            f"\"{TOP_MAP}\" (add a row | `{f}/` | what it holds |)")
    for page in pages:
        if page not in names:
            problems.append(f"{TOP_README}: {page} is missing from \"{TOP_MAP}\" "
                            f"(add a row | `{page}` | what it holds |)")
    for n, row in rows:
        for name in row:
            there = (name in tracked if not name.endswith("/") else
                     any(p.startswith(name) for p in tracked))
            if not there:
                problems.append(f"{TOP_README}:{n}: \"{TOP_MAP}\" names {name}, "
                                f"which is not tracked")
    return problems, len(folders) + len(pages)


def main(argv):
    repo = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    ls = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True,
                        text=True)
    if ls.returncode != 0:
        print(f"check-readme-maps: {repo} is not a git checkout: no tracked "
              f"files to check", file=sys.stderr)
        return 77
    tracked = set(ls.stdout.splitlines())
    readmes = sorted(p for p in tracked
                     if PurePosixPath(p).name == "README.md" and "/" in p)
    readme_dirs = {str(PurePosixPath(p).parent) for p in readmes}
    problems, counted, maps = [], 0, []
    for readme in readmes:
        found, n = check_folder_map(readme, (repo / readme).read_text(), tracked,
                                    readme_dirs)
        if n or found:
            maps.append(readme)
        problems += found
        counted += n
    found, n = check_top_map((repo / TOP_README).read_text(), tracked)
    problems += found
    counted += n
    for p in problems:
        print(p)
    if problems:
        print(f"check-readme-maps: {len(problems)} problem(s) in the READMEs' "
              f"maps: each names every file of its folder, a row each (a header "
              f"and its .cc in one)", file=sys.stderr)
        return 1
    print(f"check-readme-maps: {counted} files and folders mapped in "
          f"{', '.join(maps + [TOP_README])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
