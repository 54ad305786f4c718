/* executor.h: running cells in an executor process: one task at a time (executor.c) and the process's
 * loop (executor_loop.c). */
#ifndef SWEEP_EXECUTOR_H
#define SWEEP_EXECUTOR_H

#include "result.h"
#include "spec.h"

/* The watchdog cancels a cell this long after its own timeout: the sampling loop stops by itself at the
 * timeout, so only a launch that never returns (a hung kernel) is still running by then. */
#define EXECUTOR_CANCEL_MARGIN 5.0

/* The executor process: its rank, GPU, host and spec, filled once at start (executor_loop.c). */
struct executor {
	int rank;
	int gpu;               /* device index, -1 when this rank has none */
	char host[256];        /* hostname */
	const struct spec *spec;
	struct watchdog *watchdog;   /* started on first use; executor_release stops it */
	/* The gang of the task at hand, set by the executor's loop (gang_size 1: not a gang cell). */
	int gang_rank, gang_size;
	const int *gang_ranks;
	void *gang_comm;
	void *clock_dev;       /* NVML's handle of the GPU whose clocks the spec locks (clocks.h), else NULL */
};

/* Stop what executor_run started (the watchdog thread). The executor can be used again. */
void executor_release(struct executor *ex);

/*
 * Run task t on this process and fill r (r must be result_init'ed). Never fails as a function: an error,
 * a failed check or a timeout is recorded in r->status and r->error. A cell that crashes the process
 * (debug.fail segv) takes the process with it: its attempt was counted before it was sent.
 */
void executor_run(struct executor *ex, const struct task *t, struct result *r);
/* One launch of a kernel cell of s (params: its JSON) on GPU gpu, setup and teardown around it, only the
 * launch bracketed for a profiler (measure_profile): what `sweep __counters` runs under ncu. 0, or -1
 * after error(). */
int executor_one_launch(const struct spec *s, const char *params, int gpu);

/* executor_loop.c: the executor process (`sweep __executor FD`, started by its worker with a socket on
 * FD): INIT, its hello, then TASKS until QUIT or the end of the link. Returns the process's exit status:
 * 0; EXECUTOR_EXIT_BROKEN after a GPU cell left the context unusable (the results so far were sent); 1
 * when the link broke or INIT was bad. */
#define EXECUTOR_EXIT_BROKEN 75
int executor_loop(int fd);

#endif
