/* store_cells.c: planning and the cell lifecycle: sweeps, cells, replicas, shards, recovery, marks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "json.h"
#include "plan.h"
#include "util.h"

/* ---- plan: sweeps and cells ---- */

int store_put_sweep(struct store *st, const struct spec *s)
{
	static const char *const per[] = { [PER_ANY] = "any", [PER_HOST] = "host", [PER_GPU] = "gpu" };
	sqlite3_stmt *q = store_stmt(st, SQL_SWEEP);
	struct strbuf cmd = STRBUF_INIT;
	char hash[17], now[32];
	int ret;

	if (!q)
		return -1;
	if (s->command) {
		sb_addc(&cmd, '[');
		for (int i = 0; i < s->ncommand; i++) {
			if (i)
				sb_addc(&cmd, ',');
			json_add_str(&cmd, s->command[i]);
		}
		sb_addc(&cmd, ']');
	}
	snprintf(hash, sizeof(hash), "%016" PRIx64, s->hash);
	store_now(now, sizeof(now));
	store_bind_text(q, 1, s->name);
	store_bind_text(q, 2, s->kernel);
	store_bind_text(q, 3, s->command ? cmd.buf : NULL);
	store_bind_text(q, 4, per[s->per]);
	store_bind_text(q, 5, s->text ? s->text : "");
	store_bind_text(q, 6, hash);
	store_bind_text(q, 7, now);
	ret = store_step(st, q);
	sb_release(&cmd);
	return ret;
}

/* Enter bulk mode when this transaction is the first to add cells (see struct store_bulk). A failure to
 * drop the index or the trigger (a statement still open) only means the slow way. */
static void bulk_try(struct store *st)
{
	int64_t any;
	int rc = 0;

	st->bulk.state = BULK_OFF;
	if (store_int(st, "SELECT EXISTS (SELECT 1 FROM cells)", &any) || any)
		return;
	if (sqlite3_exec(st->db, "SAVEPOINT bulk", NULL, NULL, NULL))
		return;
	for (const struct store_schema_object *o = store_schema_bulk; !rc && o->name; o++) {
		char *sql = xasprintf("DROP %s %s", o->type, o->name);

		rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
		free(sql);
	}
	if (rc || sqlite3_exec(st->db, "RELEASE bulk", NULL, NULL, NULL)) {
		sqlite3_exec(st->db, "ROLLBACK TO bulk; RELEASE bulk", NULL, NULL, NULL);
		return;
	}
	st->bulk.state = BULK_ON;
	/* The size the plan needs from the start: growing it held both tables for a moment. */
	for (st->bulk.cap = 1024; 3 * st->bulk.cap < 4 * st->bulk.expect; st->bulk.cap *= 2)
		;
	st->bulk.set = xcalloc(st->bulk.cap, sizeof(*st->bulk.set));
}

static void bulk_insert(struct store_bulk *b, uint64_t h)
{
	size_t i = h & (b->cap - 1);

	while (b->set[i])
		i = (i + 1) & (b->cap - 1);
	b->set[i] = h;
	b->n++;
}

/* Add key's hash to the set: 1 when it is new, 0 when the hash was there already. Three quarters full
 * at most: ten million keys in 128 MiB. */
static int bulk_add(struct store_bulk *b, const char *key)
{
	uint64_t h = hash64(HASH64_INIT, key, strlen(key));
	size_t i;

	h += !h;
	for (i = h & (b->cap - 1); b->set[i]; i = (i + 1) & (b->cap - 1))
		if (b->set[i] == h)
			return 0;
	if (4 * (b->n + 1) > 3 * b->cap) {
		uint64_t *old = b->set;
		size_t oldcap = b->cap;

		b->cap *= 2;
		b->n = 0;
		b->set = xcalloc(b->cap, sizeof(*b->set));
		for (i = 0; i < oldcap; i++)
			if (old[i])
				bulk_insert(b, old[i]);
		free(old);
	}
	bulk_insert(b, h);
	return 1;
}

/* One more cell added in bulk under sweep, replica and state. */
static void bulk_tally(struct store_bulk *b, const char *sweep, const char *replica, const char *state)
{
	struct bulk_tally *t = b->ntally ? &b->tally[b->ntally - 1] : NULL;

	if (!t || strcmp(t->sweep, sweep) || strcmp(t->replica, replica) || strcmp(t->state, state)) {
		for (size_t i = 0; i < b->ntally; i++)
			if (!strcmp(b->tally[i].sweep, sweep) && !strcmp(b->tally[i].replica, replica) &&
			    !strcmp(b->tally[i].state, state)) {
				b->tally[i].n++;
				return;
			}
		ALLOC_GROW(b->tally, b->ntally + 1, b->alloc_tally);
		t = &b->tally[b->ntally++];
		t->sweep = xstrdup(sweep);
		t->replica = xstrdup(replica);
		t->state = xstrdup(state);
		t->n = 0;
	}
	t->n++;
}

int store_add_cell(struct store *st, const char *sweep, const char *key, const char *params, int pass,
		   const char *replica, uint64_t ord, const char *state, int *added)
{
	sqlite3_stmt *s;

	if (st->in_tx && st->bulk.state == BULK_UNTRIED)
		bulk_try(st);
	if (st->bulk.state == BULK_ON && key && sweep && params && state && bulk_add(&st->bulk, key)) {
		*added = 1;
		bulk_tally(&st->bulk, sweep, replica ? replica : "", state);
		return store_bulk_row(st, sweep, key, params, pass, replica ? replica : "", ord, state);
	}
	if (!(s = store_stmt(st, SQL_ADD_CELL)))
		return -1;
	store_bind_text(s, 1, sweep);
	store_bind_text(s, 2, key);
	store_bind_text(s, 3, params);
	sqlite3_bind_int(s, 4, pass);
	store_bind_text(s, 5, replica ? replica : "");
	sqlite3_bind_int64(s, 6, (sqlite3_int64)ord);
	store_bind_text(s, 7, state);
	if (store_step(st, s))
		return -1;
	*added = sqlite3_changes(st->db);
	return 0;
}

int store_replicate(struct store *st, const char *sweep, const char *replica, int *added)
{
	sqlite3_stmt *s = store_stmt(st, SQL_REPLICATE);

	if (!s)
		return -1;
	store_bind_text(s, 1, sweep);
	store_bind_text(s, 2, replica);
	if (store_step(st, s))
		return -1;
	*added = sqlite3_changes(st->db);
	return 0;
}

/* ---- the cell lifecycle ---- */

/* One writing statement of store_query (text binds); *changes its rows changed (may be NULL). */
static int cells_exec(struct store *st, const char *sql, const char *const *binds, int nbind,
		      uint64_t *changes)
{
	if (store_query(st, sql, binds, nbind, 0, NULL, NULL))
		return -1;
	if (changes)
		*changes = (uint64_t)sqlite3_changes(st->db);
	return 0;
}

struct counts_each {
	int (*fn)(const char *, const struct store_counts *, void *);
	void *data;
};

static int counts_row(const struct store_row *row, void *data)
{
	struct counts_each *e = data;
	struct store_counts c;

	c.planned = (uint64_t)row->num[1];
	c.running = (uint64_t)row->num[2];
	c.ok = (uint64_t)row->num[3];
	c.quarantined = (uint64_t)row->num[4];
	c.template = (uint64_t)row->num[5];
	c.retired = (uint64_t)row->num[6];
	return e->fn(row->text[0], &c, e->data);
}

int store_each_replica(struct store *st, const char *sweep,
		       int (*fn)(const char *, const struct store_counts *, void *), void *data)
{
	const char *bind[] = { sweep };
	struct counts_each e = { fn, data };

	return store_query(st, "SELECT replica, planned, running, ok, quarantined, template, retired"
			   " FROM cell_counts WHERE sweep = ?1 ORDER BY replica", bind, 1, 1, counts_row, &e);
}

struct counts_sum {
	const char *replica;      /* NULL: every replica */
	struct store_counts *c;
};

static int add_counts(const char *replica, const struct store_counts *c, void *data)
{
	struct counts_sum *s = data;

	if (s->replica && strcmp(s->replica, replica))
		return 0;
	s->c->planned += c->planned;
	s->c->running += c->running;
	s->c->ok += c->ok;
	s->c->quarantined += c->quarantined;
	s->c->template += c->template;
	s->c->retired += c->retired;
	return 0;
}

int store_cell_counts(struct store *st, const char *sweep, const char *replica, struct store_counts *c)
{
	struct counts_sum s = { replica, c };

	memset(c, 0, sizeof(*c));
	return store_each_replica(st, sweep, add_counts, &s);
}

static int int_row(const struct store_row *row, void *data)
{
	*(int64_t *)data = (int64_t)row->num[0];
	return 0;
}

int store_recover(struct store *st, const char *sweep, int max_attempts)
{
	char max[24];
	const char *bind[] = { sweep, max };
	int64_t died = 0;

	/* A run that ends (done, or interrupted: it hands its cells back) leaves no cell in flight: only
	 * one that died does, and only then are the cells read. */
	if (store_query(st, "SELECT coalesce((SELECT status IN ('killed', 'failed', 'running') FROM runs"
			" WHERE sweep = ?1 ORDER BY id DESC LIMIT 1), 0)", bind, 1, 1, int_row, &died) || !died)
		return died ? -1 : 0;
	snprintf(max, sizeof(max), "%d", max_attempts);
	return cells_exec(st, "UPDATE cells SET flight = " FLIGHT_SUSPECT ","
			  " state = CASE WHEN attempts >= ?2 THEN 'quarantined' ELSE 'planned' END,"
			  " error = CASE WHEN attempts >= ?2 THEN coalesce(error, 'worker died during the cell') ELSE error END"
			  " WHERE sweep = ?1 AND (state = 'running' OR flight = " FLIGHT_SENT ")", bind, 2, NULL);
}

int store_pending(struct store *st, const char *sweep, const char *replica, struct store_cursor *cur, int max,
		  int (*fn)(const struct task *, void *), void *data, int *n)
{
	sqlite3_stmt *s = store_stmt(st, SQL_PENDING);
	int rc, ret = 0;

	*n = 0;
	if (!s)
		return -1;
	store_bind_text(s, 1, sweep);
	store_bind_text(s, 2, replica);
	sqlite3_bind_int64(s, 3, cur->ord);
	sqlite3_bind_int64(s, 4, cur->id);
	sqlite3_bind_int(s, 5, max);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct task t = { 0 };

		t.cell = sqlite3_column_int64(s, 0);
		t.key = (char *)sqlite3_column_text(s, 1);
		t.params = (char *)sqlite3_column_text(s, 2);
		t.pass = sqlite3_column_int(s, 3);
		t.replica = (char *)sqlite3_column_text(s, 4);
		t.isolate = !strcmp((const char *)sqlite3_column_text(s, 5), FLIGHT_SUSPECT);
		cur->ord = sqlite3_column_int64(s, 6);
		cur->id = t.cell;
		store_flight_note(st, t.cell, sweep, replica);
		(*n)++;
		if ((ret = fn(&t, data)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = store_sqlerr(st);
	sqlite3_reset(s);
	return ret;
}

int store_mark_running(struct store *st, int64_t cell)
{
	sqlite3_stmt *s = store_stmt(st, SQL_MARK_RUNNING);

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, cell);
	if (store_step(st, s))
		return -1;
	if (!sqlite3_changes(st->db))
		return error("no cell %" PRId64 " in '%s'", cell, st->path);
	return store_flight_move(st, cell, COUNT_PLANNED, COUNT_RUNNING, 0);
}

int store_mark_sent(struct store *st, int64_t cell)
{
	sqlite3_stmt *s = store_stmt(st, SQL_MARK_SENT);

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, cell);
	return store_step(st, s);
}

unsigned store_shard(const char *sweep, const char *params, int pass, unsigned nshards)
{
	char key[17];

	if (!nshards)
		BUG("store_shard: no shards");
	plan_key(sweep, params, pass, "", key);
	return (unsigned)(strtoull(key, NULL, 16) % nshards);
}

/* ---- the figures of planned grids ---- */

static int grid_row(const struct store_row *row, void *data)
{
	struct store_grid *g = data;

	g->cells = strtoull(row->text[0], NULL, 10);
	g->sum = (uint64_t)strtoll(row->text[1], NULL, 10);
	g->mix = (uint64_t)strtoll(row->text[2], NULL, 10);
	snprintf(g->shard, sizeof(g->shard), "%s", row->text[3]);
	return 1;
}

int store_grid_get(struct store *st, const char *sweep, struct store_grid *g, int *found)
{
	const char *bind[] = { sweep };
	int rc;

	memset(g, 0, sizeof(*g));
	/* Figures of another spec than the one the sweep has now (a merge brought a newer one) are no use. */
	rc = store_query(st, "SELECT g.cells, g.key_sum, g.key_mix, g.shard FROM grids g"
			 " JOIN sweeps w ON w.name = g.sweep AND w.hash = g.hash WHERE g.sweep = ?1", bind, 1, 1,
			 grid_row, g);
	*found = rc == 1;
	return rc < 0 ? -1 : 0;
}

int store_grid_put(struct store *st, const char *sweep, const struct store_grid *g)
{
	char n[24], sum[24], mix[24];
	const char *bind[] = { sweep, n, sum, mix, g->shard };

	snprintf(n, sizeof(n), "%" PRIu64, g->cells);
	snprintf(sum, sizeof(sum), "%" PRId64, (int64_t)g->sum);
	snprintf(mix, sizeof(mix), "%" PRId64, (int64_t)g->mix);
	return store_query(st, "INSERT INTO grids(sweep, hash, cells, key_sum, key_mix, shard)"
			   " VALUES(?1, (SELECT hash FROM sweeps WHERE name = ?1), CAST(?2 AS INTEGER),"
			   " CAST(?3 AS INTEGER), CAST(?4 AS INTEGER), ?5) ON CONFLICT(sweep) DO UPDATE SET"
			   " hash = excluded.hash, cells = excluded.cells, key_sum = excluded.key_sum,"
			   " key_mix = excluded.key_mix, shard = excluded.shard", bind, 5, 0, NULL, NULL);
}

/* ---- spec changes, retries, interrupts ---- */

/* One text column of a sweep's row (sql selects it by name ?1) into *text, NULL when none. */
static int sweep_text(struct store *st, const char *sql, const char *sweep, char **text)
{
	sqlite3_stmt *s;
	int rc;

	*text = NULL;
	if (store_settle(st))
		return -1;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_sqlerr(st);
	store_bind_text(s, 1, sweep);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_text(s, 0))
		*text = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlerr(st);
}

int store_sweep_spec(struct store *st, const char *sweep, char **text)
{
	return sweep_text(st, "SELECT spec FROM sweeps WHERE name = ?1", sweep, text);
}

int store_sweep_inputs(struct store *st, const char *sweep, char **json)
{
	return sweep_text(st, "SELECT inputs FROM sweeps WHERE name = ?1", sweep, json);
}

int store_sweep_set_inputs(struct store *st, const char *sweep, const char *json)
{
	const char *bind[] = { sweep, json };

	return store_query(st, "UPDATE sweeps SET inputs = ?2 WHERE name = ?1", bind, 2, 0, NULL, NULL);
}

int store_plan_key(struct store *st, const char *key)
{
	sqlite3_stmt *s;

	if (!st->plan_keys) {
		if (sqlite3_exec(st->db, "CREATE TEMP TABLE IF NOT EXISTS plan_keys(key TEXT PRIMARY KEY)"
				 " WITHOUT ROWID; DELETE FROM temp.plan_keys", NULL, NULL, NULL))
			return store_sqlerr(st);
		st->plan_keys = 1;
	}
	if (!(s = store_stmt(st, SQL_PLAN_KEY)))
		return -1;
	store_bind_text(s, 1, key);
	return store_step(st, s);
}

/* The key of a cell's template: its own for a cell without replica. */
#define CELL_BASE_KEY "(CASE WHEN replica = '' THEN key ELSE sweep_key(sweep, params, pass, '') END)"

int store_replan(struct store *st, const char *sweep, int templates, int max_attempts, int remeasure,
		 struct store_replan_stats *out)
{
	char max[24], tmpl[4];
	const char *bind[] = { sweep, max, tmpl };

	memset(out, 0, sizeof(*out));
	if (!st->plan_keys)
		BUG("store_replan: no store_plan_key before it");
	snprintf(max, sizeof(max), "%d", max_attempts);
	snprintf(tmpl, sizeof(tmpl), "%d", templates);
	if (cells_exec(st, "UPDATE cells SET state = 'retired', flight = " FLIGHT_NONE
		       " WHERE sweep = ?1 AND state <> 'retired' AND " CELL_BASE_KEY " NOT IN (SELECT key FROM temp.plan_keys)", bind, 1, &out->retired))
		return -1;
	/* Back in the spec: the state it would have, had it never left. */
	if (cells_exec(st, "UPDATE cells SET state = CASE WHEN replica = '' AND ?3 THEN 'template'"
		       " WHEN id IN (SELECT cell FROM results WHERE status = 'ok') THEN 'ok'"
		       " WHEN attempts >= ?2 THEN 'quarantined' ELSE 'planned' END"
		       " WHERE sweep = ?1 AND state = 'retired' AND " CELL_BASE_KEY " IN (SELECT key FROM temp.plan_keys)",
		       bind, 3, &out->back))
		return -1;
	if (remeasure) {
		char now[32];
		const char *b2[] = { sweep, now };

		store_now(now, sizeof(now));
		if (cells_exec(st, "UPDATE results SET status = 'superseded' WHERE status = 'ok' AND cell IN"
			       " (SELECT id FROM cells WHERE sweep = ?1 AND state <> 'retired')", bind, 1, &out->superseded) ||
		    cells_exec(st, "UPDATE cells SET state = 'planned', attempts = 0, error = NULL, flight = " FLIGHT_NONE ","
			       " decided = ?2 WHERE sweep = ?1 AND state IN ('ok', 'quarantined', 'planned', 'running')",
			       b2, 2, &out->remeasured))
			return -1;
	}
	st->plan_keys = 0;
	return sqlite3_exec(st->db, "DELETE FROM temp.plan_keys", NULL, NULL, NULL) ? store_sqlerr(st) : 0;
}

/* Fill temp.pick with the ids of the cells of sweep in state cond (SQL on c) where where holds (SQL on c,
 * r: the cell's latest result, w, h; its binds are ?1..?nbind, the sweep is ?nbind+1). */
static int cells_pick(struct store *st, const char *sweep, const char *cond, const char *where,
		      const char *const *binds, int nbind, uint64_t *n)
{
	struct strbuf sql = STRBUF_INIT;
	const char **all = xcalloc((size_t)nbind + 1, sizeof(*all));
	int ret;

	for (int i = 0; i < nbind; i++)
		all[i] = binds[i];
	all[nbind] = sweep;
	if (sqlite3_exec(st->db, "DROP TABLE IF EXISTS temp.pick", NULL, NULL, NULL)) {
		free(all);
		return store_sqlerr(st);
	}
	sb_addf(&sql, "CREATE TEMP TABLE pick AS SELECT c.id AS id FROM cells c"
		" LEFT JOIN results r ON r.id = (SELECT max(id) FROM results WHERE cell = c.id)"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host"
		" WHERE c.sweep = ?%d AND (%s) AND (%s)", nbind + 1, cond, where && *where ? where : "1");
	ret = cells_exec(st, sql.buf, all, nbind + 1, NULL);
	sb_release(&sql);
	free(all);
	if (!ret)
		ret = store_int(st, "SELECT count(*) FROM temp.pick", (int64_t *)n) ? store_sqlerr(st) : 0;
	return ret;
}

/*
 * The picked cells back to planned, attempts and error cleared, as decided now: a merge takes a cell's
 * state from the database whose decision on it is newer, so that shards and copies seeded or merged later
 * follow this one (store_merge_copy.c).
 */
static int cells_decide(struct store *st)
{
	char now[32];
	const char *bind[] = { now };

	store_now(now, sizeof(now));
	return cells_exec(st, "UPDATE cells SET state = 'planned', attempts = 0, error = NULL, flight = " FLIGHT_NONE ","
			  " decided = ?1 WHERE id IN (SELECT id FROM temp.pick)", bind, 1, NULL);
}

int store_retry(struct store *st, const char *sweep, int states, const char *where, const char *const *binds,
		int nbind, uint64_t *n)
{
	const char *cond = states == (RETRY_QUARANTINED | RETRY_FAILED) ?
		"c.state = 'quarantined' OR (c.state = 'planned' AND c.attempts > 0)" :
		states == RETRY_QUARANTINED ? "c.state = 'quarantined'" : "c.state = 'planned' AND c.attempts > 0";

	return cells_pick(st, sweep, cond, where, binds, nbind, n) || cells_decide(st) ? -1 : 0;
}

int store_force(struct store *st, const char *sweep, const char *where, const char *const *binds, int nbind,
		uint64_t *cells, uint64_t *superseded)
{
	return cells_pick(st, sweep, "c.state IN ('ok', 'quarantined')", where, binds, nbind, cells) ||
	       cells_exec(st, "UPDATE results SET status = 'superseded' WHERE status = 'ok'"
			  " AND cell IN (SELECT id FROM temp.pick)", NULL, 0, superseded) || cells_decide(st) ? -1 : 0;
}

struct unfly {
	const char *sweep;
	uint64_t n;
};

/* A cell this run loaded, handed back if it is of the sweep and in flight: running (its attempt taken
 * back) or sent. */
static int unfly_cell(struct store *st, int64_t cell, void *data)
{
	static const char *const sql[] = {
		"UPDATE cells SET attempts = attempts - (attempts > 0), state = 'planned', flight = " FLIGHT_NONE
		" WHERE id = ?1 AND sweep = ?2 AND state = 'running'",
		"UPDATE cells SET flight = " FLIGHT_NONE " WHERE id = ?1 AND sweep = ?2 AND flight = " FLIGHT_SENT,
	};
	struct unfly *u = data;

	for (int i = 0; i < 2; i++) {
		sqlite3_stmt *s;
		int changed;

		if (sqlite3_prepare_v2(st->db, sql[i], -1, &s, NULL))
			return store_sqlerr(st);
		sqlite3_bind_int64(s, 1, cell);
		store_bind_text(s, 2, u->sweep);
		changed = sqlite3_step(s) == SQLITE_DONE ? sqlite3_changes(st->db) : -1;
		sqlite3_finalize(s);
		if (changed < 0)
			return store_sqlerr(st);
		u->n += (uint64_t)changed;
		if (changed && !i)
			return store_flight_move(st, cell, COUNT_RUNNING, COUNT_PLANNED, 1);
	}
	return 0;
}

struct running_back {
	struct store *st;
	const char *sweep;
};

static int count_back(const struct store_row *row, void *data)
{
	struct running_back *b = data;

	store_flight_count(b->st, b->sweep, row->text[0], COUNT_RUNNING, COUNT_PLANNED, (int64_t)row->num[1]);
	return 0;
}

int store_unfly(struct store *st, const char *sweep, uint64_t *n)
{
	const char *bind[] = { sweep };
	struct running_back b = { st, sweep };

	*n = 0;
	/* In a run's dispatch, the cells it loaded are noted: only those are read (unless a rolled-back
	 * transaction left the notes unsure). */
	if (st->flight.on && !st->flight.unsure) {
		struct unfly u = { sweep, 0 };
		int rc = store_flight_each(st, unfly_cell, &u);

		*n = u.n;
		return rc;
	}
	/* Every cell: the triggers count, or (dispatch mode) the running ones are counted first. */
	if (st->flight.on && store_query(st, "SELECT replica, count(*) FROM cells WHERE sweep = ?1"
					 " AND state = 'running' GROUP BY replica", bind, 1, 1, count_back, &b))
		return -1;
	/* The running cell's attempt was counted when it was marked: handed back, it is not one. */
	return cells_exec(st, "UPDATE cells SET attempts = attempts - (state = 'running' AND attempts > 0),"
			  " state = CASE WHEN state = 'running' THEN 'planned' ELSE state END,"
			  " flight = CASE WHEN flight = " FLIGHT_SENT " THEN " FLIGHT_NONE " ELSE flight END"
			  " WHERE sweep = ?1 AND (state = 'running' OR flight = " FLIGHT_SENT ")", bind, 1, n);
}
