/* test_criterion.c: the stopping rule (criterion.h) on made-up sample streams, and its order of rules. */
#include "criterion.h"
#include "test.h"

static struct spec_timing timing(void)
{
	struct spec_timing t = {
		.min_samples = 10, .min_time = 0.5, .max_noise = 0.005, .timeout = 15, .max_samples = 10000,
	};
	return t;
}

/* A reproducible stream around 1 with relative spread `rel` (uniform, so stdev rel / sqrt(3)). */
static double stream(unsigned *seed, double rel)
{
	*seed = *seed * 1103515245u + 12345u;
	return 1.0 + rel * (2.0 * ((*seed >> 8) & 0xffff) / 65535.0 - 1.0);
}

static void test_noise_met(void)
{
	struct spec_timing t = timing();
	struct criterion c;
	int i;

	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 1e-3 * (1 + (i % 2) * 1e-4), 0);
	CHECK_NEAR(criterion_noise(&c), 5.13e-5, 0.01, "noise of alternating 1 and 1.0001 ms");
	CHECK_INT(criterion_check(&c, 0.4, 10), STOP_NONE, "noise met but min_time not reached: go on");
	CHECK_INT(criterion_check(&c, 0.5, 10), STOP_NOISE, "both reached: noise");
	CHECK_INT(criterion_check(&c, 0.4, 0), STOP_TIMEOUT, "deadline passed before min_time: timeout");
	criterion_init(&c, &t);
	for (i = 0; i < 9; i++)
		criterion_add(&c, 1e-3, 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "9 equal samples are under min_samples 10");
	criterion_add(&c, 1e-3, 0);
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NOISE, "the 10th stops it");
}

static void test_max_samples(void)
{
	struct spec_timing t = timing();
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
}

/* A stream whose noise (about 2.9 %) can never reach 0.5 %: it stops as converged once the trailing
 * noise values stop moving, not at the deadline; never on fewer than 65 noise values, and only on a
 * multiple of CRITERION_EVERY samples. */
static void test_converged(void)
{
	struct spec_timing t = timing();
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

	/* Noise that is still falling fast has not converged: a big outlier first, then a quiet stream. */
	criterion_init(&c, &t);
	criterion_add(&c, 100.0, 0);
	for (i = 0; i < 200; i++) {
		criterion_add(&c, stream(&seed, 0.001), 0);
		if (criterion_check(&c, 1.0, 10) != STOP_NONE)
			break;
	}
	CHECK_INT(i, 200, "noise falling from an outlier: no stop in 200 samples");
}

/* A 15 us sample timed to 0.5 us cannot show a noise under 3.3 %: the target rises to that. */
static void test_resolution(void)
{
	struct spec_timing t = timing();
	struct criterion c;
	unsigned seed = 3;
	int i;

	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 15e-6 * stream(&seed, 0.02), 0.5e-6);
	CHECK_NEAR(criterion_target(&c), 0.5 / 15, 0.02,
		   "target = resolution / mean sample");
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NOISE, "1.2 % noise meets the raised target");
	criterion_init(&c, &t);
	for (i = 0; i < 20; i++)
		criterion_add(&c, 15e-6 * stream(&seed, 0.02), 0);
	CHECK_NEAR(criterion_target(&c), 0.005, 0, "a perfect timer leaves max_noise as the target");
	CHECK_INT(criterion_check(&c, 1.0, 10), STOP_NONE, "and 1.2 % does not meet it");
}

int main(void)
{
	test_noise_met();
	test_max_samples();
	test_converged();
	test_resolution();
	return test_done();
}
