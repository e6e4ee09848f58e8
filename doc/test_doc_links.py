#!/usr/bin/python3
"""test_doc_links.py [FILE.md...] - every relative link of these Markdown
files (default: README.md, doc/HACKING.md, BENCHMARKS.md and
doc/bench-history/*.md: make check) resolves to a file or folder
of the repository, and every #anchor to a heading of its target (GitHub's
slugs).  Links inside fenced blocks or code spans and absolute URLs are
not checked.  Exit 1 on a broken link."""
import glob
import os
import re
import sys

TOP = os.path.abspath(os.environ.get("srcdir", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")))
# [text](target) or ![alt](target); the text may hold `code` and span lines
LINK = re.compile(r"!?\[((?:[^\]`]|`[^`]*`)*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(path):
    """The file's text with fenced blocks, and code spans that show a
    link, blanked (newlines kept, so offsets give line numbers)."""
    out, fenced = [], False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("\n")
        elif fenced:
            out.append("\n")
        else:
            out.append(re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0))
                              if "](" in m.group(0) else m.group(0), line))
    return "".join(out)


def slugs(path):
    out, seen = set(), {}
    for line in prose(path).split("\n"):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
        s = s.replace(" ", "-")
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else "%s-%d" % (s, k))
    return out


def check(md):
    bad, n_links = [], 0
    here = os.path.dirname(os.path.abspath(md))
    text = prose(md)
    for m in LINK.finditer(text):
        target = m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue                            # http:, https:, mailto:
        n_links += 1
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, path)) if path \
            else os.path.abspath(md)
        where = "%s:%d: %s" % (os.path.relpath(os.path.abspath(md), TOP),
                               text.count("\n", 0, m.start()) + 1, target)
        if not (full == TOP or full.startswith(TOP + os.sep)):
            bad.append(where + ": outside the repository")
        elif not os.path.exists(full):
            bad.append(where + ": no such file")
        elif anchor and full.endswith(".md") and anchor not in slugs(full):
            bad.append(where + ": no heading #" + anchor)
    return n_links, bad


def main(files):
    fails = 0
    for md in files:
        n_links, bad = check(md)
        for b in bad:
            print("FAIL: " + b)
        fails += len(bad)
        print("%s: %d relative links, %d broken"
              % (os.path.relpath(os.path.abspath(md), TOP), n_links, len(bad)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [os.path.join(TOP, "README.md"),
                                   os.path.join(TOP, "doc", "HACKING.md"),
                                   os.path.join(TOP, "BENCHMARKS.md")]
                  + sorted(glob.glob(os.path.join(TOP, "doc", "bench-history",
                                                  "*.md")))))
