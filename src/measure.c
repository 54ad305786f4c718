/* measure.c: the timing loop every kernel shares: warm-up (until the clock settles), batching, stopping
 * rule, throttle filter. */
#include <math.h>
#include <string.h>
#include <time.h>
#include "criterion.h"
#include "measure.h"
#include "stats.h"

/* Launches shorter than BATCH_BELOW are timed in batches of at least BATCH_TARGET: a clock read costs
 * tens of nanoseconds and would otherwise be part of what is measured. */
#define BATCH_BELOW 20e-6
#define BATCH_TARGET 100e-6
#define BATCH_MAX (1 << 20)

static int cpu_init(struct kctx *ctx, const struct spec_timing *t, void **state)
{
	*state = NULL;
	return 0;
}

static int cpu_sample(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch, double *seconds,
		      double *clock_mhz)
{
	struct timespec a, b;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < batch; i++)
		if (k->launch(ctx))
			return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	*seconds = ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9) / batch;
	*clock_mhz = 0;
	return 0;
}

/* No clock to read on the host: 0 turns the throttle filter off. */
static double cpu_max_clock(void *state)
{
	return 0;
}

/* clock_gettime reads in tens of nanoseconds: twice that over the batch. */
static double cpu_resolution(void *state, int batch)
{
	return 50e-9 / batch;
}

static void cpu_fini(void *state)
{
}

const struct timer_ops timer_cpu = {
	.init = cpu_init,
	.sample = cpu_sample,
	.max_clock = cpu_max_clock,
	.resolution = cpu_resolution,
	.fini = cpu_fini,
	.grows = 0,
};

/* A hook failed: a timeout when the watchdog cancelled the cell, an error otherwise. */
static int measure_fail(struct result *r, const struct kctx *ctx, const char *what)
{
	if (*ctx->cancel)
		return result_fail(r, RESULT_TIMEOUT, "timeout: %s", ctx->err[0] ? ctx->err : "cancelled");
	return result_fail(r, RESULT_ERROR, "%s: %s", what, ctx->err[0] ? ctx->err : "failed");
}

static int measure_batch(double per)
{
	double b;

	if (per >= BATCH_BELOW)
		return 1;
	b = ceil(BATCH_TARGET / fmax(per, 1e-9));
	return b > BATCH_MAX ? BATCH_MAX : (int)b;
}

/* Metrics derived from the kept samples, then whatever numbers the kernel left in ctx->metrics. */
static void measure_metrics(const struct kernel_ops *k, const struct kctx *ctx, struct result *r, int batch,
			    double warmup)
{
	double median = r->sum.median, flops = 0, bytes = 0, v;
	size_t i;

	result_set_metric(r, "seconds", median);
	if (k->counts)
		k->counts(ctx, &flops, &bytes);
	if (flops > 0)
		result_set_metric(r, "gflops", flops / median / 1e9);
	if (bytes > 0)
		result_set_metric(r, "gbs", bytes / median / 1e9);
	if (k->tokens && (v = k->tokens(ctx)) > 0)
		result_set_metric(r, "tok_s", v / median);
	r->launches = batch;
	r->warmup = warmup;
	for (i = 0; i < ctx->metrics->n; i++)
		if (ctx->metrics->v[i].type == JSON_NUM && !parse_double(ctx->metrics->v[i].val, &v))
			result_set_metric(r, ctx->metrics->v[i].key, v);
}

/* Where the device's energy counter stood when the samples' span began (ok 0: the timer reads none). */
struct energy_span {
	double t0, e0;
	int ok;
};

static void energy_start(const struct timer_ops *tm, void *state, struct energy_span *e)
{
	e->ok = tm->energy && !tm->energy(state, &e->e0);
	e->t0 = now_mono();
}

/* NVML's energy counter moves every 100 ms (docs/measured.md): over a shorter span it may not move at all,
 * and a span of a tick or two is off by up to a tick. Under this, a result keeps no energy rather than 0 W. */
#define ENERGY_MIN_SPAN 0.1

/*
 * The span's end: its mean power, and the energy of one launch at that power, which is the median's time
 * at it (the span also holds what runs between the launches, which the median leaves out: the energy
 * counter over the span divided by its launches would charge that to them). Nothing when the counter
 * went backwards (a driver reloaded), did not move, gave nothing, or the span was under ENERGY_MIN_SPAN.
 */
static void energy_end(const struct timer_ops *tm, void *state, const struct energy_span *e,
		       const struct kernel_ops *k, const struct kctx *ctx, struct result *r)
{
	double e1, t1 = now_mono(), watts, joules, flops = 0, bytes = 0, tokens;

	if (!e->ok || tm->energy(state, &e1) || t1 - e->t0 < ENERGY_MIN_SPAN || e1 <= e->e0 || !(r->sum.median > 0))
		return;
	watts = (e1 - e->e0) / (t1 - e->t0);
	joules = watts * r->sum.median;
	result_set_metric(r, "watts", watts);
	result_set_metric(r, "joules", joules);
	if (k->counts)
		k->counts(ctx, &flops, &bytes);
	if (flops > 0 && joules > 0)
		result_set_metric(r, "gflop_per_j", flops / joules / 1e9);
	if (bytes > 0 && joules > 0)
		result_set_metric(r, "gb_per_j", bytes / joules / 1e9);
	if (k->tokens && (tokens = k->tokens(ctx)) > 0 && joules > 0)
		result_set_metric(r, "tok_per_j", tokens / joules);
}

/* The timer's power verdict (criterion.h), asked while it is pending or free: 1 when it has just unsettled
 * a clock the quarters had settled (a card at its power limit). */
static int measure_power(const struct timer_ops *tm, void *state, struct criterion_settle *s,
			 double warm_start)
{
	if (s->power == POWER_BOUND || s->power == POWER_NONE)
		return 0;
	return criterion_settle_power(s, tm->power ? tm->power(state, warm_start) : POWER_NONE);
}

/*
 * Warm-up: launches for `warmup` seconds, then, where the timer reads a clock, on until it has settled
 * (criterion_settled; r->settled 1) or max_warmup has passed since warm_start (0); never past the
 * deadline. *per: the fastest launch, which sizes the batch (not the cold first one).
 */
static int measure_warmup(const struct timer_ops *tm, void *state, const struct kernel_ops *k, struct kctx *ctx,
			  const struct spec_timing *t, struct result *r, struct criterion_settle *s,
			  double warm_start, double deadline, double *per)
{
	double sec, clk, now;

	*per = INFINITY;
	for (;;) {
		if (*ctx->cancel)
			return measure_fail(r, ctx, "warm-up");
		if (tm->sample(state, k, ctx, 1, &sec, &clk))
			return measure_fail(r, ctx, "launch");
		*per = fmin(*per, sec);
		now = now_mono() - warm_start;
		if (s->max_clock > 0 && clk > 0)
			criterion_settle_add(s, now, clk);
		measure_power(tm, state, s, warm_start);
		if (now < t->warmup && warm_start + now < deadline)
			continue;
		if (!s->n)
			return 0;   /* no clock to wait for: r->settled stays -1 */
		if (criterion_settled(s, now, t->warmup)) {
			r->settled = 1;
			return 0;
		}
		if (now >= t->max_warmup || warm_start + now >= deadline) {
			r->settled = 0;
			criterion_settle_end(s);
			return 0;
		}
	}
}

/* Launches per sample: the spec's, or enough that a sample lasts BATCH_TARGET. */
static int measure_size_batch(const struct timer_ops *tm, void *state, const struct kernel_ops *k,
			      struct kctx *ctx, const struct spec_timing *t, struct result *r, double per, int *batch)
{
	double sec, clk;

	*batch = t->batch > 0 ? t->batch : measure_batch(per);
	if (*batch > 1 && t->batch <= 0) {
		/* Back to back launches often run faster than one alone: size again from one batch. */
		if (tm->sample(state, k, ctx, *batch, &sec, &clk))
			return measure_fail(r, ctx, "launch");
		if (sec * *batch < BATCH_TARGET)
			*batch = measure_batch(sec);
	}
	return 0;
}

/*
 * What the throttle filter compares a sample's clock with: the clock warm-up settled at; where it did not
 * settle, where it was when warm-up ended (criterion_settle_end); else the maximum. A power limit can hold
 * a kernel at 75 % of the maximum: an H200 ran a 8192x28672x4096 GEMM at 1484-1487 MHz (the gate's clock,
 * which reads fractions), and against 0.75 x 1980 the filter dropped 4786 of its samples as throttled and
 * kept 9 by the 15 s timeout; another, whose clock had not settled by max_warmup, at 1500 MHz: 1462 dropped,
 * 10 s. Its held state is what the cell measures (and its sm_clock says); the filter drops the dips below
 * it.
 */
static double measure_clock_ref(const struct result *r, const struct criterion_settle *s, double max_clock)
{
	if (r->settled == 1 && s->ref > 0)
		return fmin(s->ref, max_clock);
	return s->ended > 0 ? fmin(s->ended, max_clock) : max_clock;
}

/* What measure_samples ends with, besides -1 after a failure. */
enum sampled { SAMPLED, WARM_AGAIN, GROW_GROUP };

/* Groups CRITERION_GROW times larger still leave time for CRITERION_GROW_AFTER samples twice over, and a
 * sample (`launches` of the criterion's median each) lasts less than CRITERION_GROW_MAX_S. */
static int measure_grow_fits(const struct criterion *c, int launches, double elapsed, double left)
{
	return launches <= BATCH_MAX / CRITERION_GROW && launches * c->median < CRITERION_GROW_MAX_S &&
	       2.0 * CRITERION_GROW_AFTER * CRITERION_GROW * elapsed / (double)c->n <= left;
}

/*
 * Samples until the criterion stops them (and criterion_stop_holds no longer holds the stop back), each the
 * mean of `group` consecutive timed samples of `batch` launches (throttled ones left out), sampling since
 * `sampling`: SAMPLED when it did (r->stop); WARM_AGAIN when the SM clock left where the warm-up settled it,
 * or the card turned out to be at its power limit, while max_warmup has not passed (warm up on; the
 * samples are dropped), GROW_GROUP when the criterion asks for larger groups (criterion_grow; measure_loop
 * averages the samples so far into them); -1 after a failure.
 */
static int measure_samples(const struct timer_ops *tm, void *state, const struct kernel_ops *k, struct kctx *ctx,
			   const struct spec_timing *t, struct result *r, struct criterion *c,
			   struct criterion_settle *s, double warm_start, double sampling, double deadline, int batch,
			   int group)
{
	double sec, clk, now, max_clock = s->max_clock, gsec = 0, gclk = 0;
	int got = 0, bound;

	while (!r->stop) {
		if (*ctx->cancel)
			return measure_fail(r, ctx, "sampling");
		if (tm->sample(state, k, ctx, batch, &sec, &clk))
			return measure_fail(r, ctx, "launch");
		now = now_mono();
		bound = measure_power(tm, state, s, warm_start);
		if (r->settled == 1 && (bound || (clk > 0 && criterion_settle_left(s, clk)))) {
			if (now - warm_start < t->max_warmup && now < deadline)
				return WARM_AGAIN;
			r->settled = 0;   /* it moved after the bound: kept, and said */
			criterion_settle_end(s);
		}
		if (max_clock > 0 && clk > 0 && clk < t->throttle * measure_clock_ref(r, s, max_clock)) {
			r->throttled++;
		} else {
			gsec += sec;
			gclk += clk;
			got++;
		}
		if (r->settled == 1 && clk > 0)
			criterion_settle_add(s, now - warm_start, clk);
		if (got < group && now < deadline)
			continue;
		if (got == group) {
			result_add_sample(r, gsec / group, gclk / group);
			criterion_add(c, gsec / group, tm->resolution(state, batch));
			gsec = gclk = got = 0;
		}
		r->stop = criterion_check(c, now - sampling, deadline - now);
		if (now < deadline && criterion_stop_holds(s, r->stop, now - warm_start, now - sampling))
			r->stop = STOP_NONE;
		if (!r->stop && tm->grows && criterion_grow(c) &&
		    measure_grow_fits(c, batch * group, now - sampling, deadline - now))
			return GROW_GROUP;
	}
	return SAMPLED;
}

/*
 * The timeout counts from the start of the cell (setup included), the same start the worker's watchdog
 * counts from, so the loop always stops on its own before the watchdog cancels a healthy cell. r->warmup
 * is everything before the samples kept: warm-up, batch sizing and samples dropped for a moving clock.
 * Samples taken before the groups grew are kept, CRITERION_GROW of them averaged into one, as the larger
 * groups average consecutive timed samples: dropping them cost a short decode step 0.05-0.1 s a cell.
 */
static int measure_loop(const struct timer_ops *tm, void *state, const struct kernel_ops *k, struct kctx *ctx,
			const struct spec_timing *t, struct result *r, double deadline)
{
	double sec, clk, per, warm_start, warmup = 0, sampling = 0;
	struct criterion_settle s;
	struct criterion c;
	struct energy_span e = { 0 };
	int batch = 1, group = 1, ret = WARM_AGAIN;

	/* The first launch warms up and leaves the output check() looks at. */
	if (tm->sample(state, k, ctx, 1, &sec, &clk))
		return measure_fail(r, ctx, "launch");
	if (k->check && k->check(ctx))
		return *ctx->cancel ? measure_fail(r, ctx, "check") :
			result_fail(r, RESULT_ERROR, "check failed: %s", ctx->err);

	warm_start = now_mono();
	criterion_settle_init(&s, tm->max_clock(state));
	criterion_init(&c, t);
	while (ret == WARM_AGAIN || ret == GROW_GROUP) {
		criterion_release(&c);
		criterion_init(&c, t);
		if (ret == GROW_GROUP) {
			group *= CRITERION_GROW;
			result_regroup(r, CRITERION_GROW);
			for (int i = 0; i < r->nsamples; i++)
				criterion_add(&c, r->samples[i], tm->resolution(state, batch));
			ret = 0;
		} else {
			r->nsamples = 0;   /* the clock moved, or the card is at its limit: the samples are dropped */
			r->throttled = 0;
			ret = measure_warmup(tm, state, k, ctx, t, r, &s, warm_start, deadline, &per);
			if (!ret)
				ret = measure_size_batch(tm, state, k, ctx, t, r, per, &batch);
			sampling = now_mono();
			warmup = sampling - warm_start;
			energy_start(tm, state, &e);
		}
		if (!ret)
			ret = measure_samples(tm, state, k, ctx, t, r, &c, &s, warm_start, sampling, deadline, batch,
					      group);
	}
	if (!ret && !r->nsamples)
		ret = result_fail(r, RESULT_ERROR, "no samples: all %d were throttled (clock under %g MHz)",
				  r->throttled, t->throttle * measure_clock_ref(r, &s, s.max_clock));
	if (!ret) {
		result_summarize(r, criterion_target(&c), t->precision);
		measure_metrics(k, ctx, r, batch * group, warmup);
		energy_end(tm, state, &e, k, ctx, r);
		if (s.power == POWER_BOUND || s.power == POWER_FREE)
			result_set_metric(r, "power_limited", s.power == POWER_BOUND);
	}
	criterion_release(&c);
	criterion_settle_release(&s);
	return ret;
}

/* Every member takes the gang's maximum of *v; -1 when the kernel cannot agree (a member failed). */
static int gang_agree(const struct kernel_ops *k, struct kctx *ctx, double *v)
{
	if (!k->gang_max)
		return kfail(ctx, "gang kernel '%s' has no gang_max", k->name);
	return k->gang_max(ctx, v);
}

/*
 * The lockstep loop of a gang cell: each member must launch exactly as often as the others, or a
 * collective waits forever. So nothing here depends on one member's clock alone: the warm-up count,
 * the batch and the number of samples come from the gang's maximum launch time (gang_max), and the
 * sampling runs that many times with no early stop. Throttled samples are counted, not dropped, so that
 * sample i is the same launch on every member (the master keeps the slowest member's time of each).
 */
static int measure_gang_loop(const struct timer_ops *tm, void *state, const struct kernel_ops *k,
			     struct kctx *ctx, const struct spec_timing *t, struct result *r, double deadline)
{
	double sec, clk, per, left, max_clock, n, warmup;
	struct energy_span e;
	int batch, warm, samples;

	if (tm->sample(state, k, ctx, 1, &sec, &clk))
		return measure_fail(r, ctx, "launch");
	if (k->check && k->check(ctx))
		return *ctx->cancel ? measure_fail(r, ctx, "check") :
			result_fail(r, RESULT_ERROR, "check failed: %s", ctx->err);
	if (tm->sample(state, k, ctx, 1, &per, &clk) || gang_agree(k, ctx, &per))
		return measure_fail(r, ctx, "launch");
	warm = (int)fmin(fmax(ceil(t->warmup / fmax(per, 1e-9)), 1), 1000);
	warmup = now_mono();
	for (int i = 0; i < warm; i++)
		if (tm->sample(state, k, ctx, 1, &sec, &clk))
			return measure_fail(r, ctx, "warm-up");
	warmup = now_mono() - warmup;
	batch = t->batch > 0 ? t->batch : measure_batch(per);
	left = deadline - now_mono();
	n = fmax(t->min_samples, ceil(t->min_time / (per * batch)));
	/* As many as fit in what is left of the timeout (with a margin), but never under min_samples. */
	n = fmax(fmin(n, floor(0.8 * left / (per * batch))), t->min_samples);
	if (t->max_samples > 0)
		n = fmin(n, t->max_samples);
	if (gang_agree(k, ctx, &n))
		return measure_fail(r, ctx, "agreeing on the sample count");
	samples = (int)n;
	max_clock = tm->max_clock(state);
	energy_start(tm, state, &e);
	for (int i = 0; i < samples; i++) {
		if (tm->sample(state, k, ctx, batch, &sec, &clk))
			return measure_fail(r, ctx, "launch");
		if (max_clock > 0 && clk > 0 && clk < t->throttle * max_clock)
			r->throttled++;
		result_add_sample(r, sec, clk);
	}
	r->stop = STOP_COUNT;
	result_summarize(r, spec_noise_target(t), t->precision);
	measure_metrics(k, ctx, r, batch, warmup);
	energy_end(tm, state, &e, k, ctx, r);
	return 0;
}

static int measure_timed(const struct timer_ops *tm, const struct kernel_ops *k, struct kctx *ctx,
			 const struct spec_timing *t, const struct measure_after *after, struct result *r)
{
	volatile int no_cancel = 0;
	volatile int *cancel = ctx->cancel;
	struct json_obj no_metrics = JSON_OBJ_INIT, *metrics = ctx->metrics;
	double deadline = now_mono() + t->timeout;
	void *state = NULL;
	struct measure_l2 l2;
	int ret;

	/* Kernels may dereference cancel and metrics without testing them. */
	if (!ctx->cancel)
		ctx->cancel = &no_cancel;
	if (!ctx->metrics)
		ctx->metrics = &no_metrics;
	ctx->err[0] = '\0';
	if (tm->init(ctx, t, &state)) {
		ret = result_fail(r, RESULT_ERROR, "timer: %s", ctx->err[0] ? ctx->err : "cannot start");
		goto out;
	}
	if (k->setup(ctx))
		ret = measure_fail(r, ctx, "setup");
	else if (ctx->gang_size > 1)
		ret = measure_gang_loop(tm, state, k, ctx, t, r, deadline);
	else
		ret = measure_loop(tm, state, k, ctx, t, r, deadline);
	if (tm->idle && tm->idle(state, ctx) && !ret)
		ret = measure_fail(r, ctx, "launch");
	if (!ret && after && after->fn) {
		l2.tm = tm;
		l2.state = state;
		after->fn(after->arg, k, ctx, &l2, r);
	}
	if (k->teardown)
		k->teardown(ctx);
	tm->fini(state);
out:
	ctx->cancel = cancel;
	ctx->metrics = metrics;
	json_obj_release(&no_metrics);
	return ret;
}

int measure_with_timer(const struct timer_ops *tm, const struct kernel_ops *k, struct kctx *ctx,
		       const struct spec_timing *t, const struct measure_after *after, struct result *r)
{
	return measure_timed(tm, k, ctx, t, after, r);
}

int measure_clean(const struct measure_l2 *l2, struct kctx *ctx)
{
	return l2->tm->clean ? l2->tm->clean(l2->state, ctx) : 0;
}

/* The timer for k's cells: NULL for a CUDA kernel in a build without CUDA. */
static const struct timer_ops *measure_timer(const struct kernel_ops *k)
{
	if (k->place != KERNEL_CUDA)
		return &timer_cpu;
#ifdef SWEEP_CUDA
	return &timer_cuda;
#else
	return NULL;
#endif
}

#ifndef SWEEP_CUDA
void measure_profile(int on)
{
}

void *measure_context(void)
{
	return NULL;
}

int measure_sync(struct kctx *ctx)
{
	return 0;
}
#endif

void measure_open(const struct kernel_ops *k, int gpu)
{
	const struct timer_ops *tm = measure_timer(k);
	struct kctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.gpu = k->place == KERNEL_CUDA ? gpu : -1;
	if (!tm || (tm->open && tm->open(&ctx)))
		return;
	if (k->open)
		k->open(&ctx);
}

int measure_kernel_after(const struct kernel_ops *k, struct kctx *ctx, const struct spec_timing *t,
			 const struct measure_after *after, struct result *r)
{
	const struct timer_ops *tm = measure_timer(k);

	if (!tm)
		return result_fail(r, RESULT_ERROR, "kernel '%s' needs CUDA: built without CUDA", k->name);
	return measure_timed(tm, k, ctx, t, after, r);
}

int measure_kernel(const struct kernel_ops *k, struct kctx *ctx, const struct spec_timing *t,
		   struct result *r)
{
	return measure_kernel_after(k, ctx, t, NULL, r);
}
