/* plan.h: a spec's grid expanded into cells. Pure: no MPI, no SQLite. */
#ifndef SWEEP_PLAN_H
#define SWEEP_PLAN_H

#include <stdint.h>
#include "spec.h"

/* One cell as plan_each hands it out. Pointers are valid only during the callback. */
struct plan_cell {
	uint64_t ord;          /* position in run order, 0-based, dense */
	int pass;              /* 0 .. repeat-1 */
	const char *key;       /* 16 hex digits: hash of sweep name, canonical params, pass, replica */
	uint64_t hash;         /* that hash as a number */
	const char *params;    /* JSON object, keys in spec order */
	const char *replica;   /* "" here; the scheduler makes per-host and per-gpu replicas */
};

/* The default of plan_check_size's limit (sweep plan and run --max-cells). */
#define PLAN_MAX_CELLS ((uint64_t)10000000)

/*
 * Whether the grid stays within max cells, found without allocating anything: the product of the axes
 * and repeat (saturating), and only when that is over max and the spec excludes points, the exact count
 * (plan_count, which walks the points without storing them). 0 when within, with *cells the count (an
 * upper bound when there are excludes); -1 (no message) when over, with *cells the count (UINT64_MAX:
 * beyond 2^64).
 */
int plan_check_size(const struct spec *s, uint64_t max, uint64_t *cells);

/* Number of grid points after excludes (one pass), and cells in all (points * repeat). */
int plan_count(const struct spec *s, uint64_t *points, uint64_t *cells);

/*
 * Call fn for every cell in run order (sequential: a point's passes together; interleave: pass 0 of every
 * point, then pass 1, ...; shuffle: a permutation seeded by spec seed). Stops and returns fn's value when
 * it is non-zero; 0 when all were visited. Memory: the axes' values, rendered once; shuffle also keeps
 * the points left after excludes and a permutation of the cells (4 bytes each while they fit).
 */
int plan_each(const struct spec *s, int (*fn)(const struct plan_cell *, void *), void *data);

/* The stable key of a cell: sweep name, params JSON (canonicalised: keys sorted), pass, replica. */
void plan_key(const char *sweep, const char *params, int pass, const char *replica, char out[17]);

#endif
