#!/usr/bin/env python3
"""layers.py [OBJDIR]: the architecture's rules, checked on the built objects and the sources.

OBJDIR defaults to $LAYERS_OBJ (make check sets it), else build/cuda.

Prints "ok - ..." / "not ok - ..." lines (tests/run.sh counts them):
- no loop of calls between source files: if A calls B (directly or through others), B never calls A
  (read from the symbols each object defines and uses, so it sees calls, not includes);
- the domain never reaches up into the command layer: no file outside src/builtin/ and src/cli.c
  includes cli.h or a builtin header;
- one file (or one module's files) owns each library: only its owner includes the library's header;
- no source file over 800 lines.
"""
import collections
import fnmatch
import glob
import os
import re
import subprocess
import sys

MAX_LINES = 800
# library header -> the files that may include it (globs, relative to the repository root)
OWNERS = {
    "yaml.h": ["src/ydoc.c"],
    "sqlite3.h": ["src/store*.c", "src/store*.h"],
    "hwloc.h": ["src/topo.c"],
    "hwloc/cudart.h": ["src/topo.c"],
    "mpi.h": ["src/comm.c"],
    "jansson.h": ["src/json.c"],
    "openssl/sha.h": ["src/sha256.c"],
    "openssl/evp.h": ["src/sha256.c"],
    "openssl/err.h": ["src/sha256.c"],
    "cblas.h": ["kernels/cpu_gemm.c"],
    "nccl.h": ["kernels/nccl.cu"],
    "spawn.h": ["src/spawn.c"],
}
COMMAND_LAYER = re.compile(r'#include\s+"(\.\./)*(cli\.h|builtin/[^"]+)"')


def sources():
    out = []
    for pat in ("src/*.c", "src/*.h", "src/*.cu", "src/builtin/*.c", "src/builtin/*.h", "kernels/*.c",
                "kernels/*.h", "kernels/*.cu"):
        out += glob.glob(pat)
    return sorted(out)


def call_graph(objdir):
    defs, uses = {}, collections.defaultdict(set)
    for o in glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True):
        name = os.path.relpath(o, objdir)[:-2]
        if not any(os.path.exists(name + ext) for ext in (".c", ".cu")):
            continue   # a stale object of a source renamed or deleted since
        nm = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        uses[name]
        for line in nm.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRV":
                defs[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                uses[name].add(parts[1])
    edges = {f: {defs[u] for u in us if u in defs and defs[u] != f} for f, us in uses.items()}
    return edges


def loops(edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def check(ok, msg, detail=()):
    print(("ok - " if ok else "not ok - ") + msg)
    for d in detail:
        print("#   " + d)
    return ok


def main(objdir):
    good = True
    edges = call_graph(objdir)
    comps = loops(edges)
    detail = []
    for c in comps:
        detail.append("loop: " + ", ".join(c))
        for a in c:
            detail.append("  %s calls %s" % (a, ", ".join(sorted(x for x in edges[a] if x in c))))
    good &= check(not comps and len(edges) > 10, "no loop of calls between source files (%d objects)" %
                  len(edges), detail)

    srcs = sources()
    bad = []
    for f in srcs:
        if f.startswith("src/builtin/") or f in ("src/cli.c", "src/cli.h", "src/main.c"):
            continue
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            if COMMAND_LAYER.search(line):
                bad.append("%s:%d: %s" % (f, n, line.strip()))
    good &= check(not bad, "the domain never includes the command layer (cli.h, builtin/)", bad)

    bad = []
    # A library's header comes in angle brackets: "spawn.h" is ours, <spawn.h> is POSIX's.
    inc = re.compile(r'#include\s+<([^>]+)>')
    for f in srcs:
        for n, line in enumerate(open(f, encoding="utf-8"), 1):
            m = inc.match(line.strip())
            if m and m.group(1) in OWNERS:
                pats = OWNERS[m.group(1)]
                if not any(fnmatch.fnmatch(f, p) for p in pats):
                    bad.append("%s:%d includes %s (owned by %s)" % (f, n, m.group(1), ", ".join(pats)))
    good &= check(not bad, "each library's header is included by its owner only", bad)

    bad = ["%s: %d lines" % (f, n) for f in srcs
           for n in [sum(1 for _ in open(f, encoding="utf-8"))] if n > MAX_LINES]
    good &= check(not bad, "no source file over %d lines" % MAX_LINES, bad)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LAYERS_OBJ", "build/cuda")))
