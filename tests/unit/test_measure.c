/* test_measure.c: the timing loop (stopping rule, batching, throttle filter, failures, cancel) and
 * executor_run on kernel cells, with real CPU kernels and a fake timer that drives clocks. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../../kernels/kernel.h"
#include "criterion.h"
#include "hostinfo.h"
#include "measure.h"
#include "stats.h"
#include "executor.h"
#include "test.h"

/* A noise target loose enough to be met on a loaded two-core machine, where one preempted batch is tens
 * of times the median: cells stop at min_samples and min_time instead of running to the timeout. */
static struct spec_timing timing_fast(void)
{
	struct spec_timing t = {
		.precision = 0.005, .min_samples = 10, .min_time = 0.05, .max_noise = 1e3, .timeout = 5,
		.warmup = 0.01, .max_warmup = 0.01, .l2_hot = 1, .throttle = 0.75,
	};
	return t;
}

struct mt {
	struct kctx ctx;
	struct json_obj params, metrics;
	volatile int cancel;
	struct result r;
};

static void mt_init(struct mt *m, const char *json)
{
	char err[128];

	memset(m, 0, sizeof(*m));
	if (json_parse_flat(json, &m->params, 0, err, sizeof(err)))
		BUG("bad test params %s: %s", json, err);
	m->ctx.params = &m->params;
	m->ctx.gpu = -1;
	m->ctx.cancel = &m->cancel;
	m->ctx.metrics = &m->metrics;
	result_init(&m->r);
}

static void mt_release(struct mt *m)
{
	json_obj_release(&m->params);
	json_obj_release(&m->metrics);
	result_release(&m->r);
}

static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);
	double d;

	return v && !parse_double(v, &d) ? d : NAN;
}

/* A 2 ms sleep with the default rule (max_noise off): it stops once its median is known to 2 %, and the
 * result holds the interval it stopped on. */
static void test_sleep_2ms(void)
{
	struct spec_timing t = timing_fast();
	struct mt m;
	double med, sum;
	int i, ok = 1;

	t.max_noise = 0;
	t.precision = 0.02;
	mt_init(&m, "{\"ms\": 2, \"jitter\": 0}");
	CHECK_INT(measure_kernel(kernel_find("sleep"), &m.ctx, &t, &m.r), 0, "sleep ms=2 measures");
	CHECK_INT(m.r.status, RESULT_OK, "status ok");
	CHECK(m.r.nsamples >= t.min_samples, "n = %d >= min_samples", m.r.nsamples);
	med = stats_median(m.r.samples, m.r.nsamples);
	/* A sleep is never shorter than asked; the upper bound only catches a wrong unit (load stretches it). */
	CHECK(med >= 2e-3 && med <= 50e-3, "median %.3f ms within [2, 50] ms", med * 1e3);
	CHECK_NEAR(metric(&m.r, "seconds"), med, 1e-12, "metric seconds is the median");
	CHECK_INT(m.r.launches, 1, "no batching for 2 ms launches");
	CHECK_INT(m.r.stop, STOP_PRECISION, "the median's precision stopped it");
	CHECK_INT(m.r.precise, 1, "precise");
	CHECK(m.r.sum.ci_lo <= med && med <= m.r.sum.ci_hi &&
	      stats_ci_rel(m.r.sum.ci_lo, m.r.sum.ci_hi, med) <= t.precision,
	      "the interval [%.4f, %.4f] ms holds the median within 2 %%", m.r.sum.ci_lo * 1e3, m.r.sum.ci_hi * 1e3);
	CHECK(m.r.warmup >= t.warmup && m.r.warmup < 5, "warm-up recorded: %g s", m.r.warmup);
	CHECK_INT(m.r.settled, -1, "no clock on the CPU: settled unknown");
	CHECK(isnan(metric(&m.r, "gflops")) && isnan(metric(&m.r, "gbs")), "sleep has no throughput");
	CHECK_INT(m.r.noise_ok, 1, "no noise target to miss");
	CHECK(m.r.sum.noise > 0, "noise %.4f recorded", m.r.sum.noise);
	sum = 0;
	for (i = 0; i < m.r.nsamples; i++)
		sum += m.r.samples[i];
	CHECK(sum >= 0.9 * t.min_time, "min_time of sampling reached: %.1f ms of samples", sum * 1e3);
	for (i = 0; i < m.r.nsamples; i++)
		ok &= m.r.clocks[i] == 0;
	CHECK(ok, "the CPU timer reports no clock");
	CHECK_INT(m.r.throttled, 0, "no throttle filter on the CPU");
	CHECK(m.ctx.priv == NULL, "teardown ran");
	mt_release(&m);
}

static void test_noise_miss(void)
{
	struct spec_timing t = timing_fast();
	double start, took;
	struct mt m;

	t.max_noise = 1e-9;
	t.precision = 1e-9;
	t.timeout = 0.3;
	t.min_samples = 3;
	mt_init(&m, "{\"ms\": 1, \"jitter\": 1}");
	start = now_mono();
	CHECK_INT(measure_kernel(kernel_find("sleep"), &m.ctx, &t, &m.r), 0,
		  "a missed noise target is not a failure");
	took = now_mono() - start;
	CHECK_INT(m.r.status, RESULT_OK, "status still ok");
	CHECK_INT(m.r.noise_ok, 0, "noise_ok 0 against max_noise 1e-9");
	CHECK_INT(m.r.precise, 0, "precise 0 against precision 1e-9");
	/* Stopped by the timeout or as converged, not long after it: the next default stop would be 15 s away. */
	CHECK(took < 10, "stopped by 0.3 s timeout: %.3f s", took);
	CHECK(m.r.stop == STOP_TIMEOUT || m.r.stop == STOP_CONVERGED, "stop rule %s",
	      stop_rule_name[m.r.stop] ? stop_rule_name[m.r.stop] : "none");
	CHECK(m.r.nsamples >= 3 && m.r.sum.noise > 0, "samples kept: n = %d, noise %.3f", m.r.nsamples,
	      m.r.sum.noise);
	mt_release(&m);
}

static void test_batching(void)
{
	struct spec_timing t = timing_fast();
	double batch, med;
	struct mt m;

	mt_init(&m, "{\"ms\": 0, \"jitter\": 0}");
	CHECK_INT(measure_kernel(kernel_find("sleep"), &m.ctx, &t, &m.r), 0, "sleep ms=0 measures");
	batch = m.r.launches;
	med = metric(&m.r, "seconds");
	CHECK(batch > 1, "batching kicks in for ms=0: batch %g", batch);
	CHECK(med < 1e-6, "seconds are per launch: %.2f ns", med * 1e9);
	/* How long a batch takes depends on the machine's load (timing belongs in make bench): only check
	 * that a sample spans far more than one launch. */
	CHECK(batch * med >= 1e-6, "a batch spans many launches: %.2f us", batch * med * 1e6);
	mt_release(&m);
}

/* A cell whose precision is out of reach (sleeps of up to 10 us, one a sample, to 1e-6): max_samples ends
 * it, before its timeout, with exactly that many samples, marked as not precise. */
static void test_max_samples(void)
{
	struct spec_timing t = timing_fast();
	double start, took;
	struct mt m;

	t.batch = 1;
	t.max_noise = 0;
	t.precision = 1e-6;
	t.timeout = 10;
	t.max_samples = 10000;
	mt_init(&m, "{\"ms\": 0, \"jitter\": 0.01}");
	start = now_mono();
	CHECK_INT(measure_kernel(kernel_find("sleep"), &m.ctx, &t, &m.r), 0, "sleep with jitter measures");
	took = now_mono() - start;
	CHECK_INT(m.r.nsamples, 10000, "samples stop at max_samples");
	CHECK_INT(m.r.stop, STOP_MAX_SAMPLES, "the rule that stopped it");
	CHECK_INT(m.r.precise, 0, "short of its precision");
	CHECK(took < 10, "within its timeout: %.3f s", took);
	mt_release(&m);
}

static void test_throughput(void)
{
	struct spec_timing t = timing_fast();
	double med;
	struct mt m;

	mt_init(&m, "{\"bytes\": 1048576}");
	CHECK_INT(measure_kernel(kernel_find("cpu.copy"), &m.ctx, &t, &m.r), 0, "cpu.copy measures");
	med = metric(&m.r, "seconds");
	CHECK_NEAR(metric(&m.r, "gbs"), 2.0 * 1048576 / med / 1e9, 1e-9, "copy gbs = 2 * bytes / median");
	CHECK(isnan(metric(&m.r, "gflops")), "copy has no gflops");
	mt_release(&m);

	mt_init(&m, "{\"M\": 64, \"N\": 48, \"K\": 32, \"dtype\": \"f64\", \"threads\": 1}");
	CHECK_INT(measure_kernel(kernel_find("cpu.gemm"), &m.ctx, &t, &m.r), 0, "cpu.gemm measures");
	med = metric(&m.r, "seconds");
	CHECK_NEAR(metric(&m.r, "gflops"), 2.0 * 64 * 48 * 32 / med / 1e9, 1e-9,
		   "gemm gflops = 2MNK / median");
	CHECK_NEAR(metric(&m.r, "gbs"), (64.0 * 32 + 32 * 48 + 64 * 48) * 8 / med / 1e9, 1e-9, "gemm gbs");
	mt_release(&m);

	mt_init(&m, "{\"bytes\": 65536}");
	CHECK_INT(measure_kernel(kernel_find("cpu.read"), &m.ctx, &t, &m.r), 0, "cpu.read measures");
	CHECK_NEAR(metric(&m.r, "gbs"), 65536 / metric(&m.r, "seconds") / 1e9, 1e-9, "read gbs");
	mt_release(&m);
}

/* A device that draws a constant 250 W since energy_base: the host's timer with an energy counter.
 * energy_fails: the counter answers nothing; energy_back: it reads lower at the span's end. */
static double energy_base;
static int energy_fails, energy_back, energy_reads;

static int fe_energy(void *state, double *joules)
{
	energy_reads++;
	if (energy_fails)
		return -1;
	*joules = 250.0 * (now_mono() - energy_base) - (energy_back && energy_reads > 1 ? 1e3 : 0);
	return 0;
}

/* A kernel's tokens a launch (a decode step's batch): 8, for cpu.copy made a decoder below. */
static double eight_tokens(const struct kctx *ctx)
{
	(void)ctx;
	return 8;
}

/* The span's energy as watts and joules (watts x median), and work per joule from counts() and tokens(). */
static void test_energy(void)
{
	struct kernel_ops decoder = *kernel_find("cpu.copy");
	struct spec_timing t = timing_fast();
	struct timer_ops tm = timer_cpu;
	double med, j;
	struct mt m;

	tm.energy = fe_energy;
	energy_base = now_mono() - 10;
	/* A span under 0.1 s keeps no energy: NVML's counter moves every 100 ms. */
	mt_init(&m, "{\"bytes\": 65536}");
	CHECK_INT(measure_with_timer(&tm, kernel_find("cpu.copy"), &m.ctx, &t, NULL, &m.r), 0, "copy, a short span");
	CHECK(isnan(metric(&m.r, "watts")) && isnan(metric(&m.r, "joules")), "a span under 0.1 s: no energy, not 0 W");
	mt_release(&m);
	t.min_time = 0.15;
	energy_reads = 0;
	mt_init(&m, "{\"bytes\": 1048576}");
	CHECK_INT(measure_with_timer(&tm, kernel_find("cpu.copy"), &m.ctx, &t, NULL, &m.r), 0, "copy with energy");
	med = metric(&m.r, "seconds");
	j = metric(&m.r, "joules");
	CHECK_NEAR(metric(&m.r, "watts"), 250, 0.01, "watts: the counter's rise over the span's time");
	CHECK_NEAR(j, metric(&m.r, "watts") * med, 1e-12, "joules = watts x median");
	CHECK_NEAR(metric(&m.r, "gb_per_j"), 2.0 * 1048576 / j / 1e9, 1e-9, "gb_per_j = bytes / joules");
	CHECK(isnan(metric(&m.r, "gflop_per_j")), "copy has no gflop_per_j");
	CHECK_INT(energy_reads, 2, "the counter read at the span's two ends");
	mt_release(&m);

	mt_init(&m, "{\"M\": 32, \"N\": 32, \"K\": 32, \"dtype\": \"f64\", \"threads\": 1}");
	CHECK_INT(measure_with_timer(&tm, kernel_find("cpu.gemm"), &m.ctx, &t, NULL, &m.r), 0, "gemm with energy");
	CHECK_NEAR(metric(&m.r, "gflop_per_j"), 2.0 * 32 * 32 * 32 / metric(&m.r, "joules") / 1e9, 1e-9,
		   "gflop_per_j = flops / joules");
	CHECK(isnan(metric(&m.r, "tok_s")) && isnan(metric(&m.r, "tok_per_j")), "gemm makes no tokens");
	mt_release(&m);

	decoder.tokens = eight_tokens;
	mt_init(&m, "{\"bytes\": 1048576}");
	CHECK_INT(measure_with_timer(&tm, &decoder, &m.ctx, &t, NULL, &m.r), 0, "a kernel that makes tokens, with energy");
	CHECK_NEAR(metric(&m.r, "tok_s"), 8 / metric(&m.r, "seconds"), 1e-9, "tok_s = tokens / median");
	CHECK_NEAR(metric(&m.r, "tok_per_j"), 8 / metric(&m.r, "joules"), 1e-12, "tok_per_j = tokens / joules");
	mt_release(&m);

	energy_fails = 1;
	mt_init(&m, "{\"bytes\": 65536}");
	CHECK_INT(measure_with_timer(&tm, kernel_find("cpu.copy"), &m.ctx, &t, NULL, &m.r), 0, "copy, no counter");
	CHECK(isnan(metric(&m.r, "watts")) && isnan(metric(&m.r, "joules")), "no counter: no energy made up");
	mt_release(&m);
	energy_fails = 0;

	energy_back = 1;
	energy_reads = 0;
	mt_init(&m, "{\"bytes\": 65536}");
	CHECK_INT(measure_with_timer(&tm, kernel_find("cpu.copy"), &m.ctx, &t, NULL, &m.r), 0, "copy, counter back");
	CHECK(isnan(metric(&m.r, "watts")), "a counter that went back gives no energy");
	mt_release(&m);
	energy_back = 0;

	mt_init(&m, "{\"bytes\": 65536}");
	CHECK_INT(measure_kernel(kernel_find("cpu.copy"), &m.ctx, &t, &m.r), 0, "copy on the host's timer");
	CHECK(isnan(metric(&m.r, "watts")), "the host's timer reads no energy");
	mt_release(&m);
}

/* A kernel whose hooks fail on demand and count their calls. */
static int fake_setups, fake_teardowns, fake_launches;
static const struct param_def fake_params[] = {
	{ .name = "fail", .type = PARAM_STR, .def = "none", .doc = "none|setup|check|launch" },
	{ .name = NULL }
};

static int fake_setup(struct kctx *ctx)
{
	fake_setups++;
	ctx->priv = malloc(16);
	if (!strcmp(kparam_str(ctx, "fail"), "setup"))
		return kfail(ctx, "no memory for the test");
	return 0;
}

static int fake_launch(struct kctx *ctx)
{
	fake_launches++;
	if (!strcmp(kparam_str(ctx, "fail"), "launch") && fake_launches > 3)
		return kfail(ctx, "launch %d broke", fake_launches);
	return 0;
}

static int fake_check(struct kctx *ctx)
{
	if (!strcmp(kparam_str(ctx, "fail"), "check"))
		return kfail(ctx, "element 3 is 7, want 8");
	json_obj_add(ctx->metrics, "extra", "42", JSON_NUM);
	json_obj_add(ctx->metrics, "label", "text", JSON_STR);
	return 0;
}

static void fake_teardown(struct kctx *ctx)
{
	fake_teardowns++;
	free(ctx->priv);
	ctx->priv = NULL;
}

static const struct kernel_ops fake_kernel = {
	.name = "test.fake", .doc = "test", .params = fake_params, .place = KERNEL_CPU, .gpus = 1,
	.setup = fake_setup, .launch = fake_launch, .check = fake_check, .teardown = fake_teardown,
};

/* What measure_kernel_after's fn saw: how often it ran, the samples and teardowns by then, and what
 * measure_clean answered it. */
static int after_calls, after_samples, after_teardowns, after_clean;

static void after_fn(void *arg, const struct kernel_ops *k, struct kctx *ctx, const struct measure_l2 *l2,
		     struct result *r)
{
	after_calls++;
	after_samples = r->nsamples;
	after_teardowns = fake_teardowns;
	after_clean = measure_clean(l2, ctx);
	result_set_metric(r, (const char *)arg, 7);
}

/* The untimed pass after the samples (a spec's counters: through CUPTI): once, after the samples and
 * before the teardown, its metrics kept; not at all when the cell failed. */
static void test_after(void)
{
	struct measure_after after = { .fn = after_fn, .arg = "dram__bytes_read.sum" };
	struct spec_timing t = timing_fast();
	struct mt m;

	fake_teardowns = after_calls = 0;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_kernel_after(&fake_kernel, &m.ctx, &t, &after, &m.r), 0, "measures with an after");
	CHECK_INT(after_calls, 1, "after runs once");
	CHECK(after_samples >= t.min_samples, "after runs after the samples (%d by then)", after_samples);
	CHECK_INT(after_teardowns, 0, "after runs before the teardown");
	CHECK_INT(after_clean, 0, "the CPU's timer has no L2 to clean: nothing to do");
	CHECK_INT(fake_teardowns, 1, "the teardown still runs");
	CHECK_NEAR(metric(&m.r, "dram__bytes_read.sum"), 7, 0, "after's metric reaches the result");
	mt_release(&m);

	fake_launches = 0;
	mt_init(&m, "{\"fail\": \"launch\"}");
	CHECK_INT(measure_kernel_after(&fake_kernel, &m.ctx, &t, &after, &m.r), -1, "a failed launch fails");
	CHECK_INT(after_calls, 1, "no after when the cell failed");
	mt_release(&m);
}

static void test_failures(void)
{
	struct spec_timing t = timing_fast();
	struct mt m;

	fake_setups = fake_teardowns = 0;
	mt_init(&m, "{\"fail\": \"setup\"}");
	CHECK_INT(measure_kernel(&fake_kernel, &m.ctx, &t, &m.r), -1, "failed setup fails");
	CHECK_INT(m.r.status, RESULT_ERROR, "setup failure is an error");
	CHECK_STR(m.r.error, "setup: no memory for the test", "setup error message");
	CHECK_INT(fake_teardowns, 1, "teardown runs after a failed setup");
	mt_release(&m);

	mt_init(&m, "{\"fail\": \"check\"}");
	CHECK_INT(measure_kernel(&fake_kernel, &m.ctx, &t, &m.r), -1, "failed check fails");
	CHECK_INT(m.r.status, RESULT_ERROR, "check failure is an error");
	CHECK_STR(m.r.error, "check failed: element 3 is 7, want 8", "check error message");
	CHECK_INT(m.r.nsamples, 0, "no samples after a failed check");
	CHECK_INT(fake_teardowns, 2, "teardown runs after a failed check");
	mt_release(&m);

	fake_launches = 0;
	mt_init(&m, "{\"fail\": \"launch\"}");
	CHECK_INT(measure_kernel(&fake_kernel, &m.ctx, &t, &m.r), -1, "failed launch fails");
	CHECK_STR(m.r.error, "launch: launch 4 broke", "launch error message");
	CHECK_INT(fake_teardowns, 3, "teardown runs after a failed launch");
	mt_release(&m);

	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_kernel(&fake_kernel, &m.ctx, &t, &m.r), 0, "fake kernel measures");
	CHECK_NEAR(metric(&m.r, "extra"), 42, 0, "a kernel's own metric reaches the result");
	CHECK(json_obj_get(&m.r.metrics, "label") == NULL, "a non-numeric kernel metric does not");
	CHECK_INT(fake_setups, 4, "setup once per measure");
	CHECK_INT(fake_teardowns, 4, "teardown once per measure");
	mt_release(&m);

	/* Without cancel and metrics pointers the loop supplies its own. */
	mt_init(&m, "{\"fail\": \"none\"}");
	m.ctx.cancel = NULL;
	m.ctx.metrics = NULL;
	CHECK_INT(measure_kernel(&fake_kernel, &m.ctx, &t, &m.r), 0, "measure without cancel or metrics");
	CHECK(m.ctx.cancel == NULL && m.ctx.metrics == NULL, "the caller's pointers are restored");
	mt_release(&m);

	mt_init(&m, "{\"mode\": \"error\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	CHECK_INT(measure_kernel(kernel_find("debug.fail"), &m.ctx, &t, &m.r), -1, "debug.fail error fails");
	CHECK_INT(m.r.status, RESULT_ERROR, "debug.fail error is RESULT_ERROR");
	CHECK_STR(m.r.error, "launch: debug.fail: failing on purpose", "with the kernel's message");
	mt_release(&m);

	/* A cancel seen between launches ends the cell as a timeout. */
	mt_init(&m, "{\"ms\": 0, \"jitter\": 0}");
	m.cancel = 1;
	CHECK_INT(measure_kernel(kernel_find("sleep"), &m.ctx, &t, &m.r), -1, "a cancelled cell fails");
	CHECK_INT(m.r.status, RESULT_TIMEOUT, "cancel gives RESULT_TIMEOUT");
	mt_release(&m);

#ifndef SWEEP_CUDA
	{
		struct kernel_ops cuda = fake_kernel;

		cuda.place = KERNEL_CUDA;
		mt_init(&m, "{\"fail\": \"none\"}");
		fake_setups = 0;
		CHECK_INT(measure_kernel(&cuda, &m.ctx, &t, &m.r), -1, "a CUDA kernel without CUDA fails");
		CHECK(m.r.error && strstr(m.r.error, "built without CUDA"), "error: '%s'", m.r.error);
		CHECK_INT(fake_setups, 0, "and is never set up");
		mt_release(&m);
	}
#endif
}

/* A fake device timer: every other sample runs at half the max clock. */
struct fake_timer {
	int calls, inits, finis;
	int cleans, calls_at_clean, clean_fails;    /* clean's calls, the samples before it; fail it */
	double max;
	int idles, teardowns_at_idle, idle_fails;   /* idle's calls, the teardowns before it; fail it */
};
static struct fake_timer fake_timer_state;

static int ft_init(struct kctx *ctx, const struct spec_timing *t, void **state)
{
	fake_timer_state.inits++;
	*state = &fake_timer_state;
	return 0;
}

static int ft_sample(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch, double *seconds,
		     double *clock_mhz)
{
	struct fake_timer *f = state;

	f->calls++;
	*seconds = 1e-3 * (1 + 0.01 * (f->calls % 3));
	*clock_mhz = f->calls % 2 ? f->max : f->max / 2;
	return k->launch(ctx);
}

static double ft_max_clock(void *state)
{
	return ((struct fake_timer *)state)->max;
}

static int ft_idle(void *state, struct kctx *ctx)
{
	struct fake_timer *f = state;

	f->idles++;
	f->teardowns_at_idle = fake_teardowns;
	return f->idle_fails ? kfail(ctx, "the sample enqueued ahead failed") : 0;
}

static int ft_clean(void *state, struct kctx *ctx)
{
	struct fake_timer *f = state;

	f->cleans++;
	f->calls_at_clean = f->calls;
	return f->clean_fails ? kfail(ctx, "no L2 to clean") : 0;
}

static void ft_fini(void *state)
{
	((struct fake_timer *)state)->finis++;
}

static double ft_resolution(void *state, int batch)
{
	return 0;
}

static const struct timer_ops fake_timer = {
	.init = ft_init, .sample = ft_sample, .max_clock = ft_max_clock, .resolution = ft_resolution,
	.idle = ft_idle, .fini = ft_fini, .clean = ft_clean,
};

static void test_throttle(void)
{
	struct spec_timing t = timing_fast();
	struct mt m;
	int i, ok = 1;

	memset(&fake_timer_state, 0, sizeof(fake_timer_state));
	fake_timer_state.max = 1980;
	t.min_time = 0;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&fake_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), 0, "fake timer measures");
	CHECK(m.r.throttled > 0, "throttled samples dropped: %d", m.r.throttled);
	for (i = 0; i < m.r.nsamples; i++)
		ok &= m.r.clocks[i] == 1980;
	CHECK(ok, "every kept sample ran at the max clock");
	CHECK(abs(m.r.throttled - m.r.nsamples) <= 1, "half the samples were throttled (%d of %d)",
	      m.r.throttled, m.r.throttled + m.r.nsamples);
	CHECK(m.r.nsamples >= 10, "min_samples counts kept samples only: %d", m.r.nsamples);
	CHECK_INT(fake_timer_state.inits, 1, "timer init once");
	CHECK_INT(fake_timer_state.finis, 1, "timer fini once");
	CHECK_INT(fake_timer_state.idles, 1, "timer idle once");
	CHECK_INT(fake_timer_state.teardowns_at_idle, fake_teardowns - 1, "idle before the kernel's teardown");
	mt_release(&m);

	/* What was enqueued ahead failed: the result is that error, not ok. */
	memset(&fake_timer_state, 0, sizeof(fake_timer_state));
	fake_timer_state.max = 1980;
	fake_timer_state.idle_fails = 1;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&fake_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), -1, "a failed idle fails");
	CHECK(m.r.error && !strcmp(m.r.error, "launch: the sample enqueued ahead failed"), "error: '%s'",
	      m.r.error);
	mt_release(&m);

	/* Every sample throttled: nothing to report, an error once the timeout passes. */
	memset(&fake_timer_state, 0, sizeof(fake_timer_state));
	fake_timer_state.max = 1980;
	t.throttle = 1.5;
	t.timeout = 0.2;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&fake_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), -1, "all throttled fails");
	CHECK(m.r.error && strstr(m.r.error, "throttled"), "error: '%s'", m.r.error);
	mt_release(&m);
}

/* An after's measure_clean is its cell's timer's clean, after the samples, before the teardown; what a
 * failed clean says reaches the after. */
static void test_after_clean(void)
{
	struct measure_after after = { .fn = after_fn, .arg = "dram__bytes_write.sum" };
	struct spec_timing t = timing_fast();
	struct mt m;

	memset(&fake_timer_state, 0, sizeof(fake_timer_state));
	fake_timer_state.max = 1980;
	t.throttle = 0;
	after_calls = 0;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&fake_timer, &fake_kernel, &m.ctx, &t, &after, &m.r), 0, "measures, cleans");
	CHECK_INT(after_calls, 1, "after runs once");
	CHECK_INT(fake_timer_state.cleans, 1, "the timer's clean, called from the after");
	CHECK_INT(fake_timer_state.calls_at_clean, fake_timer_state.calls, "after every sample");
	CHECK_INT(after_clean, 0, "and its answer given back");
	CHECK_INT(after_teardowns, fake_teardowns - 1, "before the teardown");
	mt_release(&m);

	memset(&fake_timer_state, 0, sizeof(fake_timer_state));
	fake_timer_state.max = 1980;
	fake_timer_state.clean_fails = 1;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&fake_timer, &fake_kernel, &m.ctx, &t, &after, &m.r), 0, "a failed clean");
	CHECK_INT(after_clean, -1, "fails the after's clean");
	CHECK_STR(m.ctx.err, "no L2 to clean", "saying why");
	mt_release(&m);
}

/* A fake device timer whose SM clock follows a curve of the seconds since init: each sample sleeps 0.5 ms
 * and takes 1 ms. */
static double (*clock_curve)(double t);
static double curve_start;

static int fc_init(struct kctx *ctx, const struct spec_timing *t, void **state)
{
	curve_start = now_mono();
	*state = &fake_timer_state;
	return 0;
}

static int fc_sample(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch, double *seconds,
		     double *clock_mhz)
{
	struct timespec nap = { 0, 500000 };

	nanosleep(&nap, NULL);
	*seconds = 1e-3;
	*clock_mhz = clock_curve(now_mono() - curve_start);
	return k->launch(ctx);
}

static double fc_max_clock(void *state)
{
	return 1980;
}

static const struct timer_ops curve_timer = {
	.init = fc_init, .sample = fc_sample, .max_clock = fc_max_clock, .resolution = ft_resolution,
	.fini = ft_fini,
};

static double clock_pinned(double t)
{
	return 1980;
}

/* The power limit: the clock holds 1980 MHz for 0.1 s, falls to 1500 MHz by 0.4 s, then holds. */
static double clock_falls(double t)
{
	return t < 0.1 ? 1980 : t < 0.4 ? 1980 - 480 * (t - 0.1) / 0.3 : 1500;
}

/* The power limit holds it under 75 % of the maximum after 0.1 s. */
static double clock_held_low(double t)
{
	return t < 0.1 ? 1980 : 1480;
}

/* Still falling, 400 MHz a second, for as long as it runs. */
static double clock_sinks(double t)
{
	return 1980 - 400 * t;
}

/* measure_with_timer on curve_timer with its clock following curve; m to be released. */
static int curve_measure(struct mt *m, double (*curve)(double), const struct spec_timing *t)
{
	clock_curve = curve;
	mt_init(m, "{\"fail\": \"none\"}");
	return measure_with_timer(&curve_timer, &fake_kernel, &m->ctx, t, NULL, &m->r);
}

/* Warm-up lasts until the SM clock has settled: at `warmup` for a clock that never moved, after the fall
 * for a power-limited one (which holds its maximum at first: the fall shows during sampling, whose samples
 * are then dropped), at max_warmup (recorded as not settled) for one that keeps falling. */
static void test_settle(void)
{
	struct spec_timing t = timing_fast();
	struct mt m;

	t.warmup = 0.05;
	t.max_warmup = 1;
	CHECK_INT(curve_measure(&m, clock_pinned, &t), 0, "pinned clock measures");
	CHECK_INT(m.r.settled, 1, "a clock that held still: settled");
	CHECK(m.r.warmup >= 0.05 && m.r.warmup < 0.15, "after warmup only: %.3f s", m.r.warmup);
	mt_release(&m);

	/* Sampling for 0.2 s meets the fall at 0.1 s (a cell done before it measures the burst state). */
	t.min_time = 0.2;
	CHECK_INT(curve_measure(&m, clock_falls, &t), 0, "falling clock measures");
	CHECK_INT(m.r.settled, 1, "a clock that fell and held: settled");
	/* two 0.1 s windows agree once the older one starts after the fall (0.4 s), within a quarter window */
	CHECK(m.r.warmup >= 0.5 && m.r.warmup < 0.95, "after the fall: %.3f s", m.r.warmup);
	CHECK(m.r.clocks[0] == 1500, "the samples see the held clock: %g MHz", m.r.clocks[0]);
	mt_release(&m);

	/* Held under 75 % of the maximum once settled: measured there, no sample counted as throttled (the
	 * filter compares with the settled clock; against the maximum every sample was dropped until the
	 * timeout). */
	t.min_time = 0.05;
	t.timeout = 3;
	CHECK_INT(curve_measure(&m, clock_held_low, &t), 0, "held clock measures");
	CHECK_INT(m.r.settled, 1, "a clock held low: settled");
	CHECK_INT(m.r.throttled, 0, "its samples are not throttled");
	CHECK(m.r.nsamples > 0 && m.r.clocks[0] == 1480, "the samples see the held clock: %d, %g MHz",
	      m.r.nsamples, m.r.nsamples ? m.r.clocks[0] : 0);
	mt_release(&m);

	/* Still within 1 % over the second half of warmup, so sampling starts; the clock leaves the settled
	 * one by 3 % at about 0.15 s, the samples are dropped and warm-up goes on, to its bound. */
	t.max_warmup = 0.3;
	t.min_time = 0.5;
	CHECK_INT(curve_measure(&m, clock_sinks, &t), 0, "sinking clock measures");
	CHECK_INT(m.r.settled, 0, "a clock still falling at max_warmup: not settled, and said so");
	CHECK(m.r.warmup >= 0.3 && m.r.warmup < 0.5, "bounded by max_warmup 0.3: %.3f s", m.r.warmup);
	mt_release(&m);
}

/* A fake power controller beside curve_timer's clock: a reading every 0.1 s from 0.03 s after init (an
 * H200's refreshes every 100 ms), at a 700 W limit or under it as power_reading says at its time (pending:
 * no reading that decides), judged by criterion_power_judge as the CUDA timer's are. */
static enum power_verdict (*power_reading)(double t);

static int fp_power(void *state, double warm_start)
{
	double now = now_mono() - curve_start, tick = 0.03 + 0.1 * floor((now - 0.03) / 0.1);
	enum power_verdict v;

	if (now < 0.03 || (v = power_reading(tick)) == POWER_PENDING)
		return POWER_PENDING;
	return criterion_power_judge(v == POWER_BOUND ? 700 : 300, 700, 0, curve_start + tick - warm_start);
}

static const struct timer_ops power_timer = {
	.init = fc_init, .sample = fc_sample, .max_clock = fc_max_clock, .resolution = ft_resolution,
	.fini = ft_fini, .power = fp_power,
};

static enum power_verdict power_bound(double t)
{
	return POWER_BOUND;
}

static enum power_verdict power_free(double t)
{
	return POWER_FREE;
}

static enum power_verdict power_between(double t)
{
	return POWER_PENDING;
}

/* The controller lowers the clock only at its second reading: 1980 MHz until 0.15 s, then 1500 by 0.35. */
static double clock_late(double t)
{
	return t < 0.15 ? 1980 : t < 0.35 ? 1980 - 480 * (t - 0.15) / 0.2 : 1500;
}

/* timing_fast with 0.05 s of warm-up, up to 1 s. */
static struct spec_timing timing_power(void)
{
	struct spec_timing t = timing_fast();

	t.warmup = 0.05;
	t.max_warmup = 1;
	return t;
}

/* r stopped by its rule (precision, or timing_fast's noise target), not a timeout. */
static void check_stopped_by_rule(const struct result *r)
{
	CHECK(r->stop == STOP_PRECISION || r->stop == STOP_NOISE, "stopped by its rule, not a timeout: %d", r->stop);
}

/* measure_with_timer on power_timer; m to be released; *seconds: how long it took. */
static int power_measure(struct mt *m, double (*curve)(double), enum power_verdict (*reading)(double),
			 const struct spec_timing *t, double *seconds)
{
	int ret;

	clock_curve = curve;
	power_reading = reading;
	mt_init(m, "{\"fail\": \"none\"}");
	*seconds = now_mono();
	ret = measure_with_timer(&power_timer, &fake_kernel, &m->ctx, t, NULL, &m->r);
	*seconds = now_mono() - *seconds;
	return ret;
}

/* A card at its power limit measures its held state though its clock was still when warm-up ended (its
 * samples are dropped once the reading 40 ms in says so, and it settles by the windows) and says so
 * (power_limited 1); one not at it stops after that reading (power_limited 0); one whose readings never
 * decide stops at CRITERION_POWER_WAIT, and says nothing. */
static void test_settle_power(void)
{
	struct spec_timing t = timing_power();
	struct mt m;
	double took;

	CHECK_INT(power_measure(&m, clock_late, power_bound, &t, &took), 0, "a card at its limit measures");
	CHECK_INT(m.r.settled, 1, "settled");
	CHECK(m.r.nsamples > 0 && m.r.clocks[0] == 1500, "the samples see the held clock: %d, %g MHz",
	      m.r.nsamples, m.r.nsamples ? m.r.clocks[0] : 0);
	CHECK(m.r.warmup >= 0.45 && m.r.warmup < 0.8, "warmed up past the fall: %.3f s", m.r.warmup);
	CHECK_NEAR(metric(&m.r, "power_limited"), 1, 0, "and says it was at its limit");
	mt_release(&m);

	CHECK_INT(power_measure(&m, clock_pinned, power_free, &t, &took), 0, "a card under its limit measures");
	CHECK(m.r.warmup >= 0.05 && m.r.warmup < 0.1, "warm-up 0.05 s: %.3f s", m.r.warmup);
	CHECK(took >= 0.13 && took < 0.3, "it stops after the reading at 0.13 s: %.3f s", took);
	CHECK_NEAR(metric(&m.r, "power_limited"), 0, 0, "and says it was not at its limit");
	mt_release(&m);

	CHECK_INT(power_measure(&m, clock_pinned, power_between, &t, &took), 0, "an undecided card measures");
	CHECK(took >= CRITERION_POWER_WAIT && took < CRITERION_POWER_WAIT + 0.15, "until the wait: %.3f s", took);
	CHECK(isnan(metric(&m.r, "power_limited")), "and says nothing of its limit: %g",
	      metric(&m.r, "power_limited"));
	check_stopped_by_rule(&m.r);
	mt_release(&m);
}

/* Under 75 % of the maximum after 0.1 s and falling 300 MHz a second: its 0.1 s windows never agree. */
static double clock_sinks_low(double t)
{
	return t < 0.1 ? 1980 : 1470 - 300 * t;
}

/* A card at its limit whose clock has not settled by max_warmup, already under 75 % of the maximum: its
 * samples are kept, the throttle filter comparing them with where warm-up ended (about 1390 MHz), not with
 * the maximum, against which every one was dropped until the timeout (an H200's 8192x28672x4096 GEMM at
 * 1500 MHz: 1462 dropped, 10 s). */
static void test_unsettled_low(void)
{
	struct spec_timing t = timing_power();
	struct mt m;
	double took;

	t.max_warmup = 0.3;
	t.timeout = 3;
	CHECK_INT(power_measure(&m, clock_sinks_low, power_bound, &t, &took), 0, "an unsettled low clock measures");
	CHECK_INT(m.r.settled, 0, "not settled, and said so");
	CHECK_INT(m.r.throttled, 0, "no sample throttled");
	CHECK(m.r.nsamples > 0 && m.r.clocks[0] < 1400, "the samples see the low clock: %d, %g MHz", m.r.nsamples,
	      m.r.nsamples ? m.r.clocks[0] : 0);
	CHECK(took < 0.3 + CRITERION_MANAGED_SPAN + 0.3, "stopped by its rule after the span: %.3f s", took);
	check_stopped_by_rule(&m.r);
	mt_release(&m);
}

/* A clock the card holds still but under its maximum, the card not at its limit (an H200 under the 67 us
 * GEMM: 1770 of 1980 MHz, NVML saying 1980 and no cap). */
static double clock_managed(double t)
{
	return 1770;
}

/* A managed clock's cell samples CRITERION_MANAGED_SPAN, though its median (and noise) were known long
 * before; one at the maximum stops once the power reading allows (test_settle_power). */
static void test_managed_span(void)
{
	struct spec_timing t = timing_power();
	struct mt m;
	double took;

	CHECK_INT(power_measure(&m, clock_managed, power_free, &t, &took), 0, "a managed clock measures");
	CHECK(m.r.warmup >= 0.05 && m.r.warmup < 0.1, "warm-up 0.05 s: %.3f s", m.r.warmup);
	CHECK(took >= 0.05 + CRITERION_MANAGED_SPAN && took < 0.25 + CRITERION_MANAGED_SPAN,
	      "it samples the span: %.3f s", took);
	check_stopped_by_rule(&m.r);
	CHECK(m.r.nsamples > 0 && m.r.clocks[0] == 1770, "at the clock held: %g MHz",
	      m.r.nsamples ? m.r.clocks[0] : 0);
	mt_release(&m);
}

/* A card read at its limit whose clock stays at the maximum (an H200's 2 GiB copy: 1980 MHz at 665-700 W):
 * it settles by the windows (0.2 s), and its stop is not held for the span, since the controller does not
 * move that clock. */
static void test_bound_at_maximum(void)
{
	struct spec_timing t = timing_power();
	struct mt m;
	double took;

	CHECK_INT(power_measure(&m, clock_pinned, power_bound, &t, &took), 0, "a card at its limit measures");
	CHECK_INT(m.r.settled, 1, "settled");
	CHECK(m.r.warmup >= 2 * CRITERION_SETTLE_WINDOW && m.r.warmup < 0.35, "by the windows: %.3f s",
	      m.r.warmup);
	CHECK(took < m.r.warmup + CRITERION_MANAGED_SPAN - 0.2, "then stopped without the span: %.3f s",
	      took);
	CHECK_NEAR(metric(&m.r, "power_limited"), 1, 0, "and says it was at its limit");
	check_stopped_by_rule(&m.r);
	mt_release(&m);
}

/* A card coming from idle: free of its limit at first, at it from 0.2 s, its clock 1.5 % lower from then
 * (too little for the clock test, CRITERION_SETTLE_LEAVE). */
static double clock_creeps(double t)
{
	return t < 0.2 ? 1770 : 1740;
}

static enum power_verdict power_later(double t)
{
	return t < 0.2 ? POWER_FREE : POWER_BOUND;
}

/* Found free 0.13 s in, it samples (its managed clock holds it) until the reading at 0.23 s says it is at
 * its limit: its samples are dropped, it warms up on until two windows agree (at once here: their medians
 * are still the earlier clock's) and samples the span in the state the limit holds it in, and says it was
 * at its limit. */
static void test_limit_later(void)
{
	struct spec_timing t = timing_power();
	struct mt m;
	double took;

	CHECK_INT(power_measure(&m, clock_creeps, power_later, &t, &took), 0, "a card limited later measures");
	CHECK_NEAR(metric(&m.r, "power_limited"), 1, 0, "says it was at its limit");
	CHECK(m.r.nsamples > 0 && m.r.clocks[0] == 1740, "its samples see the held clock: %g MHz",
	      m.r.nsamples ? m.r.clocks[0] : 0);
	/* The reading's 0.23 s count from the timer's init, warm-up from after the first launch: under 0.23 s
	 * once (printed 0.230), under the sanitizers on a loaded machine. */
	CHECK(m.r.warmup >= 0.22 && m.r.warmup < 0.7, "warmed up past the reading at 0.23 s: %.3f s", m.r.warmup);
	CHECK(took >= m.r.warmup + CRITERION_MANAGED_SPAN && took < m.r.warmup + CRITERION_MANAGED_SPAN + 0.3,
	      "then sampled the span: %.3f s", took);
	mt_release(&m);
}

/* A fake timer whose launches repeat in a cycle of four (100, 110, 120, 130 us): a sample of one launch
 * falls in four modes whose median lies between two of them, a mean of four holds each phase once.
 * Each sample sleeps 50 us; cycle_batch is the largest batch it was asked to time. */
static long cycle_launches;
static int cycle_batch;
static double cycle_scale = 1;   /* the launches' times, scaled */

static int cy_sample(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch, double *seconds,
		     double *clock_mhz)
{
	struct timespec nap = { 0, 50000 };
	double sum = 0;

	nanosleep(&nap, NULL);
	if (batch > cycle_batch)
		cycle_batch = batch;
	for (int i = 0; i < batch; i++)
		sum += cycle_scale * 100e-6 * (1 + 0.1 * (double)(cycle_launches++ % 4));
	*seconds = sum / batch;
	*clock_mhz = 0;
	return k->launch(ctx);
}

static double cy_max_clock(void *state)
{
	return 0;
}

static const struct timer_ops cycle_timer = {
	.init = ft_init, .sample = cy_sample, .max_clock = cy_max_clock, .resolution = ft_resolution,
	.fini = ft_fini, .grows = 1,
};

/* result_regroup: each 4 consecutive samples and clocks become their mean; the remainder is dropped. */
static void test_regroup(void)
{
	struct result r;
	int i;

	result_init(&r);
	for (i = 1; i <= 10; i++)
		result_add_sample(&r, i, 10.0 * i);
	result_regroup(&r, 4);
	CHECK_INT(r.nsamples, 2, "10 samples, 4 to one: 2, the last 2 dropped");
	CHECK_NEAR(r.samples[0], 2.5, 1e-12, "the first four's mean");
	CHECK_NEAR(r.samples[1], 6.5, 1e-12, "the next four's mean");
	CHECK_NEAR(r.clocks[1], 65, 1e-12, "their clocks' mean");
	result_release(&r);
}

/* Launches in a cycle: one at a time the median's interval stays [110, 120] us (+-4.3 %), so each sample
 * becomes the mean of four consecutive timed samples (the timer still times one launch at a time; the
 * samples taken before, averaged four to one) and the median, 115 us, is known exactly; with the spec's
 * batch of 1 it never is. */
static void test_grow(void)
{
	struct spec_timing t = timing_fast();
	struct timer_ops wall_timer = cycle_timer;
	struct mt m;
	int i, ok = 1;

	t.max_noise = 0;
	t.timeout = 1;
	cycle_launches = cycle_batch = 0;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&cycle_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), 0, "cycling launches measure");
	CHECK_INT(m.r.launches, CRITERION_GROW, "a sample grew from 1 launch");
	CHECK_INT(cycle_batch, 1, "the timer still timed one launch at a time");
	CHECK_INT(m.r.stop, STOP_PRECISION, "then the median's precision stopped it");
	CHECK_INT(m.r.precise, 1, "precise");
	CHECK_NEAR(metric(&m.r, "seconds"), 115e-6, 1e-12, "the median is the cycle's mean");
	for (i = 0; i < m.r.nsamples; i++)
		ok &= fabs(m.r.samples[i] - 115e-6) < 1e-12;
	CHECK(ok && m.r.nsamples >= t.min_samples, "only the grown samples kept (%d, each 115 us)",
	      m.r.nsamples);
	/* The growth came at a check after min_time of sampling; those samples, four to one, are kept. */
	CHECK(m.r.warmup < t.min_time, "the samples before the growth kept: warm-up %.3f s, under min_time",
	      m.r.warmup);
	mt_release(&m);

	t.batch = 1;
	t.timeout = 0.3;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&cycle_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), 0, "a fixed batch measures");
	CHECK_INT(m.r.launches, 1, "the spec's batch is kept");
	CHECK_INT(m.r.stop, STOP_TIMEOUT, "its median never known to 0.5 % : timeout");
	CHECK_INT(m.r.precise, 0, "not precise, and said so");
	mt_release(&m);

	/* Launches of 1.0-1.3 ms: a sample that long does not grow (CRITERION_GROW_MAX_S). */
	t.batch = 0;
	cycle_scale = 10;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&cycle_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), 0, "long launches measure");
	CHECK_INT(m.r.launches, 1, "a sample of a millisecond and more stays one launch");
	CHECK_INT(m.r.stop, STOP_TIMEOUT, "its median never known: timeout");
	mt_release(&m);
	cycle_scale = 1;

	/* A thread's wall time (timer_cpu's kind) never grows its batch. */
	wall_timer.grows = 0;
	mt_init(&m, "{\"fail\": \"none\"}");
	CHECK_INT(measure_with_timer(&wall_timer, &fake_kernel, &m.ctx, &t, NULL, &m.r), 0, "a wall timer measures");
	CHECK_INT(m.r.launches, 1, "its batch stays 1");
	CHECK_INT(m.r.stop, STOP_TIMEOUT, "and its median is never known: timeout");
	mt_release(&m);
}

static void worker_spec(struct spec *s, const char *kernel)
{
	memset(s, 0, sizeof(*s));
	s->name = "t";
	s->kernel = (char *)kernel;
	s->timing = timing_fast();
}

static void test_worker(void)
{
	struct executor w = { .rank = 3, .gpu = -1, .host = "h" };
	struct task task = { .cell = 17, .key = "abc", .params = "{\"bytes\": \"64K\"}" };
	struct result r;
	struct spec s;
	double start, med;

	worker_spec(&s, "cpu.copy");
	w.spec = &s;
	result_init(&r);
	start = now_wall();
	executor_run(&w, &task, &r);
	CHECK_INT(r.status, RESULT_OK, "worker runs a cpu.copy cell");
	CHECK_INT(r.cell, 17, "r->cell");
	CHECK_INT(r.worker, 3, "r->worker");
	CHECK(fabs(r.started - start) < 1, "r->started is the wall-clock start");
	CHECK(r.wall > 0 && r.wall < 5, "r->wall %.3f s", r.wall);
	med = metric(&r, "seconds");
	CHECK_NEAR(metric(&r, "gbs") * med * 1e9, 2.0 * 65536, 1e-9, "bytes \"64K\" became 65536");
	result_release(&r);

	/* Defaults: cpu.read's 256M would be slow here, so use sleep's: ms = 1. */
	worker_spec(&s, "sleep");
	task.params = "{}";
	result_init(&r);
	executor_run(&w, &task, &r);
	med = metric(&r, "seconds");
	CHECK(r.status == RESULT_OK && med >= 1e-3 && med < 3e-3, "sleep with default ms=1: %.3f ms",
	      med * 1e3);
	result_release(&r);

	worker_spec(&s, "cpu.gemm");
	task.params = "{\"M\": 2.5}";
	result_init(&r);
	executor_run(&w, &task, &r);
	CHECK(r.status == RESULT_ERROR && r.error && strstr(r.error, "whole number"),
	      "M=2.5 is refused: '%s'", r.error);
	result_release(&r);

	worker_spec(&s, "no.such");
	result_init(&r);
	executor_run(&w, &task, &r);
	CHECK(r.status == RESULT_ERROR && r.error && strstr(r.error, "no.such"), "unknown kernel: '%s'",
	      r.error);
	result_release(&r);

	/* A launch that never returns: the watchdog cancels it after timeout + margin. */
	worker_spec(&s, "debug.fail");
	s.timing.timeout = 1;
	task.params = "{\"mode\": \"hang\"}";
	result_init(&r);
	start = now_mono();
	executor_run(&w, &task, &r);
	CHECK_INT(r.status, RESULT_TIMEOUT, "debug.fail hang is a timeout");
	CHECK(r.error && strstr(r.error, "hung: cancelled after timeout"), "error: '%s'", r.error);
	CHECK(now_mono() - start < 30, "cancelled, not left hanging: %.2f s", now_mono() - start);
	result_release(&r);

	task.params = "{\"mode\": \"ok\", \"i\": 4}";
	result_init(&r);
	executor_run(&w, &task, &r);
	CHECK_INT(r.status, RESULT_OK, "debug.fail mode ok runs");
	result_release(&r);
	executor_release(&w);
}

static void test_hostinfo(void)
{
	struct json_obj f = JSON_OBJ_INIT;
	char host[256] = "";
	double v;

	hostinfo_collect(&f);
	gethostname(host, sizeof(host) - 1);
	CHECK_STR(json_obj_get(&f, "hostname"), host, "hostinfo hostname");
	CHECK(!parse_double(json_obj_get(&f, "cores"), &v) && v == sysconf(_SC_NPROCESSORS_ONLN),
	      "hostinfo cores: %s", json_obj_get(&f, "cores"));
	CHECK(!parse_double(json_obj_get(&f, "memory_gb"), &v) && v > 0.1, "hostinfo memory_gb: %s",
	      json_obj_get(&f, "memory_gb"));
	CHECK(json_obj_get(&f, "kernel") && !strncmp(json_obj_get(&f, "kernel"), "Linux ", 6),
	      "hostinfo kernel: %s", json_obj_get(&f, "kernel"));
	CHECK(json_obj_get(&f, "cpu") && *json_obj_get(&f, "cpu"), "hostinfo cpu: %s",
	      json_obj_get(&f, "cpu"));
	CHECK(json_obj_find(&f, "cores")->type == JSON_NUM && json_obj_find(&f, "hostname")->type == JSON_STR,
	      "numbers are JSON numbers, names strings");
#ifndef SWEEP_CUDA
	CHECK_INT(hostinfo_gpu(&f, 0), -1, "no GPU facts without CUDA");
	CHECK_INT(hostinfo_gpu_count(), 0, "no GPUs without CUDA");
#endif
	json_obj_release(&f);
}

int main(void)
{
	test_hostinfo();
	test_sleep_2ms();
	test_noise_miss();
	test_batching();
	test_max_samples();
	test_throughput();
	test_energy();
	test_failures();
	test_after();
	test_throttle();
	test_after_clean();
	test_settle();
	test_settle_power();
	test_managed_span();
	test_bound_at_maximum();
	test_unsettled_low();
	test_limit_later();
	test_regroup();
	test_grow();
	test_worker();
	return test_done();
}
