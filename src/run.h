/* run.h: one sweep run: the spec planned into its database, then the master's and workers' sides. */
#ifndef SWEEP_RUN_H
#define SWEEP_RUN_H

#include <stdint.h>
#include "comm.h"
#include "inventory.h"
#include "master.h"
#include "spec.h"
#include "store.h"

/* What a run is asked beyond its spec. */
struct run_extra {
	unsigned shard, nshards;   /* nshards > 0: only that shard's cells (array jobs) */
	const struct inventory *inv;   /* label the hosts from this inventory, or NULL */
	int replan;                /* the spec changed: replace the plan (plan_db_with) */
	uint64_t max_cells;        /* refuse a larger grid (0: the default) */
	int force;                 /* measure again the cells with results (store_force) ... */
	const char *force_where;   /* ... where this SQL holds (NULL: all), with these text binds */
	const char *const *force_binds;
	int nforce_binds;
};

struct run_result {
	int64_t run;               /* runs.id */
	uint64_t ok;               /* cells of the sweep that are ok */
	uint64_t quarantined;      /* cells quarantined */
	uint64_t not_run;          /* cells still to run: failed attempts left, or waiting for absent hosts */
	int interrupted;           /* the signal that stopped the run, 0 when none */
};

/*
 * The master's side of one sweep on rank 0: open db (s->db when NULL), plan, recover, run the workers
 * through master_run with o, summarise on stderr; res counts the cells. args is the command line
 * recorded in runs. The database's writer lock is held throughout. Returns 0 when the run went through
 * (cells may still have failed: res says); else a kind of failure (exitcode.h) after error(): FAIL_USAGE
 * when the user must change something (the spec changed, too many cells), FAIL_INTERRUPTED when a signal
 * stopped it (res->interrupted, said once), FAIL_IO otherwise. A database this call made is removed when planning fails.
 */
int run_spec(struct comm *c, const struct spec *s, const char *db, struct master_opts *o,
	     const struct run_extra *x, const char *args, struct run_result *res);
/* Send STOP to every other rank: rank 0 stops before a run (bad input) and the workers must not wait. */
void run_release_workers(struct comm *c);
/* A rank other than 0: the worker loop for every sweep of the job. Returns 0; a worker that fails ends the
 * job (MPI cannot go on without a rank). */
int run_worker(struct comm *c);

#endif
