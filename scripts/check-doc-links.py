#!/usr/bin/env python3
"""Checks that the links of the docs and READMEs resolve.

Every tracked Markdown page under docs/ and every tracked README.md is
read. Each relative link in it, [text](PATH), [text](PATH#ANCHOR),
[text](#ANCHOR) and [name]: PATH (links in code spans and fenced code are
not links), must name a tracked file or folder, by its path from the page;
and an #ANCHOR into a Markdown page must be one of that page's headings,
slugged as GitHub slugs them ("Routing client (C++)" is
#routing-client-c; a second "Exit codes" is #exit-codes-1), or an
<a name="..."> / id="..." of its own. Links to other sites (http:,
https:, mailto:) are not followed.

Prints one line per broken link, naming the page, its line and the link,
and exits 1 if there is one (0 otherwise, with a one-line summary). Exits
77 (skipped) outside a git checkout.

Usage: scripts/check-doc-links.py [REPO]   (default: this checkout)
"""

import re
import subprocess
import sys
from pathlib import PurePosixPath

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?"
                         r"(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"|\sid=\"([^\"]+)\"")
EXTERNAL = ("http://", "https://", "mailto:", "ftp://")


def tracked_files(repo):
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z"],
                         capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name]


def prose_lines(text):
    """(line number, line) of each line outside fenced code, with code
    spans blanked out."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            if fence is None:
                fence = match.group(1)[0] * len(match.group(1))
                continue
            if stripped.startswith(fence):
                fence = None
                continue
        if fence is not None:
            continue
        yield n, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)),
                        line)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)           # inline HTML
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a page defines: its headings' slugs (a repeated one
    numbered -1, -2, ...) and its HTML names and ids."""
    found, seen = set(), {}
    fence = None
    for line in text.splitlines():
        stripped = line.lstrip()
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            if fence is None:
                fence = match.group(1)[0] * len(match.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        for name in HTML_ANCHOR.findall(line):
            found.update(a for a in name if a)
        heading = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else "."
    try:
        files = tracked_files(repo)
    except (subprocess.CalledProcessError, FileNotFoundError):
        print("check-doc-links: not a git checkout; skipped")
        return 77
    tracked = set(files)
    folders = {str(parent) for name in files
               for parent in PurePosixPath(name).parents}
    pages = [name for name in files
             if (name.startswith("docs/") and name.endswith(".md")) or
             PurePosixPath(name).name == "README.md"]
    anchor_cache = {}

    def page_anchors(name):
        if name not in anchor_cache:
            with open(f"{repo}/{name}", encoding="utf-8") as f:
                anchor_cache[name] = anchors(f.read())
        return anchor_cache[name]

    problems, links = [], 0
    for page in sorted(pages):
        with open(f"{repo}/{page}", encoding="utf-8") as f:
            text = f.read()
        here = PurePosixPath(page).parent
        for n, line in prose_lines(text):
            targets = INLINE_LINK.findall(line)
            reference = REFERENCE_LINK.match(line)
            if reference:
                targets.append(reference.group(1))
            for target in targets:
                if target.startswith(EXTERNAL):
                    continue
                links += 1
                path, _, anchor = target.partition("#")
                if path:
                    parts = []
                    for part in (here / path).parts:
                        if part == "..":
                            if not parts:
                                parts = None
                                break
                            parts.pop()
                        elif part != ".":
                            parts.append(part)
                    resolved = "/".join(parts) if parts is not None else None
                    if resolved is None or (resolved not in tracked and
                                            resolved not in folders and
                                            resolved != ""):
                        problems.append(f"{page}:{n}: {target}: no such "
                                        f"tracked file or folder")
                        continue
                else:
                    resolved = page
                if anchor and resolved.endswith(".md") and \
                        resolved in tracked and \
                        anchor not in page_anchors(resolved):
                    problems.append(f"{page}:{n}: {target}: {resolved} has "
                                    f"no heading or anchor #{anchor}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-doc-links: {len(problems)} broken link(s) in the docs "
              f"and READMEs")
        return 1
    print(f"check-doc-links: {links} links in {len(pages)} pages resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
