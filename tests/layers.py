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
- every SQL statement that writes (INSERT, UPDATE, DELETE, REPLACE, CREATE, ALTER, DROP, in any letter
  case, across adjacent string literals) is in src/store*.c;
- no function in src/ or kernels/ over 100 lines (counted by brace depth, whatever the brace style), beyond
  those named in LONG_FUNCTIONS with their reasons;
- the pure stages of a report (PURE_STAGES) call no I/O: read from their objects' symbols;
- a report's options stop at its planner: past report.c and report_plan.c, `struct report_opts` is named
  only in the signatures of OPTIONS_TAKEN (the entry points that hand the options to report_plan_init);
- the printers of a report (PRINTERS) read nothing from the database: they include no statement's header
  and their objects call no statement (read from the symbols).

tests/layers_planted.py plants a violation of each rule and checks that the rule catches it.
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
    "cupti_profiler_host.h": ["src/counters_cupti.cu", "tests/unit/fake_cupti.cc"],
    "cupti_profiler_target.h": ["src/counters_cupti.cu", "tests/unit/fake_cupti.cc"],
    "cupti_range_profiler.h": ["src/counters_cupti.cu", "tests/unit/fake_cupti.cc"],
    "cupti_target.h": ["src/counters_cupti.cu", "tests/unit/fake_cupti.cc"],
    "cupti_result.h": ["src/counters_cupti.cu", "tests/unit/fake_cupti.cc"],
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
    "kernels/cuda_decode_attn.cu:attn_split_kernel": "one CUDA kernel whose steps (load the query, score a "
    "tile of keys, the running softmax, accumulate values, write the partial) share registers and shared "
    "memory: split into __device__ functions it reads worse, and the compiler inlines them back",
}
COMMAND_LAYER = re.compile(r'#include\s+"(\.\./)*(cli\.h|builtin/[^"]+)"')


def sources():
    out = []
    for pat in ("src/*.c", "src/*.h", "src/*.cu", "src/builtin/*.c", "src/builtin/*.h", "kernels/*.c",
                "kernels/*.h", "kernels/*.cu"):
        out += glob.glob(pat)
    return sorted(out)


def call_graph(objdir):
    """(file stem -> the stems it calls, file stem -> every symbol its object uses)."""
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
    return edges, uses


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


def c_tokens(text):
    """The text of a C (or CUDA) file as (kind, value, line) tokens: kind "str" for a string literal (its
    contents), "{" or "}" for braces, "code" for any other run of code; comments, character literals and
    preprocessor lines (with their continuations) are dropped."""
    out, i, n, line = [], 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line, at_line_start, i = line + 1, True, i + 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if at_line_start and c == "#":
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    line, i = line + 1, i + 1
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                out.append(("str", text[i + 1:j], line))
            line += text.count("\n", i, j)
            i = j + 1
        elif c in "{}":
            out.append((c, c, line))
            i += 1
        else:
            j = i
            while j < n and text[j] not in "{}\"'\n/" and not text.startswith("//", j):
                j += 1
            j = max(j, i + 1)
            out.append(("code", text[i:j], line))
            i = j
    return out


def functions(text):
    """(name, first line, lines) of each function definition, by brace depth whatever the brace style:
    a "{" opened where no other brace is open (or only those of extern "C" and namespace blocks) right
    after a ")" starts one, its matching "}" ends it; lines are counted from the "{" to the "}"."""
    out, stack, prev = [], [], ""
    for kind, val, line in c_tokens(text):
        if kind == "{":
            outer = all(k == "open" for k, _, _ in stack)
            head = prev.rstrip()
            if outer and re.search(r"\)\s*(const|noexcept|override)?$", head):
                stack.append(("fn", function_name(head), line))
            elif outer and re.search(r'(extern\s*$|namespace\s*\w*$)', head):
                stack.append(("open", "", line))
            else:
                stack.append(("block", "", line))
            prev = ""
        elif kind == "}":
            if stack:
                k, name, start = stack.pop()
                if k == "fn":
                    out.append((name, start, line - start + 1))
            prev = ""
        elif kind == "str":
            prev += '"' + '"'
        else:
            # What comes before a brace: the code since the last brace or statement's end.
            prev = (prev + " " + val).split(";")[-1][-400:]
    return out


def function_name(head):
    """The name before the parameter list that head (a definition up to its "{") ends with."""
    depth, i = 0, head.rindex(")")
    while i >= 0:
        depth += {")": 1, "(": -1}.get(head[i], 0)
        if depth == 0:
            break
        i -= 1
    m = re.search(r"(\w+)\s*$", head[:max(i, 0)])
    return m.group(1) if m else "?"


def long_functions(files):
    """"file:function" -> lines, for each function over the limit, in src/ and kernels/."""
    out = {}
    for f, text in files.items():
        if f.endswith((".c", ".cu")) and f.startswith(("src/", "kernels/")):
            for name, _, n in functions(text):
                if n > MAX_FUNCTION_LINES:
                    out["%s:%s" % (f, name)] = n
    return out


# SQL that writes, in any letter case, in the text of adjacent string literals (a statement is often
# written as several): the statement's shape, so that "cannot create '%s'" in a message is not one.
SQL_WRITE = re.compile(r"\b(insert\s+(or\s+\w+\s+)?into|replace\s+into|update\s+\w+\s+set|delete\s+from|"
                       r"create\s+(temp\s+|temporary\s+|unique\s+)?(table|index|view|trigger)|alter\s+table|"
                       r"drop\s+(table|index|view|trigger))\b", re.IGNORECASE)


def sql_writes(files):
    """"file:line: text" of each group of adjacent string literals holding SQL that writes, outside
    src/store*.c (and headers, whose SQL macros the store's files use)."""
    bad = []
    for f, text in files.items():
        if re.match(r"src/store[^/]*\.c$", f) or f.endswith(".h"):
            continue
        group, first = [], 0
        for kind, val, line in c_tokens(text) + [("end", "", 0)]:
            if kind == "str":
                first = first if group else line
                group.append(val)
                continue
            if kind == "code" and not val.strip():
                continue
            m = SQL_WRITE.search(" ".join(group)) if group else None
            if m:
                bad.append("%s:%d: %s" % (f, first, m.group(0)[:70]))
            group = []
    return bad


# The pure stages of a report: rows in, rows out. They call no I/O: no stdio, no file, no message
# (error(), warning() print), no store, query, table printer or process (read from their objects).
PURE_STAGES = ["src/report_agg.c", "src/report_pair.c", "src/report_verdict.c", "src/stats.c"]
IO_SYMBOL = re.compile(r"^(f?printf|vf?printf|puts|fputs|fputc|putc|putchar|fwrite|fread|fopen|fclose|fdopen|"
                       r"fflush|popen|write|read|open|close|stdout|stderr|error|warning|store_\w+|sqlite3_\w+|"
                       r"query_\w+|table_\w+|spawn_\w+|report_rows_fetch)$")


# What a pure stage (and each header here) may include of ours: the rows, the aggregation, the statistics
# and the helpers; no report.h, report_plan.h, report_query.h or report_print.h (the plan, the statements,
# the printers), store.h or table.h.
PURE_HEADERS = ["src/report_agg.h", "src/report_rows.h", "src/better.h", "src/stats.h", "src/util.h"]
OUR_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def our_includes(files, f):
    """(as written, the repository path) of each header of ours that f includes (files: path -> text)."""
    for inc in OUR_INCLUDE.findall(files.get(f, "")):
        yield inc, os.path.normpath(os.path.join(os.path.dirname(f), inc))


def impure_includes(files):
    """"file includes header" for each pure stage or pure header that includes a header of ours that is not
    pure (files: path -> text)."""
    bad = []
    for f in PURE_STAGES + PURE_HEADERS:
        bad += ["%s includes %s" % (f, inc) for inc, path in our_includes(files, f) if path not in PURE_HEADERS]
    return bad


def impure_stages(uses):
    """"file: symbols" for each pure stage whose object uses an I/O symbol (uses: file stem -> symbols)."""
    bad = []
    for f in PURE_STAGES:
        io = sorted(u for u in uses.get(f[:-2], ()) if IO_SYMBOL.match(u))
        if io:
            bad.append("%s calls %s" % (f, ", ".join(io)))
    return bad


# The report files that may name struct report_opts, and where: the options themselves, the planner, and
# the functions that take the options to hand them to report_plan_init (file -> function names).
OPTIONS_FILES = ["src/report.c", "src/report.h", "src/report_plan.c"]
OPTIONS_TAKEN = {
    "src/report_plan.h": {"report_plan_init"},
    "src/report_run.c": {"report_run"},
    "src/report_compare.c": {"report_compare", "open_side"},
}
OPTIONS_NAMED = re.compile(r"^(.*)struct report_opts\b", re.M)


def options_past_planner(files):
    """"file:line: text" for each report file past the planner that names struct report_opts other than in
    the signature of a function OPTIONS_TAKEN allows there (files: path -> text)."""
    bad = []
    for f, text in sorted(files.items()):
        if not re.match(r"src/report_\w+\.[ch]$", f) or f in OPTIONS_FILES:
            continue
        for m in OPTIONS_NAMED.finditer(text):
            sig = re.match(r"[\w\s\*]*?\b(\w+)\([^=;()]*$", m.group(1))
            if not sig or sig.group(1) not in OPTIONS_TAKEN.get(f, ()):
                line = text.count("\n", 0, m.start()) + 1
                bad.append("%s:%d: %s" % (f, line, text.split("\n")[line - 1].strip()))
    return bad


# The printers of a report: given the rows, the plan and report_out, they print. What they print is read
# before (report_run.c): no statement, no SQLite, no header of the statements.
PRINTERS = ["src/report_print.c", "src/report_plot.c", "src/report_axis.c", "src/report_figure.c",
            "src/report_html.c"]
QUERY_HEADERS = ["src/report_query.h", "src/report_conditions.h", "src/store_int.h"]
QUERY_SYMBOL = re.compile(r"^(report_query_\w+|report_plan_(query|exclude|arms|metric|rows\w*|points)|"
                          r"report_rows_fetch|report_conditions_page|report_expr_\w+|store_query\w*|"
                          r"sqlite3_\w+)$")


def querying_printers(uses, files):
    """"file calls/includes what" for each printer that calls a statement or includes its header (uses: file
    stem -> symbols; files: path -> text)."""
    bad = []
    for f in PRINTERS:
        calls = sorted(u for u in uses.get(f[:-2], ()) if QUERY_SYMBOL.match(u))
        if calls:
            bad.append("%s calls %s" % (f, ", ".join(calls)))
        bad += ["%s includes %s" % (f, inc) for inc, path in our_includes(files, f) if path in QUERY_HEADERS]
    return bad


def check(ok, msg, detail=()):
    print(("ok - " if ok else "not ok - ") + msg)
    for d in detail:
        print("#   " + d)
    return ok


def main(objdir):
    good = True
    edges, uses = call_graph(objdir)
    comps = loops(edges)
    detail = []
    for c in comps:
        detail.append("loop: " + ", ".join(c))
        for a in c:
            detail.append("  %s calls %s" % (a, ", ".join(sorted(x for x in edges[a] if x in c))))
    good &= check(not comps and len(edges) > 10, "no loop of calls between source files (%d objects)" %
                  len(edges), detail)

    srcs = sources()
    files = {f: open(f, encoding="utf-8").read() for f in srcs}
    good &= check(not command_layer(files), "the domain never includes the command layer (cli.h, builtin/)",
                  command_layer(files))
    good &= check(not owners(files), "each library's header is included by its owner only", owners(files))

    good &= check(not too_long_files(files), "no source file over %d lines" % MAX_LINES, too_long_files(files))

    bad, up, gone = upward(edges, srcs)
    good &= check(not bad, "each source file is in one layer of ARCHITECTURE.md's figure", bad)
    detail = ["%s -> %s: up the layers" % e for e in up] + \
             ["%s -> %s: in UPWARD, but no longer an edge (take it out)" % e for e in gone]
    good &= check(not up and not gone and len(UPWARD) <= MAX_UPWARD,
                  "no include or call up the layers but UPWARD's %d (at most %d)" % (len(UPWARD), MAX_UPWARD),
                  detail)

    bad = sql_writes(files)
    good &= check(not bad, "every SQL statement that writes (any letter case) is in src/store*.c", bad)

    long = long_functions(files)
    detail = ["%s: %d lines" % (k, v) for k, v in sorted(long.items()) if k not in LONG_FUNCTIONS] + \
             ["%s: in LONG_FUNCTIONS, but no longer over %d lines" % (k, MAX_FUNCTION_LINES)
              for k in sorted(set(LONG_FUNCTIONS) - set(long))]
    good &= check(not detail and sum(1 for _ in long_functions_seen(files)) > 100,
                  "no function in src/ or kernels/ over %d lines (by brace depth) but LONG_FUNCTIONS' %d" %
                  (MAX_FUNCTION_LINES, len(LONG_FUNCTIONS)), detail)

    bad = impure_stages(uses)
    good &= check(not bad and all(f[:-2] in uses for f in PURE_STAGES),
                  "the pure stages of a report (%s) call no I/O" % ", ".join(PURE_STAGES), bad)
    bad = impure_includes(files)
    good &= check(not bad and all(f in files for f in PURE_HEADERS),
                  "the pure stages include only the pure headers (%s)" % ", ".join(PURE_HEADERS), bad)
    bad = options_past_planner(files)
    good &= check(not bad and all(f in files for f in OPTIONS_TAKEN),
                  "a report's options stop at its planner (report_plan_init and the entry points that call it)",
                  bad)
    bad = querying_printers(uses, files)
    good &= check(not bad and all(f[:-2] in uses for f in PRINTERS),
                  "the printers of a report (%s) call no statement" % ", ".join(PRINTERS), bad)
    return 0 if good else 1


def long_functions_seen(files):
    """Every function the scanner finds, so that a scanner that finds none cannot pass the check."""
    for f, text in files.items():
        if f.endswith((".c", ".cu")) and f.startswith(("src/", "kernels/")):
            yield from functions(text)


def too_long_files(files):
    return ["%s: %d lines" % (f, t.count("\n")) for f, t in sorted(files.items()) if t.count("\n") > MAX_LINES]


def command_layer(files):
    """"file:line: include" for each include of the command layer from the domain."""
    return ["%s:%d: %s" % (f, n, line.strip()) for f, text in sorted(files.items())
            if not f.startswith("src/builtin/") and f not in ("src/cli.c", "src/cli.h", "src/main.c")
            for n, line in enumerate(text.split("\n"), 1) if COMMAND_LAYER.search(line)]


def owners(files):
    """"file:line includes lib.h" for each library header included by a file that does not own it."""
    # A library's header comes in angle brackets: "spawn.h" is ours, <spawn.h> is POSIX's.
    inc, bad = re.compile(r'#include\s+<([^>]+)>'), []
    for f, text in sorted(files.items()):
        for n, line in enumerate(text.split("\n"), 1):
            m = inc.match(line.strip())
            if m and m.group(1) in OWNERS and not any(fnmatch.fnmatch(f, p) for p in OWNERS[m.group(1)]):
                bad.append("%s:%d includes %s (owned by %s)" % (f, n, m.group(1), ", ".join(OWNERS[m.group(1)])))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LAYERS_OBJ", "build/cuda")))
