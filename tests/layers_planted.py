#!/usr/bin/env python3
"""layers_planted.py: each rule of tests/layers.py catches a violation planted for it.

A rule is only as good as the violation it was seen to catch: for every rule, a planted case (text added
to a copy of a real source file, a call or a symbol added to the real call graph) must be reported, and
a near miss that is no violation must not. Run from the repository root; prints "ok - ..." lines.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402

failed = 0


def expect(got, want, msg):
    global failed
    ok = bool(got) == want
    failed += not ok
    print(("ok - " if ok else "not ok - ") + "%s: %s" % (msg, "reported" if got else "not reported"))
    for g in (got if isinstance(got, (list, tuple)) else [])[:3]:
        print("#   %s" % (g,))


def files_with(path, extra):
    """The real tree's sources, with extra text appended to path (a new file when it is not there)."""
    files = {f: open(f, encoding="utf-8").read() for f in layers.sources()}
    files[path] = files.get(path, "") + extra
    return files


def function(name, lines, brace_on_signature):
    body = "".join("\tx += %d;\n" % i for i in range(lines - 2))
    head = "static int %s(int x)%s" % (name, " {\n" if brace_on_signature else "\n{\n")
    return "\n" + head + body + "}\n"


# Call graph: a loop between two files; none without the call back.
expect(layers.loops({"src/a": {"src/b"}, "src/b": {"src/a"}}), True, "a loop of two calls")
expect(layers.loops({"src/a": {"src/b"}, "src/b": set()}), False, "a call without the call back")

# The command layer, included from the domain.
expect(layers.command_layer(files_with("src/plan.c", '#include "builtin/builtin.h"\n')), True,
       "the domain including a builtin header")
expect(layers.command_layer(files_with("src/builtin/plan.c", '#include "builtin.h"\n')), False,
       "a builtin including its own header")

# A library's header outside its owner.
expect(layers.owners(files_with("src/report_run.c", "#include <sqlite3.h>\n")), True,
       "sqlite3.h included by a report file")
expect(layers.owners(files_with("src/report_run.c", "#include <stdio.h>\n")), False, "stdio.h included")

# A file over the limit.
expect(layers.too_long_files(files_with("src/plan.c", "\n" * layers.MAX_LINES)), True, "a file over the limit")

# A call up the layers: util.c (the bottom) calling run.c (near the top).
bad, up, gone = layers.upward({"src/util": {"src/run"}}, layers.sources())
expect(up, True, "a call from util.c up to run.c")

# SQL that writes outside the store: lower case, split over literals; a message is not SQL.
expect(layers.sql_writes(files_with("src/report_run.c", 'static const char q[] = "insert into cells(x) values (1)";\n')),
       True, "a lower-case insert into outside the store")
expect(layers.sql_writes(files_with("src/report_run.c", 'static const char q[] = "UPDATE cells "\n\t"SET state = 1";\n')),
       True, "an UPDATE ... SET split over two string literals")
expect(layers.sql_writes(files_with("src/report_run.c", 'static const char q[] = "Delete From results";\n')),
       True, "a mixed-case delete from")
expect(layers.sql_writes(files_with("src/report_run.c", 'static void f(void) { error("cannot create \'%s\'", p); }\n')),
       False, "a message that says create")
expect(layers.sql_writes(files_with("src/store_cells.c", 'static const char q[] = "insert into cells(x) values (1)";\n')),
       False, "an insert into in the store")

# Long functions, whatever the brace style, in src/ and kernels/.
for path in ("src/plan.c", "kernels/cpu_copy.c", "kernels/cuda_copy.cu"):
    got = layers.long_functions(files_with(path, function("planted_long", 134, True)))
    expect([k for k in got if k == path + ":planted_long"], True, "a 134-line function, { on its signature, in " + path)
got = layers.long_functions(files_with("src/plan.c", function("planted_long", 134, False)))
expect([k for k in got if k == "src/plan.c:planted_long"], True, "a 134-line function, { on a line of its own")
got = layers.long_functions(files_with("src/plan.c", function("planted_short", 100, True)))
expect([k for k in got if k.endswith(":planted_short")], False, "a 100-line function")
got = layers.long_functions(files_with("src/plan.c", "static const int planted_table[] = {\n" + "\t1,\n" * 150 + "};\n"))
expect([k for k in got if "planted" in k], False, "a 150-line table (no function)")

# A pure stage calling I/O, read from the symbols its object uses.
expect(layers.impure_stages({"src/report_agg": {"fprintf", "sqrt"}}), True, "report_agg.o calling fprintf")
expect(layers.impure_stages({"src/stats": {"store_query"}}), True, "stats.o calling the store")
expect(layers.impure_stages({"src/report_pair": {"sqrt", "xmalloc"}}), False, "report_pair.o computing")

# A pure stage or header including a printer's or the statements' header; a pure one is no violation.
expect(layers.impure_includes(files_with("src/report_pair.c", '#include "report_plan.h"\n')), True,
       "report_pair.c including report_plan.h")
expect(layers.impure_includes(files_with("src/report_rows.h", '#include "table.h"\n')), True,
       "report_rows.h including table.h")
expect(layers.impure_includes(files_with("src/report_verdict.c", '#include "stats.h"\n')), False,
       "report_verdict.c including stats.h")

# A report stage past the planner reading the options; the planner and the entry points may.
expect(layers.options_past_planner(files_with("src/report_query.c",
       "static int planted(const struct report_plan *p)\n{\n\tconst struct report_opts *o = planted_opts;\n\treturn 0;\n}\n")),
       True, "report_query.c reading the options in a local")
expect(layers.options_past_planner(files_with("src/report_plot.c",
       "static int planted(const struct report_opts *o, double v);\n")),
       True, "report_plot.c taking the options")
expect(layers.options_past_planner(files_with("src/report_run.c", "")), False, "report_run.c as it is")
expect(layers.options_past_planner(files_with("src/report_plan.c",
       "static int planted(const struct report_opts *o);\n")), False, "the planner taking the options")

# A printer running a statement or including the statements' header; its output file is no statement.
expect(layers.querying_printers({"src/report_figure": {"report_plan_query", "report_query_score_pairs"}}, {}),
       True, "report_figure.o running a statement")
expect(layers.querying_printers({}, files_with("src/report_html.c", '#include "report_query.h"\n')), True,
       "report_html.c including report_query.h")
expect(layers.querying_printers({"src/report_print": {"store_out_open", "table_print"}}, {}), False,
       "report_print.o writing its file")

print("# %d planted checks failed" % failed)
sys.exit(1 if failed else 0)
