/* executor.h: running one task on this process: a kernel through measure.c, or a command. */
#ifndef SWEEP_EXECUTOR_H
#define SWEEP_EXECUTOR_H

#include "result.h"
#include "spec.h"

/* Where a worker runs; filled once at start. */
struct executor {
	int rank;
	int gpu;               /* device index, -1 when this worker has none */
	char host[256];        /* hostname */
	const struct spec *spec;
	struct watchdog *watchdog;   /* started on first use; executor_release stops it */
	/* The gang of the task at hand, set by the worker loop (gang_size 1: not a gang cell). */
	int gang_rank, gang_size;
	const int *gang_ranks;
	void *gang_comm;
};

/* Stop what executor_run started (the watchdog thread). The executor can be used again. */
void executor_release(struct executor *w);

/*
 * Run task t on this process and fill r (r must be result_init'ed). Never fails as a function: an error,
 * a failed check or a timeout is recorded in r->status and r->error. A cell that crashes the process
 * (debug.fail segv) takes the process with it: its attempt was counted before it was sent.
 */
void executor_run(struct executor *w, const struct task *t, struct result *r);

#endif
