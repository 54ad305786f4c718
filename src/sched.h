/* sched.h: the master (rank 0's main thread) and the worker loop that every worker runs. */
#ifndef SWEEP_SCHED_H
#define SWEEP_SCHED_H

#include <stdint.h>
#include "comm.h"
#include "spec.h"
#include "store.h"

struct sched_opts {
	const struct spec *spec;
	struct store *store;
	int64_t run;
	int local_worker;          /* rank 0 also runs a worker thread (default 1) */
	int progress;              /* 0: quiet; 1: a line rewritten in place (terminal); 2: a line every period */
	double progress_every;     /* seconds between progress lines */
	double hello_timeout;      /* seconds to wait for every worker's hello */
	int keep_workers;          /* another sweep follows in this job: workers wait for its spec */
};

/* What a run did, for the caller's summary. */
struct sched_stats {
	uint64_t pending;          /* cells to run at start */
	uint64_t ok, failed, quarantined;   /* results ok; failed attempts; cells quarantined in this run */
	uint64_t waiting;          /* cells left for hosts or GPUs not in this run */
	double seconds;
};

/*
 * The master: send the spec, collect hellos (store hosts and workers, make per-host or per-GPU replicas),
 * then hand out every pending cell, at most two per worker in flight, committing each result (batched with
 * the next dispatches in one transaction) before that worker gets another cell. Returns 0 when the run
 * went through (cells may still have failed: stats and the database say), -1 on an error or an interrupt
 * (after error()).
 */
int sched_master(struct comm *c, const struct sched_opts *o, struct sched_stats *stats);

/* A worker: receive the spec, say hello, run tasks; again for each sweep of the job, until STOP. Returns
 * 0, or -1 on a protocol error. */
int sched_worker(struct comm *c);

#endif
