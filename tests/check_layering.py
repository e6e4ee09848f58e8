#!/usr/bin/python3
"""check_layering.py - no circle between the source files of src/.

    tests/check_layering.py BUILD_OBJ_DIR [--baseline FILE] [--graph]

The call graph at file level, from the built objects: file A uses file B
when an object compiled from A has an undefined symbol (a function or a
global) that an object compiled from B defines (`nm`).  Symbols only
reached through a function pointer (a hook, an ops table) are not seen:
that is the point of a hook, and what HACKING's layers allow.  A circle is
a strongly connected component of more than one file: somewhere each of its
files calls and is called by another of them, so none of them can be read,
tested or replaced alone.

Known circles are listed in the baseline (tests/layering-baseline.txt), one
per line, its files sorted and separated by spaces.  The check fails on a
circle that is not listed (a new one) and on a listed one that is gone (the
list must shrink with the code, so a fix is not undone unseen).  --graph
prints every file's uses.

Only the objects of this build are seen: a file compiled only for another
Slurm release (gres_gpu_2311.c) is checked by that release's build.
"""
import argparse
import os
import re
import subprocess
import sys

OBJ_NAME = re.compile(r"^(?:.*_la-|.*-)?(?P<stem>[^/]+)\.o$")


def source_of(obj_path, obj_dir, src_dir):
    """src/x/y/.libs/lib_la-foo.o -> src/x/y/foo.c (when it exists)."""
    rel = os.path.relpath(obj_path, obj_dir)
    parts = rel.split(os.sep)
    if ".libs" in parts:
        parts.remove(".libs")
    directory = os.sep.join(parts[:-1])
    name = parts[-1]
    candidates = [name[:-2]]
    m = OBJ_NAME.match(name)
    if m:
        candidates.append(m.group("stem"))
    for stem in candidates:
        path = os.path.join(directory, stem + ".c")
        if os.path.exists(os.path.join(src_dir, path)):
            return path
    return None


def symbols(obj):
    """(defined, undefined) global symbols of one object."""
    out = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "--undefined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, undefined


def file_graph(obj_dir, src_dir):
    """{source: set(sources it uses)} over every object under obj_dir/src."""
    defines, uses = {}, {}
    for root, _dirs, files in os.walk(os.path.join(obj_dir, "src")):
        for name in files:
            if not name.endswith(".o"):
                continue
            obj = os.path.join(root, name)
            src = source_of(obj, obj_dir, src_dir)
            if src is None:
                continue
            d, u = symbols(obj)
            for sym in d:
                defines.setdefault(sym, set()).add(src)
            uses.setdefault(src, set()).update(u)
    graph = {}
    for src, undefined in uses.items():
        graph[src] = set()
        for sym in undefined:
            for target in defines.get(sym, ()):
                if target != src:
                    graph[src].add(target)
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def read_baseline(path):
    known = set()
    with open(path) as handle:
        for line in handle:
            line = line.split("#", 1)[0].split()
            if line:
                known.add(tuple(sorted(line)))
    return known


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("obj_dir")
    parser.add_argument("--src-dir", default=os.path.dirname(here))
    parser.add_argument("--baseline",
                        default=os.path.join(here, "layering-baseline.txt"))
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()

    graph = file_graph(args.obj_dir, args.src_dir)
    if not graph:
        print("check_layering: no objects under %s/src (build first)"
              % args.obj_dir)
        return 1
    if args.graph:
        for src in sorted(graph):
            print("%s -> %s" % (src, " ".join(sorted(graph[src])) or "-"))
    found = set(circles(graph))
    known = read_baseline(args.baseline)
    new, gone = found - known, known - found
    for comp in sorted(found & known):
        print("known circle (baseline): %s" % " ".join(comp))
    for comp in sorted(new):
        print("FAIL: new circle between files: %s" % " ".join(comp))
        for src in comp:
            inside = sorted(graph[src] & set(comp))
            print("      %s uses %s" % (src, " ".join(inside)))
    for comp in sorted(gone):
        print("FAIL: circle gone, remove it from %s: %s"
              % (os.path.basename(args.baseline), " ".join(comp)))
    print("%d files, %d circles (%d known, %d new, %d gone from the baseline)"
          % (len(graph), len(found), len(found & known), len(new), len(gone)))
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
