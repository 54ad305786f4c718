#!/usr/bin/env python3
"""report_values.py: the expected values of test_report_agg.c, test_report_pair.c and test_report_print.c,
computed apart from sweep: summaries with numpy and scipy, the paired bootstrap with a copy of sweep's
generator (xoshiro256** seeded by splitmix64, Lemire's bounded draws) and numpy's type-7 quantiles. Run it
to see them again: python3 tests/unit/report_values.py (needs numpy and scipy; make check does not run it)."""
import numpy as np
from scipy import stats

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


def ratio_ci(a, b, ci, boot, seed):
    """stats_ratio_ci: the ratio of means and the percentile interval of boot paired resamples."""
    g, n, r = Rng(seed), len(a), []
    for _ in range(boot):
        sa = sb = 0.0
        for _ in range(n):
            i = g.below(n)
            sa += a[i]
            sb += b[i]
        if sb != 0:
            r.append(sa / sb)
    alpha = (1 - ci) / 2
    return (np.mean(a) / np.mean(b), np.quantile(r, alpha, method="linear"),
            np.quantile(r, 1 - alpha, method="linear"))


def summary(x):
    x = np.array(x, dtype=float)
    n = len(x)
    mean = x.mean()
    lo, hi = (stats.t.interval(0.95, n - 1, loc=mean, scale=stats.sem(x)) if n > 1 else (np.nan, np.nan))
    return np.median(x), x.min(), x.max(), mean, lo, hi, n


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
