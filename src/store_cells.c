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
	static const char sql[] = "SELECT id, key, params, pass, replica, attempts, flight = 2 FROM cells"
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
		t.attempt = sqlite3_column_int(s, 5) + 1;
		t.control = 0;
		t.isolate = sqlite3_column_int(s, 6);
		if ((ret = fn(&t, data)))
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = store_sqlerr(st);
	sqlite3_finalize(s);
	return ret;
}

int store_mark_running(struct store *st, int64_t cell, int *attempt)
{
	sqlite3_stmt *s = store_stmt(st, SQL_MARK_RUNNING), *q = store_stmt(st, SQL_ATTEMPTS);
	int64_t n = 0;
	int found;

	if (!s || !q)
		return -1;
	sqlite3_bind_int64(s, 1, cell);
	if (store_step(st, s))
		return -1;
	if (!sqlite3_changes(st->db))
		return error("no cell %" PRId64 " in '%s'", cell, st->path);
	sqlite3_bind_int64(q, 1, cell);
	if (store_step_row(st, q, &found, &n, 1))
		return -1;
	*attempt = (int)n;
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
