#!/usr/bin/env python3
"""summary_check.py CSV: check the --summary rows of a report in CSV against the rows above them.

Computed here, independently of sweep: for each group ("name (group)" rows; no group: every row) and each
value column, the median, min, max, mean, the two-sided 95 % Student t interval of the mean over the rows
(mean -+ t(0.975, n-1) * s / sqrt(n), s with the n-1 denominator) and n. The t quantiles come from the
printed table below (12 significant digits), not from sweep's code. A group's rows are those with a cell
equal to the group's name; summary cells left empty (keys, counts) are skipped. Exits 1 naming the first
difference; prints "checked N summary cells" otherwise.
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


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    head, body = rows[0], rows[1:]
    summ = [r for r in body if r[0].split(" (")[0] in NAMES]
    data = [r for r in body if r not in summ]
    if not summ:
        sys.exit("no summary rows")
    checked = 0
    for r in summ:
        name, _, group = r[0].partition(" (")
        group = group[:-1] if group else None
        mine = [d for d in data if group is None or group in d]
        for c in range(1, len(head)):
            if r[c] == "":
                continue
            xs = [float(d[c]) for d in mine if d[c] not in ("", "-")]
            want = stat(name, xs)
            got = float(r[c])
            # CSV holds 6 significant digits, the rows as well as the summary: an interval's bound near 0
            # is the difference of two larger terms, each known to those digits only
            scale = abs(want) if want is not None else 0
            if want is not None and name.startswith("ci95"):
                scale = abs(stat("mean", xs)) + abs(want - stat("mean", xs))
            if want is None or abs(got - want) > 1e-5 * scale + 1e-9:
                sys.exit("%s, column %s: sweep says %s, want %r (from %d rows: %r)"
                         % (r[0], head[c], r[c], want, len(xs), xs))
            checked += 1
    names = {r[0].split(" (")[0] for r in summ}
    if names != set(NAMES):
        sys.exit("summary rows missing: %s" % sorted(set(NAMES) - names))
    print("checked %d summary cells" % checked)


main()
