/* master.h: the master of a sweep (rank 0's main thread): hands cells to the workers, stores results. */
#ifndef SWEEP_MASTER_H
#define SWEEP_MASTER_H

#include <stdint.h>
#include "comm.h"
#include "spec.h"
#include "store.h"

struct master_opts {
	const struct spec *spec;
	struct store *store;
	int64_t run;
	int local_worker;          /* rank 0 also runs a worker thread (default 1) */
	int progress;              /* 0: none; 1: a line rewritten in place (terminal); 2: a line every period */
	int quiet;                 /* errors only: no progress and no closing lines */
	double progress_every;     /* seconds between progress lines */
	double hello_timeout;      /* seconds to wait for every worker's hello */
	int keep_workers;          /* another sweep follows in this job: workers wait for its spec */
};

/* What a run did, for the caller's summary. */
struct master_stats {
	uint64_t pending;          /* cells to run at start */
	uint64_t ok, failed, quarantined;   /* results ok; failed attempts; cells quarantined in this run */
	uint64_t waiting;          /* planned cells left for hosts, GPUs or gangs this run does not have */
	uint64_t absent;           /* replicas not even made: hosts named in hosts: that are not in this run */
	double seconds;
	int interrupted;           /* SIGINT, SIGTERM or SIGUSR1 (Slurm's warning) stopped the run: 0 when none */
	uint64_t handed_back;      /* cells in flight then, back to planned with no attempt charged */
};

/*
 * The master: send the spec, collect hellos (store hosts and workers, make per-host or per-GPU replicas),
 * then hand out every pending cell, at most two per worker in flight, committing each result (batched with
 * the next dispatches in one transaction) before that worker gets another cell. Returns 0 when the run
 * went through (cells may still have failed: stats and the database say), -1 on an error (after error())
 * or an interrupt (stats->interrupted; nothing said): then the cells in flight went back to planned with
 * their attempts as before (store_unfly) and the run is recorded 'interrupted', both before the workers
 * are stopped, since a job being killed may not have long.
 */
int master_run(struct comm *c, const struct master_opts *o, struct master_stats *stats);

#endif
