#!/usr/bin/env python3
"""summary_check.py CSV [--group COL] [--unit COL]: check the --summary rows of a report in CSV against the
rows above them.

Computed here, independently of sweep: the CSV's stat column names a summary row's statistic (empty on
the table's rows); with --group COL the summary rows of group g are over the table's rows whose COL is g
(without it, over every row). Each group's units are the values of --unit COL (without it, each row is
one): a unit's value in a column is the mean of its rows' values there, and each statistic is over the
units that have one: the median, min, max, mean, the two-sided 95 % Student t interval of the mean
(mean -+ t(0.975, n-1) * s / sqrt(n), s with the n-1 denominator) and n, the units. The t quantiles come
from the printed table below (12 significant digits), not from sweep's code. Summary cells left empty
(keys, counts, columns a summary skips) are skipped. Exits 1 naming the first difference; prints "checked
N summary cells" otherwise.
"""
import csv
import math
import statistics
import sys

# t(0.975, df): the two-sided 95 % points of Student's t (tables of Fisher and Yates; scipy agrees).
T975 = {1: 12.7062047362, 2: 4.30265272975, 3: 3.18244630528, 4: 2.77644510520, 5: 2.57058183564,
        6: 2.44691185115, 7: 2.36462425159, 8: 2.30600413520, 9: 2.26215716280, 10: 2.22813885196,
        11: 2.20098516009, 12: 2.17881282966, 13: 2.16036865646, 14: 2.14478668792, 15: 2.13144954556,
        16: 2.11990529922, 17: 2.10981557783, 18: 2.10092204024, 19: 2.09302405441, 20: 2.08596344727,
        21: 2.07961384473, 22: 2.07387306790, 23: 2.06865761042, 24: 2.06389856163, 25: 2.05953855275}
NAMES = ("median", "min", "max", "mean", "ci95 lo", "ci95 hi", "n")


def stat(name, xs):
    n = len(xs)
    if name == "n":
        return n
    if not n:
        return None
    if name == "median":
        return statistics.median(xs)
    if name == "min":
        return min(xs)
    if name == "max":
        return max(xs)
    m = math.fsum(xs) / n
    if name == "mean":
        return m
    if n < 2:
        return None
    half = T975[n - 1] * statistics.stdev(xs) / math.sqrt(n)
    return m - half if name == "ci95 lo" else m + half


def unit_values(rows, c, unit):
    """One value per unit of column c: the mean of its rows' values (rows without one left out)."""
    units = {}
    for i, d in enumerate(rows):
        if d[c] not in ("", "-"):
            units.setdefault(d[unit] if unit is not None else i, []).append(float(d[c]))
    return [math.fsum(v) / len(v) for v in units.values()]


def main():
    args = sys.argv[1:]
    opt = {k: args[args.index(k) + 1] for k in ("--group", "--unit") if k in args}
    rows = list(csv.reader(open(args[0])))
    head, body = rows[0], rows[1:]
    if head[0] != "stat":
        sys.exit("no stat column: %r" % head)
    col = {name: i for i, name in enumerate(head)}
    group = col[opt["--group"]] if "--group" in opt else None
    unit = col[opt["--unit"]] if "--unit" in opt else None
    summ = [r for r in body if r[0]]
    data = [r for r in body if not r[0]]
    if not summ:
        sys.exit("no summary rows")
    checked = 0
    for r in summ:
        name = r[0]
        mine = [d for d in data if group is None or d[group] == r[group]]
        for c in range(1, len(head)):
            if r[c] == "" or c == group:
                continue
            xs = unit_values(mine, c, unit)
            want = stat(name, xs)
            got = float(r[c])
            # CSV holds 6 significant digits, the rows as well as the summary: an interval's bound near 0
            # is the difference of two larger terms, each known to those digits only
            scale = abs(want) if want is not None else 0
            if want is not None and name.startswith("ci95"):
                scale = abs(stat("mean", xs)) + abs(want - stat("mean", xs))
            if want is None or abs(got - want) > 1e-5 * scale + 1e-9:
                sys.exit("%s (%s), column %s: sweep says %s, want %r (from %d units: %r)"
                         % (name, r[group] if group is not None else "all", head[c], r[c], want, len(xs), xs))
            checked += 1
    names = {r[0] for r in summ}
    if names != set(NAMES):
        sys.exit("summary rows missing: %s" % sorted(set(NAMES) - names))
    print("checked %d summary cells" % checked)


main()
