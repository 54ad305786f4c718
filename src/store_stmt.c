/* store_stmt.c: the store's statements: the text of each cached one, preparing, binding and stepping them,
 * SQL's errors said, and bulk planning's rows (many cells a statement; store_int.h says when). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "util.h"

/* The values of a cell, once and BULK_ROWS times. */
#define ROW "(?,?,?,?,?,?,?)"
#define ROWS4 ROW "," ROW "," ROW "," ROW
#define ROWS16 ROWS4 "," ROWS4 "," ROWS4 "," ROWS4
#define ROWS64 ROWS16 "," ROWS16 "," ROWS16 "," ROWS16

/* The text of each cached statement (enum store_sql). */
static const char *const store_sql_text[SQL_COUNT] = {
	[SQL_BEGIN] = "BEGIN IMMEDIATE",
	[SQL_COMMIT] = "COMMIT",
	[SQL_ROLLBACK] = "ROLLBACK",
	/* The time of an update changes only when the text does. */
	[SQL_SWEEP] = "INSERT INTO sweeps(name, kernel, command, per, spec, hash, updated)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(name) DO UPDATE SET"
		" kernel = excluded.kernel, command = excluded.command, per = excluded.per,"
		" spec = excluded.spec, updated = CASE WHEN hash = excluded.hash THEN updated"
		" ELSE excluded.updated END, hash = excluded.hash",
	/* ON CONFLICT(key) rather than OR IGNORE: only a duplicate key is skipped; a bad state fails. */
	[SQL_ADD_CELL] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(key) DO NOTHING",
	/* Bulk mode: cells_key is gone and the keys are known to be new; BULK_ROWS cells at once, or one. */
	[SQL_ADD_CELL_BULK] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state) VALUES" ROWS64,
	[SQL_ADD_CELL_BULK1] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state) VALUES" ROW,
	/* "WHERE" is required before an upsert's ON CONFLICT in INSERT ... SELECT (parsing ambiguity). */
	[SQL_REPLICATE] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state)"
		" SELECT sweep, sweep_key(sweep, params, pass, ?2), params, pass, ?2, ord, 'planned'"
		" FROM cells WHERE sweep = ?1 AND replica = '' AND state = 'template' ORDER BY ord, id"
		" ON CONFLICT(key) DO NOTHING",
	[SQL_RUN_BEGIN] = "INSERT INTO runs(sweep, started, argv, spec_hash, version, revision, status)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'running')",
	[SQL_RUN_END] = "UPDATE runs SET finished = ?2, status = ?3 WHERE id = ?1",
	[SQL_HOST] = "INSERT INTO hosts(hostname, facts, hash, seen) VALUES(?1, ?2, ?3, ?4)"
		" ON CONFLICT(hash) DO UPDATE SET seen = excluded.seen",
	[SQL_HOST_ID] = "SELECT id FROM hosts WHERE hash = ?1",
	/* An upsert, not INSERT OR REPLACE: the row keeps its id, which results may already name. */
	[SQL_WORKER] = "INSERT INTO workers(run, rank, host, gpu, gpu_uuid, binding, conditions)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
		" ON CONFLICT(run, rank) DO UPDATE SET host = excluded.host, gpu = excluded.gpu,"
		" gpu_uuid = excluded.gpu_uuid, binding = excluded.binding, conditions = excluded.conditions",
	[SQL_WORKER_ID] = "SELECT id FROM workers WHERE run = ?1 AND rank = ?2",
	/* Through cells_ord, from (ord, id) on: a window of the pending cells in run order. */
	[SQL_PENDING] = "SELECT id, key, params, pass, replica, flight, ord FROM cells"
		" WHERE sweep = ?1 AND replica = ?2 AND state = 'planned' AND (ord, id) > (?3, ?4)"
		" ORDER BY ord, id LIMIT ?5",
	[SQL_MARK_RUNNING] = "UPDATE cells SET attempts = attempts + 1, state = 'running', flight = " FLIGHT_SENT
		" WHERE id = ?1",
	[SQL_MARK_SENT] = "UPDATE cells SET flight = " FLIGHT_SENT " WHERE id = ?1 AND flight = " FLIGHT_NONE,
	[SQL_OK_RESULT] = "SELECT id FROM results WHERE cell = ?1 AND status = 'ok'",
	/* The attempt is the cell's count, read here: NULL (refused: NOT NULL) when there is no such cell. */
	[SQL_RESULT] = "INSERT INTO results(cell, run, worker, status, attempt, started, wall, n, median,"
		" mean, min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, error, stdout, stderr, stop,"
		" launches, warmup, cpu_user, cpu_sys, peak_rss, ci_lo, ci_hi, precise, settled, note) VALUES(?1, ?2,"
		" ?3, ?4, (SELECT attempts FROM cells WHERE id = ?1), ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
		" ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)",
	[SQL_SAMPLE] = "INSERT INTO samples(result, i, seconds, sm_clock) VALUES(?1, ?2, ?3, ?4)",
	/* A command's run: a kernel's samples leave these NULL without binding them. */
	[SQL_SAMPLE_USAGE] = "INSERT INTO samples(result, i, seconds, sm_clock, cpu_user, cpu_sys, peak_rss)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[SQL_METRIC] = "INSERT OR REPLACE INTO metrics(result, name, value) VALUES(?1, ?2, ?3)",
	[SQL_ITEM] = "INSERT OR REPLACE INTO items(result, item, metric, value) VALUES(?1, ?2, ?3, ?4)",
	[SQL_CELL_OK] = "UPDATE cells SET state = 'ok', error = NULL, flight = " FLIGHT_NONE " WHERE id = ?1",
	/* A cell that already has its ok result stays ok whatever a later attempt did. */
	[SQL_CELL_RETRY] = "UPDATE cells SET error = ?2, flight = " FLIGHT_NONE ", state = 'planned'"
		" WHERE id = ?1 AND state <> 'ok' AND attempts < ?3",
	[SQL_CELL_QUARANTINE] = "UPDATE cells SET error = ?2, flight = " FLIGHT_NONE ", state = 'quarantined'"
		" WHERE id = ?1 AND state <> 'ok'",
	[SQL_CONTROL] = "INSERT INTO controls(run, worker, sweep, params, started, median, noise, n, error)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[SQL_PLAN_KEY] = "INSERT OR IGNORE INTO temp.plan_keys(key) VALUES(?1)",
};

int store_sqlerr(struct store *st)
{
	/* SQLite says "not authorized"; the guard knows what it refused (store_query forgets it first). */
	if (st->denied.what[0]) {
		error("sql error: %s is not allowed: sweep sql reads with SQLite's plain functions and sweep's "
		      "own, none that reads or writes memory by address or files", st->denied.what);
		st->denied.what[0] = '\0';
		return -1;
	}
	if (sqlite3_errcode(st->db) == SQLITE_INTERRUPT && st->timed_out) {
		st->timed_out = 0;
		return error("'%s': a read ran past its limit of %g s and was stopped (a query that does not end, "
			     "or a database that is not sweep's)", st->path, st->limit);
	}
	/* A statement stopped by an interrupt (store_interruptible) is no error: the caller says what
	 * stopped. */
	if (sqlite3_errcode(st->db) == SQLITE_INTERRUPT)
		return -1;
	return error("sql error: %s", sqlite3_errmsg(st->db));
}

/* Bind the waiting cells from row first on, n of them, to s. */
static void bulk_bind(struct store *st, sqlite3_stmt *s, int first, int n)
{
	struct store_bulk *b = &st->bulk;

	for (int r = 0; r < n; r++) {
		const size_t *at = b->at[first + r];
		int i = 7 * r;

		store_bind_text(s, i + 1, b->text.buf + at[0]);
		store_bind_text(s, i + 2, b->text.buf + at[1]);
		store_bind_text(s, i + 3, b->text.buf + at[2]);
		sqlite3_bind_int64(s, i + 4, b->num[first + r][0]);
		store_bind_text(s, i + 5, b->text.buf + at[3]);
		sqlite3_bind_int64(s, i + 6, b->num[first + r][1]);
		store_bind_text(s, i + 7, b->text.buf + at[4]);
	}
}

/* Write the waiting cells: BULK_ROWS in one statement, fewer one by one. */
static int bulk_flush(struct store *st)
{
	struct store_bulk *b = &st->bulk;
	int n = b->nrows, ret = 0;
	sqlite3_stmt *s;

	b->nrows = 0;
	if (n == BULK_ROWS) {
		if (!(s = store_stmt(st, SQL_ADD_CELL_BULK)))
			return -1;
		bulk_bind(st, s, 0, n);
		ret = store_step(st, s);
	} else {
		for (int r = 0; r < n && !ret; r++) {
			if (!(s = store_stmt(st, SQL_ADD_CELL_BULK1)))
				return -1;
			bulk_bind(st, s, r, 1);
			ret = store_step(st, s);
		}
	}
	sb_reset(&b->text);
	return ret;
}

int store_bulk_row(struct store *st, const char *sweep, const char *key, const char *params, int pass,
		   const char *replica, uint64_t ord, const char *state)
{
	struct store_bulk *b = &st->bulk;
	const char *v[5] = { sweep, key, params, replica, state };

	for (int i = 0; i < 5; i++) {
		b->at[b->nrows][i] = b->text.len;
		sb_add(&b->text, v[i], strlen(v[i]) + 1);
	}
	b->num[b->nrows][0] = pass;
	b->num[b->nrows][1] = (int64_t)ord;
	return ++b->nrows == BULK_ROWS ? bulk_flush(st) : 0;
}

void store_bulk_reset(struct store *st, enum bulk_state state)
{
	for (size_t i = 0; i < st->bulk.ntally; i++) {
		free(st->bulk.tally[i].sweep);
		free(st->bulk.tally[i].replica);
		free(st->bulk.tally[i].state);
	}
	free(st->bulk.tally);
	free(st->bulk.set);
	sb_release(&st->bulk.text);
	memset(&st->bulk, 0, sizeof(st->bulk));
	st->bulk.state = state;
}

/* The cells a bulk transaction added, into cell_counts as the trigger would have counted them. */
static int bulk_counts(struct store *st)
{
	static const char sql[] = "INSERT INTO cell_counts VALUES(?1, ?2, (?3 = 'planned') * ?4,"
		" (?3 = 'running') * ?4, (?3 = 'ok') * ?4, (?3 = 'quarantined') * ?4, (?3 = 'template') * ?4,"
		" (?3 = 'retired') * ?4) ON CONFLICT(sweep, replica) DO UPDATE SET planned = planned + excluded.planned,"
		" running = running + excluded.running, ok = ok + excluded.ok,"
		" quarantined = quarantined + excluded.quarantined, template = template + excluded.template,"
		" retired = retired + excluded.retired";
	sqlite3_stmt *s;
	int ret = 0;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_sqlerr(st);
	for (size_t i = 0; i < st->bulk.ntally && !ret; i++) {
		const struct bulk_tally *t = &st->bulk.tally[i];

		store_bind_text(s, 1, t->sweep);
		store_bind_text(s, 2, t->replica);
		store_bind_text(s, 3, t->state);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)t->n);
		ret = store_step(st, s);
	}
	sqlite3_finalize(s);
	return ret;
}

/* End bulk mode: make again what it dropped (indexes in one sort each) and count what was added. Every
 * statement but a bulk insert needs it first. */
int store_settle(struct store *st)
{
	int ret;

	if (st->bulk.state != BULK_ON)
		return 0;
	ret = bulk_flush(st);
	st->bulk.state = BULK_OFF;
	/* The set of keys is done with: its memory goes before the sorts take theirs. */
	free(st->bulk.set);
	st->bulk.set = NULL;
	for (const struct store_schema_object *o = store_schema_bulk; !ret && o->name; o++)
		if (sqlite3_exec(st->db, o->sql, NULL, NULL, NULL))
			ret = store_sqlerr(st);
	if (!ret)
		ret = bulk_counts(st);
	store_bulk_reset(st, BULK_OFF);
	return ret;
}

/* The cached statement, prepared on first use; NULL after error(). */
sqlite3_stmt *store_stmt(struct store *st, enum store_sql which)
{
	/* The temporary table of planned keys is no statement on cells: bulk planning goes on. */
	if (which != SQL_ADD_CELL_BULK && which != SQL_ADD_CELL_BULK1 && which != SQL_PLAN_KEY && store_settle(st))
		return NULL;
	if (!st->stmt[which] && sqlite3_prepare_v3(st->db, store_sql_text[which], -1,
						   SQLITE_PREPARE_PERSISTENT, &st->stmt[which], NULL)) {
		store_sqlerr(st);
		return NULL;
	}
	return st->stmt[which];
}

void store_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	/* STATIC is safe: every statement is reset and rebound before its next step. */
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* NaN (a summary of no samples) is stored as NULL. */
void store_bind_num(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

void store_bind_id(sqlite3_stmt *s, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

/* Step a bound statement to its end (rows are ignored) and reset it. */
int store_step(struct store *st, sqlite3_stmt *s)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		store_sqlerr(st);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Step a bound statement expected to give at most one row: *found, and the integers of its first
 * ncol columns (NULL reads as 0). Resets it. */
int store_step_row(struct store *st, sqlite3_stmt *s, int *found, int64_t *col, int ncol)
{
	int rc = sqlite3_step(s);

	*found = rc == SQLITE_ROW;
	for (int i = 0; *found && i < ncol; i++)
		col[i] = sqlite3_column_int64(s, i);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlerr(st);
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}
