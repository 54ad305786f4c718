/* store_merge_cells.c: cells and their results into a merge's output: decisions, hosts' own cells. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "store_merge_int.h"
#include "plan.h"
#include "util.h"

/*
 * Output cell id takes input cell s's decision when it is newer than its own (the cell's state, attempts
 * and error; its ok results superseded, those the input holds ok come back with copy_result): a retry or
 * --force made on one database holds in every database merged from it, a shard seeded again included.
 */
static int take_decision(struct merge *m, struct input *in, sqlite3_stmt *s, const char *state, int64_t id)
{
	sqlite3_stmt *d = store_merge_output_stmt(m, O_CELL_DECIDE);
	sqlite3_stmt *x = store_merge_output_stmt(m, O_CELL_SUPERSEDE);

	if (!d || !x)
		return -1;
	if (sqlite3_column_type(s, 11) == SQLITE_NULL || !strcmp(state, "template") || !strcmp(state, "retired"))
		return 0;
	sqlite3_bind_int64(d, 1, id);
	sqlite3_bind_text(d, 2, state, -1, SQLITE_TRANSIENT);
	bind_col(d, 3, s, 8);
	bind_col(d, 4, s, 9);
	bind_col(d, 5, s, 11);
	if (store_merge_output_step(m, d, NULL, NULL))
		return -1;
	if (!sqlite3_changes(m->out))
		return 0;
	sqlite3_bind_int64(x, 1, id);
	if (store_merge_output_step(m, x, NULL, NULL))
		return -1;
	idmap_put(&in->decided, sqlite3_column_int64(s, 0), id);
	in->st->cells_decided++;
	return 0;
}

int store_merge_cells_copy(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_CELL_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_CELL_ADD);
	sqlite3_stmt *q = store_merge_output_stmt(m, O_CELL_QUARANTINE);
	const char *state = col_text(s, 7);
	int64_t id;
	int found, counted, other;

	if (!f || !a || !q)
		return -1;
	if (m->o && m->o->nshards &&
	    store_shard(col_text(s, 1), col_text(s, 3), sqlite3_column_int(s, 4), m->o->nshards) != m->o->shard)
		return 0;
	/* The cells a run measures, of the sweep asked about: templates and retired cells are none. */
	other = m->o && m->o->sweep && strcmp(m->o->sweep, col_text(s, 1));
	counted = strcmp(state, "template") && strcmp(state, "retired") && !other;
	in->st->cells += counted;
	bind_col(f, 1, s, 2);
	if (store_merge_output_step(m, f, &found, &id))
		return -1;
	/* Nothing runs the cell in the output, and it becomes ok with its ok result only. */
	if (!strcmp(state, "running") || !strcmp(state, "ok"))
		state = "planned";
	if (!found) {
		for (int i = 1; i < 7; i++)
			bind_col(a, i, s, i);
		sqlite3_bind_text(a, 7, state, -1, SQLITE_TRANSIENT);
		bind_col(a, 8, s, 8);
		bind_col(a, 9, s, 9);
		bind_col(a, 10, s, 11);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		in->st->cells_new += counted;
	} else if (take_decision(m, in, s, state, id)) {
		return -1;
	} else if (!strcmp(state, "quarantined")) {
		sqlite3_bind_int64(q, 1, id);
		bind_col(q, 2, s, 9);
		bind_col(q, 3, s, 8);
		bind_col(q, 4, s, 11);
		if (store_merge_output_step(m, q, NULL, NULL))
			return -1;
	}
	idmap_put(&in->cells, sqlite3_column_int64(s, 0), id);
	if (other)
		idmap_put(&in->others, sqlite3_column_int64(s, 0), 1);
	return 0;
}

/* Samples, metrics and items of input result src, as children of output result dst. */
static int copy_details(struct merge *m, struct input *in, int64_t src, int64_t dst)
{
	static const struct {
		int table;
		enum ostmt add;
	} kids[] = { { T_SAMPLES, O_SAMPLE_ADD }, { T_METRICS, O_METRIC_ADD }, { T_ITEMS, O_ITEM_ADD } };
	struct strbuf sb = STRBUF_INIT;

	for (size_t k = 0; k < ARRAY_SIZE(kids); k++) {
		const struct mtable *t = &store_merge_tables[kids[k].table];
		sqlite3_stmt *s, *a = store_merge_output_stmt(m, kids[k].add);
		int rc = SQLITE_DONE;

		store_merge_input_select(&sb, t, in->lacks[kids[k].table], " WHERE result = ?1");
		if (!a || !(s = prep(in->db, sb.buf))) {
			sb_release(&sb);
			return a ? store_merge_input_err(in, "cannot read it") : -1;
		}
		sqlite3_bind_int64(s, 1, src);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (store_merge_input_check_row(in, t, s))
				break;
			sqlite3_bind_int64(a, 1, dst);
			for (int i = 1; i < t->ncols; i++)
				bind_col(a, i + 1, s, i);
			if (store_merge_output_step(m, a, NULL, NULL))
				break;
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE) {
			sb_release(&sb);
			return rc == SQLITE_ROW ? -1 : store_merge_input_err(in, "cannot read it");
		}
	}
	sb_release(&sb);
	return 0;
}

/*
 * The output's result of input result s in output cell `cell` (*found: 1 with the same status, 2 with the
 * other of ok and superseded), matched by run, attempt, start and status; its id into *id (may be NULL).
 */
static int result_find(struct merge *m, sqlite3_stmt *s, int64_t cell, int64_t run, int *found, int64_t *id)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_RESULT_FIND);
	int rc;

	if (!f)
		return -1;
	sqlite3_bind_int64(f, 1, cell);
	bind_col(f, 2, s, 5);
	store_bind_id(f, 3, run);
	bind_col(f, 4, s, 6);
	bind_col(f, 5, s, 4);
	rc = sqlite3_step(f);
	*found = rc != SQLITE_ROW ? 0 : sqlite3_column_int(f, 1) ? 1 : 2;
	if (id)
		*id = rc == SQLITE_ROW ? sqlite3_column_int64(f, 0) : 0;
	sqlite3_reset(f);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
}

/* Input result s is output result id but for its status (ok here, superseded there, or the other way):
 * the database with the newer decision on the cell says which it is, the output's on a tie. */
static int result_status(struct merge *m, struct input *in, sqlite3_stmt *s, int64_t cell, int64_t id)
{
	sqlite3_stmt *r = store_merge_output_stmt(m, O_RESULT_RESTORE);
	sqlite3_stmt *c = store_merge_output_stmt(m, O_CELL_OK);

	if (!r || !c)
		return -1;
	/* Taking the decision superseded the output's ok results: only the input's ok ones come back. */
	if (!idmap_get(&in->decided, sqlite3_column_int64(s, 1)) || strcmp(col_text(s, 4), "ok"))
		return 0;
	sqlite3_bind_int64(r, 1, id);
	sqlite3_bind_int64(r, 2, cell);
	if (store_merge_output_step(m, r, NULL, NULL))
		return -1;
	if (!sqlite3_changes(m->out))
		return 0;
	sqlite3_bind_int64(c, 1, cell);
	bind_col(c, 2, s, 5);
	return store_merge_output_step(m, c, NULL, NULL);
}

/* An output cell: what its key is made of, and its order. */
struct cellrow {
	char *sweep, *params, *replica;
	int pass;
	int64_t ord;
};

static void cellrow_release(struct cellrow *c)
{
	free(c->sweep);
	free(c->params);
	free(c->replica);
	memset(c, 0, sizeof(*c));
}

static int cellrow_get(struct merge *m, int64_t cell, struct cellrow *c)
{
	sqlite3_stmt *g = store_merge_output_stmt(m, O_CELL_GET);
	int rc;

	if (!g)
		return -1;
	sqlite3_bind_int64(g, 1, cell);
	rc = sqlite3_step(g);
	if (rc == SQLITE_ROW) {
		c->sweep = xstrdup(col_text(g, 0));
		c->params = xstrdup(col_text(g, 1));
		c->pass = sqlite3_column_int(g, 2);
		c->replica = xstrdup(col_text(g, 3) ? col_text(g, 3) : "");
		c->ord = sqlite3_column_int64(g, 4);
	}
	sqlite3_reset(g);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? error("cannot merge into '%s': cell %" PRId64 " vanished", m->out_path,
						 cell) : store_merge_output_err(m);
	return 0;
}

/* The output cell of c's parameters for replica (made, planned, when missing): *id. */
static int sibling_cell(struct merge *m, struct input *in, const struct cellrow *c, const char *replica,
			int make, int64_t *id)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_CELL_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_CELL_ADD);
	char key[17];
	int found;

	if (!f || !a)
		return -1;
	plan_key(c->sweep, c->params, c->pass, replica, key);
	sqlite3_bind_text(f, 1, key, -1, SQLITE_TRANSIENT);
	if (store_merge_output_step(m, f, &found, id))
		return -1;
	if (found || !make)
		return 0;
	store_bind_text(a, 1, c->sweep);
	sqlite3_bind_text(a, 2, key, -1, SQLITE_TRANSIENT);
	store_bind_text(a, 3, c->params);
	sqlite3_bind_int(a, 4, c->pass);
	store_bind_text(a, 5, replica);
	sqlite3_bind_int64(a, 6, c->ord);
	store_bind_text(a, 7, "planned");
	sqlite3_bind_int(a, 8, 0);
	sqlite3_bind_null(a, 9);
	sqlite3_bind_null(a, 10);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	*id = sqlite3_last_insert_rowid(m->out);
	in->st->cells_new++;
	return 0;
}

/* The hostname of output worker `worker` (0: none), or NULL when unknown; the caller frees it. */
static int worker_host(struct merge *m, int64_t worker, char **host)
{
	sqlite3_stmt *h = store_merge_output_stmt(m, O_WORKER_HOST);
	int rc;

	*host = NULL;
	if (!h)
		return -1;
	if (!worker)
		return 0;
	sqlite3_bind_int64(h, 1, worker);
	rc = sqlite3_step(h);
	if (rc == SQLITE_ROW && col_text(h, 0) && *col_text(h, 0))
		*host = xstrdup(col_text(h, 0));
	sqlite3_reset(h);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
}

/*
 * Where ok result s of the input, not yet in output cell *cell, goes. A result belongs to the host that
 * measured it: when the cell of a per: any sweep (replica "") already has another host's ok result, this
 * one goes to the cell of its own host (replica: the hostname, as per: host names it), made when
 * missing, so that one spec run on several machines and merged keeps every machine's results. Only two
 * results of one cell from one host (or from hosts unknown) conflict. 0: add it to *cell; 1: done (the
 * output has it, or it is kept apart in conflicts); -1 after error().
 */
static int place_ok(struct merge *m, struct input *in, sqlite3_stmt *s, int64_t *cell, int64_t run,
		    int64_t worker)
{
	sqlite3_stmt *k = store_merge_output_stmt(m, O_RESULT_OK);
	struct cellrow c = { 0 };
	char *host = NULL;
	int ret = -1, found;

	if (!k || worker_host(m, worker, &host) || cellrow_get(m, *cell, &c))
		goto out;
	/* In its host's cell here, though an earlier merge (of a database holding it in the per: any cell)
	 * left it in the per: any cell: the same result. */
	if (host && *c.replica && !strcmp(c.replica, host)) {
		int64_t twin = 0;

		if (sibling_cell(m, in, &c, "", 0, &twin) ||
		    (twin && result_find(m, s, twin, run, &found, NULL)))
			goto out;
		if (twin && found) {
			in->st->results_same++;
			ret = 1;
			goto out;
		}
	}
	for (int hop = 0;; hop++) {
		int rc, same, other;
		int64_t kept;

		sqlite3_bind_int64(k, 1, *cell);
		rc = sqlite3_step(k);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(k);
			ret = rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
			if (rc == SQLITE_DONE && hop)
				in->st->results_hosts++;
			goto out;
		}
		kept = sqlite3_column_int64(k, 0);
		/* Another host's result is never this one, however alike their figures (a sleep or a
		 * deterministic command can give two hosts equal ones). */
		other = host && col_text(k, 6) && strcmp(host, col_text(k, 6));
		same = !other && store_merge_conflict_same(k, s);
		sqlite3_reset(k);
		if (same) {
			in->st->results_same++;
			ret = 1;
			goto out;
		}
		if (!other || hop || *c.replica) {
			ret = store_merge_conflict_add(m, in, s, *cell, run, worker, kept) ? -1 : 1;
			goto out;
		}
		if (sibling_cell(m, in, &c, host, 1, cell) || result_find(m, s, *cell, run, &found, NULL))
			goto out;
		if (found) {
			in->st->results_same++;
			ret = 1;
			goto out;
		}
	}
out:
	cellrow_release(&c);
	free(host);
	return ret;
}

static int copy_result(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *a = store_merge_output_stmt(m, O_RESULT_ADD);
	sqlite3_stmt *c = store_merge_output_stmt(m, O_CELL_OK);
	int64_t cell = idmap_get(&in->cells, sqlite3_column_int64(s, 1)), run = 0, worker = 0, id;
	int ok = !strcmp(col_text(s, 4), "ok"), found, placed;

	if (!a || !c)
		return -1;
	if (!cell)
		return 0;   /* a cell of another shard */
	if (sqlite3_column_type(s, 2) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 2));
	if (sqlite3_column_type(s, 3) != SQLITE_NULL)
		worker = idmap_get(&in->workers, sqlite3_column_int64(s, 3));
	if (result_find(m, s, cell, run, &found, &id))
		return -1;
	if (found) {
		in->st->results_same++;
		return found == 2 ? result_status(m, in, s, cell, id) : 0;
	}
	if (ok && (placed = place_ok(m, in, s, &cell, run, worker)))
		return placed < 0 ? -1 : 0;
	sqlite3_bind_int64(a, 1, cell);
	store_bind_id(a, 2, run);
	store_bind_id(a, 3, worker);
	for (int i = 4; i < (int)store_merge_tables[T_RESULTS].ncols; i++)
		bind_col(a, i, s, i);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	id = sqlite3_last_insert_rowid(m->out);
	if (copy_details(m, in, sqlite3_column_int64(s, 0), id))
		return -1;
	in->st->results_new++;
	if (ok) {
		sqlite3_bind_int64(c, 1, cell);
		bind_col(c, 2, s, 5);
		return store_merge_output_step(m, c, NULL, NULL);
	}
	return 0;
}

int store_merge_cells_copy_result(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	struct store_merge_stats *st = in->st, aside;
	int ret;

	if (!idmap_get(&in->others, sqlite3_column_int64(s, 1)))
		return copy_result(m, in, s);
	/* A result of another sweep than the one asked about is copied, not counted. */
	aside = *st;
	in->st = &aside;
	ret = copy_result(m, in, s);
	in->st = st;
	return ret;
}

int store_merge_cells_drop_empty(struct merge *m, struct input *in)
{
	sqlite3_stmt *d = store_merge_output_stmt(m, O_CELL_DROP_EMPTY);
	uint64_t n;

	if (!d || store_merge_output_step(m, d, NULL, NULL))
		return -1;
	n = (uint64_t)sqlite3_changes(m->out);
	in->st->cells_new -= n < in->st->cells_new ? n : in->st->cells_new;
	return 0;
}
