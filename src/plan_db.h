/* plan_db.h: a spec's grid planned into a database: the sweep row and a row per cell. */
#ifndef SWEEP_PLAN_DB_H
#define SWEEP_PLAN_DB_H

#include <stdint.h>
#include "spec.h"
#include "store.h"

struct plan_db_opts {
	unsigned shard, nshards;   /* nshards > 0: only the cells of shard `shard` (store_shard) */
	int replan;                /* the spec changed: replace the plan (store_replan) rather than refuse */
	uint64_t max_cells;        /* refuse a larger grid (0: PLAN_MAX_CELLS) */
	const char *inputs;        /* the spec's files as identity_json writes them, compared with and kept as
				    * the plan's (sweeps.inputs); NULL: neither (sweep plan, submit) */
};

/*
 * Store the spec and every cell of its grid in st, in one transaction (cells of per-host and per-GPU
 * sweeps as templates). A sweep's identity is its spec: when the database holds the sweep planned from
 * another spec whose kernel, command, timing or grid differ, or whose files (o->inputs: a program, a file
 * its arguments name, inputs:) have another hash than those recorded (a grid that only grew is no change: its new
 * cells are planned, said on stderr), nothing is written and the message says
 * what changed (old -> new) and the two ways on: a new sweep name, or o->replan, which retires the cells
 * no longer in the spec and, when the measurement changed, supersedes the sweep's results to measure its
 * cells again (said on stderr). A grid over o->max_cells is refused before anything is allocated.
 * *added and *existing count new cells and cells already there. Returns 0; FAIL_USAGE (exitcode.h) after
 * error() when the user must change something (the spec changed, too many cells); FAIL_IO otherwise.
 * Nothing is written unless 0.
 */
int plan_db_with(const struct spec *s, struct store *st, const struct plan_db_opts *o, uint64_t *added,
		 uint64_t *existing);
/* Whether the grid of s is within max cells (0: PLAN_MAX_CELLS), found without allocating: 0, or -1
 * after error() naming the spec, the count and the limit. */
int plan_db_size(const struct spec *s, uint64_t max);
/* plan_db_with without replanning, with the default limit. */
int plan_db(const struct spec *s, struct store *st, unsigned shard, unsigned nshards, uint64_t *added,
	    uint64_t *existing);

#endif
