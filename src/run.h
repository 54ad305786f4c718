/* run.h: running sweeps: planning into the store, and the master's and workers' sides of a job. */
#ifndef SWEEP_RUN_H
#define SWEEP_RUN_H

#include <stdint.h>
#include "comm.h"
#include "sched.h"
#include "spec.h"
#include "store.h"

/* Plan every cell of s into st (one transaction); counts of new and existing cells. */
int run_plan(const struct spec *s, struct store *st, uint64_t *added, uint64_t *existing);

/* What a run is asked beyond its spec. */
struct run_extra {
	unsigned shard, nshards;   /* nshards > 0: only that shard's cells (array jobs) */
	const char *inventory;     /* label the hosts from this inventory, or NULL */
};

struct run_result {
	int64_t run;               /* runs.id */
	uint64_t ok;               /* cells of the sweep that are ok */
};

/*
 * The master's side of one sweep on rank 0: open db (s->db when NULL), plan, recover, run the workers
 * through sched_master with o, summarise on stderr. args is the command line recorded in runs. Returns
 * an exit code (cli.h): 0 every cell ok, 3 some failed or wait, 2 bad input, 1 an error.
 */
int run_spec(struct comm *c, const struct spec *s, const char *db, struct sched_opts *o,
	     const struct run_extra *x, const char *args, struct run_result *res);
/* A rank other than 0: the worker loop for every sweep of the job; ends the job when it fails. */
int run_worker(struct comm *c);

#endif
