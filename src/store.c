/* store.c: the results database's connection: opening and migrating it, transactions, cached statements. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "store_int.h"
#include "util.h"

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
	[SQL_OK_RESULT] = "SELECT id FROM results WHERE cell = ?1 AND status = 'ok'",
	/* The attempt is the cell's count, read here: NULL (refused: NOT NULL) when there is no such cell. */
	[SQL_RESULT] = "INSERT INTO results(cell, run, worker, status, attempt, started, wall, n, median,"
		" mean, min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, error, stdout, stderr, stop,"
		" launches, warmup, ci_lo, ci_hi, precise, settled) VALUES(?1, ?2, ?3, ?4,"
		" (SELECT attempts FROM cells WHERE id = ?1), ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
	[SQL_SAMPLE] = "INSERT INTO samples(result, i, seconds, sm_clock) VALUES(?1, ?2, ?3, ?4)",
	[SQL_METRIC] = "INSERT OR REPLACE INTO metrics(result, name, value) VALUES(?1, ?2, ?3)",
	[SQL_ITEM] = "INSERT OR REPLACE INTO items(result, item, metric, value) VALUES(?1, ?2, ?3, ?4)",
	[SQL_CELL_OK] = "UPDATE cells SET state = 'ok', error = NULL, flight = 0 WHERE id = ?1",
	/* A cell that already has its ok result stays ok whatever a later attempt did. */
	[SQL_CELL_RETRY] = "UPDATE cells SET error = ?2, flight = 0, state = 'planned'"
		" WHERE id = ?1 AND state <> 'ok' AND attempts < ?3",
	[SQL_CELL_QUARANTINE] = "UPDATE cells SET error = ?2, flight = 0, state = 'quarantined'"
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
	return error("sql error: %s", sqlite3_errmsg(st->db));
}

static void bulk_reset(struct store *st, enum bulk_state state)
{
	free(st->bulk.set);
	memset(&st->bulk, 0, sizeof(st->bulk));
	st->bulk.state = state;
}

/* End bulk mode: rebuild cells_key. Every statement but a bulk insert needs it first. */
int store_settle(struct store *st)
{
	if (st->bulk.state != BULK_ON)
		return 0;
	bulk_reset(st, BULK_OFF);
	if (sqlite3_exec(st->db, "CREATE UNIQUE INDEX cells_key ON cells(key)", NULL, NULL, NULL))
		return store_sqlerr(st);
	return 0;
}

/* The cached statement, prepared on first use; NULL after error(). */
sqlite3_stmt *store_stmt(struct store *st, enum store_sql which)
{
	/* The temporary table of planned keys is no statement on cells: bulk planning goes on. */
	if (which != SQL_ADD_CELL_BULK && which != SQL_PLAN_KEY && store_settle(st))
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

int store_check_references(struct store *st, int on)
{
	if (st->in_tx)
		BUG("store_check_references: inside a transaction (SQLite would ignore it)");
	if (sqlite3_exec(st->db, on ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF", NULL, NULL, NULL))
		return store_sqlerr(st);
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
		 * connection, this one included, read the schema again, before the next script's ALTER TABLE
		 * writes into a table's text at offsets of the text it read before. */
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
	st->lock_fd = -1;
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
	if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) ||
	    store_functions_register(st->db)) {
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

/* ---- the writer lock ---- */

/* The holder a lock file names ("host H pid P since T: CMD"), as read; "" when empty. */
static void lock_read(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);

	buf[got > 0 ? got : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

int store_lock_path(const char *path, const char *what, int *out)
{
	char *lp = xasprintf("%s-writer", path), who[512], host[256] = "?", now[32];
	struct strbuf sb = STRBUF_INIT;
	int fd;

	*out = -1;
	fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot open the writer lock '%s': %s", lp, strerror(errno));
		free(lp);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		lock_read(fd, who, sizeof(who));
		close(fd);
		if (e == EWOULDBLOCK)
			error("'%s' is being written by another sweep (%s); one writer at a time: wait for it to end "
			      "or stop it (status, sql, report and snapshot can read it meanwhile)", path,
			      *who ? who : "which has not said who it is yet");
		else
			error("cannot lock '%s': %s", lp, strerror(e));
		free(lp);
		return -1;
	}
	/* A clean end empties the file: a name left in it is a writer that died holding the lock. */
	lock_read(fd, who, sizeof(who));
	if (*who)
		fprintf(stderr, "sweep: '%s': taking over the writer lock of a sweep that is gone (%s)\n", path, who);
	gethostname(host, sizeof(host) - 1);
	store_now(now, sizeof(now));
	sb_addf(&sb, "host %s pid %ld since %s: %s\n", host, (long)getpid(), now, what);
	if (ftruncate(fd, 0) || pwrite(fd, sb.buf, sb.len, 0) != (ssize_t)sb.len)
		warning("cannot write '%s': %s", lp, strerror(errno));
	sb_release(&sb);
	free(lp);
	*out = fd;
	return 0;
}

void store_remove_files(const char *path)
{
	static const char *const tails[] = { "", "-wal", "-shm", "-journal", "-writer" };

	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		char *p = xasprintf("%s%s", path, tails[i]);

		unlink(p);
		free(p);
	}
}

int store_writer_alive(const struct store *st)
{
	char *lp = xasprintf("%s-writer", st->path);
	int fd = open(lp, O_RDONLY | O_CLOEXEC), alive = 0;

	free(lp);
	if (fd < 0)
		return -1;   /* no lock file: a copy (a snapshot), or a database no locking sweep wrote */
	/* A shared lock is refused only while a writer holds its exclusive one; ours goes with the close. */
	alive = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return alive;
}

void store_unlock_fd(int fd)
{
	if (fd < 0)
		return;
	if (ftruncate(fd, 0))
		warning("cannot empty the writer lock file: %s", strerror(errno));
	close(fd);
}

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

	if (st->readonly)
		BUG("store_lock: a read-only store");
	if (st->lock_fd >= 0)
		return 0;
	if (store_lock_path(st->path, what, &st->lock_fd))
		return -1;
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
	if (store_exec(st, "UPDATE cells SET state = 'ok', error = NULL, flight = 0"
		       " WHERE state IN ('planned', 'running', 'quarantined')"
		       " AND id IN (SELECT cell FROM results WHERE status = 'ok')", NULL, &n))
		goto fail;
	if (n)
		fprintf(stderr, "sweep: '%s': %lld cell%s with an ok result were not marked ok (left by an older "
			"sweep): healed\n", st->path, (long long)n, n == 1 ? "" : "s");
	return store_commit(st);
fail:
	store_rollback(st);
	store_unlock_fd(st->lock_fd);
	st->lock_fd = -1;
	return -1;
}

const char *store_path(const struct store *st)
{
	return st->path;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	store_unlock_fd(st->lock_fd);
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
