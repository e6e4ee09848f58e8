#!/usr/bin/python3
"""test_log_messages.py - every message the plugins log at info, warning,
error or fatal level has an entry in doc/admin-guide.md (its meaning and
fix, under "Troubleshooting").

The messages are found mechanically: every call of Slurm's error(), info(),
warning(), fatal(), slurm_error(), slurm_info() and of the Slurm-free core's
se_log() / se_log_limited() at SE_LOG_ERROR or SE_LOG_INFO in src/.  Its
format string is cut at the conversions (%s, %u, ...); the longest literal
piece must appear word for word in the guide.  A new log line without an
entry fails make check.

  doc/test_log_messages.py          check (make check)
  doc/test_log_messages.py --list   print file:line and the piece to quote
"""
import os
import re
import sys

SRCDIR = os.environ.get("srcdir", os.path.join(os.path.dirname(
    os.path.abspath(__file__)), ".."))
GUIDE = os.path.join(SRCDIR, "doc", "admin-guide.md")

CALL = re.compile(r"\b(error|info|warning|fatal|slurm_error|slurm_info|"
                  r"se_log|se_log_limited)\s*\(")
# printf conversions, and macros such as PRIu64 between two literals
CONVERSION = re.compile(r"%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?"
                        r"(?:hh|h|ll|l|L|z|j|t)?(?:p[A-Z]?|[diouxXeEfFgGcsm])")
QUIET_LEVELS = ("SE_LOG_DEBUG", "SE_LOG_SAMPLE")
# the logging machinery itself, not a message
SKIP_FILES = ("src/common/se_log.c", "src/common/se_slurm_log.c")


def _call_args(text, start):
    """The text between the call's parentheses (start: just after '(')."""
    depth, i, in_str = 1, start, False
    while i < len(text) and depth:
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
    return text[start:i - 1]


def _format(args):
    """The format string: the first run of adjacent literals, a macro
    between two literals (PRIu64) read as a conversion."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|(\bPRI[a-zA-Z0-9]+\b)|(,)',
                       args)
    out, started = [], False
    for lit, macro, comma in parts:
        if comma:
            if started:
                break
            continue
        started = True
        out.append(lit if not macro else "%s")
    return "".join(out)


def _pieces(fmt):
    pieces = []
    # "%%s" is a conversion of a second formatting pass
    for piece in CONVERSION.split(fmt.replace("\\n", "").replace("%%",
                                                                  "%")):
        piece = piece.strip(" :;,.()'\"-=")
        if len(re.findall(r"[A-Za-z]", piece)) >= 3:
            pieces.append(piece)
    return pieces


def messages(srcdir=SRCDIR):
    """[(file:line, format, piece to quote)] of every message."""
    found = []
    src = os.path.join(srcdir, "src")
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith(".c"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, srcdir)
            if rel in SKIP_FILES:
                continue
            with open(path) as handle:
                text = handle.read()
            for m in CALL.finditer(text):
                line_start = text.rfind("\n", 0, m.start()) + 1
                if text[line_start:m.start()].lstrip().startswith(("*",
                                                                  "//")):
                    continue            # in a comment
                if text[m.start() - 1] in "_.>" or \
                        re.match(r"\s*(static|extern)\b",
                                 text[line_start:m.start()]):
                    continue
                args = _call_args(text, m.end())
                if m.group(1).startswith("se_log") and (
                        any(q in args for q in QUIET_LEVELS) or
                        not re.search(r"SE_LOG_(ERROR|INFO|WARN)", args)):
                    continue
                fmt = _format(args)
                pieces = _pieces(fmt)
                if not pieces:
                    continue            # "%s: %s": a message made elsewhere
                line = text.count("\n", 0, m.start()) + 1
                found.append(("%s:%d" % (rel, line), fmt,
                              max(pieces, key=len)))
    return found


def main():
    found = messages()
    if "--list" in sys.argv:
        for where, fmt, piece in found:
            print("%s\n    %s\n    -> %s" % (where, fmt, piece))
        return 0
    with open(GUIDE) as handle:
        guide = handle.read()
    missing = [(w, f, p) for w, f, p in found if p not in guide]
    for where, fmt, piece in missing:
        print("FAIL: %s: message \"%s\" has no entry in doc/admin-guide.md "
              "(quote \"%s\")" % (where, fmt, piece))
    print("%d log messages, %d in the admin guide" % (
        len(found), len(found) - len(missing)))
    if len(found) < 50:
        print("FAIL: only %d messages found: the extractor is broken"
              % len(found))
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
