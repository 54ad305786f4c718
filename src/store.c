/* store.c: the results database: schema and migrations, cached statements, SQL statistics functions. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "store.h"
#include "plan.h"
#include "stats.h"
#include "util.h"

/*
 * Schema migrations: store_migrations[i] takes a database from user_version i to i + 1, inside one
 * transaction. Append only: a released script never changes, or databases made by it would differ from
 * those made by the new one. ARCHITECTURE.md shows the resulting schema.
 */
static const char *const store_migrations[] = {
	/* 1: the initial schema */
	"CREATE TABLE sweeps(\n"
	"	name TEXT PRIMARY KEY,\n"
	"	kernel TEXT,\n"
	"	command TEXT,\n"
	"	per TEXT NOT NULL,\n"
	"	spec TEXT NOT NULL,\n"
	"	hash TEXT NOT NULL,\n"
	"	updated TEXT NOT NULL\n"
	");\n"
	"CREATE TABLE runs(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	sweep TEXT,\n"
	"	started TEXT NOT NULL,\n"
	"	finished TEXT,\n"
	"	argv TEXT,\n"
	"	spec_hash TEXT,\n"
	"	version TEXT,\n"
	"	status TEXT NOT NULL DEFAULT 'running'\n"
	");\n"
	"CREATE TABLE hosts(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	hostname TEXT NOT NULL,\n"
	"	facts TEXT NOT NULL,\n"
	"	hash TEXT NOT NULL UNIQUE,\n"
	"	seen TEXT NOT NULL\n"
	");\n"
	"CREATE TABLE workers(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	run INTEGER NOT NULL REFERENCES runs(id),\n"
	"	rank INTEGER NOT NULL,\n"
	"	host INTEGER REFERENCES hosts(id),\n"
	"	gpu INTEGER,\n"
	"	gpu_uuid TEXT,\n"
	"	binding TEXT,\n"
	"	UNIQUE(run, rank)\n"
	");\n"
	"CREATE TABLE cells(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	sweep TEXT NOT NULL,\n"
	"	key TEXT NOT NULL,\n"
	"	params TEXT NOT NULL,\n"
	"	pass INTEGER NOT NULL,\n"
	"	replica TEXT NOT NULL DEFAULT '',\n"
	"	ord INTEGER NOT NULL,\n"
	/* OR chains, not IN lists: SQLite evaluates an IN list in a CHECK through a temporary table
	 * for every row, which tripled the cost of planning a million cells. */
	"	state TEXT NOT NULL CHECK (state = 'planned' OR state = 'running' OR state = 'ok'\n"
	"		OR state = 'quarantined' OR state = 'template'),\n"
	"	attempts INTEGER NOT NULL DEFAULT 0,\n"
	"	error TEXT,\n"
	/* 0: with no worker; 1: sent to a worker (running, or prefetched behind its running cell);
	 * 2: suspect: it was in flight when a job died, so it runs alone next (see store_recover). */
	"	flight INTEGER NOT NULL DEFAULT 0\n"
	");\n"
	/* A named index rather than UNIQUE in the table, so that bulk planning can drop and rebuild it. */
	"CREATE UNIQUE INDEX cells_key ON cells(key);\n"
	"CREATE TABLE results(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	cell INTEGER NOT NULL REFERENCES cells(id),\n"
	"	run INTEGER REFERENCES runs(id),\n"
	"	worker INTEGER REFERENCES workers(id),\n"
	"	status TEXT NOT NULL CHECK (status = 'ok' OR status = 'error' OR status = 'timeout'),\n"
	"	attempt INTEGER NOT NULL,\n"
	"	started TEXT,\n"
	"	wall REAL,\n"
	"	n INTEGER NOT NULL,\n"
	"	median REAL, mean REAL, min REAL, max REAL, stdev REAL, q1 REAL, q3 REAL,\n"
	"	noise REAL,\n"
	"	noise_ok INTEGER NOT NULL,\n"
	"	throttled INTEGER NOT NULL DEFAULT 0,\n"
	"	sm_clock REAL,\n"
	"	error TEXT,\n"
	"	stdout TEXT,\n"
	"	stderr TEXT\n"
	");\n"
	"CREATE UNIQUE INDEX results_one_ok ON results(cell) WHERE status = 'ok';\n"
	"CREATE INDEX results_cell ON results(cell);\n"
	"CREATE TABLE samples(\n"
	"	result INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,\n"
	"	i INTEGER NOT NULL,\n"
	"	seconds REAL NOT NULL,\n"
	"	sm_clock REAL,\n"
	"	PRIMARY KEY(result, i)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE metrics(\n"
	"	result INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,\n"
	"	name TEXT NOT NULL,\n"
	"	value REAL,\n"
	"	PRIMARY KEY(result, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE items(\n"
	"	result INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,\n"
	"	item TEXT NOT NULL,\n"
	"	metric TEXT NOT NULL,\n"
	"	value REAL,\n"
	"	PRIMARY KEY(result, item, metric)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE controls(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	run INTEGER REFERENCES runs(id),\n"
	"	worker INTEGER REFERENCES workers(id),\n"
	"	sweep TEXT NOT NULL,\n"
	"	params TEXT NOT NULL,\n"
	"	started TEXT,\n"
	"	median REAL,\n"
	"	noise REAL,\n"
	"	n INTEGER NOT NULL,\n"
	"	error TEXT\n"
	");\n"
	"CREATE INDEX controls_sweep ON controls(sweep, run);\n"
	"CREATE TABLE probes(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	host INTEGER REFERENCES hosts(id),\n"
	"	gpu INTEGER,\n"
	"	name TEXT NOT NULL,\n"
	"	value REAL,\n"
	"	unit TEXT,\n"
	"	run INTEGER REFERENCES runs(id),\n"
	"	measured TEXT\n"
	");\n"
	"CREATE TABLE predictions(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	sweep TEXT NOT NULL,\n"
	"	key TEXT,\n"
	"	metric TEXT NOT NULL,\n"
	"	value REAL,\n"
	"	blind INTEGER NOT NULL DEFAULT 0,\n"
	"	frozen_at TEXT,\n"
	"	sha256 TEXT,\n"
	"	source TEXT\n"
	");\n"
	"CREATE INDEX predictions_key ON predictions(sweep, key, metric);\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
};

int store_schema_version(void)
{
	return (int)ARRAY_SIZE(store_migrations);
}

/* Statements prepared once, on first use, and kept for the life of the connection. */
enum store_sql {
	SQL_BEGIN, SQL_COMMIT, SQL_ROLLBACK,
	SQL_SWEEP, SQL_ADD_CELL, SQL_ADD_CELL_BULK, SQL_REPLICATE, SQL_RUN_BEGIN, SQL_RUN_END, SQL_HOST,
	SQL_HOST_ID,
	SQL_WORKER, SQL_WORKER_ID, SQL_RECOVER, SQL_MARK_RUNNING, SQL_MARK_SENT, SQL_ATTEMPTS,
	SQL_CELL_FOR_RESULT, SQL_RESULT, SQL_SAMPLE, SQL_METRIC, SQL_ITEM, SQL_CELL_OK, SQL_CELL_FAILED,
	SQL_CONTROL, SQL_COUNT
};

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
	/* Bulk mode: cells_key is gone and the key is known to be new. */
	[SQL_ADD_CELL_BULK] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	/* "WHERE" is required before an upsert's ON CONFLICT in INSERT ... SELECT (parsing ambiguity). */
	[SQL_REPLICATE] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state)"
		" SELECT sweep, sweep_key(sweep, params, pass, ?2), params, pass, ?2, ord, 'planned'"
		" FROM cells WHERE sweep = ?1 AND state = 'template' ORDER BY ord, id"
		" ON CONFLICT(key) DO NOTHING",
	[SQL_RUN_BEGIN] = "INSERT INTO runs(sweep, started, argv, spec_hash, version, status)"
		" VALUES(?1, ?2, ?3, ?4, ?5, 'running')",
	[SQL_RUN_END] = "UPDATE runs SET finished = ?2, status = ?3 WHERE id = ?1",
	[SQL_HOST] = "INSERT INTO hosts(hostname, facts, hash, seen) VALUES(?1, ?2, ?3, ?4)"
		" ON CONFLICT(hash) DO UPDATE SET seen = excluded.seen",
	[SQL_HOST_ID] = "SELECT id FROM hosts WHERE hash = ?1",
	/* An upsert, not INSERT OR REPLACE: the row keeps its id, which results may already name. */
	[SQL_WORKER] = "INSERT INTO workers(run, rank, host, gpu, gpu_uuid, binding)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
		" ON CONFLICT(run, rank) DO UPDATE SET host = excluded.host, gpu = excluded.gpu,"
		" gpu_uuid = excluded.gpu_uuid, binding = excluded.binding",
	[SQL_WORKER_ID] = "SELECT id FROM workers WHERE run = ?1 AND rank = ?2",
	[SQL_RECOVER] = "UPDATE cells SET flight = 2,"
		" state = CASE WHEN attempts >= ?2 THEN 'quarantined' ELSE 'planned' END,"
		" error = CASE WHEN attempts >= ?2 THEN coalesce(error, 'worker died during the cell')"
		" ELSE error END WHERE sweep = ?1 AND (state = 'running' OR flight = 1)",
	[SQL_MARK_RUNNING] = "UPDATE cells SET attempts = attempts + 1, state = 'running', flight = 1"
		" WHERE id = ?1",
	[SQL_MARK_SENT] = "UPDATE cells SET flight = 1 WHERE id = ?1 AND flight = 0",
	[SQL_ATTEMPTS] = "SELECT attempts FROM cells WHERE id = ?1",
	[SQL_CELL_FOR_RESULT] = "SELECT attempts, (SELECT id FROM results WHERE cell = ?1 AND status = 'ok')"
		" FROM cells WHERE id = ?1",
	[SQL_RESULT] = "INSERT INTO results(cell, run, worker, status, attempt, started, wall, n, median,"
		" mean, min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, error, stdout, stderr)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
		" ?19, ?20, ?21, ?22)",
	[SQL_SAMPLE] = "INSERT INTO samples(result, i, seconds, sm_clock) VALUES(?1, ?2, ?3, ?4)",
	[SQL_METRIC] = "INSERT OR REPLACE INTO metrics(result, name, value) VALUES(?1, ?2, ?3)",
	[SQL_ITEM] = "INSERT OR REPLACE INTO items(result, item, metric, value) VALUES(?1, ?2, ?3, ?4)",
	[SQL_CELL_OK] = "UPDATE cells SET state = 'ok', error = NULL, flight = 0 WHERE id = ?1",
	/* A cell that already has its ok result stays ok whatever a later attempt did. */
	[SQL_CELL_FAILED] = "UPDATE cells SET error = ?2, flight = 0,"
		" state = CASE WHEN attempts >= ?3 THEN 'quarantined' ELSE 'planned' END"
		" WHERE id = ?1 AND state <> 'ok'",
	[SQL_CONTROL] = "INSERT INTO controls(run, worker, sweep, params, started, median, noise, n, error)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
};

/*
 * Bulk planning. A million cells inserted one at a time into a table with a unique index on random keys
 * spend most of their time in that index. So when a transaction starts adding cells to an empty cells
 * table, cells_key is dropped, each new key is checked against a set of the 64-bit hashes of the keys
 * added so far, and the index is rebuilt in one sort before any other statement runs (store_settle):
 * about 40% faster. A hash seen before (a duplicate key, or a collision) ends bulk mode first, so
 * *added stays exact.
 */
enum bulk_state { BULK_UNTRIED, BULK_ON, BULK_OFF };
struct store_bulk {
	enum bulk_state state;         /* for the current transaction */
	uint64_t *set;                 /* open addressing, 0 marks a free slot */
	size_t cap, n;
};

/* One connection, used by one thread at a time (opened with SQLITE_OPEN_NOMUTEX). */
struct store {
	sqlite3 *db;
	char *path;
	int readonly;
	int in_tx;                     /* inside store_begin .. store_commit/rollback */
	int warned_worker;             /* "no worker row" is said once per connection */
	int64_t wk_run;                /* wk_id[rank]: workers.id of rank in run wk_run, 0 when not known */
	int64_t *wk_id;
	size_t wk_alloc;
	struct store_bulk bulk;
	sqlite3_stmt *stmt[SQL_COUNT];
};

/* Forget the cached worker ids: a rollback may have removed rows they name. */
static void store_forget_workers(struct store *st)
{
	st->wk_run = 0;
}

static int store_sqlerr(struct store *st)
{
	return error("sql error: %s", sqlite3_errmsg(st->db));
}

static void bulk_reset(struct store *st, enum bulk_state state)
{
	free(st->bulk.set);
	memset(&st->bulk, 0, sizeof(st->bulk));
	st->bulk.state = state;
}

/* End bulk mode: rebuild cells_key. Every statement but a bulk insert needs it first. */
static int store_settle(struct store *st)
{
	if (st->bulk.state != BULK_ON)
		return 0;
	bulk_reset(st, BULK_OFF);
	if (sqlite3_exec(st->db, "CREATE UNIQUE INDEX cells_key ON cells(key)", NULL, NULL, NULL))
		return store_sqlerr(st);
	return 0;
}

/* The cached statement, prepared on first use; NULL after error(). */
static sqlite3_stmt *store_stmt(struct store *st, enum store_sql which)
{
	if (which != SQL_ADD_CELL_BULK && store_settle(st))
		return NULL;
	if (!st->stmt[which] && sqlite3_prepare_v3(st->db, store_sql_text[which], -1,
						   SQLITE_PREPARE_PERSISTENT, &st->stmt[which], NULL)) {
		store_sqlerr(st);
		return NULL;
	}
	return st->stmt[which];
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	/* STATIC is safe: every statement is reset and rebound before its next step. */
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* NaN (a summary of no samples) is stored as NULL. */
static void bind_num(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

static void bind_id(sqlite3_stmt *s, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

/* Step a bound statement to its end (rows are ignored) and reset it. */
static int store_step(struct store *st, sqlite3_stmt *s)
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
static int store_step_row(struct store *st, sqlite3_stmt *s, int *found, int64_t *col, int ncol)
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

/* Run a fixed cached statement without parameters. */
static int store_run(struct store *st, enum store_sql which)
{
	sqlite3_stmt *s = store_stmt(st, which);

	return s ? store_step(st, s) : -1;
}

/* The integer value of a one-row statement (a PRAGMA); -1 without a message when it fails. */
static int store_int(struct store *st, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return -1;
	rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static void store_now(char *buf, size_t n)
{
	iso_time(now_wall(), buf, n);
}

int store_begin(struct store *st)
{
	if (st->in_tx)
		BUG("store_begin: a transaction is already open");
	if (store_run(st, SQL_BEGIN))
		return -1;
	st->in_tx = 1;
	bulk_reset(st, BULK_UNTRIED);
	return 0;
}

int store_commit(struct store *st)
{
	if (!st->in_tx)
		BUG("store_commit: no transaction");
	/* A failed COMMIT usually leaves the transaction open (the caller may retry or roll back); after
	 * an I/O error SQLite may have rolled it back itself. */
	if (store_run(st, SQL_COMMIT)) {
		if (sqlite3_get_autocommit(st->db)) {
			st->in_tx = 0;
			store_forget_workers(st);
		}
		return -1;
	}
	st->in_tx = 0;
	bulk_reset(st, BULK_OFF);
	return 0;
}

void store_rollback(struct store *st)
{
	if (!st->in_tx)
		return;
	/* The rollback undoes the dropped index too: no rebuild. */
	bulk_reset(st, BULK_OFF);
	store_forget_workers(st);
	if (sqlite3_get_autocommit(st->db) == 0)
		store_run(st, SQL_ROLLBACK);
	st->in_tx = 0;
}

/* ---- SQL functions ---- */

/* The rows an aggregate has seen: x (and y for paired functions), NULLs left out. */
struct store_agg {
	double *x, *y;
	size_t n, alloc_x, alloc_y;
	int have_args;         /* the constant arguments below were read from the first row */
	double q, ci;
	int boot;
	uint64_t seed;
};

static void agg_push(struct store_agg *a, double x, double y, int paired)
{
	ALLOC_GROW(a->x, a->n + 1, a->alloc_x);
	a->x[a->n] = x;
	if (paired) {
		ALLOC_GROW(a->y, a->n + 1, a->alloc_y);
		a->y[a->n] = y;
	}
	a->n++;
}

/* The aggregate's state, or NULL (and a NOMEM error) when SQLite cannot allocate it. */
static struct store_agg *agg_get(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, sizeof(*a));

	if (!a)
		sqlite3_result_error_nomem(ctx);
	return a;
}

static void agg_step_x(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || !(a = agg_get(ctx)))
		return;
	agg_push(a, sqlite3_value_double(argv[0]), 0, 0);
}

static void agg_step_quantile(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || !(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		a->q = sqlite3_value_double(argv[1]);
		if (sqlite3_value_type(argv[1]) == SQLITE_NULL || !(a->q >= 0 && a->q <= 1)) {
			sqlite3_result_error(ctx, "quantile(x, q): q must be a number in [0, 1]", -1);
			return;
		}
		a->have_args = 1;
	}
	agg_push(a, sqlite3_value_double(argv[0]), 0, 0);
}

static void agg_step_ratio(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL ||
	    !(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		sqlite3_int64 boot = argc > 3 ? sqlite3_value_int64(argv[3]) : 10000;
		sqlite3_int64 seed = argc > 4 ? sqlite3_value_int64(argv[4]) : 1;

		a->ci = argc > 2 ? sqlite3_value_double(argv[2]) : 0.95;
		if (!(a->ci > 0 && a->ci < 1)) {
			sqlite3_result_error(ctx, "ratio_ci: ci must be in (0, 1)", -1);
			return;
		}
		if (boot < 1 || boot > 100000000) {
			sqlite3_result_error(ctx, "ratio_ci: boot must be in [1, 100000000]", -1);
			return;
		}
		a->boot = (int)boot;
		a->seed = (uint64_t)seed;
		a->have_args = 1;
	}
	agg_push(a, sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1]), 1);
}

static void agg_free(struct store_agg *a)
{
	free(a->x);
	free(a->y);
	a->x = a->y = NULL;
	a->n = 0;
}

/* NaN (no answer: too few rows, a non-positive value for geomean) is SQL NULL. */
static void result_num(sqlite3_context *ctx, double v)
{
	if (isnan(v))
		sqlite3_result_null(ctx);
	else
		sqlite3_result_double(ctx, v);
}

static void agg_final_median(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? stats_median(a->x, a->n) : NAN);
	if (a)
		agg_free(a);
}

static void agg_final_quantile(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? stats_quantile(a->x, a->n, a->q) : NAN);
	if (a)
		agg_free(a);
}

static void agg_final_geomean(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? stats_geomean(a->x, a->n) : NAN);
	if (a)
		agg_free(a);
}

static void agg_final_stdev(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? stats_stdev(a->x, a->n) : NAN);
	if (a)
		agg_free(a);
}

static void agg_final_ratio(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);
	struct strbuf sb = STRBUF_INIT;
	double ratio, lo, hi;

	if (!a || !a->n || stats_ratio_ci(a->x, a->y, a->n, a->ci, a->boot, a->seed, &ratio, &lo, &hi)) {
		sqlite3_result_null(ctx);
	} else {
		sb_addc(&sb, '[');
		json_add_num(&sb, ratio);
		sb_addc(&sb, ',');
		json_add_num(&sb, lo);
		sb_addc(&sb, ',');
		json_add_num(&sb, hi);
		sb_addc(&sb, ']');
		sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
		sb_release(&sb);
	}
	if (a)
		agg_free(a);
}

/* sweep_key(sweep, params, pass, replica): plan_key in SQL, for store_replicate. */
static void fn_sweep_key(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *sweep = (const char *)sqlite3_value_text(argv[0]);
	const char *params = (const char *)sqlite3_value_text(argv[1]);
	const char *replica = (const char *)sqlite3_value_text(argv[3]);
	struct json_obj o = JSON_OBJ_INIT;
	char key[17], err[128];

	(void)argc;
	if (!sweep || !params) {
		sqlite3_result_null(ctx);
		return;
	}
	/* plan_key treats bad params as a programmer error; from SQL they are the user's. */
	if (json_parse_flat(params, &o, 0, err, sizeof(err))) {
		sqlite3_result_error(ctx, "sweep_key: params are not a flat JSON object", -1);
		return;
	}
	json_obj_release(&o);
	plan_key(sweep, params, sqlite3_value_int(argv[2]), replica ? replica : "", key);
	sqlite3_result_text(ctx, key, 16, SQLITE_TRANSIENT);
}

static int store_functions(struct store *st)
{
	static const struct {
		const char *name;
		int nargs;
		void (*step)(sqlite3_context *, int, sqlite3_value **);
		void (*final)(sqlite3_context *);
	} aggs[] = {
		{ "median", 1, agg_step_x, agg_final_median },
		{ "quantile", 2, agg_step_quantile, agg_final_quantile },
		{ "geomean", 1, agg_step_x, agg_final_geomean },
		{ "stdev", 1, agg_step_x, agg_final_stdev },
		{ "ratio_ci", 2, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 3, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 4, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 5, agg_step_ratio, agg_final_ratio },
	};
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

	for (size_t i = 0; i < ARRAY_SIZE(aggs); i++)
		if (sqlite3_create_function_v2(st->db, aggs[i].name, aggs[i].nargs, flags, NULL, NULL,
					       aggs[i].step, aggs[i].final, NULL))
			return store_sqlerr(st);
	if (sqlite3_create_function_v2(st->db, "sweep_key", 4, flags, NULL, fn_sweep_key, NULL, NULL, NULL))
		return store_sqlerr(st);
	return 0;
}

/* ---- opening ---- */

/* Bring a read-write database to the current schema. A non-empty database without a schema version is
 * some other program's: refuse it rather than add our tables to it. */
static int store_migrate(struct store *st)
{
	int64_t version, ntables;
	char *msg = NULL, sql[64];
	int latest = store_schema_version();

	if (store_int(st, "PRAGMA user_version", &version))
		return error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
	if (version == latest)
		return 0;
	if (store_run(st, SQL_BEGIN))
		return error("cannot migrate '%s'", st->path);
	/* Read again under the write lock: another process may have migrated it meanwhile. */
	if (store_int(st, "PRAGMA user_version", &version) ||
	    store_int(st, "SELECT count(*) FROM sqlite_master", &ntables)) {
		error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (version > latest) {
		error("'%s' has schema version %" PRId64 ", newer than this sweep knows (%d): upgrade sweep",
		      st->path, version, latest);
		goto fail;
	}
	if (version == 0 && ntables > 0) {
		error("'%s' is an SQLite database without a sweep schema; refusing to change it", st->path);
		goto fail;
	}
	for (int64_t v = version; v < latest; v++) {
		if (sqlite3_exec(st->db, store_migrations[v], NULL, NULL, &msg)) {
			error("cannot migrate '%s' to schema version %" PRId64 ": %s", st->path, v + 1, msg);
			sqlite3_free(msg);
			goto fail;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", latest);
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) || store_run(st, SQL_COMMIT)) {
		error("cannot migrate '%s': %s", st->path, sqlite3_errmsg(st->db));
		goto fail;
	}
	return 0;
fail:
	if (sqlite3_get_autocommit(st->db) == 0)
		store_run(st, SQL_ROLLBACK);
	return -1;
}

/* A read-only open accepts only a database at the current schema, with its tables. */
static int store_check_ro(struct store *st)
{
	int64_t version, ntables;

	if (store_int(st, "PRAGMA user_version", &version))
		return error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
	if (store_int(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
		      " ('sweeps', 'runs', 'cells', 'results', 'samples')", &ntables))
		return error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
	if (version == 0 || ntables != 5)
		return error("'%s' is not a sweep database (no sweep schema)", st->path);
	if (version > store_schema_version())
		return error("'%s' has schema version %" PRId64 ", newer than this sweep knows (%d): "
			     "upgrade sweep", st->path, version, store_schema_version());
	if (version < store_schema_version())
		return error("'%s' has schema version %" PRId64 " (current %d): open it read-write once "
			     "(sweep run) to migrate it", st->path, version, store_schema_version());
	return 0;
}

int store_open(const char *path, enum store_mode mode, struct store **out)
{
	struct store *st = xcalloc(1, sizeof(*st));
	int flags = SQLITE_OPEN_NOMUTEX;
	int64_t dummy;

	*out = NULL;
	st->path = xstrdup(path);
	st->readonly = mode == STORE_RO;
	if (sqlite3_libversion_number() < 3024000) {
		error("sqlite %s is too old: sweep needs 3.24 or newer", sqlite3_libversion());
		goto fail;
	}
	/* SQLite's "unable to open database file" does not say why; errno does. */
	if (st->readonly && access(path, R_OK)) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	flags |= st->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(path, &st->db, flags, NULL)) {
		error("cannot open '%s': %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	/* The first read finds out whether the file is SQLite at all ("file is not a database"). */
	if (store_int(st, "PRAGMA user_version", &dummy)) {
		error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) || store_functions(st)) {
		error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (st->readonly) {
		if (store_check_ro(st))
			goto fail;
	} else {
		sqlite3_stmt *s;
		const char *jm = NULL;

		/* WAL lets reports read while a run writes; NORMAL syncs at checkpoints, so a killed
		 * process loses nothing committed (a power cut may lose the last commits). 64 MiB of
		 * page cache (the default is 2) keeps a large plan in memory until its commit. */
		if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				jm = (const char *)sqlite3_column_text(s, 0);
			if (!jm || strcmp(jm, "wal"))
				warning("'%s': cannot use WAL (journal mode %s); readers will wait "
					"for writers", path, jm ? jm : "unknown");
			sqlite3_finalize(s);
		}
		if (sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536",
				 NULL, NULL, NULL)) {
			error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
			goto fail;
		}
		if (store_migrate(st))
			goto fail;
	}
	*out = st;
	return 0;
fail:
	store_close(st);
	return -1;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (int i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	/* An open transaction here is abandoned work: closing rolls it back. */
	if (st->db)
		sqlite3_close_v2(st->db);
	free(st->bulk.set);
	free(st->wk_id);
	free(st->path);
	free(st);
}

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
	bind_text(q, 1, s->name);
	bind_text(q, 2, s->kernel);
	bind_text(q, 3, s->command ? cmd.buf : NULL);
	bind_text(q, 4, per[s->per]);
	bind_text(q, 5, s->text ? s->text : "");
	bind_text(q, 6, hash);
	bind_text(q, 7, now);
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
	bind_text(s, 1, sweep);
	bind_text(s, 2, key);
	bind_text(s, 3, params);
	sqlite3_bind_int(s, 4, pass);
	bind_text(s, 5, replica ? replica : "");
	sqlite3_bind_int64(s, 6, (sqlite3_int64)ord);
	bind_text(s, 7, state);
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
	bind_text(s, 1, sweep);
	bind_text(s, 2, replica);
	if (store_step(st, s))
		return -1;
	*added = sqlite3_changes(st->db);
	return 0;
}

/* ---- runs, hosts, workers ---- */

int store_run_begin(struct store *st, const char *argv, const char *sweep, uint64_t spec_hash,
		    int64_t *run)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RUN_BEGIN);
	char hash[17], now[32];

	if (!s)
		return -1;
	snprintf(hash, sizeof(hash), "%016" PRIx64, spec_hash);
	store_now(now, sizeof(now));
	bind_text(s, 1, sweep);
	bind_text(s, 2, now);
	bind_text(s, 3, argv);
	bind_text(s, 4, hash);
#ifdef SWEEP_VERSION
	bind_text(s, 5, SWEEP_VERSION);
#else
	bind_text(s, 5, NULL);
#endif
	if (store_step(st, s))
		return -1;
	*run = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_run_end(struct store *st, int64_t run, const char *status)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RUN_END);
	char now[32];

	if (!s)
		return -1;
	store_now(now, sizeof(now));
	sqlite3_bind_int64(s, 1, run);
	bind_text(s, 2, now);
	bind_text(s, 3, status);
	if (store_step(st, s))
		return -1;
	if (!sqlite3_changes(st->db))
		return error("no run %" PRId64 " in '%s'", run, st->path);
	return 0;
}

int store_put_host(struct store *st, const char *facts_json, int64_t *host)
{
	sqlite3_stmt *s = store_stmt(st, SQL_HOST), *q = store_stmt(st, SQL_HOST_ID);
	struct json_obj o = JSON_OBJ_INIT;
	const char *hostname;
	char hash[17], now[32], err[128];
	int64_t id = 0;
	int found, ret = -1;

	if (!s || !q)
		return -1;
	if (json_parse_flat(facts_json, &o, 1, err, sizeof(err)))
		return error("host facts are not a JSON object: %s", err);
	hostname = json_obj_get(&o, "hostname");
	if (!hostname || !*hostname) {
		error("host facts have no \"hostname\"");
		goto out;
	}
	snprintf(hash, sizeof(hash), "%016" PRIx64, hash64(HASH64_INIT, facts_json, strlen(facts_json)));
	store_now(now, sizeof(now));
	bind_text(s, 1, hostname);
	bind_text(s, 2, facts_json);
	bind_text(s, 3, hash);
	bind_text(s, 4, now);
	if (store_step(st, s))
		goto out;
	/* last_insert_rowid is stale after the update branch of an upsert: look the row up. */
	bind_text(q, 1, hash);
	if (store_step_row(st, q, &found, &id, 1))
		goto out;
	if (!found)
		BUG("host row %s vanished", hash);
	*host = id;
	ret = 0;
out:
	json_obj_release(&o);
	return ret;
}

int store_put_worker(struct store *st, int64_t run, int rank, int64_t host, int gpu, const char *gpu_uuid,
		     const char *binding)
{
	sqlite3_stmt *s = store_stmt(st, SQL_WORKER);

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_int(s, 2, rank);
	bind_id(s, 3, host);
	if (gpu >= 0)
		sqlite3_bind_int(s, 4, gpu);
	else
		sqlite3_bind_null(s, 4);
	bind_text(s, 5, gpu_uuid);
	bind_text(s, 6, binding);
	return store_step(st, s);
}

/* The workers row of (run, rank); 0 (stored as NULL) when the scheduler never recorded it. Cached per
 * rank: a worker row keeps its id (store_put_worker updates it in place). */
static int store_worker_id(struct store *st, int64_t run, int rank, int64_t *id)
{
	sqlite3_stmt *s;
	size_t old = st->wk_alloc;
	int found;

	if (rank >= 0 && run == st->wk_run && (size_t)rank < st->wk_alloc && st->wk_id[rank]) {
		*id = st->wk_id[rank];
		return 0;
	}
	if (!(s = store_stmt(st, SQL_WORKER_ID)))
		return -1;
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_int(s, 2, rank);
	if (store_step_row(st, s, &found, id, 1))
		return -1;
	if (!found) {
		*id = 0;
		if (!st->warned_worker++)
			warning("no worker row for run %" PRId64 " rank %d: results keep no host", run, rank);
		return 0;
	}
	if (rank < 0)
		return 0;
	if (run != st->wk_run) {
		if (st->wk_alloc)
			memset(st->wk_id, 0, st->wk_alloc * sizeof(*st->wk_id));
		st->wk_run = run;
	}
	ALLOC_GROW(st->wk_id, (size_t)rank + 1, st->wk_alloc);
	memset(st->wk_id + old, 0, (st->wk_alloc - old) * sizeof(*st->wk_id));
	st->wk_id[rank] = *id;
	return 0;
}

/* ---- the cell lifecycle ---- */

int store_recover(struct store *st, const char *sweep, int max_attempts)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RECOVER);

	if (!s)
		return -1;
	bind_text(s, 1, sweep);
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
	bind_text(s, 1, sweep);
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

/* ---- results ---- */

/* The median SM clock of the samples whose clock is known; NaN when none is. */
static double result_clock(const struct result *r)
{
	double *c, m;
	size_t n = 0;

	if (!r->clocks || !r->nsamples)
		return NAN;
	c = xmalloc(r->nsamples * sizeof(*c));
	for (int i = 0; i < r->nsamples; i++)
		if (r->clocks[i] > 0)
			c[n++] = r->clocks[i];
	m = n ? stats_median(c, n) : NAN;
	free(c);
	return m;
}

static int store_put_details(struct store *st, int64_t id, const struct result *r)
{
	sqlite3_stmt *s = store_stmt(st, SQL_SAMPLE), *m = store_stmt(st, SQL_METRIC);
	sqlite3_stmt *it = store_stmt(st, SQL_ITEM);

	if (!s || !m || !it)
		return -1;
	for (int i = 0; i < r->nsamples; i++) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int(s, 2, i);
		sqlite3_bind_double(s, 3, r->samples[i]);
		bind_num(s, 4, r->clocks && r->clocks[i] > 0 ? r->clocks[i] : NAN);
		if (store_step(st, s))
			return -1;
	}
	for (size_t i = 0; i < r->metrics.n; i++) {
		const struct json_pair *p = &r->metrics.v[i];
		double v;

		sqlite3_bind_int64(m, 1, id);
		bind_text(m, 2, p->key);
		bind_num(m, 3, p->type == JSON_NUM && !parse_double(p->val, &v) ? v : NAN);
		if (store_step(st, m))
			return -1;
	}
	for (size_t i = 0; i < r->nitems; i++) {
		sqlite3_bind_int64(it, 1, id);
		bind_text(it, 2, r->items[i].item);
		bind_text(it, 3, r->items[i].metric);
		bind_num(it, 4, r->items[i].value);
		if (store_step(st, it))
			return -1;
	}
	return 0;
}

/* Insert the result row and its details, and move the cell on. Runs inside store_atomic. */
static int store_put_result_rows(struct store *st, int64_t run, const struct result *r, int max_attempts,
				 int64_t attempts, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RESULT), *c;
	struct summary sum;
	char started[32];
	int64_t worker;

	if (!s || store_worker_id(st, run, r->worker, &worker))
		return -1;
	stats_summary(r->samples, r->nsamples, &sum);
	iso_time(r->started, started, sizeof(started));
	sqlite3_bind_int64(s, 1, r->cell);
	bind_id(s, 2, run);
	bind_id(s, 3, worker);
	bind_text(s, 4, result_status_name[r->status]);
	sqlite3_bind_int64(s, 5, attempts);
	bind_text(s, 6, r->started > 0 ? started : NULL);
	bind_num(s, 7, r->wall);
	sqlite3_bind_int(s, 8, r->nsamples);
	bind_num(s, 9, sum.median);
	bind_num(s, 10, sum.mean);
	bind_num(s, 11, sum.min);
	bind_num(s, 12, sum.max);
	bind_num(s, 13, sum.stdev);
	bind_num(s, 14, sum.q1);
	bind_num(s, 15, sum.q3);
	bind_num(s, 16, sum.noise);
	sqlite3_bind_int(s, 17, r->noise_ok);
	sqlite3_bind_int(s, 18, r->throttled);
	bind_num(s, 19, result_clock(r));
	bind_text(s, 20, r->error);
	bind_text(s, 21, r->out);
	bind_text(s, 22, r->err);
	if (store_step(st, s))
		return -1;
	*id = sqlite3_last_insert_rowid(st->db);
	if (store_put_details(st, *id, r))
		return -1;
	if (r->status == RESULT_OK) {
		if (!(c = store_stmt(st, SQL_CELL_OK)))
			return -1;
		sqlite3_bind_int64(c, 1, r->cell);
	} else {
		if (!(c = store_stmt(st, SQL_CELL_FAILED)))
			return -1;
		sqlite3_bind_int64(c, 1, r->cell);
		bind_text(c, 2, r->error ? r->error : result_status_name[r->status]);
		sqlite3_bind_int(c, 3, max_attempts);
	}
	return store_step(st, c);
}

int store_put_result(struct store *st, int64_t run, const struct result *r, int max_attempts, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_CELL_FOR_RESULT);
	int64_t row[2], rid = 0;
	int found;

	if (r->cell <= 0)
		BUG("store_put_result: cell %" PRId64 " (a control cell goes to store_put_control)", r->cell);
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, r->cell);
	if (store_step_row(st, s, &found, row, 2))
		return -1;
	if (!found)
		return error("result for cell %" PRId64 ", which is not in '%s'", r->cell, st->path);
	/* One ok result per cell: a second one (two runs raced on a resume) is dropped, the first kept. */
	if (r->status == RESULT_OK && row[1]) {
		warning("cell %" PRId64 " already has an ok result (%" PRId64 "); keeping that one",
			r->cell, row[1]);
		if (id)
			*id = row[1];
		return 0;
	}
	/* Inside the caller's transaction a failure leaves the rollback to the caller: a savepoint per
	 * result would copy every page it touches to a statement journal (a third of a short cell's cost). */
	if (st->in_tx)
		return store_put_result_rows(st, run, r, max_attempts, row[0], id ? id : &rid);
	if (store_begin(st))
		return -1;
	if (store_put_result_rows(st, run, r, max_attempts, row[0], &rid) || store_commit(st)) {
		store_rollback(st);
		return -1;
	}
	if (id)
		*id = rid;
	return 0;
}

int store_put_control(struct store *st, int64_t run, const char *sweep, const char *params,
		      const struct result *r, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_CONTROL);
	struct summary sum;
	char started[32];
	int64_t worker;

	if (!s || store_worker_id(st, run, r->worker, &worker))
		return -1;
	stats_summary(r->samples, r->nsamples, &sum);
	iso_time(r->started, started, sizeof(started));
	bind_id(s, 1, run);
	bind_id(s, 2, worker);
	bind_text(s, 3, sweep);
	bind_text(s, 4, params);
	bind_text(s, 5, r->started > 0 ? started : NULL);
	bind_num(s, 6, sum.median);
	bind_num(s, 7, sum.noise);
	sqlite3_bind_int(s, 8, r->nsamples);
	bind_text(s, 9, r->status == RESULT_OK ? NULL : r->error ? r->error : result_status_name[r->status]);
	if (store_step(st, s))
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

/* ---- ad-hoc queries ---- */

int store_query(struct store *st, const char *sql, const char *const *binds, int nbind, int readonly,
		int (*fn)(const struct store_row *, void *), void *data)
{
	sqlite3_stmt *s = NULL;
	const char *tail;
	const char **names = NULL, **text = NULL;
	enum store_type *types = NULL;
	double *num = NULL;
	struct store_row row;
	int ret = -1, rc, ncol, nparam, stop;

	if (store_settle(st))
		return -1;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, &tail))
		return store_sqlerr(st);
	if (!s)
		return error("sql error: no statement in '%s'", sql);
	tail += strspn(tail, " \t\r\n;");
	if (*tail) {
		error("sql error: one statement at a time (extra text: '%.40s')", tail);
		goto out;
	}
	if (readonly && !sqlite3_stmt_readonly(s)) {
		error("sql error: the statement would write to the database; "
		      "only read-only queries are allowed");
		goto out;
	}
	nparam = sqlite3_bind_parameter_count(s);
	if (nbind != nparam) {
		error("sql error: the statement has %d parameter%s, %d value%s given",
		      nparam, nparam == 1 ? "" : "s", nbind, nbind == 1 ? "" : "s");
		goto out;
	}
	for (int i = 0; i < nbind; i++)
		bind_text(s, i + 1, binds[i]);
	ncol = sqlite3_column_count(s);
	names = xcalloc(ncol + 1, sizeof(*names));
	text = xcalloc(ncol + 1, sizeof(*text));
	types = xcalloc(ncol + 1, sizeof(*types));
	num = xcalloc(ncol + 1, sizeof(*num));
	for (int i = 0; i < ncol; i++)
		names[i] = sqlite3_column_name(s, i);
	row.ncol = ncol;
	row.names = names;
	row.text = text;
	row.types = types;
	row.num = num;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			/* The number first: reading the text of a number adds a text form, which is fine;
			 * the other order could invalidate the text pointer. */
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				types[i] = STORE_INT;
				num[i] = (double)sqlite3_column_int64(s, i);
				break;
			case SQLITE_FLOAT:
				types[i] = STORE_FLOAT;
				num[i] = sqlite3_column_double(s, i);
				break;
			case SQLITE_TEXT:
				types[i] = STORE_TEXT;
				num[i] = NAN;
				break;
			case SQLITE_BLOB:
				types[i] = STORE_BLOB;
				num[i] = NAN;
				break;
			default:
				types[i] = STORE_NULL;
				num[i] = NAN;
				break;
			}
			text[i] = types[i] == STORE_NULL ? NULL : (const char *)sqlite3_column_text(s, i);
		}
		if (fn && (stop = fn(&row, data))) {
			ret = stop;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		store_sqlerr(st);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(s);
	free(names);
	free(text);
	free(types);
	free(num);
	return ret;
}

/* --- snapshot --- */

/* The first column of the one row of sql on db, into buf; -1 when it fails. */
static int snapshot_text(sqlite3 *db, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *s;
	int ret = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)) {
		snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
		ret = 0;
	}
	sqlite3_finalize(s);
	return ret;
}

int store_snapshot(const char *path, const char *out)
{
	struct store *st = NULL;
	sqlite3 *copy = NULL;
	sqlite3_stmt *s = NULL;
	char mode[32] = "", check[256] = "";
	int ret = -1, made = 0;

	if (!access(out, F_OK))
		return error("'%s' exists: a snapshot is written to a new file", out);
	if (store_open(path, STORE_RO, &st))
		return -1;
	/* VACUUM INTO reads in one read transaction: the copy holds every transaction committed before it
	 * began and nothing of those after, while the run goes on writing (WAL readers do not block it). */
	if (sqlite3_prepare_v2(st->db, "VACUUM INTO ?1", -1, &s, NULL) != SQLITE_OK) {
		error("cannot snapshot '%s': %s", path, sqlite3_errmsg(st->db));
		goto out;
	}
	sqlite3_bind_text(s, 1, out, -1, SQLITE_TRANSIENT);
	made = 1;
	if (sqlite3_step(s) != SQLITE_DONE) {
		error("cannot snapshot '%s' into '%s': %s", path, out, sqlite3_errmsg(st->db));
		goto out;
	}
	/* One self-contained file in rollback-journal mode (no -wal beside it to carry along), checked
	 * before anyone copies it. */
	if (sqlite3_open_v2(out, &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error("cannot open the snapshot '%s': %s", out, copy ? sqlite3_errmsg(copy) : "out of memory");
		goto out;
	}
	if (snapshot_text(copy, "PRAGMA journal_mode = DELETE", mode, sizeof(mode)) || strcmp(mode, "delete")) {
		error("the snapshot '%s' stays in journal mode '%s': %s", out, mode, sqlite3_errmsg(copy));
		goto out;
	}
	if (snapshot_text(copy, "PRAGMA quick_check", check, sizeof(check)) || strcmp(check, "ok")) {
		error("the snapshot '%s' of '%s' fails its check: %s", out, path,
		      *check ? check : sqlite3_errmsg(copy));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(s);
	if (copy && sqlite3_close(copy) != SQLITE_OK && !ret)
		ret = error("cannot close the snapshot '%s'", out);
	store_close(st);
	if (ret && made)
		unlink(out);
	return ret;
}
