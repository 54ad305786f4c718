#!/usr/bin/env python3
"""layers.py [OBJDIR]: the architecture's rules, checked on the built objects and the sources.

OBJDIR defaults to $LAYERS_OBJ (make check sets it), else build/cuda.

Prints "ok - ..." / "not ok - ..." lines (tests/run.sh counts them):
- no loop of calls between source files: if A calls B (directly or through others), B never calls A
  (read from the symbols each object defines and uses, so it sees calls, not includes);
- the domain never reaches up into the command layer: no file outside src/builtin/ and src/cli.c
  includes cli.h or a builtin header;
- one file (or one module's files) owns each library: only its owner includes the library's header;
- no source file over 800 lines;
- the layers ARCHITECTURE.md draws (its "## Layers" figure: each source file named once, a line ending in
  "->" going on below) are kept in order: no include or call from a file of a lower layer to one of a
  higher layer, beyond the few named in UPWARD with their reasons;
- every SQL statement that writes (INSERT, UPDATE, DELETE, REPLACE, CREATE, ALTER, DROP) is in src/store*.c;
- no function in src/ over 100 lines, beyond those named in LONG_FUNCTIONS.
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
    "pcre2.h": ["src/rx.c"],
    "openssl/sha.h": ["src/sha256.c"],
    "openssl/evp.h": ["src/sha256.c"],
    "openssl/err.h": ["src/sha256.c"],
    "cblas.h": ["kernels/cpu_gemm.c"],
    "nccl.h": ["kernels/nccl.cu"],
    "spawn.h": ["src/spawn.c"],
}
# Edges up the layers that the design keeps (at most 3), each with its reason: (from, to) -> why.
UPWARD = {
    ("src/identity.c", "src/command.c"): "the hash of a file a command names must be of the file the run "
    "will run: its placeholders are filled by the run's own command_expand, not a second copy of it",
}
MAX_UPWARD = 3
MAX_FUNCTION_LINES = 100
# Functions over MAX_FUNCTION_LINES left as they are, each by "file:function" (a new one fails).
LONG_FUNCTIONS = {
}
SQL_WRITE = re.compile(r'"[^"\n]*\b(INSERT|UPDATE|DELETE|REPLACE INTO|CREATE|ALTER|DROP)\b[^"\n]*"')
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


def layer_table(path="ARCHITECTURE.md"):
    """[(label, [source file, ...]), ...] from the top layer down, read from the figure under "## Layers":
    a label in the first 14 columns starts a layer, unless the line before ended in "->"; names in
    parentheses are comments. Globs (builtin/*.c, store*.c, kernels/*) are under src/ but kernels/."""
    block = open(path, encoding="utf-8").read().split("## Layers", 1)[1].split("```", 2)[1]
    out, cont = [], False
    for line in block.splitlines():
        if not line.strip() or set(line.strip()) <= set("-"):
            continue
        label, rest = line[:14].strip(), re.sub(r"\([^)]*\)", "", line[14:])
        if label and not cont:
            out.append((label, []))
        out[-1][1].extend(re.findall(r"[\w/*.]+\.(?:c|cu)\b|kernels/\*", rest))
        cont = line.rstrip().endswith("->")
    return out


def file_layers(table, srcs):
    """Each source file (.c, .cu) -> the index of its layer (0 the top); a file named by itself wins
    over a glob. Returns (layers, problems)."""
    where, named, bad = {}, {}, []
    for i, (label, names) in enumerate(table):
        for n in names:
            pat = n if n.startswith("kernels/") else "src/" + n
            hits = [f for f in srcs if f.endswith((".c", ".cu")) and fnmatch.fnmatch(f, pat + ("" if
                    "." in os.path.basename(pat) else ".*"))]
            if not hits:
                bad.append("ARCHITECTURE.md's layer %s names %s: no such file" % (label, n))
            for f in hits:
                if "*" not in n:
                    if f in named:
                        bad.append("%s is in two layers: %s and %s" % (f, table[named[f]][0], label))
                    named[f] = i
                elif f not in where:
                    where[f] = i
    where.update(named)
    bad += ["%s is in no layer of ARCHITECTURE.md" % f for f in srcs
            if f.endswith((".c", ".cu")) and f not in where]
    return where, bad


def source_of(path, where):
    """The source file a header (or an object's stem) stands for: foo.h and foo_int.h -> foo.c."""
    stem = re.sub(r"(_int)?\.(h|c|cu)$", "", path)
    for ext in (".c", ".cu"):
        if stem + ext in where:
            return stem + ext
    return {"src/exitcode.h": "src/util.c", "src/builtin/builtin.h": "src/cli.c"}.get(path)


def include_edges(srcs, where):
    inc = re.compile(r'#include\s+"([^"]+)"')
    edges = collections.defaultdict(set)
    for f in srcs:
        a = source_of(f, where)
        for line in open(f, encoding="utf-8"):
            m = inc.match(line.strip())
            if m:
                b = source_of(os.path.normpath(os.path.join(os.path.dirname(f), m.group(1))), where)
                if a and b and a != b:
                    edges[a].add(b)
    return edges


def upward(calls, srcs):
    """(checks of the figure, the edges up the layers not in UPWARD, UPWARD's edges not there)."""
    where, bad = file_layers(layer_table(), srcs)
    edges = include_edges(srcs, where)
    for a, bs in calls.items():
        for b in bs:
            sa, sb = source_of(a + ".c", where), source_of(b + ".c", where)
            if sa and sb:
                edges[sa].add(sb)
    up = {(a, b) for a, bs in edges.items() for b in bs if where[a] > where[b]}
    return bad, sorted(up - set(UPWARD)), sorted(set(UPWARD) - up)


def long_functions(srcs):
    """"file:function" -> lines, for each function (a line "{" at column 0 to its "}") over the limit."""
    out = {}
    for f in srcs:
        if not f.startswith("src/") or not f.endswith((".c", ".cu")):
            continue
        lines, start, name = open(f, encoding="utf-8").read().split("\n"), None, None
        for i, line in enumerate(lines):
            if line == "{":
                head = " ".join(lines[max(0, i - 3):i])
                m = re.findall(r"(\w+)\s*\(", head)
                start, name = i, m[0] if m else "?"
                for cand in m:
                    if cand not in ("if", "while", "for", "switch", "sizeof"):
                        name = cand
                        break
            elif line == "}" and start is not None:
                if i - start + 1 > MAX_FUNCTION_LINES:
                    out["%s:%s" % (f, name)] = i - start + 1
                start = None
    return out


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

    bad, up, gone = upward(edges, srcs)
    good &= check(not bad, "each source file is in one layer of ARCHITECTURE.md's figure", bad)
    detail = ["%s -> %s: up the layers" % e for e in up] + \
             ["%s -> %s: in UPWARD, but no longer an edge (take it out)" % e for e in gone]
    good &= check(not up and not gone and len(UPWARD) <= MAX_UPWARD,
                  "no include or call up the layers but UPWARD's %d (at most %d)" % (len(UPWARD), MAX_UPWARD),
                  detail)

    bad = ["%s:%d: %s" % (f, n, m.group(0)[:70]) for f in srcs if not re.match(r"src/store[^/]*\.c$", f)
           and not f.endswith(".h") for n, line in enumerate(open(f, encoding="utf-8"), 1)
           for m in [SQL_WRITE.search(line)] if m]
    good &= check(not bad, "every SQL statement that writes is in src/store*.c", bad)

    long = long_functions(srcs)
    detail = ["%s: %d lines" % (k, v) for k, v in sorted(long.items()) if k not in LONG_FUNCTIONS] + \
             ["%s: in LONG_FUNCTIONS, but no longer over %d lines" % (k, MAX_FUNCTION_LINES)
              for k in sorted(set(LONG_FUNCTIONS) - set(long))]
    good &= check(not detail, "no function in src/ over %d lines but LONG_FUNCTIONS' %d" %
                  (MAX_FUNCTION_LINES, len(LONG_FUNCTIONS)), detail)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LAYERS_OBJ", "build/cuda")))
