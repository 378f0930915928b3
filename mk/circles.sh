#!/bin/sh
# circles.sh - fails when the objects of one folder call each other in a circle, unless a file of the circle says why ("Circle:" in its comments).
#
#   sh mk/circles.sh OBJDIR [SRCROOT]     (OBJDIR: build/release/obj; SRCROOT: the tree, default .)
#
# Data flows one way (docs/ARCHITECTURE.md): within a folder, a file that
# uses another's symbols is used by none of the files it reaches.  A
# circle is found from the objects' defined and undefined symbols (nm),
# folder by folder; one that must stay is named in a comment of one of its
# files, "Circle: a.c <-> b.c", with why.
set -u
obj=${1:?usage: circles.sh OBJDIR [SRCROOT]}
root=${2:-.}
exec python3 - "$obj" "$root" <<'PY'
import collections, glob, os, subprocess, sys
obj, root = sys.argv[1], sys.argv[2]

def nm(o, *flags):
    out = subprocess.run(["nm", *flags, o], capture_output=True, text=True).stdout
    return [l.split() for l in out.splitlines() if l.strip()]

def circles(g):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return found

bad = 0
folders = sorted({os.path.dirname(p) for p in glob.glob(obj + "/**/*.o", recursive=True)})
for folder in folders:
    rel = os.path.relpath(folder, obj)
    if rel.split(os.sep)[0] in ("tests", "gen", "debug"):
        continue
    objs = sorted(glob.glob(folder + "/*.o"))
    owner = {}
    for o in objs:
        for f in nm(o, "-g", "--defined-only"):
            if len(f) == 3:
                owner[f[2]] = os.path.basename(o)[:-2]
    g = collections.defaultdict(set)
    for o in objs:
        me = os.path.basename(o)[:-2]
        g[me]
        for f in nm(o, "-u"):
            if owner.get(f[-1], me) != me:
                g[me].add(owner[f[-1]])
    for comp in circles(g):
        said = False
        for name in comp:
            src = os.path.join(root, rel, name + ".c")
            if os.path.exists(src) and "Circle:" in open(src, errors="replace").read():
                said = True
        if not said:
            print("circles: %s: %s call each other in a circle, and none of them says why (\"Circle:\")"
                  % (rel, ", ".join(n + ".c" for n in comp)))
            bad = 1
sys.exit(bad)
PY
