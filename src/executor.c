/* executor.c: running one task on this process: a kernel through measure.c, or a command. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../kernels/kernel.h"
#include "clocks.h"
#include "command.h"
#include "counters.h"
#include "counters_cupti.h"
#include "measure.h"
#include "executor.h"


/*
 * One watchdog thread per worker, armed for each cell: creating a thread per cell would cost more than a
 * short cell. Armed, it sets *cancel once the deadline passes; disarming is two mutex operations.
 */
struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t th;
	struct timespec deadline;   /* CLOCK_MONOTONIC */
	int armed, quit;
	volatile int *cancel;
};

static int ts_passed(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *watchdog_main(void *arg)
{
	struct watchdog *wd = arg;

	pthread_mutex_lock(&wd->lock);
	while (!wd->quit) {
		if (!wd->armed) {
			pthread_cond_wait(&wd->cond, &wd->lock);
			continue;
		}
		pthread_cond_timedwait(&wd->cond, &wd->lock, &wd->deadline);
		/* Re-check under the lock: the cell may have ended, or another been armed meanwhile. */
		if (wd->armed && ts_passed(&wd->deadline)) {
			__atomic_store_n(wd->cancel, 1, __ATOMIC_SEQ_CST);
			wd->armed = 0;
		}
	}
	pthread_mutex_unlock(&wd->lock);
	return NULL;
}

static struct watchdog *watchdog_get(struct executor *ex)
{
	struct watchdog *wd = ex->watchdog;
	pthread_condattr_t attr;

	if (wd)
		return wd;
	wd = xcalloc(1, sizeof(*wd));
	pthread_mutex_init(&wd->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&wd->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&wd->th, NULL, watchdog_main, wd)) {
		pthread_cond_destroy(&wd->cond);
		pthread_mutex_destroy(&wd->lock);
		free(wd);
		return NULL;
	}
	ex->watchdog = wd;
	return wd;
}

static void watchdog_arm(struct watchdog *wd, volatile int *cancel, double seconds)
{
	pthread_mutex_lock(&wd->lock);
	clock_gettime(CLOCK_MONOTONIC, &wd->deadline);
	wd->deadline.tv_sec += (time_t)seconds;
	wd->deadline.tv_nsec += (long)((seconds - floor(seconds)) * 1e9);
	if (wd->deadline.tv_nsec >= 1000000000L) {
		wd->deadline.tv_sec++;
		wd->deadline.tv_nsec -= 1000000000L;
	}
	wd->cancel = cancel;
	wd->armed = 1;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
}

static void watchdog_disarm(struct watchdog *wd)
{
	pthread_mutex_lock(&wd->lock);
	wd->armed = 0;
	pthread_mutex_unlock(&wd->lock);
}

void executor_release(struct executor *ex)
{
	struct watchdog *wd = ex->watchdog;

	if (!wd)
		return;
	pthread_mutex_lock(&wd->lock);
	wd->quit = 1;
	pthread_cond_signal(&wd->cond);
	pthread_mutex_unlock(&wd->lock);
	pthread_join(wd->th, NULL);
	pthread_cond_destroy(&wd->cond);
	pthread_mutex_destroy(&wd->lock);
	free(wd);
	ex->watchdog = NULL;
}

static void executor_set_num(struct json_pair *p, double v)
{
	struct strbuf sb = STRBUF_INIT;

	json_add_num(&sb, v);
	free(p->val);
	p->val = sb_detach(&sb);
	p->type = JSON_NUM;
}

/* A value of declared type d->type as kparam_* reads it: sizes and integers as whole numbers. A bad value
 * here (spec.c should have refused it) fails the cell rather than reaching a kernel's BUG(). */
static int executor_param_value(const struct param_def *d, struct json_pair *p, struct result *r)
{
	double v;

	if (d->type == PARAM_STR)
		return 0;
	if (d->type == PARAM_BYTES ? parse_bytes(p->val, &v) : parse_double(p->val, &v))
		return result_fail(r, RESULT_ERROR, "parameter '%s': '%s' is not a %s", d->name, p->val,
				   d->type == PARAM_BYTES ? "size" : "number");
	if (d->type != PARAM_FLOAT && v != floor(v))
		return result_fail(r, RESULT_ERROR, "parameter '%s': '%s' is not a whole number", d->name,
				   p->val);
	if (d->type == PARAM_BYTES || p->type != JSON_NUM)
		executor_set_num(p, v);
	return 0;
}

/*
 * The cell's parameters as the kernel reads them: every declared parameter present (defaults filled in)
 * and byte sizes as plain integers, whether written "64M" in the spec or in the kernel's defaults.
 */
static int executor_params(const struct kernel_ops *k, const char *text, struct json_obj *out,
			 struct result *r)
{
	const struct param_def *d;
	char err[128];
	size_t i;

	if (json_parse_flat(text ? text : "{}", out, 0, err, sizeof(err)))
		return result_fail(r, RESULT_ERROR, "cell parameters: %s", err);
	for (d = k->params; d && d->name; d++) {
		if (!json_obj_find(out, d->name)) {
			if (!d->def)
				return result_fail(r, RESULT_ERROR, "parameter '%s' of '%s' has no value",
						   d->name, k->name);
			json_obj_add(out, d->name, d->def, d->type == PARAM_STR ? JSON_STR : JSON_NUM);
		}
		for (i = 0; i < out->n; i++)
			if (!strcmp(out->v[i].key, d->name) && executor_param_value(d, &out->v[i], r))
				return -1;
	}
	return 0;
}

/*
 * counters: where this process has no CUPTI (no library), the cell once more, untimed, in a process of its
 * own under ncu (sweep __counters, from this executor's own binary and the spec's text in a file of its
 * own), only its one launch profiled; what could not be read is said in one line (counters_note), after
 * what CUPTI lacked.
 */
static void executor_counters_ncu(const struct executor *ex, const struct task *t, const char *no_cupti,
				  struct result *r)
{
	char path[] = "/tmp/sweep-counters-XXXXXX", exe[4096], gpu[16], why[256];
	char *argv[] = { exe, "__counters", path, t->params ? t->params : "{}", gpu, NULL };
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len = strlen(ex->spec->text);
	int fd = mkstemp(path);

	if (n <= 0 || fd < 0 || write(fd, ex->spec->text, len) != (ssize_t)len) {
		counters_note(r, "cannot start the counters' pass: no spec file for it");
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return;
	}
	close(fd);
	exe[n] = '\0';
	snprintf(gpu, sizeof(gpu), "%d", ex->gpu);
	if (counters_command(ex->spec, argv, NULL, 0, r, why, sizeof(why))) {
		char *both = xasprintf("%s; %s", no_cupti, why);

		counters_note(r, both);
		free(both);
	}
	unlink(path);
}

/* The counters' passes of a kernel cell in this process (measure_after): its kctx, kernel and timer, and
 * whether CUPTI was missing (COUNTERS_NO_CUPTI: ncu is asked after the teardown) and why. */
struct executor_cupti {
	const struct spec *s;
	const struct kernel_ops *k;
	struct kctx *ctx;
	const struct measure_l2 *l2;
	int no_cupti;
	char why[256];
};

/* Before each pass, outside CUPTI's session: the L2 cleaned of dirty lines, which the launch would
 * otherwise write back and count as its own (as ncu flushes it before each pass; measure_clean). */
static int executor_cupti_before(void *arg, char *why, size_t wn)
{
	struct executor_cupti *c = arg;

	if (!measure_clean(c->l2, c->ctx))
		return 0;
	snprintf(why, wn, "before the pass: %s", c->ctx->err);
	return -1;
}

/* The launch of a pass, waited for. */
static int executor_cupti_launch(void *arg, char *why, size_t wn)
{
	struct executor_cupti *c = arg;

	if (!c->k->launch(c->ctx) && (c->k->place != KERNEL_CUDA || !measure_sync(c->ctx)))
		return 0;
	snprintf(why, wn, "the launch profiled: %s", c->ctx->err);
	return -1;
}

/* After the timed samples, before the teardown: a launch a pass inside CUPTI's range profiler. */
static void executor_cupti(void *arg, const struct kernel_ops *k, struct kctx *ctx, const struct measure_l2 *l2,
			   struct result *r)
{
	struct executor_cupti *c = arg;
	struct counters_launch l = { .before = executor_cupti_before, .launch = executor_cupti_launch, .arg = c };
	int ret;

	if (k->gang_open) {
		counters_note(r, "a gang's kernel (a collective) has no launch of its own to profile: none read");
		return;
	}
	c->k = k;
	c->ctx = ctx;
	c->l2 = l2;
	ret = counters_cupti(c->s->counters, c->s->ncounters, ctx->gpu, measure_context(), &l, r, c->why,
			     sizeof(c->why));
	if (ret == COUNTERS_NO_CUPTI)
		c->no_cupti = 1;
	else if (ret)
		counters_note(r, c->why);
}

static void executor_run_kernel(struct executor *ex, const struct task *t, struct result *r)
{
	const struct spec *s = ex->spec;
	const struct kernel_ops *k = kernel_find(s->kernel);
	struct json_obj params = JSON_OBJ_INIT, metrics = JSON_OBJ_INIT;
	volatile int cancel = 0;
	struct watchdog *wd = watchdog_get(ex);
	struct executor_cupti cupti = { .s = s };
	struct measure_after after = { .fn = executor_cupti, .arg = &cupti };
	struct kctx ctx;

	if (!k) {
		result_fail(r, RESULT_ERROR, "unknown kernel '%s'", s->kernel);
		goto out;
	}
	if (executor_params(k, t->params, &params, r))
		goto out;
	memset(&ctx, 0, sizeof(ctx));
	ctx.params = &params;
	ctx.gpu = k->place == KERNEL_CUDA ? ex->gpu : -1;
	ctx.cancel = &cancel;
	ctx.metrics = &metrics;
	ctx.gang_rank = ex->gang_rank;
	ctx.gang_size = ex->gang_size > 1 ? ex->gang_size : 1;
	ctx.gang_ranks = ex->gang_ranks;
	ctx.gang_comm = ex->gang_comm;
	if (!wd) {
		result_fail(r, RESULT_ERROR, "cannot start the watchdog thread");
		goto out;
	}
	watchdog_arm(wd, &cancel, s->timing.timeout + EXECUTOR_CANCEL_MARGIN);
	measure_kernel_after(k, &ctx, &s->timing, s->ncounters ? &after : NULL, r);
	watchdog_disarm(wd);
	if (cupti.no_cupti && r->status == RESULT_OK)
		executor_counters_ncu(ex, t, cupti.why, r);
out:
	json_obj_release(&params);
	json_obj_release(&metrics);
}

int executor_one_launch(const struct spec *s, const char *params, int gpu)
{
	const struct kernel_ops *k = kernel_find(s->kernel ? s->kernel : "");
	struct json_obj p = JSON_OBJ_INIT, metrics = JSON_OBJ_INIT;
	volatile int cancel = 0;
	struct result r;
	struct kctx ctx;
	int ret = -1;

	result_init(&r);
	if (!k || k->gang_open) {
		error(k ? "kernel '%s' runs in a gang: no launch of its own to profile" : "no kernel '%s'",
		      s->kernel ? s->kernel : "");
		goto out;
	}
	if (executor_params(k, params, &p, &r)) {
		error("%s", r.error);
		goto out;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.params = &p;
	ctx.gpu = k->place == KERNEL_CUDA ? gpu : -1;
	ctx.cancel = &cancel;
	ctx.metrics = &metrics;
	ctx.gang_size = 1;
	measure_open(k, ctx.gpu);
	if (k->setup(&ctx)) {
		error("setup: %s", ctx.err);
	} else {
		measure_profile(1);
		ret = k->launch(&ctx) ? error("launch: %s", ctx.err) : 0;
		measure_profile(0);
	}
	if (k->teardown)
		k->teardown(&ctx);
out:
	result_release(&r);
	json_obj_release(&p);
	json_obj_release(&metrics);
	return ret;
}

void executor_run(struct executor *ex, const struct task *t, struct result *r)
{
	double start = now_mono();

	r->cell = t->cell;
	r->worker = ex->rank;
	r->started = now_wall();
	if (ex->spec->command)
		command_run(ex, t, r);
	else
		executor_run_kernel(ex, t, r);
	r->wall = now_mono() - start;
	/* The clocks its worker locked, asked and reached, with every result: NVML gives no reading of a lock. */
	clocks_result(ex->spec, ex->clock_dev, r);
}
