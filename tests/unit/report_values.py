#!/usr/bin/env python3
"""report_values.py: the expected values of test_report_agg.c, test_report_pair.c and test_report_print.c,
computed apart from sweep: summaries with numpy and scipy, the paired bootstrap with a copy of sweep's
generator (xoshiro256** seeded by splitmix64, Lemire's bounded draws) and numpy's type-7 quantiles. Run it
to see them again: python3 tests/unit/report_values.py (needs numpy and scipy; make check does not run it)."""
import math

import numpy as np
from scipy import stats
from scipy.stats._resampling import BootstrapResult

M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9e3779b97f4a7c15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return state, z ^ (z >> 31)


class Rng:
    def __init__(self, seed):
        self.s = []
        for _ in range(4):
            seed, z = splitmix64(seed)
            self.s.append(z)

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        m = self.next() * n
        low = m & M64
        if low < n:
            threshold = ((1 << 64) - n) % n
            while low < threshold:
                m = self.next() * n
                low = m & M64
        return m >> 64


def resampled(a, b, stat, boot, seed):
    """The statistics of stats_paired_ci's boot paired resamples: the ratio of sums ("ratio"), or the
    geometric mean of the ratios ("geomean", from the sum of log ratios), in the generator's order."""
    g, n, r = Rng(seed), len(a), []
    logs = [np.log(x / y) for x, y in zip(a, b)]
    for _ in range(boot):
        sa = sb = sl = 0.0
        for _ in range(n):
            i = g.below(n)
            sa += a[i]
            sb += b[i]
            sl += logs[i]
        if stat == "geomean":
            r.append(np.exp(sl / n))
        elif sb != 0:
            r.append(sa / sb)
    return np.array(r)


def statistic(stat):
    """The statistic as sweep computes it (correctly rounded sums, as its compensated ones), so that the
    estimate is the same double and the resamples that tie with it are the same ones."""
    if stat == "geomean":
        return lambda x, y: math.exp(math.fsum(math.log(u / v) for u, v in zip(x, y)) / len(x))
    return lambda x, y: (math.fsum(x) / len(x)) / (math.fsum(y) / len(y))


def paired_ci(a, b, stat, ci, boot, seed, interval="percentile"):
    """stats_paired_ci: the estimate and the interval of boot paired resamples from sweep's generator. The
    percentile interval is numpy's type-7 quantiles of them; the BCa one is scipy's own bootstrap() handed
    those resamples as its bootstrap_distribution (so its z0, jackknife acceleration and quantiles)."""
    a, b = np.array(a, dtype=float), np.array(b, dtype=float)
    r = resampled(list(a), list(b), stat, boot, seed)
    est = statistic(stat)(a, b)
    if interval == "bca":
        res = stats.bootstrap((a, b), statistic(stat), paired=True, vectorized=False, n_resamples=0,
                              method="BCa", confidence_level=ci,
                              bootstrap_result=BootstrapResult(confidence_interval=None,
                                                               bootstrap_distribution=r,
                                                               standard_error=None))
        return est, res.confidence_interval.low, res.confidence_interval.high
    alpha = (1 - ci) / 2
    return est, np.quantile(r, alpha, method="linear"), np.quantile(r, 1 - alpha, method="linear")


def ratio_ci(a, b, ci, boot, seed):
    """stats_ratio_ci: the ratio of means and the percentile interval of boot paired resamples."""
    return paired_ci(a, b, "ratio", ci, boot, seed)


def summary(x):
    x = np.array(x, dtype=float)
    n = len(x)
    mean = x.mean()
    lo, hi = (stats.t.interval(0.95, n - 1, loc=mean, scale=stats.sem(x)) if n > 1 else (np.nan, np.nan))
    return np.median(x), x.min(), x.max(), mean, lo, hi, n


def unit_summary(rows):
    """A --summary over units: rows of (unit, value); one value per unit, the mean of its rows, then the
    summary of those (report_agg_summary with a unit)."""
    units = {}
    for u, v in rows:
        if not np.isnan(v):
            units.setdefault(u, []).append(v)
    return summary([np.mean(v) for v in units.values()])


def drift(medians, noises, drop_first=False):
    """report_agg_drift: the reference is the median of the runs' medians (the first left out with
    drop_first), the drift the largest |median / reference - 1|, the noise the largest stored, else the
    relative standard deviation of the medians (numpy, ddof=1)."""
    m = np.array(medians[1:] if drop_first and len(medians) > 1 else medians, dtype=float)
    ref = np.median(m)
    stored = [x for x in (noises[1:] if drop_first and len(noises) > 1 else noises) if x is not None]
    noise = max(stored) if stored else (np.std(m, ddof=1) / np.mean(m) if len(m) > 1 else np.nan)
    return ref, np.max(np.abs(m / ref - 1)), noise


if __name__ == "__main__":
    np.set_printoptions(precision=17)
    print("summary of 1, 2, 4:", ["%.17g" % v for v in summary([1, 2, 4])])
    print("summary of 10:", ["%.17g" % v for v in summary([10])])
    print("summary of 1, 4:", ["%.17g" % v for v in summary([1, 4])])
    a = [3.1, 2.4, 5.0, 4.2, 1.9, 3.3, 2.8, 4.9, 3.7, 2.2, 4.4, 3.0]
    b = [2.0, 2.1, 3.9, 2.5, 1.8, 2.6, 2.4, 3.1, 2.9, 2.0, 3.3, 2.7]
    for seed in (7, 8):
        print("ratio_ci(a, b, 0.9, 1000, seed %d):" % seed,
              ["%.17g" % v for v in ratio_ci(a, b, 0.9, 1000, seed)])
    for stat, interval in (("ratio", "bca"), ("geomean", "percentile"), ("geomean", "bca")):
        print("paired_ci(a, b, %s, 0.9, 1000, seed 7, %s):" % (stat, interval),
              ["%.17g" % v for v in paired_ci(a, b, stat, 0.9, 1000, 7, interval)])
    # skewed: a heavy right tail in a, where BCa moves the interval right of the percentile one
    sa = [1.0, 1.1, 0.9, 1.2, 1.0, 0.95, 1.05, 4.0, 1.1, 0.98]
    sb = [1.0] * 10
    for interval in ("percentile", "bca"):
        print("paired_ci(skewed, ratio, 0.95, 2000, seed 3, %s):" % interval,
              ["%.17g" % v for v in paired_ci(sa, sb, "ratio", 0.95, 2000, 3, interval)])
    # three models on each of three machines: one value per machine (n = 3), against every row (n = 9)
    share = [("h1", 0.80), ("h1", 0.78), ("h1", 0.86), ("h2", 0.55), ("h2", 0.60), ("h2", 0.57),
             ("h3", 0.71), ("h3", 0.74), ("h3", 0.69), (None, 0.9), (None, 0.7), ("h3", np.nan)]
    print("unit summary of share:", ["%.17g" % v for v in unit_summary(share)])
    print("row summary of share:", ["%.17g" % v for v in summary([v for _, v in share if not np.isnan(v)])])
    # a flat series after a slow first run; a series of single-sample runs (a command's), no noise stored
    flat = [1.03, 1.001, 0.999, 1.0, 1.002, 0.998]
    print("drift of flat:", ["%.17g" % v for v in drift(flat, [0.004] * 6)])
    print("drift of flat, first dropped:", ["%.17g" % v for v in drift(flat, [0.004] * 6, True)])
    cmd = [2.0, 2.1, 1.9, 2.2]
    print("drift of a command's runs:", ["%.17g" % v for v in drift(cmd, [None] * 4)])
    print("norm.ppf(0.975, 1e-10, 0.3):", ["%.17g" % stats.norm.ppf(p) for p in (0.975, 1e-10, 0.3)])
    print("norm.cdf(-1.5, 2.25):", ["%.17g" % stats.norm.cdf(x) for x in (-1.5, 2.25)])
