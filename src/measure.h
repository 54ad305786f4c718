/* measure.h: the one timing engine. Every kernel, CPU or CUDA, is timed by measure_kernel. */
#ifndef SWEEP_MEASURE_H
#define SWEEP_MEASURE_H

#include "../kernels/kernel.h"
#include "result.h"
#include "spec.h"

/*
 * How one kind of device takes a sample. measure.c owns the loop (warm-up, stopping rule, throttle
 * filter); a timer only knows how to time one launch on its device. timer_cuda lives in measure_cuda.cu
 * and exists only in CUDA builds (SWEEP_CUDA).
 */
struct timer_ops {
	/* Prepare for ctx (create streams, events, the L2 flush buffer when !t->l2_hot). */
	int (*init)(struct kctx *ctx, const struct spec_timing *t, void **state);
	/* Time launches: run k->launch `batch` times back to back and give seconds per launch and the SM
	 * clock (MHz, 0 when unknown) while it ran. Flushes the L2 first when cold. */
	int (*sample)(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch,
		      double *seconds, double *clock_mhz);
	double (*max_clock)(void *state);   /* max SM clock in MHz, 0 when unknown (no throttle filter) */
	/* How far off one sample's seconds per launch can be from the timer alone, for a sample of `batch`
	 * launches: the noise target is never below what the timer can resolve (criterion.h). */
	double (*resolution)(void *state, int batch);
	/* Wait for work the timer enqueued ahead of the samples asked for (NULL: none), before the kernel's
	 * teardown: 0, or -1 with the error in ctx->err. */
	int (*idle)(void *state, struct kctx *ctx);
	void (*fini)(void *state);
	/* Whether the card is held at a power or thermal limit, judged by criterion_power_judge from its
	 * latest reading taken after warm-up began at `warm_start` (seconds on now_mono's clock):
	 * POWER_BOUND or POWER_FREE, POWER_PENDING while none has said, POWER_NONE when the card gives none
	 * (criterion.h; NULL: POWER_NONE). Cheap to ask often. */
	int (*power)(void *state, double warm_start);
	/* 1: samples may average more launches when the median's interval narrows too slowly
	 * (criterion_grow): the timer reads the device's time, whose variation comes from the launches. 0 for
	 * a thread's wall time, whose variation comes from what interrupts the thread: a longer sample is hit
	 * more often, not less. */
	int grows;
	/* Once per process, before its first cell (NULL: nothing): what the device costs a process once,
	 * such as a CUDA context (measure_open). ctx has only gpu set. 0, or -1 with why in ctx->err. */
	int (*open)(struct kctx *ctx);
	/* The energy the device has used since some fixed point, in joules, read now: 0, or -1 when the device
	 * gives none (NULL: none). measure.c reads it at both ends of the samples' span (measure_energy). */
	int (*energy)(void *state, double *joules);
	/* Clean the L2 of the lines launches wrote (meant to leave none dirty), waited for, before an untimed
	 * launch that counters are read over (measure_clean; NULL: nothing to clean, the CPU's). 0, or -1 with
	 * why in ctx->err. */
	int (*clean)(void *state, struct kctx *ctx);
};
extern const struct timer_ops timer_cpu;
#ifdef SWEEP_CUDA
extern const struct timer_ops timer_cuda;
#endif

/*
 * Time one cell of kernel k: setup, check (a failed check is an error result), one warm-up launch and
 * warm-up time (on a timer that reads a clock, until the clock has settled: criterion.h; r->settled), then
 * samples until the stopping rule of criterion.h ends them (r->stop says which rule; precise = 0 when the
 * median's interval is wider than the precision asked, noise_ok = 0 when the noise is above its target,
 * status still ok: the result says what was missed). Samples taken while the clock moves away from where
 * warm-up left it, within max_warmup, are dropped and warm-up goes on. Throttled samples are dropped and
 * counted. Fills r's samples, metrics (seconds = median, gflops and gbs from counts()), launches per
 * sample and warm-up, noise and the median's interval. Where the timer reads the device's energy, also
 * watts (the mean power over the span of the samples kept, from its first sample's start to its last
 * sample's end) and joules (the energy of one launch at that power: watts x the median), and gflop_per_j
 * and gb_per_j where counts() gives work. Returns 0, or -1 with r's status and error set.
 * Always tears down.
 */
int measure_kernel(const struct kernel_ops *k, struct kctx *ctx, const struct spec_timing *t,
		   struct result *r);
/* The cell's timer, handed to an after's fn for measure_clean. */
struct measure_l2 {
	const struct timer_ops *tm;
	void *state;
};
/* What runs once after a cell's timed samples, before its teardown, when they ended well: nothing of it
 * is timed (a spec's counters: read through CUPTI over more launches, measure_clean before each). fn may
 * add metrics to r; it leaves r's status alone. */
struct measure_after {
	void (*fn)(void *arg, const struct kernel_ops *k, struct kctx *ctx, const struct measure_l2 *l2,
		   struct result *r);
	void *arg;
};
/* Before a launch of an after's fn that counters are read over: the timer's clean (nothing for a timer
 * without one), meant to leave the L2 as ncu's flush leaves it before each pass (--cache-control all),
 * holding no line that the launches before wrote. 0, or -1 with why in ctx->err. */
int measure_clean(const struct measure_l2 *l2, struct kctx *ctx);
/* measure_kernel, then after (NULL: nothing) as its comment says. */
int measure_kernel_after(const struct kernel_ops *k, struct kctx *ctx, const struct spec_timing *t,
			 const struct measure_after *after, struct result *r);
/* measure_kernel_after with the timer given: measure_kernel picks timer_cpu or timer_cuda by k->place (a
 * CUDA kernel in a build without CUDA is an error result); tests pass a fake timer to drive clocks. */
int measure_with_timer(const struct timer_ops *tm, const struct kernel_ops *k, struct kctx *ctx,
		       const struct spec_timing *t, const struct measure_after *after, struct result *r);
/*
 * Before a process's first cell of k on GPU gpu (-1: none): the timer's open, then k's (a CUDA context, a
 * library), so that what a process pays once is not in the wall time of its first cell: on an H200 the
 * first cell of a process took 0.21-0.71 s where the same work took 0.10 later. A failure is left for the
 * cells, which meet it again and fail saying why.
 */
void measure_open(const struct kernel_ops *k, int gpu);
/* The CUDA context current on this thread (a CUcontext), NULL when there is none (a build without CUDA, no
 * driver, a CPU kernel's process that made none). */
void *measure_context(void);
/* Wait for what a CUDA kernel's ctx has queued on its stream: 0, or -1 with why in ctx->err (nothing to wait
 * for on the host or without CUDA). */
int measure_sync(struct kctx *ctx);
/* What a profiler attached with profiling from the start off (ncu --profile-from-start off) profiles:
 * from measure_profile(1) to measure_profile(0) (cudaProfilerStart and Stop; nothing without CUDA). */
void measure_profile(int on);

#endif
