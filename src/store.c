/* store.c: the results database's connection: opening and migrating it, transactions, cached statements. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "interrupt.h"
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
		" launches, warmup, cpu_user, cpu_sys, peak_rss, ci_lo, ci_hi, precise, settled) VALUES(?1, ?2, ?3,"
		" ?4, (SELECT attempts FROM cells WHERE id = ?1), ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32)",
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

/* Forget the cached worker ids: a rollback may have removed rows they name. */
static void store_forget_workers(struct store *st)
{
	st->wk_run = 0;
}

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

/* Set the journal mode (outside a transaction): 1 when the database has it now, 0 when not (a reader
 * open keeps a WAL database in WAL). */
static int journal_mode(struct store *st, const char *mode)
{
	char sql[40];
	sqlite3_stmt *s;
	int ok = 0;

	snprintf(sql, sizeof(sql), "PRAGMA journal_mode = %s", mode);
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK) {
		ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) &&
		     !strcasecmp((const char *)sqlite3_column_text(s, 0), mode);
		sqlite3_finalize(s);
	}
	return ok;
}

/* After the transaction of a first plan: back to WAL (store_open says so again if it cannot). */
static void wal_again(struct store *st)
{
	if (st->wal_after && !st->in_tx) {
		st->wal_after = 0;
		journal_mode(st, "WAL");
	}
}

/* Called every 10000 steps of SQLite's machine (a few times a millisecond): nonzero stops the statement. */
static int store_progress(void *data)
{
	struct store *st = data;

	if (st->interruptible && interrupt_signal())
		return 1;
	if (st->deadline > 0 && now_mono() > st->deadline)
		return st->timed_out = 1;
	return 0;
}

void store_interruptible(struct store *st, int on)
{
	st->interruptible = on;
}

void store_time_limit(struct store *st, double seconds)
{
	st->limit = seconds > 0 ? seconds : 0;
}

void store_read_start(struct store *st)
{
	st->timed_out = 0;
	st->deadline = st->limit > 0 ? now_mono() + st->limit : 0;
}

void store_read_end(struct store *st)
{
	st->deadline = 0;
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

static void bulk_reset(struct store *st, enum bulk_state state)
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
	bulk_reset(st, BULK_OFF);
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

/* Run a fixed cached statement without parameters. */
static int store_run(struct store *st, enum store_sql which)
{
	sqlite3_stmt *s = store_stmt(st, which);

	return s ? store_step(st, s) : -1;
}

/* The integer value of a one-row statement (a PRAGMA); -1 without a message when it fails. */
int store_int(struct store *st, const char *sql, int64_t *out)
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

void store_now(char *buf, size_t n)
{
	iso_time(now_wall(), buf, n);
}

static int store_gone_writable(const struct store *st);

int store_begin(struct store *st)
{
	if (st->in_tx)
		BUG("store_begin: a transaction is already open");
	if (store_gone_writable(st))
		return -1;
	if (store_run(st, SQL_BEGIN))
		return -1;
	st->in_tx = 1;
	bulk_reset(st, BULK_UNTRIED);
	return 0;
}

int store_dispatching(struct store *st, int on)
{
	if (st->in_tx)
		BUG("store_dispatching: inside a transaction (SQLite would ignore it)");
	if (sqlite3_exec(st->db, on ? "PRAGMA foreign_keys = OFF" : "PRAGMA foreign_keys = ON", NULL, NULL, NULL) ||
	    sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, !on, NULL))
		return store_sqlerr(st);
	store_flight_release(&st->flight);
	st->flight.on = on;
	return 0;
}

int store_commit(struct store *st)
{
	if (!st->in_tx)
		BUG("store_commit: no transaction");
	/* A failed COMMIT usually leaves the transaction open (the caller may retry or roll back); after
	 * an I/O error SQLite may have rolled it back itself. */
	if (store_flight_flush(st) || store_run(st, SQL_COMMIT)) {
		if (sqlite3_get_autocommit(st->db)) {
			st->in_tx = 0;
			store_forget_workers(st);
			/* rolled back: what the dispatch noted may be out of date (a full disk does this) */
			store_flight_drop(st);
		}
		return -1;
	}
	st->in_tx = 0;
	bulk_reset(st, BULK_OFF);
	wal_again(st);
	return store_watch(st);
}

void store_rollback(struct store *st)
{
	if (!st->in_tx)
		return;
	/* The rollback undoes the dropped index too: no rebuild. */
	bulk_reset(st, BULK_OFF);
	store_flight_drop(st);
	store_forget_workers(st);
	if (sqlite3_get_autocommit(st->db) == 0)
		store_run(st, SQL_ROLLBACK);
	st->in_tx = 0;
	wal_again(st);
}


int store_begin_plan(struct store *st, uint64_t cells)
{
	int64_t any = 1;

	if (st->in_tx)
		BUG("store_begin_plan: a transaction is already open");
	if (!store_int(st, "SELECT EXISTS (SELECT 1 FROM cells)", &any) && !any && journal_mode(st, "DELETE"))
		st->wal_after = 1;
	if (store_begin(st)) {
		wal_again(st);
		return -1;
	}
	st->bulk.expect = cells;
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
		const struct store_schema_note *note = &store_schema_notes[v];
		int64_t n = 0;

		/* A new database has nothing to say. */
		if (note->fmt && version > 0 && store_int(st, note->count_sql, &n)) {
			error("cannot migrate '%s' to schema version %" PRId64 ": %s", st->path, v + 1,
			      sqlite3_errmsg(st->db));
			goto fail;
		}
		if (sqlite3_exec(st->db, store_schema_migrations[v], NULL, NULL, &msg)) {
			error("cannot migrate '%s' to schema version %" PRId64 ": %s", st->path, v + 1, msg);
			sqlite3_free(msg);
			goto fail;
		}
		/* A script may have edited sqlite_master (writable_schema): a new schema cookie makes every
		 * connection, this one included, read the schema again, the next script too (an ALTER TABLE
		 * on a schema read before such an edit writes its column at the wrong place). */
		if (store_int(st, "PRAGMA schema_version", &ntables)) {
			error("cannot migrate '%s': %s", st->path, sqlite3_errmsg(st->db));
			goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA schema_version = %" PRId64, ntables + 1);
		if (sqlite3_exec(st->db, sql, NULL, NULL, NULL)) {
			error("cannot migrate '%s': %s", st->path, sqlite3_errmsg(st->db));
			goto fail;
		}
		if (note->fmt && version > 0) {
			fprintf(stderr, "sweep: '%s': schema version %" PRId64 " -> %" PRId64 ": ", st->path, v,
				v + 1);
			fprintf(stderr, note->fmt, (long long)n);
			fputc('\n', stderr);
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
	if (version > 0 && store_schema_check_kinds(st->db, st->path))
		return -1;
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

/*
 * A reader trusts nothing in the file: SQLite's defensive settings (no writable schema, no shadow tables),
 * the schema's own SQL allowed only innocuous functions, no extension loading, fts3_tokenizer's
 * two-argument form off, every cell's size checked as read, no memory map of the file.
 */
static int store_defensive(struct store *st)
{
	if (sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) ||
	    sqlite3_db_config(st->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) ||
	    sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) ||
	    sqlite3_db_config(st->db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL) ||
	    sqlite3_exec(st->db, "PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0", NULL, NULL, NULL))
		return error("cannot open '%s' defensively (SQLite %s; 3.31 or newer is needed): %s", st->path,
			     sqlite3_libversion(), sqlite3_errmsg(st->db));
	return 0;
}

int store_open(const char *path, enum store_mode mode, struct store **out)
{
	struct store *st = xcalloc(1, sizeof(*st));
	int flags = SQLITE_OPEN_NOMUTEX;
	char *real = NULL;
	struct stat sb;
	int64_t dummy;
	int ret;

	*out = NULL;
	st->file_fd = st->note_fd = -1;
	st->path = xstrdup(path);
	st->readonly = mode != STORE_RW;
	if (sqlite3_libversion_number() < 3024000) {
		error("sqlite %s is too old: sweep needs 3.24 or newer", sqlite3_libversion());
		goto fail;
	}
	/* SQLite's "unable to open database file" does not say why; errno does. */
	if (st->readonly && access(path, R_OK)) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (st->readonly && !stat(path, &sb) && sb.st_nlink > 1)
		warning("'%s' has %ju names (hard links): SQLite keeps a write-ahead log per name, so what is "
			"written through another name may not show here until its writer ends", path,
			(uintmax_t)sb.st_nlink);
	/* A writer opens the file by the one name its lock follows, so that SQLite's -wal and -shm are
	 * that name's whatever links led here; a file with two names has two logs and is refused. */
	if (!st->readonly && (store_file_real(path, &real) || store_file_one_name(path, real)))
		goto fail;
	/* The descriptor that will hold the writer lock (a reader's, to test it), open before SQLite's and
	 * closed after (store_file_open says why). */
	st->file_fd = store_file_open(real ? real : path, !st->readonly);
	if (!st->readonly && st->file_fd < 0) {
		error("cannot open '%s': %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		goto fail;
	}
	flags |= st->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(real ? real : path, &st->db, flags, NULL)) {
		error("cannot open '%s': %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 10000);
	sqlite3_progress_handler(st->db, 10000, store_progress, st);
	if (st->readonly && store_defensive(st))
		goto fail;
	/* A reader's statements are stopped past a limit: what a foreign file's schema runs cannot hang it. */
	if (st->readonly)
		store_time_limit(st, mode == STORE_SQL ? STORE_SQL_LIMIT : STORE_READ_LIMIT);
	/* The first read finds out whether the file is SQLite at all ("file is not a database"). */
	if (store_int(st, "PRAGMA user_version", &dummy)) {
		error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) ||
	    store_functions_register(st->db)) {
		error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (st->readonly) {
		store_read_start(st);
		ret = store_check_ro(st);
		store_read_end(st);
		if (ret || (mode == STORE_SQL && store_functions_guard(st->db, &st->denied)))
			goto fail;
	} else {
		/* WAL lets reports read while a run writes. FULL syncs the log at every commit: a result
		 * the run reports as kept is on the disk, and survives a power cut (NORMAL syncs only at
		 * checkpoints: a cut lost every result since the last). 64 MiB of page cache (the default
		 * is 2) keeps a large plan in memory until its commit. */
		if (!journal_mode(st, "WAL"))
			warning("'%s': cannot use WAL; readers will wait for writers", path);
		if (sqlite3_exec(st->db, "PRAGMA synchronous = FULL; PRAGMA cache_size = -65536", NULL, NULL,
				 NULL)) {
			error("cannot open '%s': %s", path, sqlite3_errmsg(st->db));
			goto fail;
		}
		if (store_migrate(st) || store_schema_check_kinds(st->db, path))
			goto fail;
	}
	st->real = real;
	*out = st;
	return 0;
fail:
	free(real);
	store_close(st);
	return -1;
}

/* ---- taking the writer lock (its file: store_file.c) ---- */

/* One statement with text binds, stepped to its end; *changes its rows changed. */
static int store_exec(struct store *st, const char *sql, const char *bind, int64_t *changes)
{
	sqlite3_stmt *s;
	int ret;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
		return store_sqlerr(st);
	if (bind)
		store_bind_text(s, 1, bind);
	ret = store_step(st, s);
	sqlite3_finalize(s);
	*changes = ret ? 0 : sqlite3_changes(st->db);
	return ret;
}

int store_lock(struct store *st, const char *what)
{
	int64_t n = 0, first = 0;
	char now[32];
	int moved = 0;

	if (st->readonly)
		BUG("store_lock: a read-only store");
	if (st->note_fd >= 0)
		return 0;
	if (store_file_lock(st->path, st->real, st->file_fd, what, &st->note_fd))
		return -1;
	/* SQLite's descriptor is of the file locked too: both opened by the name that names it now. */
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) || moved) {
		error("'%s' was moved or replaced while it was being opened: not writing it", st->path);
		goto unlock;
	}
	/* Every writer holds the lock: a run still 'running' now ran in a process that is gone. */
	store_now(now, sizeof(now));
	if (store_begin(st) || store_settle(st) ||
	    store_int(st, "SELECT coalesce(min(id), 0) FROM runs WHERE status = 'running'", &first) ||
	    store_exec(st, "UPDATE runs SET status = 'killed', finished = coalesce(finished, ?1)"
		       " WHERE status = 'running'", now, &n))
		goto fail;
	if (n)
		fprintf(stderr, "sweep: '%s': %lld run%s (from run %lld) left 'running' by a sweep that is gone: "
			"recorded as 'killed'\n", st->path, (long long)n, n == 1 ? "" : "s", (long long)first);
	if (store_exec(st, "UPDATE cells SET state = 'ok', error = NULL, flight = " FLIGHT_NONE
		       " WHERE state IN ('planned', 'running', 'quarantined')"
		       " AND id IN (SELECT cell FROM results WHERE status = 'ok')", NULL, &n))
		goto fail;
	if (n)
		fprintf(stderr, "sweep: '%s': %lld cell%s with an ok result were not marked ok (left by an older "
			"sweep): healed\n", st->path, (long long)n, n == 1 ? "" : "s");
	return store_commit(st);
fail:
	store_rollback(st);
unlock:
	/* The lock goes with the descriptor: closed only with the connection (store_close). */
	store_unlock_fd(st->note_fd);
	st->note_fd = -1;
	return -1;
}

int store_writer_alive(const struct store *st)
{
	char *real;
	int alive;

	if (st->file_fd < 0)
		return -1;
	/* The note is beside the file itself (a reader may have come by a link). */
	real = st->real ? NULL : realpath(st->path, NULL);
	alive = store_file_writer(st->file_fd, st->real ? st->real : real ? real : st->path, NULL, 0);
	free(real);
	return alive;
}

/* ---- a writer whose file is gone (store_watch) ---- */

/* How often store_watch looks, in seconds: well within the second a user may wait. */
#define WATCH_EVERY 0.2

/*
 * The file moved away keeps every commit: checkpointed into it (SQLite does not at the close of a moved
 * file, and its -wal, by the old name, would meet whatever file takes that name next). A file with no
 * name left (deleted, or replaced by another) is copied beside its old name. The message says where.
 */
static int store_gone(struct store *st, const char *where)
{
	char *copy;
	sqlite3_stmt *s;
	int ok;

	st->gone = *where ? GONE_MOVED : GONE_LOST;
	store_file_gone(st->real);
	ok = sqlite3_wal_checkpoint_v2(st->db, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) == SQLITE_OK;
	if (*where)
		return error("'%s' was moved or renamed to '%s' while this sweep wrote it: stopped writing; "
			     "every result it had committed is in '%s'%s: use that name to go on (for a run, the "
			     "same command with --db '%s')", st->path, where, where,
			     ok ? " (checkpointed)" : ", unless SQLite says otherwise above", where);
	copy = xasprintf("%s.saved-%ld", st->real, (long)getpid());
	ok = !sqlite3_prepare_v2(st->db, "VACUUM INTO ?1", -1, &s, NULL);
	if (ok) {
		sqlite3_bind_text(s, 1, copy, -1, SQLITE_STATIC);
		ok = sqlite3_step(s) == SQLITE_DONE;
		sqlite3_finalize(s);
	}
	if (!ok)
		error("cannot copy it to '%s': %s", copy, sqlite3_errmsg(st->db));
	error("'%s' was deleted or replaced while this sweep wrote it: stopped writing; %s%s%s", st->path,
	      ok ? "every result it had committed is in '" : "its results are lost", ok ? copy : "",
	      ok ? "': use that file as the database to go on" : "");
	free(copy);
	return -1;
}

int store_watch(struct store *st)
{
	char where[PATH_MAX];
	double now;

	if (st->note_fd < 0 || st->in_tx || st->gone)
		return 0;
	now = now_mono();
	if (now - st->watched < WATCH_EVERY)
		return 0;
	st->watched = now;
	return store_file_moved(st->file_fd, st->real, where, sizeof(where)) ? store_gone(st, where) : 0;
}

/* Whether a file has the old name of a writer's file that moved away. */
static int old_name_taken(const struct store *st)
{
	struct stat sb;

	return !lstat(st->real, &sb) || errno != ENOENT;
}

static int store_gone_writable(const struct store *st)
{
	/* The -wal is found by the old name: a file that has it now would meet this writer's log. */
	if (st->gone == GONE_LOST || (st->gone == GONE_MOVED && old_name_taken(st)))
		return error("not writing '%s' any more: it was moved, replaced or deleted (above)", st->path);
	return 0;
}

/* What a writer whose file moved away left by the old name, when no file has that name now: its emptied
 * -wal and -shm and its note. */
static void store_gone_tidy(struct store *st)
{
	if (!st->gone || old_name_taken(st))
		return;   /* another file has the name now: they are its own */
	for (const char *const *t = (const char *const[]){ "-wal", "-shm", "-writer", NULL }; *t; t++) {
		char *p = xasprintf("%s%s", st->real, *t);

		unlink(p);
		free(p);
	}
}

const char *store_path(const struct store *st)
{
	return st->path;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	store_unlock_fd(st->note_fd);
	for (int i = 0; i < SQL_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	/* An open transaction here is abandoned work: closing rolls it back. What a writer whose file was
	 * moved wrote since (handing its cells back) goes into the file too: SQLite leaves it in the -wal. */
	if (st->db && st->gone == GONE_MOVED && !old_name_taken(st))
		sqlite3_wal_checkpoint_v2(st->db, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	if (st->db)
		sqlite3_close_v2(st->db);
	/* After SQLite's: closing a descriptor of the file drops the process's POSIX locks on it. */
	if (st->file_fd >= 0)
		close(st->file_fd);
	store_gone_tidy(st);
	free(st->real);
	bulk_reset(st, BULK_OFF);
	store_flight_release(&st->flight);
	free(st->wk_id);
	free(st->path);
	free(st);
}
