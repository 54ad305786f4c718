/* stats.c: summaries, type-7 quantiles, geomean, t intervals, the order-statistic interval of a median,
 * xoshiro256**, bootstrap interval of a ratio of means. */
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
	double *c, v;

	if (!n)
		return NAN;
	c = stats_sorted_copy(x, n);
	v = stats_median_sorted(c, n);
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

/* The standard normal quantile at p in [0.5, 1), by bisection on erfc (only a starting point here). */
static double stats_normal_quantile(double p)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;

		if (0.5 * erfc(-mid / sqrt(2)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
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

int stats_ratio_ci(const double *a, const double *b, size_t n, double ci, int boot, uint64_t seed,
		   double *ratio, double *lo, double *hi)
{
	double mb, alpha, *r;
	struct rng g;
	size_t kept = 0;

	*ratio = *lo = *hi = NAN;
	if (!n || !(ci > 0 && ci < 1))
		return -1;
	mb = stats_mean(b, n);
	if (mb == 0)
		return -1;
	*ratio = stats_mean(a, n) / mb;
	if (boot <= 0)
		return 0;

	r = xmalloc((size_t)boot * sizeof(*r));
	rng_seed(&g, seed);
	for (int k = 0; k < boot; k++) {
		double sa = 0, sb = 0;

		/* Same index for both arms: pairing is what lets the interval shrink when a tracks b. The ratio
		 * of sums equals the ratio of means (same n). Plain sums: n is tens of items, and their rounding
		 * is far below the interval's width. */
		for (size_t j = 0; j < n; j++) {
			size_t i = (size_t)rng_below(&g, n);

			sa += a[i];
			sb += b[i];
		}
		/* A resample whose b sum is 0 has no ratio (only possible when b has mixed signs or zeros). */
		if (sb != 0)
			r[kept++] = sa / sb;
	}
	qsort(r, kept, sizeof(*r), stats_cmp_double);
	alpha = (1 - ci) / 2;
	if (kept) {
		*lo = stats_quantile_sorted(r, kept, alpha);
		*hi = stats_quantile_sorted(r, kept, 1 - alpha);
	}
	free(r);
	return 0;
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
