/* stats.c: summaries, type-7 quantiles, geomean, t intervals, the order-statistic interval of a median, the
 * normal distribution, xoshiro256**, paired bootstrap intervals (percentile and BCa) of a ratio of means and
 * a geometric mean of ratios. */
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ascending, NaNs last: qsort needs a total order, and a NaN compares false with everything. */
static int stats_cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

/* The caller frees the copy. n doubles already exist in memory, so n * sizeof(double) cannot overflow. */
static double *stats_sorted_copy(const double *x, size_t n)
{
	double *c = xmalloc(n * sizeof(*c));

	if (n)
		memcpy(c, x, n * sizeof(*c));
	qsort(c, n, sizeof(*c), stats_cmp_double);
	return c;
}

/*
 * Neumaier's compensated sum: the error of each addition is recovered exactly and added back at the end,
 * so the result is nearly as good as summing in twice the precision. Once the running sum is not finite the
 * compensation is meaningless (inf - inf), so the plain sum is returned.
 */
static double stats_sum(const double *x, size_t n)
{
	double s = 0, c = 0;

	for (size_t i = 0; i < n; i++) {
		double t = s + x[i];

		if (fabs(s) >= fabs(x[i]))
			c += (s - t) + x[i];
		else
			c += (x[i] - t) + s;
		s = t;
	}
	return isfinite(s) ? s + c : s;
}

double stats_mean(const double *x, size_t n)
{
	if (!n)
		return NAN;
	return stats_sum(x, n) / (double)n;
}

/*
 * The corrected two-pass algorithm (Chan, Golub and LeVeque): deviations from the mean, minus the
 * square of their sum over n, which cancels the rounding error left in the mean.
 */
double stats_stdev(const double *x, size_t n)
{
	double m, s1 = 0, s2 = 0, var;

	if (n < 2)
		return NAN;
	m = stats_mean(x, n);
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - m;

		s1 += d;
		s2 += d * d;
	}
	var = (s2 - s1 * s1 / (double)n) / (double)(n - 1);
	return sqrt(var > 0 ? var : 0);
}

/*
 * The continued fraction of the incomplete beta function (modified Lentz, as in Numerical Recipes'
 * betacf), good for x < (a + 1) / (a + b + 2); 300 terms are far more than the t quantiles of sweep's
 * degrees of freedom need.
 */
static double stats_betacf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	d = 1 / (fabs(d) < tiny ? tiny : d);
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2)), del;

		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d;
		c = 1 + aa / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b), x in [0, 1]. */
static double stats_ibeta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * stats_betacf(a, b, x) / a;
	return 1 - front * stats_betacf(b, a, 1 - x) / b;
}

/* P(T <= t) for Student's t with df degrees of freedom. */
static double stats_t_cdf(double t, double df)
{
	double tail = 0.5 * stats_ibeta(df / 2, 0.5, df / (df + t * t));

	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	if (p == 0.5)
		return 0;
	/* The cdf rises with t: widen until it passes p (1e300 is past any p a double can hold below 1),
	 * then halve the bracket until it stops shrinking. */
	while (stats_t_cdf(hi, df) < p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 2000 && hi - lo > 1e-14 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

void stats_mean_ci(const double *x, size_t n, double ci, double *mean, double *lo, double *hi)
{
	double half;

	*mean = stats_mean(x, n);
	*lo = *hi = NAN;
	if (n < 2 || !(ci > 0 && ci < 1))
		return;
	half = stats_t_quantile((1 + ci) / 2, (double)(n - 1)) * stats_stdev(x, n) / sqrt((double)n);
	*lo = *mean - half;
	*hi = *mean + half;
}

double stats_geomean(const double *x, size_t n)
{
	double s = 0, c = 0;

	if (!n)
		return NAN;
	/* Logs rather than a product: a product of many timings overflows or underflows long before its
	 * geometric mean does. Summed with the same compensation as stats_sum. */
	for (size_t i = 0; i < n; i++) {
		double l, t;

		if (!(x[i] > 0))
			return NAN;
		l = log(x[i]);
		t = s + l;
		if (fabs(s) >= fabs(l))
			c += (s - t) + l;
		else
			c += (l - t) + s;
		s = t;
	}
	return exp((isfinite(s) ? s + c : s) / (double)n);
}

double stats_cv(const double *x, size_t n)
{
	return n < 2 ? NAN : stats_stdev(x, n) / stats_mean(x, n);
}

const struct stats_def stats_defs[] = {
	{ "median", stats_median, "median", 1 },
	{ "mean", NULL, "avg", 1 },
	{ "geomean", stats_geomean, "geomean", 1 },
	{ "min", NULL, "min", 1 },
	{ "max", NULL, "max", 1 },
	{ "stdev", stats_stdev, "stdev", 0 },
	{ "cv", stats_cv, "cv", 0 },
};
const size_t stats_ndefs = sizeof(stats_defs) / sizeof(stats_defs[0]);

const struct stats_def *stats_def_find(const char *name)
{
	for (size_t i = 0; name && i < stats_ndefs; i++)
		if (!strcmp(name, stats_defs[i].name))
			return &stats_defs[i];
	return NULL;
}

double stats_quantile_sorted(const double *x, size_t n, double q)
{
	double h, f;
	size_t lo;

	if (!n || !(q >= 0 && q <= 1))
		return NAN;
	/* Type 7: h = (n-1)q, interpolate between the order statistics on either side of h. */
	h = (double)(n - 1) * q;
	lo = (size_t)h;
	if (lo >= n - 1)
		return x[n - 1];
	f = h - (double)lo;
	/* Written so that equal neighbours give exactly their value, whatever f is. */
	return x[lo] + f * (x[lo + 1] - x[lo]);
}

double stats_quantile(const double *x, size_t n, double q)
{
	double *c, v;

	if (!n)
		return NAN;
	c = stats_sorted_copy(x, n);
	v = stats_quantile_sorted(c, n, q);
	free(c);
	return v;
}

/*
 * The middle value, or the midpoint of the two middle values. Halving each before adding is exact (barring
 * subnormals) and gives the correctly rounded midpoint without overflowing near DBL_MAX.
 */
static double stats_median_sorted(const double *x, size_t n)
{
	if (!n)
		return NAN;
	if (n % 2)
		return x[n / 2];
	return 0.5 * x[n / 2 - 1] + 0.5 * x[n / 2];
}

double stats_median(const double *x, size_t n)
{
	double *c, v, below;
	size_t h = n / 2;

	if (!n)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i])) {
			c = stats_sorted_copy(x, n);
			v = stats_median_sorted(c, n);
			free(c);
			return v;
		}
	/* Without NaN, the middle values by selection (a median of a million results: a tenth of the sort),
	 * the same that a sorted copy holds at h - 1 and h: below h nothing is larger than x[h]. */
	c = xmalloc(n * sizeof(*c));
	memcpy(c, x, n * sizeof(*c));
	v = stats_select(c, n, h);
	if (n % 2 == 0) {
		below = c[0];
		for (size_t i = 1; i < h; i++)
			if (c[i] > below)
				below = c[i];
		v = 0.5 * below + 0.5 * v;
	}
	free(c);
	return v;
}

/* P(B <= k) for B ~ Binomial(n, 1/2): I_{1/2}(n - k, k + 1), the regularized incomplete beta function
 * (within 1e-10 relative of scipy's binom.cdf up to n = 10^6, in under 100 terms). */
static double stats_binom_half_cdf(size_t n, long k)
{
	if (k < 0)
		return 0;
	if ((size_t)k >= n)
		return 1;
	return stats_ibeta((double)(n - (size_t)k), (double)k + 1, 0.5);
}

long stats_median_ci_rank(size_t n, double level)
{
	double alpha = 1 - level;
	long l;

	if (!(level > 0 && level < 1) || !n)
		return -1;
	/* The normal approximation with continuity correction lands within a step or two of the exact
	 * rank; the exact cdf decides. */
	l = (long)floor(((double)n - 1 - stats_normal_quantile(1 - alpha / 2) * sqrt((double)n)) / 2);
	if (l < -1)
		l = -1;
	/* The ends stay two order statistics, lo's below hi's: 2 l + 1 < n. */
	if (2 * l + 1 >= (long)n)
		l = ((long)n - 2) / 2;
	while (2 * (l + 1) + 1 < (long)n && 2 * stats_binom_half_cdf(n, l + 1) <= alpha)
		l++;
	while (l >= 0 && 2 * stats_binom_half_cdf(n, l) > alpha)
		l--;
	return l;
}

/* Wirth's selection: partition around x[k] until the part holding k is one element. */
double stats_select(double *x, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	if (k >= n)
		BUG("stats_select: k %zu of %zu values", k, n);
	while (lo < hi) {
		double pivot = x[kk];
		ptrdiff_t i = lo, j = hi;

		do {
			while (x[i] < pivot)
				i++;
			while (pivot < x[j])
				j--;
			if (i <= j) {
				double t = x[i];

				x[i++] = x[j];
				x[j--] = t;
			}
		} while (i <= j);
		if (j < kk)
			lo = i;
		if (kk < i)
			hi = j;
	}
	return x[kk];
}

/*
 * After selecting the upper middle h, everything below h is no larger, everything above no smaller: the
 * lower middle is the largest of x[0..h), the interval's ends the l-th of that part and the (n-1-l)-th of
 * the whole, in the part above h. The same values stats_summary takes from a sorted copy.
 */
void stats_median_ci(double *x, size_t n, double level, double *median, double *lo, double *hi)
{
	long l = stats_median_ci_rank(n, level);
	size_t h = n / 2, top;

	*median = *lo = *hi = NAN;
	if (!n)
		return;
	*median = stats_select(x, n, h);
	if (n % 2 == 0) {
		double below = x[0];

		for (size_t i = 1; i < h; i++)
			if (x[i] > below)
				below = x[i];
		*median = 0.5 * below + 0.5 * *median;
	}
	if (l < 0)
		return;
	*lo = stats_select(x, h, (size_t)l);
	top = n - 1 - (size_t)l;
	*hi = top == h ? x[h] : stats_select(x + h + 1, n - h - 1, top - h - 1);
}

double stats_ci_rel(double lo, double hi, double median)
{
	if (isnan(lo) || isnan(hi) || !(fabs(median) > 0))
		return NAN;
	return (hi - lo) / (2 * fabs(median));
}

void stats_summary(const double *x, size_t n, struct summary *out)
{
	double *c;
	long l;

	out->n = n;
	out->ci_lo = out->ci_hi = NAN;
	if (!n) {
		out->median = out->mean = out->min = out->max = NAN;
		out->stdev = out->q1 = out->q3 = out->noise = NAN;
		return;
	}
	c = stats_sorted_copy(x, n);
	out->min = c[0];
	out->max = c[n - 1];
	out->median = stats_median_sorted(c, n);
	if ((l = stats_median_ci_rank(n, STATS_CI)) >= 0) {
		out->ci_lo = c[l];
		out->ci_hi = c[n - 1 - (size_t)l];
	}
	out->q1 = stats_quantile_sorted(c, n, 0.25);
	out->q3 = stats_quantile_sorted(c, n, 0.75);
	out->mean = stats_mean(c, n);
	out->stdev = stats_stdev(c, n);          /* NaN for n == 1, and so is noise */
	out->noise = out->stdev / out->mean;
	free(c);
}

/* splitmix64 (Vigna): turns one 64-bit seed into well-mixed words for the state. */
static uint64_t stats_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64 is a bijection of its counter, so the four words are never all zero (xoshiro's bad state). */
void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = stats_splitmix64(&seed);
}

static inline uint64_t stats_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** 1.0 (Blackman and Vigna), as in the reference implementation. */
uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = stats_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = stats_rotl(s[3], 45);
	return result;
}

/* The top 53 bits, which xoshiro256** makes the best ones, scaled by 2^-53: every value is exact. */
double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/*
 * Lemire's multiply-and-reject ("Fast random integer generation in an interval", 2019): the high word of
 * x * n is uniform in [0, n) once the low words below 2^64 mod n are rejected. The modulo is only computed
 * on the rare path where rejection is possible at all.
 */
uint64_t rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m;
	uint64_t low;

	if (!n)
		BUG("rng_below(0): the range is empty");
	m = (unsigned __int128)rng_next(r) * n;
	low = (uint64_t)m;
	if (low < n) {
		uint64_t threshold = -n % n;      /* 2^64 mod n */

		while (low < threshold) {
			m = (unsigned __int128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double stats_normal_cdf(double x)
{
	return 0.5 * erfc(-x * M_SQRT1_2);
}

/*
 * Acklam's rational approximation (relative error under 1.2e-9), then one step of Halley's method on
 * stats_normal_cdf, which takes it to the precision of erfc. The tails use the approximation in q =
 * sqrt(-2 log p) so that p near 0 (or 1) keeps its digits.
 */
double stats_normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
				    1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
				    6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
				    -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
				    3.754408661907416e+00 };
	double q, r, x, e, u;

	if (!(p >= 0 && p <= 1))
		return NAN;
	if (p == 0 || p == 1)
		return p ? INFINITY : -INFINITY;
	if (p < 0.02425 || p > 1 - 0.02425) {
		q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
		x = p < 0.5 ? x : -x;
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	e = stats_normal_cdf(x) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* The paired statistic from the sums of one sample of m pairs: sa, sb of the values (ratio of means), sl of
 * the log ratios (geomean). */
static double paired_stat(enum stats_pair_stat stat, double sa, double sb, double sl, size_t m)
{
	if (stat == STATS_GEOMEAN_RATIO)
		return exp(sl / (double)m);
	return sb != 0 ? sa / sb : NAN;
}

/*
 * The BCa quantile levels for the sorted resampled statistics r[0..kept-1] of estimate est: *p1, *p2, or -1
 * when undefined. The jackknife leaves each pair out of the sums sa, sb, sl (compensated sums of all n).
 */
static int paired_bca(const double *a, const double *b, const double *l, size_t n, enum stats_pair_stat stat,
		      double ci, const double *r, size_t kept, double est, double *p1, double *p2)
{
	double sa = stats_sum(a, n), sb = stats_sum(b, n), sl = l ? stats_sum(l, n) : 0, *jack, mean, s2 = 0,
	       s3 = 0, acc, z0, za, num;
	size_t below = 0, ties = 0;

	for (size_t k = 0; k < kept; k++) {
		below += r[k] < est;
		ties += r[k] == est;
	}
	z0 = stats_normal_quantile((2.0 * (double)below + (double)ties) / (2.0 * (double)kept));
	if (!isfinite(z0))
		return -1;
	jack = xmalloc(n * sizeof(*jack));
	for (size_t i = 0; i < n; i++)
		jack[i] = paired_stat(stat, sa - a[i], sb - b[i], l ? sl - l[i] : 0, n - 1);
	mean = stats_mean(jack, n);
	for (size_t i = 0; i < n; i++) {
		double dev = mean - jack[i];

		s2 += dev * dev;
		s3 += dev * dev * dev;
	}
	free(jack);
	if (isnan(mean))
		return -1;
	acc = s2 > 0 ? s3 / (6 * pow(s2, 1.5)) : 0;
	za = stats_normal_quantile((1 - ci) / 2);
	num = z0 + za;
	*p1 = stats_normal_cdf(z0 + num / (1 - acc * num));
	num = z0 - za;
	*p2 = stats_normal_cdf(z0 + num / (1 - acc * num));
	return isnan(*p1) || isnan(*p2) ? -1 : 0;
}

/* stats_paired_ci's resampling, whatever n is (ratio_ci resamples one pair too). */
static int paired_boot(const double *a, const double *b, size_t n, enum stats_pair_stat stat,
		       const struct stats_boot *bs, double *est, double *lo, double *hi)
{
	double *r, *l = NULL, p1, p2;
	struct rng g;
	size_t kept = 0;

	*est = *lo = *hi = NAN;
	if (!n || !(bs->ci > 0 && bs->ci < 1))
		return -1;
	if (stat == STATS_GEOMEAN_RATIO) {
		l = xmalloc(n * sizeof(*l));
		for (size_t i = 0; i < n; i++) {
			if (!(a[i] > 0 && b[i] > 0)) {
				free(l);
				return -1;
			}
			l[i] = log(a[i] / b[i]);
		}
		*est = exp(stats_mean(l, n));
	} else {
		double mb = stats_mean(b, n);

		if (mb == 0)
			return -1;
		*est = stats_mean(a, n) / mb;
	}
	if (bs->boot <= 0) {
		free(l);
		return 0;
	}
	r = xmalloc((size_t)bs->boot * sizeof(*r));
	rng_seed(&g, bs->seed);
	for (int k = 0; k < bs->boot; k++) {
		double sa = 0, sb = 0, sl = 0, v;

		/* Same index for both arms: pairing is what lets the interval shrink when a tracks b. The ratio
		 * of sums equals the ratio of means (same n). Plain sums: n is tens of items, and their rounding
		 * is far below the interval's width. */
		for (size_t j = 0; j < n; j++) {
			size_t i = (size_t)rng_below(&g, n);

			if (l) {
				sl += l[i];
			} else {
				sa += a[i];
				sb += b[i];
			}
		}
		/* A resample whose b sum is 0 has no ratio (only possible when b has mixed signs or zeros). */
		if (!isnan(v = paired_stat(stat, sa, sb, sl, n)))
			r[kept++] = v;
	}
	qsort(r, kept, sizeof(*r), stats_cmp_double);
	p1 = (1 - bs->ci) / 2;
	p2 = 1 - p1;
	if (kept && (bs->interval != STATS_BCA ||
		     (n > 1 && !paired_bca(a, b, l, n, stat, bs->ci, r, kept, *est, &p1, &p2)))) {
		*lo = stats_quantile_sorted(r, kept, p1);
		*hi = stats_quantile_sorted(r, kept, p2);
	}
	free(r);
	free(l);
	return 0;
}

int stats_paired_ci(const double *a, const double *b, size_t n, enum stats_pair_stat stat,
		    const struct stats_boot *bs, double *est, double *lo, double *hi)
{
	struct stats_boot none = *bs;

	if (n < 2)
		none.boot = 0;
	return paired_boot(a, b, n, stat, &none, est, lo, hi);
}

int stats_ratio_ci(const double *a, const double *b, size_t n, double ci, int boot, uint64_t seed,
		   double *ratio, double *lo, double *hi)
{
	struct stats_boot bs = { ci, boot, seed, STATS_PERCENTILE };

	return paired_boot(a, b, n, STATS_RATIO_OF_MEANS, &bs, ratio, lo, hi);
}

double stats_between_var(const double *v, const size_t *rep, const size_t *unit, size_t n, size_t nrep,
			 size_t nunit)
{
	double *ubar = xcalloc(nunit + 1, sizeof(*ubar)), *e = xcalloc(nrep + 1, sizeof(*e));
	size_t *uc = xcalloc(nunit + 1, sizeof(*uc)), *rc = xcalloc(nrep + 1, sizeof(*rc));
	size_t nr = 0, nu = 0, nv = 0;
	double s2 = 0, w = 0, emean = 0, var = NAN, df;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i])) {
			ubar[unit[i]] += v[i];
			uc[unit[i]]++;
		}
	for (size_t u = 0; u < nunit; u++)
		ubar[u] = uc[u] ? ubar[u] / (double)uc[u] : NAN;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]) && ubar[unit[i]] != 0 && !isnan(ubar[unit[i]])) {
			e[rep[i]] += v[i] / ubar[unit[i]] - 1;
			rc[rep[i]]++;
			nv++;
		}
	for (size_t r = 0; r < nrep; r++)
		if (rc[r]) {
			e[r] /= (double)rc[r];
			emean += e[r];
			nr++;
		}
	for (size_t u = 0; u < nunit; u++)
		nu += uc[u] > 0;
	if (nr >= 2) {
		emean /= (double)nr;
		for (size_t r = 0; r < nrep; r++)
			s2 += rc[r] ? (e[r] - emean) * (e[r] - emean) : 0;
		s2 /= (double)(nr - 1);
		for (size_t i = 0; i < n; i++)
			if (!isnan(v[i]) && ubar[unit[i]] != 0 && !isnan(ubar[unit[i]])) {
				double d = v[i] / ubar[unit[i]] - 1 - e[rep[i]];

				w += d * d;
			}
		df = (double)nv - (double)nr - (double)nu + 1;
		w = df > 0 ? w / df : 0;
		var = s2 - w / ((double)nv / (double)nr);
		var = (var > 0 ? var : 0) / (double)nr;
	}
	free(ubar);
	free(e);
	free(uc);
	free(rc);
	return var;
}

void stats_widen(double est, double var, double ci, double *lo, double *hi)
{
	double z, add;

	if (!(var > 0) || isnan(*lo) || isnan(*hi) || isnan(est))
		return;
	z = stats_normal_quantile((1 + ci) / 2);
	add = z * z * est * est * var;
	*lo = est - sqrt((est - *lo) * (est - *lo) + add);
	*hi = est + sqrt((*hi - est) * (*hi - est) + add);
}

/*
 * Digits and exponent come from printf's %.*e, so the rounding is the C library's correctly rounded
 * conversion of the binary value (glibc: exact ties go to even, 0.125 -> "0.12"); only the layout is ours.
 * Positional when the exponent after rounding is in [-4, 15), like %g's rule, but trailing zeros are kept
 * so that every value shows sig digits.
 */
void stats_format(double v, int sig, char *buf, size_t n)
{
	char e[64], out[64], digits[24], *p = e, *o = out;
	int exp, nd = 0;

	if (!n)
		return;
	if (isnan(v)) {
		snprintf(buf, n, "-");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, n, "%s", v < 0 ? "-inf" : "inf");
		return;
	}
	if (sig < 1)
		sig = 1;
	if (sig > 17)
		sig = 17;               /* 17 digits identify every double; more are noise */
	if (v == 0)
		v = 0;                  /* a table has no use for "-0" */
	snprintf(e, sizeof(e), "%.*e", sig - 1, v);
	exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 15) {
		snprintf(buf, n, "%s", e);
		return;
	}
	if (*p == '-')
		*o++ = *p++;
	for (; *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	if (exp < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -exp - 1; i++)
			*o++ = '0';
		for (int i = 0; i < nd; i++)
			*o++ = digits[i];
	} else {
		for (int i = 0; i <= exp || i < nd; i++) {
			if (i == exp + 1)
				*o++ = '.';
			*o++ = i < nd ? digits[i] : '0';
		}
	}
	*o = '\0';
	snprintf(buf, n, "%s", out);
}
