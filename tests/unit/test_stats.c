/* test_stats.c: unit tests of src/stats.c against values computed independently (sources in comments). */
#include "stats.h"
#include "test.h"
#include "util.h"

#include <float.h>
#include <stdint.h>
#include <time.h>

/*
 * Reference values, unless a comment says otherwise, come from Python 3.11's statistics module:
 *   statistics.median / fmean / stdev / geometric_mean, and
 *   statistics.quantiles(d, n=4 or n=10, method="inclusive"), which is R's type 7.
 * Generator values come from a 40-line Python transcription of splitmix64, xoshiro256** and Lemire's
 * method, run once; that transcription reproduces the published xoshiro256** outputs for state {1,2,3,4}
 * checked in test_rng_reference below.
 */

static const double even[] = { 5, 2, 9, 4, 4, 7, 4, 5 };        /* sorted: 2 4 4 4 5 5 7 9 */
static const double odd[] = { 3.5, 1, 7.25, 2, 10 };            /* sorted: 1 2 3.5 7.25 10 */

static void test_median(void)
{
	double big[] = { DBL_MAX, DBL_MAX };

	CHECK(stats_median(odd, 5) == 3.5, "median odd n: %.17g (hand: middle of 1 2 3.5 7.25 10)",
	      stats_median(odd, 5));
	CHECK(stats_median(even, 8) == 4.5, "median even n: %.17g (hand: (4+5)/2)", stats_median(even, 8));
	CHECK(stats_median(odd, 1) == 3.5, "median n=1: %g", stats_median(odd, 1));
	CHECK(isnan(stats_median(odd, 0)), "median n=0 is NaN");
	/* (a+b)/2 would overflow to inf here. */
	CHECK(stats_median(big, 2) == DBL_MAX, "median of two DBL_MAX does not overflow: %g",
	      stats_median(big, 2));
}

static void test_quantile(void)
{
	/* statistics.quantiles(even, n=10, method="inclusive") gives 3.4 4 4 4 4.5 5 5 6.2 7.6; hand check of
	 * q=0.1: h = 7*0.1 = 0.7, 2 + 0.7*(4-2) = 3.4. */
	static const double even_dec[] = { 3.4, 4.0, 4.0, 4.0, 4.5, 5.0, 5.0, 6.2, 7.6 };
	static const double odd_dec[] = { 1.4, 1.8, 2.3, 2.9, 3.5, 5.0, 6.5, 7.8, 8.9 };
	double sorted[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	char name[64];

	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "even q=0.%d", i + 1);
		CHECK_NEAR(stats_quantile(even, 8, (i + 1) / 10.0), even_dec[i], 1e-14, name);
		snprintf(name, sizeof(name), "odd q=0.%d", i + 1);
		CHECK_NEAR(stats_quantile(odd, 5, (i + 1) / 10.0), odd_dec[i], 1e-14, name);
	}
	/* statistics.quantiles(..., n=4, method="inclusive"): even 4 4.5 5.5, odd 2 3.5 7.25. */
	CHECK_NEAR(stats_quantile(even, 8, 0.25), 4.0, 1e-15, "even q=0.25");
	CHECK_NEAR(stats_quantile(even, 8, 0.75), 5.5, 1e-15, "even q=0.75");
	CHECK_NEAR(stats_quantile(odd, 5, 0.25), 2.0, 1e-15, "odd q=0.25");
	CHECK_NEAR(stats_quantile(odd, 5, 0.75), 7.25, 1e-15, "odd q=0.75");
	/* The ends are the min and max (hand). */
	CHECK(stats_quantile(even, 8, 0) == 2, "even q=0 is the min");
	CHECK(stats_quantile(even, 8, 1) == 9, "even q=1 is the max");
	CHECK(stats_quantile(odd, 5, 0) == 1, "odd q=0 is the min");
	CHECK(stats_quantile(odd, 5, 1) == 10, "odd q=1 is the max");
	CHECK(stats_quantile(odd, 5, 0.5) == stats_median(odd, 5), "q=0.5 is the median");
	CHECK(stats_quantile_sorted(sorted, 8, 0.9) == stats_quantile(even, 8, 0.9), "sorted and unsorted agree");
	CHECK(stats_quantile_sorted(sorted, 1, 0.3) == 2, "n=1: every quantile is the value");
	CHECK(isnan(stats_quantile_sorted(sorted, 0, 0.5)), "n=0 is NaN");
	CHECK(isnan(stats_quantile(even, 8, 1.5)) && isnan(stats_quantile(even, 8, -0.1)) &&
	      isnan(stats_quantile(even, 8, NAN)), "q outside [0,1] is NaN");
}

static void test_mean_stdev_geomean(void)
{
	double tenths[10], big[10], pos[] = { 1, 2, 4, 8 }, huge[] = { 1e300, 1e300, 1e300 };
	double zero[] = { 3, 0, 2 }, neg[] = { 3, -1, 2 }, mixed[] = { 1.5, 2.5, 10, 0.1 };

	CHECK(stats_mean(even, 8) == 5, "mean even: %.17g (hand: 40/8)", stats_mean(even, 8));
	CHECK(stats_mean(odd, 5) == 4.75, "mean odd: %.17g (hand: 23.75/5)", stats_mean(odd, 5));
	CHECK(isnan(stats_mean(even, 0)), "mean n=0 is NaN");
	/* Ten 0.1s: the exact sum of the binary values rounds to 1.0, so a careful sum gives mean 0.1; a naive
	 * left-to-right sum gives 0.9999999999999999 (python3: sum([0.1]*10), math.fsum([0.1]*10)). */
	for (int i = 0; i < 10; i++)
		tenths[i] = 0.1;
	CHECK(stats_mean(tenths, 10) == 0.1, "mean of ten 0.1 is 0.1 (compensated): %.17g",
	      stats_mean(tenths, 10));

	/* sqrt(32/7) by hand (squared deviations 9+1+1+1+0+0+4+16); statistics.stdev: 2.138089935299395. */
	CHECK_NEAR(stats_stdev(even, 8), 2.138089935299395, 1e-15, "stdev even");
	CHECK_NEAR(stats_stdev(odd, 5), 3.774917217635375, 1e-15, "stdev odd");
	CHECK(isnan(stats_stdev(even, 1)) && isnan(stats_stdev(even, 0)), "stdev n<2 is NaN");
	/* Large offset, small spread: a one-pass sum-of-squares formula loses every digit here.
	 * statistics.stdev([1e9 + 0.1*i for i in range(1, 11)]) = 0.30276502666007726 (exact rationals). */
	for (int i = 0; i < 10; i++)
		big[i] = 1e9 + 0.1 * (i + 1);
	CHECK_NEAR(stats_stdev(big, 10), 0.30276502666007726, 1e-12, "stdev with a large offset");
	CHECK(stats_stdev(tenths, 10) == 0, "stdev of a constant is 0: %g", stats_stdev(tenths, 10));

	/* statistics.geometric_mean: [1,2,4,8] -> 2^1.5 (hand), [1.5,2.5,10,0.1] -> 1.3915788418568704. */
	CHECK_NEAR(stats_geomean(pos, 4), 2.8284271247461903, 1e-14, "geomean 1 2 4 8");
	CHECK_NEAR(stats_geomean(mixed, 4), 1.3915788418568704, 1e-14, "geomean mixed");
	CHECK_NEAR(stats_geomean(even, 8), 4.603215596046737, 1e-14, "geomean even");
	/* A product would overflow; the mean of logs does not (hand: 1e300). */
	CHECK_NEAR(stats_geomean(huge, 3), 1e300, 1e-13, "geomean of 1e300s");
	CHECK(isnan(stats_geomean(zero, 3)), "geomean with a 0 is NaN");
	CHECK(isnan(stats_geomean(neg, 3)), "geomean with a negative is NaN");
	CHECK(isnan(stats_geomean(pos, 0)), "geomean n=0 is NaN");
}

static void test_summary(void)
{
	double x[8], one = 7.5;
	struct summary s;

	memcpy(x, even, sizeof(x));
	stats_summary(x, 8, &s);
	CHECK(!memcmp(x, even, sizeof(x)), "summary leaves its input unsorted");
	CHECK_INT(s.n, 8, "summary n");
	CHECK(s.min == 2 && s.max == 9, "summary min %g max %g", s.min, s.max);
	CHECK(s.median == 4.5 && s.mean == 5, "summary median %g mean %g", s.median, s.mean);
	CHECK_NEAR(s.q1, 4.0, 1e-15, "summary q1");
	CHECK_NEAR(s.q3, 5.5, 1e-15, "summary q3");
	CHECK_NEAR(s.stdev, 2.138089935299395, 1e-15, "summary stdev");
	/* statistics.stdev(even) / statistics.fmean(even) */
	CHECK_NEAR(s.noise, 0.427617987059879, 1e-15, "summary noise");

	/* the statistics a report takes, by name: statistics.median(even), statistics.stdev(even) /
	 * statistics.fmean(even); mean, min and max are SQLite's own aggregates */
	CHECK(stats_def_find("median") && stats_def_find("median")->of(even, 8) == 4.5, "median by name");
	CHECK_NEAR(stats_def_find("cv")->of(even, 8), 0.427617987059879, 1e-15, "cv by name");
	CHECK_NEAR(stats_cv(odd, 5), stats_stdev(odd, 5) / stats_mean(odd, 5), 1e-15, "cv odd");
	CHECK(isnan(stats_cv(even, 1)), "cv n<2 is NaN");
	CHECK(!stats_def_find("mean")->of && !strcmp(stats_def_find("mean")->sql, "avg") &&
	      stats_def_find("mean")->level && !stats_def_find("stdev")->level, "mean is avg, a level; stdev is not");
	CHECK(!stats_def_find("p90") && !stats_def_find(NULL), "no p90 entry (a percentile), none for NULL");
	for (size_t i = 0; i < stats_ndefs; i++)
		CHECK(stats_def_find(stats_defs[i].name) == &stats_defs[i] && stats_defs[i].sql &&
		      (!stats_defs[i].of || !strcmp(stats_defs[i].sql, stats_defs[i].name)),
		      "%s: found by its name; computed here under its own name or SQLite's", stats_defs[i].name);

	stats_summary(&one, 1, &s);
	CHECK(s.n == 1 && s.min == 7.5 && s.max == 7.5 && s.median == 7.5 && s.mean == 7.5 && s.q1 == 7.5 &&
	      s.q3 == 7.5, "summary n=1: every location is the value");
	CHECK(isnan(s.stdev) && isnan(s.noise), "summary n=1: stdev and noise are NaN");

	stats_summary(x, 0, &s);
	CHECK(s.n == 0 && isnan(s.min) && isnan(s.max) && isnan(s.median) && isnan(s.mean) && isnan(s.q1) &&
	      isnan(s.q3) && isnan(s.stdev) && isnan(s.noise), "summary n=0: every field NaN");
}

/*
 * The median's interval against exact order statistics. The ranks are scipy 1.17's: for each n, the largest
 * 0-based l with 2 * scipy.stats.binom.cdf(l, n, 0.5) <= 0.05, and for n up to 100000 the same ends from
 * scipy.stats.quantile_test(x, p=0.5).confidence_interval(0.95) on x = 0..n-1 (both agreed everywhere).
 * The coverage column is 1 - 2 * binom.cdf(l, n, 0.5).
 */
static void test_median_ci_ranks(void)
{
	static const struct { size_t n; long l; double coverage; } want[] = {
		{ 5, -1, NAN }, { 6, 0, 0.968750 }, { 7, 0, 0.984375 }, { 8, 0, 0.992188 }, { 9, 1, 0.960938 },
		{ 10, 1, 0.978516 }, { 11, 1, 0.988281 }, { 12, 2, 0.961426 }, { 13, 2, 0.977539 },
		{ 15, 3, 0.964844 }, { 20, 5, 0.958611 }, { 25, 7, 0.956715 }, { 30, 9, 0.957226 },
		{ 50, 17, 0.967161 }, { 99, 39, 0.956125 }, { 100, 39, 0.964800 }, { 101, 40, 0.953956 },
		{ 200, 85, 0.959963 }, { 500, 227, 0.955937 }, { 1000, 468, 0.953709 },
		{ 1001, 469, 0.950015 }, { 10000, 4901, 0.951167 }, { 100000, 49689, 0.950444 },
		{ 1000000, 499019, 0.950121 },
	};
	char name[64];

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		snprintf(name, sizeof(name), "rank of the 95 %% interval for n = %zu", want[i].n);
		CHECK_INT(stats_median_ci_rank(want[i].n, 0.95), want[i].l, name);
	}
	for (size_t n = 0; n < 6; n++)
		CHECK_INT(stats_median_ci_rank(n, 0.95), -1, "no 95 % interval under 6 samples");
	/* Hand: [min, max] of 5 holds the median with probability 1 - 2/32 = 0.9375, so at 90 % it exists. */
	CHECK_INT(stats_median_ci_rank(5, 0.90), 0, "n = 5 at 90 %: [min, max]");
	CHECK_INT(stats_median_ci_rank(10, 0), -1, "level 0 is refused");
	CHECK_INT(stats_median_ci_rank(10, 1), -1, "level 1 is refused");
}

/* stats_summary's interval (from a sorted copy) and stats_median_ci's (by selection) are the same order
 * statistics, on data with ties, both parities, sorted, reversed and shuffled. */
static void test_median_ci_values(void)
{
	double x[12] = { 9, 3, 7, 1, 11, 5, 0, 10, 2, 8, 4, 6 }, med, lo, hi;
	struct summary s;
	struct rng g;
	int agree = 1;

	/* 0..11: l = 2, so [2, 9], median 5.5 */
	stats_summary(x, 12, &s);
	CHECK(s.ci_lo == 2 && s.ci_hi == 9, "summary interval of 0..11: [%g, %g], want [2, 9]", s.ci_lo, s.ci_hi);
	stats_median_ci(x, 12, 0.95, &med, &lo, &hi);
	CHECK(med == 5.5 && lo == 2 && hi == 9, "selection of 0..11: %g [%g, %g]", med, lo, hi);
	stats_summary(x, 5, &s);
	CHECK(isnan(s.ci_lo) && isnan(s.ci_hi) && !isnan(s.median), "5 samples: a median, no interval");
	stats_median_ci(x, 0, 0.95, &med, &lo, &hi);
	CHECK(isnan(med) && isnan(lo) && isnan(hi), "no samples: all NaN");

	rng_seed(&g, 42);
	for (int round = 0; round < 400 && agree; round++) {
		size_t n = 1 + rng_below(&g, round < 200 ? 40 : 3000);
		double *a = xmalloc(n * sizeof(*a)), *b = xmalloc(n * sizeof(*b));
		int shape = round % 4;

		for (size_t i = 0; i < n; i++) {
			/* ties on purpose: a few distinct values in every other round */
			a[i] = round % 2 ? (double)rng_below(&g, 7) : rng_uniform(&g);
			if (shape == 1)
				a[i] = (double)i;
			else if (shape == 2)
				a[i] = (double)(n - i);
		}
		memcpy(b, a, n * sizeof(*a));
		stats_summary(a, n, &s);
		stats_median_ci(b, n, 0.95, &med, &lo, &hi);
		agree = med == s.median && ((isnan(lo) && isnan(s.ci_lo)) || lo == s.ci_lo) &&
			((isnan(hi) && isnan(s.ci_hi)) || hi == s.ci_hi);
		if (!agree)
			printf("# n %zu: summary %g [%g, %g], selection %g [%g, %g]\n", n, s.median, s.ci_lo,
			       s.ci_hi, med, lo, hi);
		free(a);
		free(b);
	}
	CHECK(agree, "selection and sort give the same median and interval on 400 data sets");
	CHECK_NEAR(stats_ci_rel(99, 103, 100), 0.02, 1e-15, "relative half-width (103 - 99) / 200");
	CHECK(isnan(stats_ci_rel(NAN, 103, 100)) && isnan(stats_ci_rel(1, 2, 0)), "no width without both ends");
}

/* Coverage, by simulation: of 4000 samples of 25 exponential values, the interval holds the true median
 * (ln 2) in at least the exact coverage's share less three standard errors (0.9567 - 0.0096). */
static void test_median_ci_coverage(void)
{
	struct rng g;
	int hit = 0, trials = 4000;

	rng_seed(&g, 7);
	for (int t = 0; t < trials; t++) {
		double x[25], med, lo, hi;

		for (int i = 0; i < 25; i++)
			x[i] = -log1p(-rng_uniform(&g));
		stats_median_ci(x, 25, 0.95, &med, &lo, &hi);
		hit += lo <= log(2) && log(2) <= hi;
	}
	CHECK((double)hit / trials >= 0.947, "coverage %.4f of the true median (exact 0.9567)",
	      (double)hit / trials);
}

static void test_rng_reference(void)
{
	/* Published outputs of the reference xoshiro256** for state {1, 2, 3, 4} (the rand_xoshiro crate's
	 * test, "produced with the reference implementation" at prng.di.unimi.it). */
	static const uint64_t want[] = { 11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL,
		1216172134540287360ULL, 607988272756665600ULL, 16172922978634559625ULL, 8476171486693032832ULL,
		10595114339597558777ULL, 2904607092377533576ULL };
	/* splitmix64 from 0: its well-known first outputs (also the Python transcription). */
	static const uint64_t sm0[] = { 0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
		0xf88bb8a8724c81ecULL };
	/* Python transcription: X.seeded(42).next() x 6. */
	static const uint64_t s42[] = { 0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL, 0xae17533239e499a1ULL,
		0xecb8ad4703b360a1ULL, 0xfde6dc7fe2ec5e64ULL, 0xc50da53101795238ULL };
	/* Python transcription: X.seeded(7).uniform() x 4, printed with repr. */
	static const double u7[] = { 0.7005764821796896, 0.2787512294737843, 0.8396274618764198,
		0.9810977250149351 };
	struct rng r = { { 1, 2, 3, 4 } }, r2;
	char name[64];

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "xoshiro256** {1,2,3,4} output %d", i);
		CHECK(rng_next(&r) == want[i], "%s", name);
	}
	rng_seed(&r, 0);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "splitmix64(0) word %d", i);
		CHECK(r.s[i] == sm0[i], "%s: got %#llx", name, (unsigned long long)r.s[i]);
	}
	rng_seed(&r, 42);
	for (int i = 0; i < 6; i++) {
		uint64_t v = rng_next(&r);

		snprintf(name, sizeof(name), "seed 42 output %d", i);
		CHECK(v == s42[i], "%s: got %#llx", name, (unsigned long long)v);
	}
	rng_seed(&r, 7);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "seed 7 uniform %d", i);
		CHECK(rng_uniform(&r) == u7[i], "%s", name);
	}
	rng_seed(&r, 123);
	rng_seed(&r2, 123);
	for (int i = 0; i < 1000; i++)
		if (rng_next(&r) != rng_next(&r2))
			break;
	CHECK(!memcmp(&r, &r2, sizeof(r)), "same seed, same stream");
	rng_seed(&r2, 124);
	CHECK(rng_next(&r) != rng_next(&r2), "neighbouring seeds differ");
}

static void test_rng_below(void)
{
	/* Python transcription: X.seeded(7).below(10) x 16 and X.seeded(9).below(0xAAAAAAAAAAAAAAAA) x 6;
	 * the second range rejects about a third of the draws, so this also pins the rejection path. */
	static const uint64_t b7[] = { 7, 2, 8, 9, 9, 8, 0, 1, 4, 1, 5, 7, 9, 8, 4, 5 };
	static const uint64_t b9[] = { 0x2aebbd03e0e1fd50ULL, 0x7d0be86c9e9edd87ULL, 0x9d1cf921a4480642ULL,
		0x7f0bb67d41ffe1bfULL, 0x748b482c3b010e36ULL, 0x198131bdc75f6d58ULL };
	const uint64_t wide = 0xAAAAAAAAAAAAAAAAULL;
	long count[10] = { 0 }, low = 0, out_of_range = 0, ones = 0;
	double chi2 = 0, sum = 0;
	struct rng r;
	int ok = 1;

	rng_seed(&r, 7);
	for (int i = 0; i < 16; i++)
		ok &= rng_below(&r, 10) == b7[i];
	CHECK(ok, "seed 7 rng_below(10) sequence matches the Python transcription");
	rng_seed(&r, 9);
	ok = 1;
	for (int i = 0; i < 6; i++)
		ok &= rng_below(&r, wide) == b9[i];
	CHECK(ok, "seed 9 rng_below(0xAA..AA) sequence matches the Python transcription");

	rng_seed(&r, 2024);
	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng_below(&r, 10);

		if (v >= 10)
			out_of_range++;
		else
			count[v]++;
		ones += rng_below(&r, 1) != 0;
	}
	CHECK(out_of_range == 0, "rng_below(10) stays below 10: %ld outside", out_of_range);
	CHECK(ones == 0, "rng_below(1) is always 0: %ld others", ones);
	for (int i = 0; i < 10; i++)
		chi2 += (count[i] - 10000.0) * (count[i] - 10000.0) / 10000.0;
	/* 27.88 is the 0.999 quantile of chi-square with 9 degrees of freedom. */
	CHECK(chi2 < 27.88, "rng_below(10) roughly uniform: chi2 %.2f", chi2);

	/* Modulo reduction would put 2/3 of these draws below wide/2; unbiased gives 1/2 (sd 0.0035). */
	for (int i = 0; i < 20000; i++)
		low += rng_below(&r, wide) < wide / 2;
	CHECK(low > 9600 && low < 10400, "rng_below(2/3 of 2^64) unbiased: %ld of 20000 in the lower half", low);

	ok = 1;
	for (int i = 0; i < 100000; i++) {
		double u = rng_uniform(&r);

		ok &= u >= 0 && u < 1;
		sum += u;
	}
	CHECK(ok, "rng_uniform in [0, 1)");
	/* sd of the mean of 1e5 uniforms is 0.29/316 = 0.0009. */
	CHECK(fabs(sum / 100000 - 0.5) < 0.005, "rng_uniform mean %.4f", sum / 100000);
}

static void test_ratio_fixed(void)
{
	/* Integers: every sum is exact in C and in Python, so the Python transcription (1000 resamples,
	 * seed 12345, ratio of sums, type-7 quantiles of the sorted ratios) must agree to the last bit. */
	static const double a[] = { 12, 15, 11, 19, 14, 13, 17, 16, 10, 18 };
	static const double b[] = { 10, 11, 10, 12, 13, 9, 12, 14, 10, 11 };
	double ratio, lo, hi, lo2, hi2, r2;
	double a2[] = { 3, 4 }, b2[] = { 1, 2 }, zero[] = { 1, -1 };

	CHECK_INT(stats_ratio_ci(a, b, 10, 0.95, 1000, 12345, &ratio, &lo, &hi), 0, "ratio_ci returns 0");
	CHECK_NEAR(ratio, 145.0 / 112.0, 1e-15, "ratio of means (hand: 145/112)");
	CHECK_NEAR(lo, 1.161009382566586, 1e-14, "lo matches the Python transcription");
	CHECK_NEAR(hi, 1.4351851851851851, 1e-14, "hi matches the Python transcription");
	stats_ratio_ci(a, b, 10, 0.90, 1000, 12345, &r2, &lo2, &hi2);
	CHECK_NEAR(lo2, 1.188034188034188, 1e-14, "lo at 90% matches the Python transcription");
	CHECK_NEAR(hi2, 1.4112424409015942, 1e-14, "hi at 90% matches the Python transcription");

	stats_ratio_ci(a, b, 10, 0.95, 1000, 12345, &r2, &lo2, &hi2);
	CHECK(r2 == ratio && lo2 == lo && hi2 == hi, "same seed, same interval");
	stats_ratio_ci(a, b, 10, 0.95, 1000, 54321, &r2, &lo2, &hi2);
	CHECK(r2 == ratio && (lo2 != lo || hi2 != hi), "another seed, another interval: [%.17g, %.17g]", lo2,
	      hi2);

	/* Two items: a resample is (0,0) -> 3/1, (1,1) -> 4/2 or mixed -> 7/3, with probabilities 1/4, 1/4,
	 * 1/2 (hand). At 95% the ends fall inside the outer blocks: exactly 2 and 3. Unpaired resampling
	 * would produce 3/2 and 4/1 as well. At 20% both quantiles (0.4, 0.6) fall in the middle block. */
	stats_ratio_ci(a2, b2, 2, 0.95, 10000, 1, &ratio, &lo, &hi);
	CHECK(ratio == 7.0 / 3.0 && lo == 2 && hi == 3, "two items, 95%%: ratio %.17g [%.17g, %.17g]", ratio,
	      lo, hi);
	stats_ratio_ci(a2, b2, 2, 0.20, 10000, 1, &ratio, &lo, &hi);
	CHECK(lo == 7.0 / 3.0 && hi == 7.0 / 3.0, "two items, 20%%: [%.17g, %.17g]", lo, hi);

	CHECK_INT(stats_ratio_ci(a, b, 0, 0.95, 100, 1, &ratio, &lo, &hi), -1, "n=0 fails");
	CHECK(isnan(ratio) && isnan(lo) && isnan(hi), "failure leaves NaN");
	CHECK_INT(stats_ratio_ci(a, zero, 2, 0.95, 100, 1, &ratio, &lo, &hi), -1, "mean(b)=0 fails");
	CHECK_INT(stats_ratio_ci(a, b, 10, 1.0, 100, 1, &ratio, &lo, &hi), -1, "ci=1 fails");
	CHECK_INT(stats_ratio_ci(a, b, 10, 0.95, 0, 1, &ratio, &lo, &hi), 0, "boot=0 succeeds");
	CHECK(ratio == 145.0 / 112.0 && isnan(lo) && isnan(hi), "boot=0: the ratio alone");
}

static void test_ratio_aa_and_exact(void)
{
	double a[30], b[30], ratio, lo, hi;
	struct rng r;

	rng_seed(&r, 5);
	for (int i = 0; i < 30; i++) {
		a[i] = 1 + 9 * rng_uniform(&r);
		b[i] = 2 * a[i];        /* scaling by 2 is exact, so every resampled sum scales exactly too */
	}
	/* A/A: identical arms give identical sums in every resample, so every ratio is exactly 1. */
	stats_ratio_ci(a, a, 30, 0.95, 2000, 3, &ratio, &lo, &hi);
	CHECK(ratio == 1 && lo == 1 && hi == 1, "A/A: ratio %.17g [%.17g, %.17g]", ratio, lo, hi);
	/* a = b/2 exactly: paired resampling gives exactly 0.5 every time; unpaired would spread. */
	stats_ratio_ci(a, b, 30, 0.95, 2000, 3, &ratio, &lo, &hi);
	CHECK(ratio == 0.5 && lo == 0.5 && hi == 0.5, "a = b/2: ratio %.17g [%.17g, %.17g]", ratio, lo, hi);
}

/*
 * Coverage. Population: b uniform on {1, 1.5, ..., 5}, noise uniform on {0.8, 0.9, 1.0, 1.1, 1.2} and
 * independent of b, a = r * b * noise. Then E[a] = r E[b] E[noise] = r E[b] exactly, so the population
 * ratio of means is exactly r (up to one rounding in each a_i). 100 trials of 30 items, 95% intervals.
 * The interval's width is also compared with the delta-method one, 2 * 1.96 * sd(a - R b) / (sqrt(n)
 * mean(b)), so that an interval far too wide (say, unpaired resampling) cannot pass by always covering.
 */
static void test_ratio_coverage(void)
{
	const double truth = 1.5;
	double a[30], b[30], d[30], ratio, lo, hi, width_ratio = 0;
	int covered = 0;
	struct rng r;

	for (int t = 0; t < 100; t++) {
		rng_seed(&r, 1000 + t);
		for (int i = 0; i < 30; i++) {
			b[i] = 1 + 0.5 * (double)rng_below(&r, 9);
			a[i] = truth * b[i] * ((double)(8 + rng_below(&r, 5)) / 10);
		}
		stats_ratio_ci(a, b, 30, 0.95, 2000, 77 + t, &ratio, &lo, &hi);
		covered += lo <= truth && truth <= hi;
		for (int i = 0; i < 30; i++)
			d[i] = a[i] - ratio * b[i];
		width_ratio += (hi - lo) / (2 * 1.96 * stats_stdev(d, 30) / sqrt(30) / stats_mean(b, 30));
	}
	width_ratio /= 100;
	CHECK(covered >= 90, "95%% intervals cover the true ratio in %d of 100 trials", covered);
	CHECK(width_ratio > 0.85 && width_ratio < 1.1, "mean width / delta-method width = %.3f", width_ratio);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The usual size (10,000 resamples of 30 items) gives an interval around the ratio. Its time is printed
 * for information only: speed is for make bench, not for a test that a busy machine could fail. */
static void test_ratio_speed(void)
{
	double a[30], b[30], ratio, lo, hi, best = 1e9;
	struct rng r;

	rng_seed(&r, 11);
	for (int i = 0; i < 30; i++) {
		b[i] = 1 + rng_uniform(&r);
		a[i] = b[i] * (0.9 + 0.2 * rng_uniform(&r));
	}
	for (int k = 0; k < 5; k++) {
		double t0 = now();

		stats_ratio_ci(a, b, 30, 0.95, 10000, k, &ratio, &lo, &hi);
		if (now() - t0 < best)
			best = now() - t0;
	}
	CHECK(lo < ratio && ratio < hi, "10,000 resamples of 30 items: %.4f in [%.4f, %.4f]", ratio, lo, hi);
	printf("# 10,000 resamples of 30 items: best of 5 took %.2f ms\n", best * 1e3);
}

/*
 * Student t quantiles: df 1 and 2 have closed forms (tan(pi (p - 1/2)); (2p - 1) / sqrt(2 p (1 - p))),
 * the others are the printed table of two-sided 95 % and 99 % points (any statistics textbook, 3 decimals).
 */
static void test_t_quantile(void)
{
	static const struct { double p, df, t; } table[] = {
		{ 0.975, 3, 3.182 }, { 0.975, 4, 2.776 }, { 0.975, 7, 2.365 }, { 0.975, 9, 2.262 },
		{ 0.975, 24, 2.064 }, { 0.975, 30, 2.042 }, { 0.975, 120, 1.980 }, { 0.995, 10, 3.169 },
		{ 0.95, 5, 2.015 }, { 0.995, 1, 63.657 },
	};
	const double pi = 3.14159265358979323846;
	double m, lo, hi;
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		CHECK(fabs(stats_t_quantile(table[i].p, table[i].df) - table[i].t) <= 0.0005 + 1e-12,
		      "t quantile p %g df %g: %.6f, table %.3f", table[i].p, table[i].df,
		      stats_t_quantile(table[i].p, table[i].df), table[i].t);
	for (double p = 0.55; p < 0.999; p += 0.1) {
		CHECK_NEAR(stats_t_quantile(p, 1), tan(pi * (p - 0.5)), 1e-10, "t quantile df 1 (Cauchy)");
		CHECK_NEAR(stats_t_quantile(p, 2), (2 * p - 1) / sqrt(2 * p * (1 - p)), 1e-10, "t quantile df 2");
	}
	CHECK_NEAR(stats_t_quantile(0.025, 4), -stats_t_quantile(0.975, 4), 1e-15, "t quantile is symmetric");
	CHECK(stats_t_quantile(0.5, 3) == 0, "t quantile at 0.5 is 0");
	CHECK(isnan(stats_t_quantile(1, 3)) && isnan(stats_t_quantile(0.9, 0)), "t quantile out of range: NaN");
	/* mean 5, stdev sqrt(32 / 7), t(0.975, 7) 2.364624 (table 2.365): half-width 1.787485 */
	stats_mean_ci(x, 8, 0.95, &m, &lo, &hi);
	CHECK(m == 5, "mean of the interval: %g", m);
	CHECK_NEAR(hi - m, 2.364624 * sqrt(32.0 / 7) / sqrt(8), 1e-6, "t interval half-width");
	CHECK_NEAR(m - lo, hi - m, 1e-15, "t interval is symmetric");
	stats_mean_ci(x, 1, 0.95, &m, &lo, &hi);
	CHECK(m == 2 && isnan(lo) && isnan(hi), "one value: its mean, no interval");
	stats_mean_ci(x, 0, 0.95, &m, &lo, &hi);
	CHECK(isnan(m) && isnan(lo), "no value: NaN");
}

static void test_format(void)
{
	/* Expected strings: Python's '%.{sig-1}e' % v (glibc rounds the same, exact ties to even), laid out by
	 * hand. The comment gives the binary value where it decides the rounding (python3 Decimal(v)). */
	static const struct { double v; int sig; const char *want; } cases[] = {
		{ 1234.56, 4, "1235" },
		{ -1234.56, 4, "-1235" },
		{ 0.012345, 4, "0.01235" },      /* 0.012345000000000000070... rounds up */
		{ 0.00012345, 4, "0.0001234" },  /* 0.00012344999999999999203... rounds down */
		{ 1.5, 4, "1.500" },
		{ 123456, 4, "123500" },
		{ 123456789, 3, "123000000" },
		{ 3.14159265358979, 6, "3.14159" },
		{ 99999.9, 4, "100000" },        /* rounds to 1.000e+05: still positional */
		{ 0.0001, 3, "0.000100" },
		{ 0.00009999, 4, "9.999e-05" },
		{ 0.00009999, 3, "0.000100" },   /* rounds up to 1.00e-04, back in range */
		{ 999999999999999.0, 4, "1.000e+15" },   /* rounds up to 1e15 */
		{ 123456789012345.0, 15, "123456789012345" },
		{ 1e15, 4, "1.000e+15" },
		{ -6.02214076e23, 3, "-6.02e+23" },
		{ 1e-300, 2, "1.0e-300" },
		{ 0.125, 2, "0.12" },            /* exact tie: to even */
		{ 0.375, 2, "0.38" },            /* exact tie: to even */
		{ 2.5, 1, "2" },                 /* exact tie: to even */
		{ 1234.5, 4, "1234" },           /* exact tie: to even */
		{ 0, 3, "0.00" },
		{ -0.0, 3, "0.00" },
		{ 7, 0, "7" },                   /* sig < 1 means 1 */
		{ 0.1, 20, "0.10000000000000001" },      /* sig > 17 means 17: repr-like */
		{ NAN, 4, "-" },
		{ INFINITY, 4, "inf" },
		{ -INFINITY, 4, "-inf" },
	};
	char buf[32], name[64], small[4];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stats_format(cases[i].v, cases[i].sig, buf, sizeof(buf));
		snprintf(name, sizeof(name), "format(%.17g, %d)", cases[i].v, cases[i].sig);
		CHECK_STR(buf, cases[i].want, name);
	}
	stats_format(1234.56, 4, small, sizeof(small));
	CHECK_STR(small, "123", "format truncates to the buffer");
}

/* The normal distribution against scipy.stats.norm (tests/unit/report_values.py prints the values). */
static void test_normal(void)
{
	CHECK_NEAR(stats_normal_quantile(0.975), 1.959963984540054, 1e-15, "z(0.975)");
	CHECK_NEAR(stats_normal_quantile(1e-10), -6.3613409024040557, 1e-14, "z(1e-10): the far tail");
	CHECK_NEAR(stats_normal_quantile(0.3), -0.52440051270804089, 1e-15, "z(0.3)");
	CHECK(stats_normal_quantile(0.5) == 0, "z(0.5) = 0");
	CHECK(isinf(stats_normal_quantile(0)) && stats_normal_quantile(0) < 0 && isinf(stats_normal_quantile(1)) &&
	      isnan(stats_normal_quantile(1.5)), "z(0) = -inf, z(1) = inf, z(1.5) NaN");
	CHECK_NEAR(stats_normal_cdf(-1.5), 0.066807201268858071, 1e-15, "Phi(-1.5)");
	CHECK_NEAR(stats_normal_cdf(2.25), 0.98777552734495533, 1e-15, "Phi(2.25)");
}

/*
 * stats_paired_ci: the percentile interval agrees with stats_ratio_ci; the BCa interval and the geometric
 * mean of ratios agree with report_values.py, whose BCa is scipy.stats.bootstrap(method='BCa') handed the
 * same resamples (from its copy of the generator), and whose percentile bounds are numpy's quantiles.
 */
static void test_paired_ci(void)
{
	static const double a[] = { 3.1, 2.4, 5.0, 4.2, 1.9, 3.3, 2.8, 4.9, 3.7, 2.2, 4.4, 3.0 };
	static const double b[] = { 2.0, 2.1, 3.9, 2.5, 1.8, 2.6, 2.4, 3.1, 2.9, 2.0, 3.3, 2.7 };
	static const double sa[] = { 1.0, 1.1, 0.9, 1.2, 1.0, 0.95, 1.05, 4.0, 1.1, 0.98 };
	static const double one[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, neg[] = { 1, -2, 3 };
	struct stats_boot bs = { 0.9, 1000, 7, STATS_PERCENTILE };
	double est, lo, hi, r, rlo, rhi;

	CHECK_INT(stats_paired_ci(a, b, 12, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi), 0, "ratio of means");
	stats_ratio_ci(a, b, 12, 0.9, 1000, 7, &r, &rlo, &rhi);
	CHECK(est == r && lo == rlo && hi == rhi, "percentile: ratio_ci's interval, to the bit");
	bs.interval = STATS_BCA;
	stats_paired_ci(a, b, 12, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi);
	CHECK_NEAR(est, 1.3067092651757191, 1e-15, "BCa: the same ratio");
	CHECK_NEAR(lo, 1.2291265438703891, 1e-12, "BCa 5 %% bound (scipy)");
	CHECK_NEAR(hi, 1.4126205226915749, 1e-12, "BCa 95 %% bound (scipy)");
	bs.interval = STATS_PERCENTILE;
	CHECK_INT(stats_paired_ci(a, b, 12, STATS_GEOMEAN_RATIO, &bs, &est, &lo, &hi), 0, "geomean of ratios");
	CHECK_NEAR(est, 1.2814042267407109, 1e-15, "geometric mean of a[i] / b[i]");
	CHECK_NEAR(lo, 1.1952541134600925, 1e-12, "its 5 %% bound");
	CHECK_NEAR(hi, 1.3760583746473942, 1e-12, "its 95 %% bound");
	bs.interval = STATS_BCA;
	stats_paired_ci(a, b, 12, STATS_GEOMEAN_RATIO, &bs, &est, &lo, &hi);
	CHECK_NEAR(lo, 1.2012171471811954, 1e-12, "geomean, BCa 5 %% bound (scipy)");
	CHECK_NEAR(hi, 1.3849125350437013, 1e-12, "geomean, BCa 95 %% bound (scipy)");

	/* a right-skewed arm: BCa moves the interval right, as scipy's does */
	bs = (struct stats_boot){ 0.95, 2000, 3, STATS_PERCENTILE };
	stats_paired_ci(sa, one, 10, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi);
	CHECK(fabs(lo - 0.99099999999999999) < 1e-12 && fabs(hi - 1.9450000000000003) < 1e-12,
	      "skewed, percentile: [%.17g, %.17g]", lo, hi);
	bs.interval = STATS_BCA;
	stats_paired_ci(sa, one, 10, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi);
	CHECK(fabs(lo - 1.0089999999999999) < 1e-12 && fabs(hi - 2.2453210537912409) < 1e-12,
	      "skewed, BCa (scipy): [%.17g, %.17g]", lo, hi);

	/* A/A: the jackknife does not move (acceleration 0), half the resamples tie: [1, 1] */
	stats_paired_ci(a, a, 12, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi);
	CHECK(est == 1 && lo == 1 && hi == 1, "A/A, BCa: %.17g [%.17g, %.17g]", est, lo, hi);
	/* one pair resamples to itself: no interval; a value not > 0 has no geometric mean */
	CHECK(!stats_paired_ci(a, b, 1, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi) && est == 3.1 / 2.0 &&
	      isnan(lo) && isnan(hi), "one pair: the ratio, no interval");
	CHECK_INT(stats_paired_ci(neg, b, 3, STATS_GEOMEAN_RATIO, &bs, &est, &lo, &hi), -1, "-2: no geomean");
	CHECK(isnan(est) && isnan(lo) && isnan(hi), "NaN all three");
	CHECK_INT(stats_paired_ci(neg, b, 3, STATS_RATIO_OF_MEANS, &bs, &est, &lo, &hi), 0,
		  "the ratio of means of the same values is defined");
}

/* The variation between replicates: the random-effects component by hand (python3, the formula of
 * stats.h), the floor at 0, one replicate not measured; and the widening of an interval by it. */
static void test_between(void)
{
	/* replicate r, unit u: v[r][u] flattened */
	static const size_t rep4[] = { 0, 0, 1, 1 }, unit4[] = { 0, 1, 0, 1 };
	static const size_t rep6[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2 }, unit6[] = { 0, 1, 2, 0, 1, 2, 0, 1, 2 };
	const double same[] = { 10, 20, 12, 24 }, mixed[] = { 10, 20, 12, 22 };
	const double noise[] = { 10, 20, 30, 12, 22, 29, 9, 21, 33 }, part[] = { 10, 20, 12, NAN };
	double lo = 0.9, hi = 1.2;

	/* every unit 20 % up in the second: shifts -1/11, +1/11, no residual: (2/121) / 2 */
	CHECK_NEAR(stats_between_var(same, rep4, unit4, 4, 2, 2), 0.00826446280991735, 1e-15, "a pure shift");
	CHECK_NEAR(stats_between_var(mixed, rep4, unit4, 4, 2, 2), 0.0043290043290043325, 1e-15,
		   "a shift less the residual's share");
	CHECK(stats_between_var(noise, rep6, unit6, 9, 3, 3) == 0, "noise the units disagree on: floored at 0");
	CHECK(isnan(stats_between_var(same, rep4, unit4, 2, 1, 2)), "one replicate: not measured");
	CHECK(stats_between_var(part, rep4, unit4, 4, 2, 2) >= 0, "a missing value is left out");
	/* est 1, [0.9, 1.2], var 0.01 at 95 %: 1 -+ sqrt(d^2 + 1.96^2 0.01) */
	stats_widen(1, 0.01, 0.95, &lo, &hi);
	CHECK_NEAR(lo, 0.779966847482155, 1e-12, "the lower bound widened");
	CHECK_NEAR(hi, 1.2800260491578261, 1e-12, "the upper bound widened");
	stats_widen(1, 0, 0.95, &lo, &hi);
	CHECK_NEAR(lo, 0.779966847482155, 1e-12, "no variance: unchanged");
	stats_widen(1, NAN, 0.95, &lo, &hi);
	CHECK_NEAR(hi, 1.2800260491578261, 1e-12, "NaN variance: unchanged");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* stats_median selects the middle values rather than sorting a copy: the same value as the midpoint of a
 * sorted copy's middle pair, for sizes odd and even, with ties and negatives; with a NaN among them, what
 * the sort gives (NaN last). */
static void test_median_select(void)
{
	double x[257], c[257];
	uint64_t r = 88172645463325252ULL;
	int bad = 0;

	for (size_t n = 1; n <= 257; n++) {
		for (size_t i = 0; i < n; i++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			x[i] = (double)(int64_t)(r % 41) - 20 + (r % 3 ? 0 : 0.25);
		}
		memcpy(c, x, n * sizeof(*c));
		qsort(c, n, sizeof(*c), cmp_double);
		if (stats_median(x, n) != (n % 2 ? c[n / 2] : 0.5 * c[n / 2 - 1] + 0.5 * c[n / 2]))
			bad++;
	}
	CHECK(bad == 0, "median by selection is the sorted copy's, n = 1 to 257: %d differ", bad);
	x[0] = NAN;
	x[1] = 1;
	x[2] = 2;
	CHECK(stats_median(x, 3) == 2 && isnan(stats_median(x, 2)), "with a NaN: sorted last (%g, %g)",
	      stats_median(x, 3), stats_median(x, 2));
}

int main(void)
{
	test_median_ci_ranks();
	test_median_ci_values();
	test_median_ci_coverage();
	test_median();
	test_median_select();
	test_quantile();
	test_mean_stdev_geomean();
	test_summary();
	test_rng_reference();
	test_rng_below();
	test_ratio_fixed();
	test_ratio_aa_and_exact();
	test_ratio_coverage();
	test_ratio_speed();
	test_format();
	test_t_quantile();
	test_normal();
	test_paired_ci();
	test_between();
	return test_done();
}
