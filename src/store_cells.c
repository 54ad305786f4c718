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
 * drop the index (a statement still open) only means the slow way. */
static void bulk_try(struct store *st)
{
	int64_t any;

	st->bulk.state = BULK_OFF;
	if (store_int(st, "SELECT EXISTS (SELECT 1 FROM cells)", &any) || any ||
	    sqlite3_exec(st->db, "DROP INDEX cells_key", NULL, NULL, NULL))
		return;
	st->bulk.state = BULK_ON;
	st->bulk.cap = 1024;
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

/* Add key's hash to the set: 1 when it is new, 0 when the hash was there already. */
static int bulk_add(struct store_bulk *b, const char *key)
{
	uint64_t h = hash64(HASH64_INIT, key, strlen(key));
	size_t i;

	h += !h;
	for (i = h & (b->cap - 1); b->set[i]; i = (i + 1) & (b->cap - 1))
		if (b->set[i] == h)
			return 0;
	if (2 * (b->n + 1) > b->cap) {
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

int store_add_cell(struct store *st, const char *sweep, const char *key, const char *params, int pass,
		   const char *replica, uint64_t ord, const char *state, int *added)
{
	sqlite3_stmt *s;
	int bulk;

	if (st->in_tx && st->bulk.state == BULK_UNTRIED)
		bulk_try(st);
	bulk = st->bulk.state == BULK_ON && key && bulk_add(&st->bulk, key);
	if (!(s = store_stmt(st, bulk ? SQL_ADD_CELL_BULK : SQL_ADD_CELL)))
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

int store_recover(struct store *st, const char *sweep, int max_attempts)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RECOVER);

	if (!s)
		return -1;
	store_bind_text(s, 1, sweep);
	sqlite3_bind_int(s, 2, max_attempts);
	return store_step(st, s);
}

int store_each_pending(struct store *st, const char *sweep, int (*fn)(const struct task *, void *),
		       void *data)
{
	/*
	 * There is no index on ord (a second index on cells cost a third of the time of planning a
	 * million cells), so the rows are sorted, and a sort reads every row before the first is
	 * returned: fn may change cells (mark them running) without disturbing the scan. "+ord" keeps it
	 * so should an index on ord appear. Prepared per call, so fn may call this again.
	 */
	static const char sql[] = "SELECT id, key, params, pass, replica, flight = 2 FROM cells"
		" WHERE sweep = ?1 AND state = 'planned' ORDER BY +ord, id";
	sqlite3_stmt *s;
	int rc, ret = 0;

	if (store_settle(st))
		return -1;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_sqlerr(st);
	store_bind_text(s, 1, sweep);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct task t = { 0 };

		t.cell = sqlite3_column_int64(s, 0);
		t.key = (char *)sqlite3_column_text(s, 1);
		t.params = (char *)sqlite3_column_text(s, 2);
		t.pass = sqlite3_column_int(s, 3);
		t.replica = (char *)sqlite3_column_text(s, 4);
		t.control = 0;
		t.isolate = sqlite3_column_int(s, 5);
		if ((ret = fn(&t, data)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = store_sqlerr(st);
	sqlite3_finalize(s);
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
	return 0;
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

/* ---- spec changes, retries, interrupts ---- */

int store_sweep_spec(struct store *st, const char *sweep, char **text)
{
	sqlite3_stmt *s;
	int rc;

	*text = NULL;
	if (store_settle(st))
		return -1;
	if (sqlite3_prepare_v2(st->db, "SELECT spec FROM sweeps WHERE name = ?1", -1, &s, NULL))
		return store_sqlerr(st);
	store_bind_text(s, 1, sweep);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_text(s, 0))
		*text = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_sqlerr(st);
}

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
	if (cells_exec(st, "UPDATE cells SET state = 'retired', flight = 0 WHERE sweep = ?1 AND state <> 'retired'"
		       " AND " CELL_BASE_KEY " NOT IN (SELECT key FROM temp.plan_keys)", bind, 1, &out->retired))
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
		    cells_exec(st, "UPDATE cells SET state = 'planned', attempts = 0, error = NULL, flight = 0,"
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
	return cells_exec(st, "UPDATE cells SET state = 'planned', attempts = 0, error = NULL, flight = 0,"
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

int store_unfly(struct store *st, const char *sweep, uint64_t *n)
{
	const char *bind[] = { sweep };

	/* The running cell's attempt was counted when it was marked: handed back, it is not one. */
	return cells_exec(st, "UPDATE cells SET attempts = attempts - (state = 'running' AND attempts > 0),"
			  " state = CASE WHEN state = 'running' THEN 'planned' ELSE state END,"
			  " flight = CASE WHEN flight = 1 THEN 0 ELSE flight END"
			  " WHERE sweep = ?1 AND (state = 'running' OR flight = 1)", bind, 1, n);
}
