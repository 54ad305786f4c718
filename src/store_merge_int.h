/* store_merge_int.h: what the files of `sweep merge` share: the tables they read, an input, the merge. */
#ifndef SWEEP_STORE_MERGE_INT_H
#define SWEEP_STORE_MERGE_INT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "store_int.h"
#include "util.h"

/*
 * Merging is store_merge.c (the order of the work: every input checked, then one transaction on the
 * output), over store_merge_copy.c (the copy into the output), store_merge_cells.c (cells and their
 * results, decisions, hosts' cells), store_merge_conflict.c (ok results kept apart),
 * store_merge_output.c (the output and its statements) and store_merge_input.c (checking an untrusted
 * input; the tables merge reads), in that order: a file calls only the files after it.
 */

/* ---- the tables read from an input, with the type every column must hold (store_merge_input.c) ---- */

enum kind { K_INT, K_INT_NULL, K_REAL, K_REAL_NULL, K_TEXT, K_TEXT_NULL };

struct mcol {
	const char *name;
	enum kind kind;
};

struct mtable {
	const char *name;
	const struct mcol *cols;
	int ncols;
	int optional;          /* made on first use (slurm_*): an input may lack it */
	const char *late;      /* a column added later to such an unversioned table: an input made before
				* lacks it and is read as NULL */
};

enum { T_SWEEPS, T_RUNS, T_HOSTS, T_WORKERS, T_CELLS, T_RESULTS, T_SAMPLES, T_METRICS, T_ITEMS, T_CONTROLS,
       T_PROBES, T_PREDICTIONS, T_SLURM_JOBS, T_SLURM_RUNS, NTABLES };
extern const struct mtable store_merge_tables[NTABLES];

/* ---- the state of a merge ---- */

/* ids of an input's rows and of the rows they became in the output; filled in ascending input id. */
struct idmap {
	int64_t *from, *to;
	size_t n, alloc_from, alloc_to;
};

/* One input. store_merge_input_open opens db, store_merge_input_close closes it; the maps are filled and
 * freed by store_merge_copy_input. */
struct input {
	const char *path;
	sqlite3 *db;
	int fd;                /* the file itself, open around db's life: the writer lock is tested on it
				* (closing a descriptor of the file while db is open drops db's POSIX locks);
				* -1 until opened */
	struct idmap runs, hosts, workers, cells;
	struct idmap decided;  /* cells whose state the output took from this input's newer decision */
	struct idmap others;   /* cells of other sweeps than opts.sweep: their results are not counted */
	struct store_merge_stats *st;
	int64_t merge;         /* merges.id in the output */
	char has[NTABLES];     /* the input has the table (an optional one may be missing) */
	uint64_t lacks[NTABLES];   /* bit c: it lacks the table's late column c (read as NULL) */
};

/* Prepared output statements, by name, each prepared on first use (store_merge_output_stmt). */
enum ostmt {
	O_SWEEP_FIND, O_SWEEP_NEWER, O_SWEEP_ADD, O_HOST_FIND, O_HOST_ADD, O_HOST_LABELS, O_RUN_ADD, O_RUN_END,
	O_WORKER_FIND, O_WORKER_ADD, O_WORKER_HOST, O_CELL_FIND, O_CELL_GET, O_CELL_ADD, O_CELL_DROP_EMPTY,
	O_CELL_OK, O_CELL_QUARANTINE, O_CELL_DECIDE, O_CELL_SUPERSEDE, O_RESULT_FIND, O_RESULT_OK,
	O_RESULT_RESTORE, O_RESULT_ADD, O_SAMPLE_ADD, O_METRIC_ADD, O_ITEM_ADD, O_CONFLICT_FIND, O_CONFLICT_ADD,
	O_CONTROL_FIND, O_CONTROL_ADD, O_PROBE_FIND, O_PROBE_ADD, O_PREDICTION_FIND, O_PREDICTION_ADD,
	O_SLURM_JOB_ADD, O_SLURM_RUN_ADD, NOSTMT
};

struct runprint;   /* store_merge_copy.c */

/* The merge in progress. store_merge frees prints, closes out and releases the statements. */
struct merge {
	const struct store_merge_opts *o;
	sqlite3 *out;
	const char *out_path;
	struct runprint *prints;
	size_t nprints, alloc_prints;
	char now[32];
	sqlite3_stmt *stmt[NOSTMT];
};

/* ---- small helpers of every merge file ---- */

/* A prepared statement, or NULL (the caller reports sqlite3_errmsg(db)). */
static inline sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

static inline const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

/* Text from an input made fit for a message: at most 48 bytes, control bytes as '?' (no escapes to a
 * terminal from a hostile file). */
static inline const char *shown(char buf[52], const char *s)
{
	return s ? printable(buf, s, 48) : "NULL";
}

/* Column j of src's current row as parameter i of dst. */
static inline void bind_col(sqlite3_stmt *dst, int i, sqlite3_stmt *src, int j)
{
	sqlite3_bind_value(dst, i, sqlite3_column_value(src, j));
}

/* ---- input ids to output ids (struct idmap) ---- */

static inline void idmap_put(struct idmap *m, int64_t from, int64_t to)
{
	if (m->n && m->from[m->n - 1] >= from)
		BUG("idmap_put: ids out of order (%" PRId64 " after %" PRId64 ")", from, m->from[m->n - 1]);
	ALLOC_GROW(m->from, m->n + 1, m->alloc_from);
	ALLOC_GROW(m->to, m->n + 1, m->alloc_to);
	m->from[m->n] = from;
	m->to[m->n++] = to;
}

/* The output id of input id from, or 0 when it has none (a cell outside the shard). */
static inline int64_t idmap_get(const struct idmap *m, int64_t from)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->from[mid] == from)
			return m->to[mid];
		if (m->from[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static inline void idmap_release(struct idmap *m)
{
	free(m->from);
	free(m->to);
	memset(m, 0, sizeof(*m));
}

/* ---- store_merge_input.c ---- */

/* error("cannot merge '<path>': <what>: <SQLite's message>"); returns -1. */
int store_merge_input_err(struct input *in, const char *what);
/* Into sb (reset first): SELECT of t's columns, by name, from t, then tail. */
void store_merge_input_select(struct strbuf *sb, const struct mtable *t, uint64_t lacks, const char *tail);
/* Every column of the current row of s (a store_merge_input_select of t) holds what t says it must; -1
 * after error() naming the input, the column and what it holds. */
int store_merge_input_check_row(struct input *in, const struct mtable *t, sqlite3_stmt *s);
/* Open in->path read-only and defensively, begin the read transaction that the checks and the copy
 * share, and check its integrity, schema version, tables and columns. 0, or -1 after error(); either
 * way store_merge_input_close(in) follows. */
int store_merge_input_open(struct input *in);
/* Every row of every table is well typed, cells carry the keys of their contents, ids refer to rows. */
int store_merge_input_check_rows(struct input *in);
/* s is NULL or a time as store_now writes it ("2025-06-02T14:10:31.123Z"): 1, else 0. */
int store_merge_time_ok(const char *s);
/* Warn when a sweep writes the input now (its writer lock is held), naming it and its runs still going:
 * what the merge takes is what the input holds now. */
void store_merge_input_busy(struct input *in);
/* End the read transaction and close the input (a no-op for one never opened). */
void store_merge_input_close(struct input *in);

/* ---- store_merge_output.c ---- */

/* The tables merging adds to its output (CREATE ... IF NOT EXISTS). */
extern const char store_merge_output_schema[];
/* Add to the output's conflicts table the columns it gained since an older sweep made it. 0, or -1 after
 * error(); inside the merge's transaction, after store_merge_output_schema. */
int store_merge_output_conflicts(struct merge *m);
/* error("cannot merge into '<out>': <SQLite's message>"); returns -1. */
int store_merge_output_err(struct merge *m);
/* Open m->out_path for the copy, making it (*made = 1) with the current schema when missing, and check
 * that every column of its tables is one merge copies. 0, or after error() store_open's kind (FAIL_NOT_SWEEP:
 * not a sweep database) or FAIL_IO. */
int store_merge_output_open(struct merge *m, int *made);
/* The output statement which, prepared on first use; NULL after error(). */
sqlite3_stmt *store_merge_output_stmt(struct merge *m, enum ostmt which);
/* Finalize every statement of m (on any path: the output cannot close with one open). */
void store_merge_output_release(struct merge *m);
/* Step an output statement to its end and reset it; *found and the first column of its first row (when
 * wanted). 0, or -1 after error(). */
int store_merge_output_step(struct merge *m, sqlite3_stmt *s, int *found, int64_t *val);

/* ---- store_merge_conflict.c ---- */

/* kept (id, n, median, mean, min, max of the output's ok result) and s (a results row of the input) say
 * the same: equal counts and summaries, NULL equal to NULL. */
int store_merge_conflict_same(sqlite3_stmt *kept, sqlite3_stmt *s);
/* Keep s, an ok result of the input for output cell `cell` whose ok result is kept, apart in the
 * conflicts table (once: a conflict already there counts as results_same). 0, or -1 after error(). */
int store_merge_conflict_add(struct merge *m, struct input *in, sqlite3_stmt *s, int64_t cell, int64_t run,
			     int64_t worker, int64_t kept);

/* ---- store_merge_cells.c ---- */

/* Copy cell s of the input (a store_merge_input_select of cells), or take its newer decision. */
int store_merge_cells_copy(struct merge *m, struct input *in, sqlite3_stmt *s);
/* Copy result s of the input with its samples, metrics and items, or place it (its host's cell, conflicts),
 * or take its status from the newer decision. */
int store_merge_cells_copy_result(struct merge *m, struct input *in, sqlite3_stmt *s);
/* Drop the host cells of per: any sweeps that the input brought but whose results the output had
 * elsewhere. */
int store_merge_cells_drop_empty(struct merge *m, struct input *in);

/* ---- store_merge_copy.c ---- */

/* The identities of the runs already in the output, so that a run merged again is matched. */
int store_merge_copy_prints(struct merge *m);
/* Copy what the checked input brings into the output (inside m's transaction) and log it in merges. 0,
 * or -1 after error(). */
int store_merge_copy_input(struct merge *m, struct input *in);

#endif
