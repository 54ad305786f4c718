/* stats.h: the statistics sweep reports. Pure functions of arrays: no I/O, no globals. */
#ifndef SWEEP_STATS_H
#define SWEEP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Summary of n samples. With n == 0 every field but n is NaN. NaN samples sort after every number. */
struct summary {
	size_t n;
	double median, mean, min, max, stdev, q1, q3;
	double noise;          /* stdev / mean (relative standard deviation); NaN when n < 2 */
	double ci_lo, ci_hi;   /* the median's STATS_CI interval (stats_median_ci_rank); NaN when n < 6 */
};
/* The level of the interval every result stores for its median. */
#define STATS_CI 0.95
/* x is not modified (a sorted copy is made). */
void stats_summary(const double *x, size_t n, struct summary *out);

/* Quantile q in [0,1] with linear interpolation between order statistics (type 7, as R and numpy's
 * default). x must be sorted ascending. NaN for n == 0 or q outside [0,1]. */
double stats_quantile_sorted(const double *x, size_t n, double q);
/* The same on unsorted data (sorts a copy). */
double stats_quantile(const double *x, size_t n, double q);
/* Median of unsorted data: the midpoint of the middle pair for even n (no overflow near DBL_MAX). */
double stats_median(const double *x, size_t n);
/* Mean with a compensated (Neumaier) sum; NaN for n == 0. */
double stats_mean(const double *x, size_t n);
/* Sample standard deviation (n-1 denominator); NaN for n < 2. */
double stats_stdev(const double *x, size_t n);
/* exp(mean(log x)); NaN when any x <= 0 or n == 0. */
double stats_geomean(const double *x, size_t n);
/* The coefficient of variation: stdev / mean; NaN for n < 2. */
double stats_cv(const double *x, size_t n);

/*
 * The statistics a report takes over the values of a group (--stat NAME), in the order its messages list
 * them: each computed by its function here (registered as the SQL aggregate NAME by store_functions.c),
 * or by SQLite's own aggregate sql (mean is avg). A level is in the values' unit (a median, a minimum): a
 * share of a limit and a plot's point take only those. Adding one is an entry here, its function in
 * stats.c, its test in tests/unit/test_stats.c and a line in docs/report-statistics.md. The percentiles
 * (pNN) are the one family of names: stats_quantile.
 */
struct stats_def {
	const char *name;
	double (*of)(const double *x, size_t n);   /* NULL: SQLite's aggregate sql */
	const char *sql;           /* the SQL aggregate's name */
	int level;
};
extern const struct stats_def stats_defs[];
extern const size_t stats_ndefs;
/* The statistic called name, or NULL. */
const struct stats_def *stats_def_find(const char *name);

/* The quantile of Student's t distribution with df > 0 degrees of freedom at p in (0, 1): the t with
 * P(T <= t) = p, from the regularized incomplete beta function, to about 1e-12 relative. NaN for p or df
 * out of range. */
double stats_t_quantile(double p, double df);
/* The mean of x[0..n-1] and its two-sided Student t interval at level ci (0.95): mean -+ t((1 + ci) / 2,
 * n - 1) * stdev / sqrt(n). The mean is NaN for n == 0, lo and hi for n < 2 or ci outside (0, 1). */
void stats_mean_ci(const double *x, size_t n, double ci, double *mean, double *lo, double *hi);

/*
 * The distribution-free interval of a median from order statistics: with x sorted ascending, [x[l],
 * x[n-1-l]] holds the median of any continuous distribution with probability 1 - 2 P(B <= l), B being
 * Binomial(n, 1/2) (the count of samples below the median). Returns the largest l for which that is at
 * least level, computed exactly (the binomial cdf through the regularized incomplete beta function, from a
 * normal-approximation start: a few evaluations whatever n); -1 when no l reaches level (n < 6 at 0.95:
 * even [min, max] holds the median with probability 1 - 2^(1-n) only) or level is not in (0, 1).
 */
long stats_median_ci_rank(size_t n, double level);
/* Reorders x (n finite values) so that x[k] is its k-th smallest (0-based), with nothing larger before it
 * and nothing smaller after it (quickselect: linear time on average); returns x[k]. k < n. */
double stats_select(double *x, size_t n, size_t k);
/* The median of x and its interval at level (stats_median_ci_rank), by selection, not a sort: reorders x
 * (finite values). lo and hi are NaN when there is no interval; all three NaN when n == 0. */
void stats_median_ci(double *x, size_t n, double level, double *median, double *lo, double *hi);
/* An interval's relative half-width: (hi - lo) / (2 |median|); NaN when any is NaN or median is 0. A value
 * is known to precision p when this is at most p (the one rule: measure.c stops on it, results store it). */
double stats_ci_rel(double lo, double hi, double median);

/* A small, seedable generator (xoshiro256**) so bootstrap results repeat across machines. */
struct rng { uint64_t s[4]; };
void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
double rng_uniform(struct rng *r);          /* [0, 1) */
uint64_t rng_below(struct rng *r, uint64_t n);   /* uniform in [0, n), unbiased; n == 0 is a BUG() */

/* The standard normal distribution: P(Z <= x), and the x with P(Z <= x) = p for p in (0, 1) (about 1e-15
 * relative; -inf and inf at 0 and 1, NaN outside). */
double stats_normal_cdf(double x);
double stats_normal_quantile(double p);

/* The statistic of n pairs (a[i], b[i], item i in both arms) that a paired bootstrap resamples. */
enum stats_pair_stat {
	STATS_RATIO_OF_MEANS,      /* mean(a) / mean(b) */
	STATS_GEOMEAN_RATIO        /* the geometric mean of the ratios a[i] / b[i]: every value > 0 */
};
/* How a bootstrap interval is read from the resampled statistics. */
enum stats_interval {
	STATS_PERCENTILE,          /* the type-7 quantiles at (1 - ci) / 2 and 1 - (1 - ci) / 2 */
	STATS_BCA                  /* bias-corrected and accelerated (Efron and Tibshirani 14.3, as scipy's
				    * bootstrap(method='BCa')): quantiles moved by z0, the normal quantile of the
				    * share of resamples below the estimate (ties count half), and the acceleration
				    * a = sum(d^3) / (6 sum(d^2)^1.5) of the jackknife's deviations d from their
				    * mean (0 when they are all 0: the statistic does not move) */
};
/* A bootstrap's settings: interval level in (0, 1), resamples (<= 0: the estimate alone), seed, kind. */
struct stats_boot {
	double ci;
	int boot;
	uint64_t seed;
	enum stats_interval interval;
};
/*
 * A paired bootstrap: stat of the n pairs into *est, and its interval into *lo, *hi: each of bs->boot
 * resamples draws n item indices with replacement (rng_below, seeded by bs->seed) and uses the same indices
 * for both arms, so pairing narrows the interval when a tracks b. Returns 0; -1 with all three NaN when
 * n == 0, ci is out of range, mean(b) == 0 (ratio of means) or a value is not > 0 (geomean). lo and hi
 * are NaN (still 0) without resamples, for n < 2 (one pair resamples to itself: no interval), and for a
 * BCa interval that is undefined (every resample on one side of the estimate, or a jackknife ratio over
 * 0). Resamples whose b sum is 0 (ratio of means) are left out. Deterministic for a seed on every machine;
 * no message. Cost: boot * n draws and a sort of boot doubles (BCa: and n jackknife values).
 */
int stats_paired_ci(const double *a, const double *b, size_t n, enum stats_pair_stat stat,
		    const struct stats_boot *bs, double *est, double *lo, double *hi);

/*
 * Ratio of means mean(a)/mean(b) over n paired items (a[i] and b[i] belong to item i), with a percentile
 * bootstrap interval at level ci (0.95): each of boot resamples draws n item indices with replacement and
 * uses the same indices for both arms. Returns 0 and fills ratio, lo, hi; -1 when n == 0 or mean(b) == 0.
 * lo and hi are the type-7 quantiles of the resampled ratios at (1-ci)/2 and 1-(1-ci)/2; resamples whose b
 * sum is 0 are left out. Deterministic for a seed, on every machine. No message is printed (the caller words
 * it); on -1 all three outputs are NaN, also when ci is not in (0, 1). boot <= 0 gives the ratio alone
 * (lo = hi = NaN, returns 0). Cost: boot * n draws plus a sort of boot doubles. The SQL function
 * ratio_ci; unlike stats_paired_ci it gives one pair the interval [ratio, ratio].
 */
int stats_ratio_ci(const double *a, const double *b, size_t n, double ci, int boot, uint64_t seed,
		   double *ratio, double *lo, double *hi);

/*
 * The part of a mean's relative variance that comes from replicates (passes, runs) shifting all their units
 * together, from n values v[i] of unit unit[i] (< nunit) in replicate rep[i] (< nrep): each value relative
 * to its unit's mean (d = v / mean - 1), a replicate's shift e its mean d, and the between-replicate
 * component of a random-effects analysis: max(0, s2 - w / m) / R, with s2 the sample variance of the R
 * replicates' shifts, w the residual variance of d about its replicate's shift (N - R - U + 1 degrees of
 * freedom) and m = N / R units a replicate; the variance of the mean over R replicates that the units'
 * own resampling does not see. NaN when fewer than 2 replicates hold a value (not measured); values whose
 * unit mean is 0 or NaN are left out. Pure; no message.
 */
double stats_between_var(const double *v, const size_t *rep, const size_t *unit, size_t n, size_t nrep,
			 size_t nunit);
/* [*lo, *hi] about est widened by a relative variance var (a ratio's added component, as est^2 var):
 * each bound's distance d from est becomes sqrt(d^2 + (z est)^2 var), z the normal quantile at
 * (1 + ci) / 2. Unchanged for var <= 0 or NaN, or a NaN bound. */
void stats_widen(double est, double var, double ci, double *lo, double *hi);

/* Format v with sig significant digits (1..17, trailing zeros kept), no exponent when the exponent after
 * rounding is in [-4, 15): 1234.56 -> "1235", 123456 -> "123500", 1.5 -> "1.500", 0.00012345 -> "0.0001234"
 * (sig 4); exponent form otherwise: 1e15 -> "1.000e+15". Rounding is printf's %.*e of the binary value, so
 * exact ties go to even with glibc: 1234.5 -> "1234". NaN prints as "-", infinities as "inf" and "-inf",
 * -0 as "0". buf of at least 32 bytes (truncated to n otherwise). */
void stats_format(double v, int sig, char *buf, size_t n);

#endif
