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
	double seconds;
	int interrupted;           /* SIGINT, SIGTERM or SIGUSR1 (Slurm's warning) stopped the run: 0 when none */
	int lost;                  /* a worker stopped answering (MSG_LOST_SECONDS) and the run ended */
	int silent_rank;           /* the worker heard from least recently when the run stopped early ... */
	double silent_for;         /* ... for how many seconds it had been silent then ... */
	char silent_host[64];      /* ... and its host */
	int by_mpirun;             /* the signal came from mpirun or its daemon: SIGINT, SIGTERM or SIGHUP to mpirun
				    * (it passes each on as SIGTERM), or a rank that ended */
	int ended_rank;            /* > 0: that rank did not answer then: it ended (killed, or exited), and mpirun
				    * ends the job for it (the run is no interrupt: interrupted is 0) ... */
	char ended_host[64];       /* ... on this host */
	uint64_t handed_back;      /* cells in flight when the run stopped early, back to planned uncharged */
	int handback_failed;       /* they could not be (the store failed again): the next run charges them */
	int cannot;                /* workers that could run none of the sweep's cells (msg.h's hello_cannot) */
	int cannot_kind;           /* the kind of the first of them: HELLO_NO_PROGRAM or HELLO_NO_GPU */
	char cannot_why[512];      /* and its reason (naming its host) */
	int none_can;              /* not one worker could: a missing program stops the run before any attempt */
};

/*
 * The master: send the spec, collect hellos (store hosts and workers, make per-host or per-GPU replicas),
 * then hand out every pending cell, at most two per worker in flight, committing each result (batched with
 * the next dispatches in one transaction) before that worker gets another cell. Returns 0 when the run
 * went through (cells may still have failed: stats and the database say), else -1 after an interrupt
 * (stats->interrupted), a lost worker (stats->lost) or an error (said with error(): a fault of the store,
 * a full disk, a worker's protocol error). However it stops early, the cells in flight go back to planned
 * with their attempts as before (store_unfly: an attempt is charged only for what a cell did) and the run
 * is recorded 'interrupted' or 'failed', in one transaction, before the workers are stopped, since a job
 * being killed may not have long. The caller says what happened; stats->silent_* name the worker heard
 * from least recently when it had been silent for a few beats (the one a lost host took away).
 */
int master_run(struct comm *c, const struct master_opts *o, struct master_stats *stats);

#endif
