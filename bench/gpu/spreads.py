# spreads.py: how far apart the medians of passes of one cell are, for spans.sh and passes_rest.sh.
#   python3 spreads.py LABEL:ROUND:DB[,DB...]...
# Each argument is one run of the passes (their ok results in pass order, over the databases given): a line
# with its spread ((max - min) / min of the medians), the spread of their cycles (median x SM clock: what is
# left once the clock is taken out), the medians, the SM clocks and the walls; then for each LABEL the range
# and median of its runs' spreads and how many were within 0.5 %.
import sqlite3
import statistics
import sys


def spread(m):
    return (max(m) - min(m)) / min(m) * 100 if len(m) > 1 else float("nan")


by = {}
for arg in sys.argv[1:]:
    label, run, paths = arg.split(":", 2)
    rows = []
    for p in paths.split(","):
        rows += sqlite3.connect(p).execute("SELECT median, sm_clock, wall FROM v_results WHERE status = 'ok'"
                                           " ORDER BY pass").fetchall()
    m = [r[0] for r in rows]
    s, cyc = spread(m), spread([r[0] * (r[1] or float("nan")) for r in rows])
    by.setdefault(label, []).append(s)
    print(f"{label} round {run}: spread {s:.3f} % (cycles {cyc:.3f} %)  medians "
          + " ".join(f"{r[0] * 1e6:.2f}" for r in rows)
          + "  MHz " + " ".join(f"{r[1] or 0:.0f}" for r in rows)
          + "  wall " + " ".join(f"{r[2]:.2f}" for r in rows))
for label, ss in by.items():
    print(f"{label}: spread {min(ss):.2f}-{max(ss):.2f} % (median {statistics.median(ss):.3f}),"
          f" {sum(s <= 0.5 for s in ss)} of {len(ss)} within 0.5 %")
