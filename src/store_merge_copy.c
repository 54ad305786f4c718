/* store_merge_copy.c: the copy of a checked input into the output, rows matched by what identifies them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "store_merge_int.h"
#include "plan.h"
#include "util.h"

/* ---- input ids to output ids (struct idmap) ---- */

static void idmap_put(struct idmap *m, int64_t from, int64_t to)
{
	if (m->n && m->from[m->n - 1] >= from)
		BUG("idmap_put: ids out of order (%" PRId64 " after %" PRId64 ")", from, m->from[m->n - 1]);
	ALLOC_GROW(m->from, m->n + 1, m->alloc_from);
	ALLOC_GROW(m->to, m->n + 1, m->alloc_to);
	m->from[m->n] = from;
	m->to[m->n++] = to;
}

/* The output id of input id from, or 0 when it has none (a cell outside the shard). */
static int64_t idmap_get(const struct idmap *m, int64_t from)
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

static void idmap_release(struct idmap *m)
{
	free(m->from);
	free(m->to);
	memset(m, 0, sizeof(*m));
}

/* ---- run identities ---- */

/* A run's identity across databases: a hash of its row and of its workers' ranks, hosts and GPUs. */
struct runprint {
	uint64_t print;
	int64_t id;
};

static uint64_t print_text(uint64_t h, const char *s)
{
	/* NULL and "" differ: NULL hashes a byte no text holds. */
	if (!s)
		return hash64(h, "\xff", 2);
	return hash64(h, s, strlen(s) + 1);
}

/* The identity of run id of db from f (its sweep, start, argv, spec hash and version), then for each
 * worker in rank order its rank, its host's hash and its GPU. -1 after error(). */
static int run_print(sqlite3 *db, const char *const f[5], int64_t id, uint64_t *out)
{
	static const char wsql[] = "SELECT w.rank, h.hash, w.gpu FROM workers w LEFT JOIN hosts h ON h.id = w.host"
		" WHERE w.run = ?1 ORDER BY w.rank, w.id";
	sqlite3_stmt *w = prep(db, wsql);
	uint64_t h = HASH64_INIT;
	int rc;

	if (!w)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	for (int i = 0; i < 5; i++)
		h = print_text(h, f[i]);
	sqlite3_bind_int64(w, 1, id);
	while ((rc = sqlite3_step(w)) == SQLITE_ROW)
		for (int i = 0; i < 3; i++)
			h = print_text(h, (const char *)sqlite3_column_text(w, i));
	sqlite3_finalize(w);
	if (rc != SQLITE_DONE)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	*out = h;
	return 0;
}

static const char run_print_sql[] =
	"SELECT sweep, started, argv, spec_hash, version, id FROM runs ORDER BY id";

int store_merge_copy_prints(struct merge *m)
{
	sqlite3_stmt *s = prep(m->out, run_print_sql);
	int rc;

	if (!s)
		return store_merge_output_err(m);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *f[5] = { col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4) };
		struct runprint rp;

		rp.id = sqlite3_column_int64(s, 5);
		if (run_print(m->out, f, rp.id, &rp.print)) {
			sqlite3_finalize(s);
			return -1;
		}
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints++] = rp;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
}

/* ---- copying ---- */

/* Read every row of table t of the input (ORDER BY tail) and hand it to fn. */
static int each_row(struct merge *m, struct input *in, int t, const char *tail,
		    int (*fn)(struct merge *, struct input *, sqlite3_stmt *))
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc, ret = 0;

	store_merge_input_select(&sb, &store_merge_tables[t], tail);
	s = prep(in->db, sb.buf);
	sb_release(&sb);
	if (!s)
		return store_merge_input_err(in, "cannot read it");
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = store_merge_input_check_row(in, &store_merge_tables[t], s) || fn(m, in, s) ? -1 : 0;
	if (!ret && rc != SQLITE_DONE)
		ret = store_merge_input_err(in, "cannot read it");
	sqlite3_finalize(s);
	return ret;
}

static int copy_sweep(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_SWEEP_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_SWEEP_ADD);
	sqlite3_stmt *u = store_merge_output_stmt(m, O_SWEEP_NEWER);
	int rc, newer = 0;

	if (!f || !a || !u)
		return -1;
	bind_col(f, 1, s, 0);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(f, 0);
		const char *updated = (const char *)sqlite3_column_text(f, 1);

		/* Another spec under the same name (the grid grew, say): cells still match by key, and the
		 * sweep keeps the newer text. */
		if (hash && strcmp(hash, col_text(s, 5))) {
			char a[52];

			newer = updated && strcmp(col_text(s, 6), updated) > 0;
			warning("'%s': sweep '%s' has another spec than in '%s'; keeping the newer one, %s's",
				in->path, shown(a, col_text(s, 0)), m->out_path, newer ? in->path : m->out_path);
		}
		sqlite3_reset(f);
		if (!newer)
			return 0;
		for (int i = 0; i < 7; i++)
			bind_col(u, i + 1, s, i);
		return store_merge_output_step(m, u, NULL, NULL);
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return store_merge_output_err(m);
	for (int i = 0; i < 7; i++)
		bind_col(a, i + 1, s, i);
	return store_merge_output_step(m, a, NULL, NULL);
}

static int copy_host(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_HOST_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_HOST_ADD);
	sqlite3_stmt *l = store_merge_output_stmt(m, O_HOST_LABELS);
	int64_t id;
	int found;

	if (!f || !a || !l)
		return -1;
	bind_col(f, 1, s, 3);
	if (store_merge_output_step(m, f, &found, &id))
		return -1;
	if (found) {
		sqlite3_bind_int64(l, 1, id);
		bind_col(l, 2, s, 2);
		bind_col(l, 3, s, 4);
		if (store_merge_output_step(m, l, NULL, NULL))
			return -1;
	} else {
		for (int i = 1; i < 5; i++)
			bind_col(a, i, s, i);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		in->st->hosts_new++;
	}
	idmap_put(&in->hosts, sqlite3_column_int64(s, 0), id);
	return 0;
}

static int copy_run(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	const char *f[5] = { col_text(s, 1), col_text(s, 2), col_text(s, 4), col_text(s, 5), col_text(s, 6) };
	sqlite3_stmt *a = store_merge_output_stmt(m, O_RUN_ADD);
	sqlite3_stmt *e = store_merge_output_stmt(m, O_RUN_END);
	int64_t src = sqlite3_column_int64(s, 0), id = 0;
	uint64_t print;

	if (!a || !e || run_print(in->db, f, src, &print))
		return -1;
	for (size_t i = 0; i < m->nprints && !id; i++)
		if (m->prints[i].print == print)
			id = m->prints[i].id;
	if (id) {
		sqlite3_bind_int64(e, 1, id);
		bind_col(e, 2, s, 3);
		bind_col(e, 3, s, 7);
		if (store_merge_output_step(m, e, NULL, NULL))
			return -1;
	} else {
		for (int i = 1; i < 8; i++)
			bind_col(a, i, s, i);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints].print = print;
		m->prints[m->nprints++].id = id;
		in->st->runs_new++;
	}
	idmap_put(&in->runs, src, id);
	return 0;
}

static int copy_worker(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_WORKER_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_WORKER_ADD);
	int64_t run = idmap_get(&in->runs, sqlite3_column_int64(s, 1)), id;
	int found;

	if (!f || !a)
		return -1;
	if (!run)
		BUG("worker of an unmapped run");
	sqlite3_bind_int64(f, 1, run);
	bind_col(f, 2, s, 2);
	if (store_merge_output_step(m, f, &found, &id))
		return -1;
	if (!found) {
		sqlite3_bind_int64(a, 1, run);
		bind_col(a, 2, s, 2);
		store_bind_id(a, 3, sqlite3_column_type(s, 3) == SQLITE_NULL ? 0 :
			idmap_get(&in->hosts, sqlite3_column_int64(s, 3)));
		bind_col(a, 4, s, 4);
		bind_col(a, 5, s, 5);
		bind_col(a, 6, s, 6);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
	}
	idmap_put(&in->workers, sqlite3_column_int64(s, 0), id);
	return 0;
}

static int copy_cell(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_CELL_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_CELL_ADD);
	sqlite3_stmt *q = store_merge_output_stmt(m, O_CELL_QUARANTINE);
	const char *state = col_text(s, 7);
	int64_t id;
	int found;

	if (!f || !a || !q)
		return -1;
	if (m->o && m->o->nshards &&
	    store_shard(col_text(s, 1), col_text(s, 3), sqlite3_column_int(s, 4), m->o->nshards) != m->o->shard)
		return 0;
	in->st->cells++;
	bind_col(f, 1, s, 2);
	if (store_merge_output_step(m, f, &found, &id))
		return -1;
	if (!found) {
		/* Nothing runs the cell in the output, and it becomes ok with its ok result only. */
		if (!strcmp(state, "running") || !strcmp(state, "ok"))
			state = "planned";
		for (int i = 1; i < 7; i++)
			bind_col(a, i, s, i);
		sqlite3_bind_text(a, 7, state, -1, SQLITE_TRANSIENT);
		bind_col(a, 8, s, 8);
		bind_col(a, 9, s, 9);
		if (store_merge_output_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		in->st->cells_new++;
	} else if (!strcmp(state, "quarantined")) {
		sqlite3_bind_int64(q, 1, id);
		bind_col(q, 2, s, 9);
		bind_col(q, 3, s, 8);
		if (store_merge_output_step(m, q, NULL, NULL))
			return -1;
	}
	idmap_put(&in->cells, sqlite3_column_int64(s, 0), id);
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

		store_merge_input_select(&sb, t, " WHERE result = ?1");
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

/* The output's result of input result s in output cell `cell` (*found), matched by run, attempt, start and
 * status. */
static int result_find(struct merge *m, sqlite3_stmt *s, int64_t cell, int64_t run, int *found)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_RESULT_FIND);

	if (!f)
		return -1;
	sqlite3_bind_int64(f, 1, cell);
	bind_col(f, 2, s, 5);
	store_bind_id(f, 3, run);
	bind_col(f, 4, s, 6);
	bind_col(f, 5, s, 4);
	return store_merge_output_step(m, f, found, NULL);
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
		    (twin && result_find(m, s, twin, run, &found)))
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
		if (sibling_cell(m, in, &c, host, 1, cell) || result_find(m, s, *cell, run, &found))
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
	if (result_find(m, s, cell, run, &found))
		return -1;
	if (found) {
		in->st->results_same++;
		return 0;
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
		return store_merge_output_step(m, c, NULL, NULL);
	}
	return 0;
}

static int copy_control(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_CONTROL_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_CONTROL_ADD);
	int64_t run = 0, worker = 0;
	int found;

	if (!f || !a)
		return -1;
	if (sqlite3_column_type(s, 1) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 1));
	if (sqlite3_column_type(s, 2) != SQLITE_NULL)
		worker = idmap_get(&in->workers, sqlite3_column_int64(s, 2));
	store_bind_id(f, 1, run);
	store_bind_id(f, 2, worker);
	bind_col(f, 3, s, 3);
	bind_col(f, 4, s, 4);
	bind_col(f, 5, s, 5);
	if (store_merge_output_step(m, f, &found, NULL))
		return -1;
	if (found)
		return 0;
	store_bind_id(a, 1, run);
	store_bind_id(a, 2, worker);
	for (int i = 3; i < 10; i++)
		bind_col(a, i, s, i);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	in->st->controls_new++;
	return 0;
}

static int copy_probe(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_PROBE_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_PROBE_ADD);
	int64_t host = 0, run = 0;
	int found;

	if (!f || !a)
		return -1;
	if (sqlite3_column_type(s, 1) != SQLITE_NULL)
		host = idmap_get(&in->hosts, sqlite3_column_int64(s, 1));
	if (sqlite3_column_type(s, 6) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 6));
	store_bind_id(f, 1, host);
	bind_col(f, 2, s, 2);
	bind_col(f, 3, s, 3);
	store_bind_id(f, 4, run);
	bind_col(f, 5, s, 7);
	if (store_merge_output_step(m, f, &found, NULL))
		return -1;
	if (found)
		return 0;
	store_bind_id(a, 1, host);
	bind_col(a, 2, s, 2);
	bind_col(a, 3, s, 3);
	bind_col(a, 4, s, 4);
	bind_col(a, 5, s, 5);
	store_bind_id(a, 6, run);
	bind_col(a, 7, s, 7);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	in->st->probes_new++;
	return 0;
}

static int copy_prediction(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_PREDICTION_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_PREDICTION_ADD);
	int rc;

	if (!f || !a)
		return -1;
	bind_col(f, 1, s, 1);
	bind_col(f, 2, s, 2);
	bind_col(f, 3, s, 3);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		char a[52], b[52];

		/* A prediction is registered once, before the run: the output's stands. */
		if (sqlite3_column_double(f, 0) != sqlite3_column_double(s, 4))
			warning("'%s': prediction of %s for cell %s differs from the one in '%s'; keeping that one",
				in->path, shown(a, col_text(s, 3)), shown(b, col_text(s, 2)), m->out_path);
		sqlite3_reset(f);
		return 0;
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return store_merge_output_err(m);
	for (int i = 1; i < 9; i++)
		bind_col(a, i, s, i);
	if (store_merge_output_step(m, a, NULL, NULL))
		return -1;
	in->st->predictions_new++;
	return 0;
}

/* Host cells of per: any sweeps that the input brought but whose results the output had elsewhere. */
static int drop_empty(struct merge *m, struct input *in)
{
	sqlite3_stmt *d = store_merge_output_stmt(m, O_CELL_DROP_EMPTY);
	uint64_t n;

	if (!d || store_merge_output_step(m, d, NULL, NULL))
		return -1;
	n = (uint64_t)sqlite3_changes(m->out);
	in->st->cells_new -= n < in->st->cells_new ? n : in->st->cells_new;
	return 0;
}

static int copy_rows(struct merge *m, struct input *in)
{
	sqlite3_stmt *s;
	uint64_t added;

	if (!(s = prep(m->out, "INSERT INTO merges(source, merged, cells, results, conflicts)"
			       " VALUES(?1, ?2, 0, 0, 0)")))
		return store_merge_output_err(m);
	sqlite3_bind_text(s, 1, in->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, m->now, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_merge_output_err(m);
	}
	sqlite3_finalize(s);
	in->merge = sqlite3_last_insert_rowid(m->out);
	if (each_row(m, in, T_SWEEPS, " ORDER BY name", copy_sweep) ||
	    each_row(m, in, T_HOSTS, " ORDER BY id", copy_host) ||
	    each_row(m, in, T_RUNS, " ORDER BY id", copy_run) ||
	    each_row(m, in, T_WORKERS, " ORDER BY id", copy_worker) ||
	    each_row(m, in, T_CELLS, " ORDER BY id", copy_cell) ||
	    each_row(m, in, T_RESULTS, " ORDER BY id", copy_result) || drop_empty(m, in) ||
	    each_row(m, in, T_CONTROLS, " ORDER BY id", copy_control) ||
	    each_row(m, in, T_PROBES, " ORDER BY id", copy_probe) ||
	    each_row(m, in, T_PREDICTIONS, " ORDER BY id", copy_prediction))
		return -1;
	/* The log names inputs that brought something: merging a file again leaves no trace. */
	added = in->st->cells_new + in->st->results_new + in->st->conflicts + in->st->runs_new +
		in->st->hosts_new + in->st->controls_new + in->st->probes_new + in->st->predictions_new;
	if (!(s = prep(m->out, added ? "UPDATE merges SET cells = ?2, results = ?3, conflicts = ?4 WHERE id = ?1"
				     : "DELETE FROM merges WHERE id = ?1")))
		return store_merge_output_err(m);
	sqlite3_bind_int64(s, 1, in->merge);
	if (added) {
		sqlite3_bind_int64(s, 2, (sqlite3_int64)in->st->cells_new);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)in->st->results_new);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)in->st->conflicts);
	}
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_merge_output_err(m);
	}
	sqlite3_finalize(s);
	return 0;
}

int store_merge_copy_input(struct merge *m, struct input *in)
{
	int ret = copy_rows(m, in);

	/* The maps serve the copy of this input only. */
	idmap_release(&in->runs);
	idmap_release(&in->hosts);
	idmap_release(&in->workers);
	idmap_release(&in->cells);
	return ret;
}
