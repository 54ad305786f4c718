/* plan_db.h: a spec's grid planned into a database: the sweep row and a row per cell. */
#ifndef SWEEP_PLAN_DB_H
#define SWEEP_PLAN_DB_H

#include <stdint.h>
#include "spec.h"
#include "store.h"

/*
 * Store the spec and every cell of its grid in st, in one transaction (cells of per-host and per-GPU
 * sweeps as templates); with nshards > 0 only the cells of shard `shard` (store_shard). *added and
 * *existing count new cells and cells already there. Returns 0, or -1 after error() (nothing written).
 */
int plan_db(const struct spec *s, struct store *st, unsigned shard, unsigned nshards, uint64_t *added,
	    uint64_t *existing);

#endif
