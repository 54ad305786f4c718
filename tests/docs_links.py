#!/usr/bin/env python3
"""docs_links.py [FILE.md...]: every relative link of the documentation names a file that exists and, when
it has one, an anchor that a heading of that file makes (GitHub's rule: lowercase, punctuation dropped,
spaces as hyphens, a repeated heading suffixed -1, -2...).

Without arguments: README.md, ARCHITECTURE.md and docs/*.md, from the repository root. Prints one
"ok - FILE" or "not ok - FILE: LINK: why" line per file (tests/run.sh counts them); exits 1 on a bad link.
"""
import glob
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text):
    """The lines outside fenced code blocks, with inline code removed."""
    inside = False
    for line in text.split("\n"):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield re.sub(r"`[^`]*`", "", line)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    inside = False
    for line in open(path, encoding="utf-8").read().split("\n"):
        if FENCE.match(line):
            inside = not inside
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if inside or not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def problems(path):
    base = os.path.dirname(path)
    for line in prose(open(path, encoding="utf-8").read()):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue   # a URL: not checked here (no network in tests)
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(base, file)) if file else path
            if not os.path.exists(dest):
                yield "%s: no file %s" % (target, dest)
            elif anchor and (not dest.endswith(".md") or anchor not in anchors(dest)):
                yield "%s: no heading makes the anchor #%s in %s" % (target, anchor, dest)


def main(argv):
    files = argv or ["README.md", "ARCHITECTURE.md"] + sorted(glob.glob("docs/*.md"))
    bad = 0
    for f in files:
        found = list(problems(f))
        for p in found:
            print("not ok - %s: %s" % (f, p))
        if not found:
            print("ok - %s: every relative link names a file and anchor there" % f)
        bad += len(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
