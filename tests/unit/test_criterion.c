/* test_criterion.c: the stopping rule (criterion.h) on made-up sample streams, and its order of rules. */
#include "criterion.h"
#include "stats.h"
#include "test.h"

/* Default timing as spec.c sets it, NVBench's rule off. */
static struct spec_timing timing(void)
{
	struct spec_timing t = {
		.precision = 0.005, .min_samples = 10, .min_time = 0.02, .timeout = 15, .max_samples = 10000,
	};
	return t;
}

/* NVBench-style: a noise target of 0.5 % and convergence, the precision out of reach. */
static struct spec_timing timing_noise(void)
{
	struct spec_timing t = timing();

	t.max_noise = 0.005;
	t.precision = 1e-12;
	t.min_time = 0.5;
	return t;
}

/* A reproducible stream around 1 with relative spread `rel` (uniform, so stdev rel / sqrt(3)). */
static double stream(unsigned *seed, double rel)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1.0 + rel * (2.0 * ((*seed >> 8) & 0xffff) / 65535.0 - 1.0);
}

/* The relative half-width of the median's interval over x[0..n), computed apart (a sort). */
static double rel_width(const double *x, long n)
{
	struct summary s;

	stats_summary(x, (size_t)n, &s);
	return stats_ci_rel(s.ci_lo, s.ci_hi, s.median);
}

/*
 * The precision rule stops at the first check where the interval is within the precision, and the checks
 * come where criterion.h says (every sample under CRITERION_STEP samples, then each 1/CRITERION_STEP more):
 * every check before the stop is recomputed here by a sort and must be wider, the one at the stop within.
 */
static void test_precision_stops(void)
{
	struct spec_timing t = timing();
	struct criterion c;
	static double x[20000];
	unsigned seed = 11;
	long n, next = 0, wider = 0, checks = 0;
	enum stop_rule st = STOP_NONE;

	criterion_init(&c, &t);
	for (n = 1; n <= 20000 && st == STOP_NONE; n++) {
		x[n - 1] = 1e-3 * stream(&seed, 0.08);
		criterion_add(&c, x[n - 1], 0);
		st = criterion_check(&c, 1.0, 10);
		if (n >= t.min_samples && n >= next) {
			checks++;
			next = n + (n / CRITERION_STEP > 1 ? n / CRITERION_STEP : 1);
			if (st == STOP_NONE)
				wider += rel_width(x, n) > t.precision;
		}
	}
	n--;
	CHECK_INT(st, STOP_PRECISION, "a stream of 4.6 % noise stops on its median's precision");
	CHECK_INT(wider, checks - 1, "every check before the stop found the interval wider");
	CHECK(rel_width(x, n) <= t.precision, "at the stop (n = %ld) the interval is within +-0.5 %%: %.5f", n,
	      rel_width(x, n));
	/* The median of a uniform stream on 1 -+ 0.08 has a standard error of 0.08 / sqrt(n): the half-width
	 * 1.96 * 0.08 / sqrt(n) reaches 0.005 near n = 980. */
	CHECK(n > 600 && n < 1400, "it took %ld samples", n);
	CHECK_INT(c.checks, checks, "the criterion computed the interval exactly at those checks");
	CHECK_NEAR(c.median, stats_median(x, (size_t)n), 0, "its median is the samples' median");
	criterion_release(&c);
}

/* Checked cheaply: a cell that never reaches its precision runs to max_samples with about
 * CRITERION_STEP * ln(n / CRITERION_STEP) + CRITERION_STEP intervals computed, not one a sample. */
static void test_precision_cheap(void)
{
	struct spec_timing t = timing();
	struct criterion c;
	unsigned seed = 5;
	enum stop_rule st = STOP_NONE;
	long n;

	t.precision = 1e-9;
	criterion_init(&c, &t);
	for (n = 1; n <= 10000 && st == STOP_NONE; n++) {
		criterion_add(&c, stream(&seed, 0.5), 0);
		st = criterion_check(&c, 1.0, 10);
	}
	CHECK_INT(st, STOP_MAX_SAMPLES, "precision out of reach: max_samples");
	CHECK(c.checks > 150 && c.checks < 260, "%ld intervals computed over 10000 samples", c.checks);
	criterion_release(&c);
}

/* Under 6 samples there is no 95 % interval: never precise, however equal the samples. The 6th equal
 * sample gives [x, x]: exactly known. */
static void test_precision_few(void)
{
	struct spec_timing t = timing();
	struct criterion c;

	t.min_samples = 1;
	criterion_init(&c, &t);
	for (int i = 0; i < 5; i++) {
		criterion_add(&c, 2e-3, 0);
		CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "under 6 samples: no interval, go on");
	}
	criterion_add(&c, 2e-3, 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_PRECISION, "6 equal samples: [min, max] of width 0");
	CHECK_INT(criterion_check(&c, 0.01, 10), STOP_NONE, "nothing stops before min_time");
	criterion_release(&c);
}

/* max_noise off (the default): a stream whose noise converged and is far under any noise target still
 * runs until its precision, or the deadline; the precision wins over a noise target met at the same time. */
static void test_noise_off(void)
{
	struct spec_timing t = timing();
	struct criterion c;
	unsigned seed = 3;

	t.precision = 1e-9;
	criterion_init(&c, &t);
	for (int i = 0; i < 2000; i++) {
		criterion_add(&c, stream(&seed, 0.001), 0);
		if (criterion_check(&c, 1.0, 10) != STOP_NONE)
			break;
	}
	CHECK_INT(c.n, 2000, "no noise or converged stop without max_noise");
	CHECK(isinf(criterion_target(&c)), "no noise target");
	CHECK_INT(criterion_check(&c, 1.0, 0), STOP_TIMEOUT, "the deadline ends it");
	criterion_release(&c);

	t = timing();
	t.max_noise = 0.5;
	criterion_init(&c, &t);
	for (int i = 0; i < 20; i++)
		criterion_add(&c, stream(&seed, 0.0001), 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_PRECISION, "both met: precision first");
	criterion_release(&c);
}

static void test_noise_met(void)
{
	struct spec_timing t = timing_noise();
	struct criterion c;
	int i;

	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 1e-3 * (1 + (i % 2) * 1e-4), 0);
	CHECK_NEAR(criterion_noise(&c), 5.13e-5, 0.01, "noise of alternating 1 and 1.0001 ms");
	CHECK_INT(criterion_check(&c, 0.4, 10), STOP_NONE, "noise met but min_time not reached: go on");
	CHECK_INT(criterion_check(&c, 0.5, 10), STOP_NOISE, "both reached: noise");
	CHECK_INT(criterion_check(&c, 0.4, 0), STOP_TIMEOUT, "deadline passed before min_time: timeout");
	criterion_release(&c);
	criterion_init(&c, &t);
	for (i = 0; i < 9; i++)
		criterion_add(&c, 1e-3 * (1 + (i % 2) * 1e-4), 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "9 samples are under min_samples 10");
	criterion_add(&c, 1e-3, 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NOISE, "the 10th stops it");
	criterion_release(&c);
}

static void test_max_samples(void)
{
	struct spec_timing t = timing_noise();
	struct criterion c;
	unsigned seed = 1;
	int i;

	t.max_samples = 100;
	criterion_init(&c, &t);
	for (i = 0; i < 99; i++)
		criterion_add(&c, stream(&seed, 0.5), 0);
	CHECK_INT(criterion_check(&c, 0.0, 10), STOP_NONE, "99 noisy samples of 100, no time spent");
	criterion_add(&c, stream(&seed, 0.5), 0);
	CHECK_INT(criterion_check(&c, 0.0, 10), STOP_MAX_SAMPLES, "the 100th: max_samples before min_time");
	CHECK_INT(criterion_check(&c, 0.0, -1), STOP_MAX_SAMPLES, "max_samples wins over the deadline too");
	t.max_samples = 0;
	CHECK_INT(criterion_check(&c, 0.0, 10), STOP_NONE, "max_samples 0: no bound");
	criterion_release(&c);
}

/* A stream whose noise (about 2.9 %) can never reach 0.5 %: it stops as converged once the trailing
 * noise values stop moving, not at the deadline; never on fewer than 65 noise values, and only on a
 * multiple of CRITERION_EVERY samples. */
static void test_converged(void)
{
	struct spec_timing t = timing_noise();
	struct criterion c;
	unsigned seed = 7;
	enum stop_rule st = STOP_NONE;
	int i, first = 0;

	criterion_init(&c, &t);
	for (i = 1; i <= 5000 && !first; i++) {
		criterion_add(&c, stream(&seed, 0.05), 0);
		st = criterion_check(&c, 1.0, 10);
		if (st != STOP_NONE)
			first = i;
	}
	CHECK_INT(st, STOP_CONVERGED, "a stream 10x over its target converges");
	CHECK(first > CRITERION_MIN_WINDOW + 1 && first % CRITERION_EVERY == 0 && first <= 2000,
	      "it stopped after %d samples (more than %d, a multiple of %d, at most 2000)", first,
	      CRITERION_MIN_WINDOW + 1, CRITERION_EVERY);
	CHECK_NEAR(criterion_noise(&c), 0.05 / sqrt(3.0), 0.15, "the noise it converged to");
	CHECK_INT(criterion_check(&c, 0.4, 10), STOP_NONE, "converged is not tested before min_time");
	criterion_release(&c);

	/* Noise that is still falling fast has not converged: a big outlier first, then a quiet stream. */
	criterion_init(&c, &t);
	criterion_add(&c, 100.0, 0);
	for (i = 0; i < 200; i++) {
		criterion_add(&c, stream(&seed, 0.001), 0);
		if (criterion_check(&c, 1.0, 10) != STOP_NONE)
			break;
	}
	CHECK_INT(i, 200, "noise falling from an outlier: no stop in 200 samples");
	criterion_release(&c);
}

/* A 15 us sample timed to 0.5 us cannot show a noise under 3.3 %: the target rises to that. */
static void test_resolution(void)
{
	struct spec_timing t = timing_noise();
	struct criterion c;
	unsigned seed = 3;
	int i;

	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 15e-6 * stream(&seed, 0.02), 0.5e-6);
	CHECK_NEAR(criterion_target(&c), 0.5 / 15, 0.02,
		   "target = resolution / mean sample");
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NOISE, "1.2 % noise meets the raised target");
	criterion_release(&c);
	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 15e-6 * stream(&seed, 0.02), 0);
	CHECK_NEAR(criterion_target(&c), 0.005, 0, "a perfect timer leaves max_noise as the target");
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "and 1.2 % does not meet it");
	criterion_release(&c);
}

/* Where a clock that did not settle ended: the upper quartile of the last CRITERION_SETTLE_WINDOW's
 * readings, older ones left out; a clock dipping to half in every other reading ends at the higher. */
static void test_settle_end(void)
{
	struct criterion_settle s;
	int i;

	criterion_settle_init(&s, 1980);
	criterion_settle_end(&s);
	CHECK_NEAR(s.ended, 0, 0, "no readings: nothing");
	for (i = 0; i < 10; i++)
		criterion_settle_add(&s, 0.005 * i, 1900);   /* before the last window */
	for (i = 0; i < 20; i++)
		criterion_settle_add(&s, 0.1 + 0.004 * (i + 1), i % 2 ? 1480 : 740);
	criterion_settle_end(&s);
	CHECK_NEAR(s.ended, 1480, 0, "dips to half every other reading: at the higher");
	for (i = 0; i < 20; i++)
		criterion_settle_add(&s, 0.2 + 0.005 * (i + 1), 1400 + i);
	criterion_settle_end(&s);
	CHECK_NEAR(s.ended, 1414.25, 1e-9, "1400-1419 MHz over the last window: its upper quartile");
	criterion_settle_release(&s);
}

/* When warm-up's clock has settled, on made-up readings every 2 ms: still (one 15 MHz step of jitter, or
 * readings scattered 10 % about their median) at warmup; after a fall, once two 0.1 s windows agree;
 * never while it keeps falling; and four readings in a row 3 % off the settled clock unsettle it. */
static void test_settle(void)
{
	struct criterion_settle s;
	double t;
	int done = 0, i;

	criterion_settle_init(&s, 1980);
	for (t = 0.002; t < 0.05; t += 0.002)
		criterion_settle_add(&s, t, ((int)(t * 500) % 2) ? 1965 : 1980);
	criterion_settle_add(&s, 0.05, 1980);
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 1, "a clock within a step over the warm-up's second half");
	CHECK(s.ref == 1980 || s.ref == 1965 || s.ref == 1972.5, "settled at %g MHz", s.ref);
	CHECK_INT(criterion_settle_left(&s, 1950), 0, "a reading 1.5 % off stays settled");
	CHECK_INT(criterion_settle_left(&s, 1900) + criterion_settle_left(&s, 1900) +
			  criterion_settle_left(&s, 1900), 0, "so do three 4 % off");
	CHECK_INT(criterion_settle_left(&s, 1975), 0, "and a fourth at the clock starts the count again");
	for (i = 0; i < 3; i++)
		CHECK_INT(criterion_settle_left(&s, 2100), 0, "three 6 % above: still settled");
	CHECK_INT(criterion_settle_left(&s, 2100), 1, "the fourth in a row is not");
	CHECK(isnan(s.ref), "no clock settled any more: %g", s.ref);
	criterion_settle_release(&s);

	/* a 68 us GEMM's readings: 1725 MHz, every third 1980 and every fifth 1650 */
	criterion_settle_init(&s, 1980);
	for (i = 1; i <= 25; i++)
		criterion_settle_add(&s, 0.002 * i, i % 3 ? i % 5 ? 1725 : 1650 : 1980);
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 1, "scattered readings about a median that holds: still");
	CHECK_NEAR(s.ref, 1725, 0, "settled at their median");
	for (i = 1, done = 0; i <= 25; i++)
		done += criterion_settle_left(&s, i % 3 ? i % 5 ? 1725 : 1650 : 1980);
	CHECK_INT(done, 0, "none of them unsettles it");
	criterion_settle_release(&s);

	/* 1980 MHz until 0.03 s, down to 1500 by 0.33 s, then still */
	criterion_settle_init(&s, 1980);
	for (t = 0.002; t < 1 && !done; t += 0.002) {
		criterion_settle_add(&s, t, t < 0.03 ? 1980 : t < 0.33 ? 1980 - 1600 * (t - 0.03) : 1500);
		if (t >= 0.05)
			done = criterion_settled(&s, t, 0.05);
	}
	/* the windows' medians agree once the older one is more than half past the fall: 0.33 + 0.15 */
	CHECK(done && t > 0.47 && t < 0.52, "settled after the fall, at %.3f s", t);
	CHECK_NEAR(s.ref, 1500, 0, "at the clock it held");
	criterion_settle_release(&s);

	/* falling 2000 MHz a second: neither still over 25 ms (its quarters' medians 25 MHz apart) nor two
	 * windows within 19.8 MHz */
	criterion_settle_init(&s, 1980);
	for (t = 0.002, done = 0; t < 1.2 && !done; t += 0.002) {
		criterion_settle_add(&s, t, 1980 - 2000 * t);
		if (t >= 0.05)
			done = criterion_settled(&s, t, 0.05);
	}
	CHECK(!done, "a clock still falling never settles");
	criterion_settle_release(&s);

	/* launches of 0.3 s: windows hold one reading or none, so the last two readings decide */
	criterion_settle_init(&s, 1980);
	criterion_settle_add(&s, 0.3, 1800);
	criterion_settle_add(&s, 0.6, 1600);
	CHECK_INT(criterion_settled(&s, 0.6, 0.05), 0, "1800 then 1600 MHz: moved");
	criterion_settle_add(&s, 0.9, 1590);
	CHECK_INT(criterion_settled(&s, 0.9, 0.05), 1, "then 1590: settled");
	criterion_settle_release(&s);
}

/* s initialised with a clock still at 1980 MHz, read every 2 ms up to 0.05 s; returns the time of the
 * next reading. */
static double settle_still(struct criterion_settle *s)
{
	double t;

	criterion_settle_init(s, 1980);
	for (t = 0.002; t < 0.051; t += 0.002)
		criterion_settle_add(s, t, 1980);
	return t;
}

/* The power verdict: a card at its limit settles by the windows only, even with a clock the quarters
 * call still (one not yet fallen), and a quarters' settling is undone; a card not at its limit, or one
 * judged already, changes nothing. A stop by precision, noise or convergence waits while the verdict is
 * pending, up to CRITERION_POWER_WAIT; a timeout or max_samples never. A card at its limit also holds
 * such a stop for CRITERION_MANAGED_SPAN of samples (test_managed_span). */
static void test_settle_power(void)
{
	struct criterion_settle s;
	double t;

	t = settle_still(&s);
	CHECK_INT(criterion_settle_power(&s, POWER_BOUND), 0, "bound before settling: nothing to undo");
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 0, "a still clock at 0.05 s: bound, so windows only");
	for (; t < 0.19; t += 0.002)
		criterion_settle_add(&s, t, 1980);
	CHECK_INT(criterion_settled(&s, 0.19, 0.05), 0, "not before two windows (0.2 s)");
	for (; t < 0.211; t += 0.002)
		criterion_settle_add(&s, t, 1980);
	CHECK_INT(criterion_settled(&s, 0.21, 0.05), 1, "two windows that agree: settled");
	CHECK_NEAR(s.ref, 1980, 0, "at the clock they agree on");
	CHECK_INT(criterion_settle_power(&s, POWER_FREE), 0, "a verdict once given stays");
	CHECK_INT(s.power, POWER_BOUND, "bound it is");
	criterion_settle_release(&s);

	settle_still(&s);
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 1, "the quarters settle a still clock");
	CHECK_INT(criterion_settle_power(&s, POWER_PENDING), 0, "pending: nothing yet");
	CHECK_INT(s.power, POWER_PENDING, "still pending");
	CHECK_INT(criterion_settle_power(&s, POWER_FREE), 0, "free: the settling stands");
	CHECK_NEAR(s.ref, 1980, 0, "settled at 1980 MHz");
	criterion_settle_release(&s);

	settle_still(&s);
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 1, "the quarters settle a still clock");
	CHECK_INT(criterion_settle_power(&s, POWER_BOUND), 1, "bound after that: the settling is undone");
	CHECK(isnan(s.ref), "no settled clock: %g", s.ref);
	CHECK_INT(criterion_settled(&s, 0.06, 0.05), 0, "and the quarters no longer settle it");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.06, CRITERION_MANAGED_SPAN), 0,
		  "judged, and past the span: nothing held");
	criterion_settle_release(&s);

	criterion_settle_init(&s, 1980);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.06, 0), 1, "pending: a precise stop waits");
	CHECK_INT(criterion_stop_holds(&s, STOP_NOISE, 0.2, 0), 1, "so does a noise stop");
	CHECK_INT(criterion_stop_holds(&s, STOP_CONVERGED, 0.249, 0), 1, "and a converged one");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, CRITERION_POWER_WAIT, 0), 0, "not past the wait");
	CHECK_INT(criterion_stop_holds(&s, STOP_TIMEOUT, 0.06, 0), 0, "a timeout never waits");
	CHECK_INT(criterion_stop_holds(&s, STOP_MAX_SAMPLES, 0.06, 0), 0, "nor max_samples");
	CHECK_INT(criterion_stop_holds(&s, STOP_NONE, 0.06, 0), 0, "no stop: nothing to hold");
	criterion_settle_power(&s, POWER_NONE);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.06, 0), 0, "no power reading: nothing held");
	criterion_settle_release(&s);
}

/* A reading judged by when it came: none before CRITERION_POWER_RAMP (even one far under the limit may not
 * have seen the load), then at the limit (95 % of it, or capped) or free of it. An H200's limit, 700 W. */
static void test_power_judge(void)
{
	CHECK_INT(criterion_power_judge(665, 700, 0, 0.04), POWER_BOUND, "665 W of 700, 40 ms in: bound");
	CHECK_INT(criterion_power_judge(664, 700, 0, 0.04), POWER_FREE, "664 W, 40 ms in: free");
	CHECK_INT(criterion_power_judge(300, 700, 1, 0.2), POWER_BOUND, "capped, 0.2 s in: bound");
	CHECK_INT(criterion_power_judge(124, 700, 0, 0.013), POWER_PENDING,
		  "124 W 13 ms in (700 W a tick later): pending");
	CHECK_INT(criterion_power_judge(198, 700, 0, 0.0399), POWER_PENDING, "198 W 39.9 ms in: pending");
	CHECK_INT(criterion_power_judge(690, 700, 0, 0.022), POWER_PENDING,
		  "at the limit 22 ms in: pending (it may be the cell before's)");
	CHECK_INT(criterion_power_judge(100, 700, 1, 0.02), POWER_PENDING, "capped 20 ms in: pending");
}

/* s settled by the quarters at mhz (read every 2 ms to 0.05 s, maximum 1980), judged free of a limit. */
static void settle_at(struct criterion_settle *s, double mhz)
{
	criterion_settle_init(s, 1980);
	for (double t = 0.002; t < 0.051; t += 0.002)
		criterion_settle_add(s, t, mhz);
	CHECK(criterion_settled(s, 0.05, 0.05) == 1, "the quarters settle a still clock at %g MHz", mhz);
	criterion_settle_power(s, POWER_FREE);
}

/* A managed clock (settled over 1 % under the maximum, or not settled: a card held at a power limit,
 * reached at once or after a free verdict, until its windows agree) holds a stop by precision, noise or
 * convergence until CRITERION_MANAGED_SPAN seconds of samples; a clock settled at the maximum, or within
 * 1 % of it, at a power limit or not, or a timer without clocks, never. */
static void test_managed_span(void)
{
	struct criterion_settle s;

	settle_at(&s, 1770);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.05), 1, "1770 of 1980 MHz: a precise stop waits");
	CHECK_INT(criterion_stop_holds(&s, STOP_NOISE, 0.2, 0.199), 1, "so does a noise stop");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.3, CRITERION_MANAGED_SPAN), 0, "not past the span");
	CHECK_INT(criterion_stop_holds(&s, STOP_TIMEOUT, 0.1, 0.05), 0, "a timeout never waits");
	CHECK_INT(criterion_stop_holds(&s, STOP_MAX_SAMPLES, 0.1, 0.05), 0, "nor max_samples");
	criterion_settle_release(&s);

	settle_at(&s, 1961);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.01), 0, "1961 MHz, within 1 %: not held");
	criterion_settle_release(&s);
	settle_at(&s, 1959);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.01), 1, "1959 MHz, over 1 % under: held");
	criterion_settle_release(&s);

	settle_at(&s, 1980);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.01), 0, "free at 1980 MHz: not held");
	CHECK_INT(criterion_settle_power(&s, POWER_NONE), 0, "a free card that gives no reading later");
	CHECK_INT(s.power, POWER_FREE, "stays free");
	CHECK_INT(criterion_settle_power(&s, POWER_BOUND), 1, "one that reaches its limit later: unsettled");
	CHECK_INT(s.power, POWER_BOUND, "and bound");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.5, 0.1), 1, "at its limit, unsettled: held");
	for (double t = 0.5; t < 0.711; t += 0.002)
		criterion_settle_add(&s, t, 1980);
	CHECK_INT(criterion_settled(&s, 0.71, 0.05), 1, "then two windows agree at 1980 MHz");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.71, 0.1), 0,
		  "at its limit, at the maximum: not held");
	criterion_settle_release(&s);

	settle_at(&s, 1980);
	criterion_settle_power(&s, POWER_BOUND);
	for (double t = 0.1; t < 0.311; t += 0.002)
		criterion_settle_add(&s, t, 1900);
	CHECK_INT(criterion_settled(&s, 0.31, 0.05), 1, "at its limit, two windows agree at 1900 MHz");
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.31, 0.1), 1, "4 % under the maximum: held");
	criterion_settle_release(&s);

	criterion_settle_init(&s, 1980);
	for (double t = 0.002; t < 0.051; t += 0.002)
		criterion_settle_add(&s, t, t < 0.038 ? 1980 : 1700);
	CHECK_INT(criterion_settled(&s, 0.05, 0.05), 0, "a clock that moved in warm-up is not settled yet");
	criterion_settle_power(&s, POWER_FREE);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.5, 0.1), 1, "not settled: held");
	s.ref = 1975;
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.5, 0.1), 0, "settled at 1975 MHz after it: not held");
	criterion_settle_release(&s);

	criterion_settle_init(&s, 1980);
	criterion_settle_power(&s, POWER_FREE);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.01), 0, "no clock read: not held");
	criterion_settle_release(&s);

	criterion_settle_init(&s, 0);
	criterion_settle_power(&s, POWER_NONE);
	CHECK_INT(criterion_stop_holds(&s, STOP_PRECISION, 0.1, 0.01), 0, "no clock (a CPU timer): never held");
	criterion_settle_release(&s);
}

/* criterion_grow: first at the check made at CRITERION_GROW_AFTER samples when the median's interval
 * projects more than CRITERION_GROW_SAMPLES samples (8 % uniform noise: +-2 % at 64 samples, about 1000
 * samples to +-0.5 %), only right after a check, never for a stream that is nearly there (2 %: +-0.6 % at
 * 64, about 90 samples), a fixed batch or max_noise. */
static void test_grow(void)
{
	struct spec_timing t = timing(), fixed = timing(), noise = timing_noise();
	struct criterion c, cf, cn;
	unsigned seed = 3;
	long first = 0, n, grew = 0;
	double x;

	fixed.batch = 2;
	noise.precision = t.precision;
	criterion_init(&c, &t);
	criterion_init(&cf, &fixed);
	criterion_init(&cn, &noise);
	for (n = 1; n <= 200 && !first; n++) {
		x = stream(&seed, 0.08);
		criterion_add(&c, x, 0);
		criterion_add(&cf, x, 0);
		criterion_add(&cn, x, 0);
		grew += criterion_check(&c, 1.0, 10) != STOP_NONE;   /* never precise yet */
		criterion_check(&cf, 1.0, 10);
		criterion_check(&cn, 1.0, 10);
		if (criterion_grow(&c))
			first = n;
		grew += criterion_grow(&cf) + criterion_grow(&cn);
	}
	CHECK_INT(grew, 0, "8 % noise: not precise, and no growth with a fixed batch or max_noise");
	CHECK_INT(first, CRITERION_GROW_AFTER, "the batch grows at the check made at 64 samples");
	CHECK(64 * pow(rel_width(c.x, c.n) / t.precision, 2) > CRITERION_GROW_SAMPLES,
	      "where the interval is +-%.2f %%", 100 * rel_width(c.x, c.n));
	criterion_add(&c, stream(&seed, 0.08), 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "65 samples: no check due");
	CHECK_INT(criterion_grow(&c), 0, "and no growth between checks");
	criterion_release(&c);
	criterion_release(&cf);
	criterion_release(&cn);

	criterion_init(&c, &t);
	grew = 0;
	for (n = 1; n <= 64; n++) {
		criterion_add(&c, stream(&seed, 0.02), 0);
		criterion_check(&c, 1.0, 10);
		grew += criterion_grow(&c);
	}
	CHECK_INT(grew, 0, "2 % noise (+-0.6 % at 64): no growth");
	criterion_release(&c);

	/* Met late, past CRITERION_GROW_SAMPLES: the check that finds it precise (a stop a managed clock may
	 * hold back) asks for no growth, though n * ratio^2 is still over CRITERION_GROW_SAMPLES. */
	criterion_init(&c, &t);
	for (n = 1; n <= 5000 && criterion_check(&c, 1.0, 10) != STOP_PRECISION; n++)
		criterion_add(&c, stream(&seed, 0.08), 0);
	x = rel_width(c.x, c.n) / t.precision;
	CHECK(c.n > CRITERION_GROW_SAMPLES && c.n * x * x > CRITERION_GROW_SAMPLES && x <= 1,
	      "precise at %ld samples, +-%.3f %%", c.n, 100 * rel_width(c.x, c.n));
	CHECK_INT(criterion_grow(&c), 0, "precise: no growth");
	criterion_release(&c);
}

int main(void)
{
	test_settle();
	test_settle_end();
	test_settle_power();
	test_power_judge();
	test_managed_span();
	test_precision_stops();
	test_precision_cheap();
	test_precision_few();
	test_noise_off();
	test_noise_met();
	test_max_samples();
	test_converged();
	test_resolution();
	test_grow();
	return test_done();
}
