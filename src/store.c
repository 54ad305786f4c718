/* store.c: the results database's connection: opening and migrating it, transactions (its statements: store_stmt.c). */
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

/* Forget the cached worker ids: a rollback may have removed rows they name. */
static void store_forget_workers(struct store *st)
{
	st->wk_run = 0;
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

/* Run a fixed cached statement without parameters. */
static int store_run(struct store *st, enum store_sql which)
{
	sqlite3_stmt *s = store_stmt(st, which);

	return s ? store_step(st, s) : -1;
}

/* error() "cannot open 'path': SQLite's message" for st's last failure, and its kind (store_fail). */
static int store_open_err(struct store *st)
{
	error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
	return store_fail(st->db);
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
	store_bulk_reset(st, BULK_UNTRIED);
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
	store_bulk_reset(st, BULK_OFF);
	wal_again(st);
	return store_watch(st);
}

void store_rollback(struct store *st)
{
	if (!st->in_tx)
		return;
	/* The rollback undoes the dropped index too: no rebuild. */
	store_bulk_reset(st, BULK_OFF);
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
	int latest = store_schema_version(), ret = FAIL_IO;

	if (store_int(st, "PRAGMA user_version", &version))
		return store_open_err(st);
	if (version == latest)
		return 0;
	if (store_run(st, SQL_BEGIN))
		return (error("cannot migrate '%s'", st->path), store_fail(st->db));
	/* Read again under the write lock: another process may have migrated it meanwhile. */
	if (store_int(st, "PRAGMA user_version", &version) ||
	    store_int(st, "SELECT count(*) FROM sqlite_master", &ntables)) {
		ret = store_open_err(st);
		goto fail;
	}
	ret = FAIL_NOT_SWEEP;
	if (version > latest) {
		error("'%s' has schema version %" PRId64 ", newer than this sweep knows (%d): upgrade sweep",
		      st->path, version, latest);
		goto fail;
	}
	if (version == 0 && ntables > 0) {
		error("'%s' is an SQLite database without a sweep schema; refusing to change it", st->path);
		goto fail;
	}
	ret = FAIL_IO;
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
	if (ret == FAIL_IO)
		ret = store_fail(st->db);
	if (sqlite3_get_autocommit(st->db) == 0)
		store_run(st, SQL_ROLLBACK);
	return ret;
}

/* A read-only open accepts only a database at the current schema, with its tables: FAIL_NOT_SWEEP for
 * any other, store_fail's kind when SQLite fails. */
static int store_check_ro(struct store *st)
{
	int64_t version, ntables;
	int ret;

	if (store_int(st, "PRAGMA user_version", &version))
		return store_open_err(st);
	if (store_int(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
		      " ('sweeps', 'runs', 'cells', 'results', 'samples')", &ntables))
		return store_open_err(st);
	if (version > 0 && (ret = store_schema_check_kinds(st->db, st->path)))
		return ret;
	if (version == 0 || ntables != 5)
		error("'%s' is not a sweep database (no sweep schema)", st->path);
	else if (version > store_schema_version())
		error("'%s' has schema version %" PRId64 ", newer than this sweep knows (%d): upgrade sweep",
		      st->path, version, store_schema_version());
	else if (version < store_schema_version())
		error("'%s' has schema version %" PRId64 " (current %d): open it read-write once (sweep run) "
		      "to migrate it", st->path, version, store_schema_version());
	else
		return 0;
	return FAIL_NOT_SWEEP;
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

/* A reader's large sorts (a report's GROUP BY over a million results) use up to 4 of the CPUs: on 2 cores
 * tests/bench_report.sh's reports took 0.81-0.93 of their time with 2 threads, and no less with 4. */
static int store_sort_threads(struct store *st)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char sql[40];

	snprintf(sql, sizeof(sql), "PRAGMA threads = %ld", cpus < 1 ? 1 : cpus > 4 ? 4 : cpus);
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL))
		return error("cannot open '%s': %s", st->path, sqlite3_errmsg(st->db));
	return 0;
}

/*
 * What every connection gets, st's own and its twins' (store_open_twin): the busy wait, the progress check
 * (interrupts, the time limit), a reader's defenses and sort threads, foreign keys and sweep's SQL functions.
 * FAIL_OK, or the failure's kind after error(). Nothing here reads the file.
 */
static int store_setup(struct store *st)
{
	sqlite3_busy_timeout(st->db, 10000);
	sqlite3_progress_handler(st->db, 10000, store_progress, st);
	if (st->readonly && (store_defensive(st) || store_sort_threads(st)))
		return FAIL_IO;
	if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) ||
	    store_functions_register(st->db) || store_keys_register(st->db))
		return store_open_err(st);
	return FAIL_OK;
}

int store_open(const char *path, enum store_mode mode, struct store **out)
{
	struct store *st = xcalloc(1, sizeof(*st));
	int flags = SQLITE_OPEN_NOMUTEX;
	char *real = NULL;
	struct stat sb;
	int64_t dummy;
	int ret = FAIL_IO;

	*out = NULL;
	st->file_fd = st->note_fd = -1;
	st->path = xstrdup(path);
	st->readonly = mode != STORE_RW;
	if (sqlite3_libversion_number() < 3024000) {
		error("sqlite %s is too old: sweep needs 3.24 or newer", sqlite3_libversion());
		goto fail;
	}
	/* No count of SQLite's memory: it takes a global lock at every allocation, some 5 % of a report on a
	 * million results, and nothing reads it. Only before SQLite starts (the first open); refused after. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* SQLite's "unable to open database file" does not say why; errno does. */
	if (st->readonly && access(path, R_OK)) {
		ret = errno == ENOENT || errno == ENOTDIR ? FAIL_MISSING : FAIL_IO;
		error("cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (st->readonly && !stat(path, &sb) && sb.st_nlink > 1)
		warning("'%s' has %ju names (hard links): SQLite keeps a write-ahead log per name, so what is "
			"written through another name may not show here until its writer ends", path,
			(uintmax_t)sb.st_nlink);
	/* A writer opens the file by the one name its lock follows, so that SQLite's -wal and -shm are
	 * that name's whatever links led here; a file with two names has two logs and is refused. */
	if (!st->readonly && ((ret = store_file_real(path, &real)) || (ret = store_file_one_name(path, real))))
		goto fail;
	/* The descriptor that will hold the writer lock (a reader's, to test it), open before SQLite's and
	 * closed after (store_file_open says why). */
	st->file_fd = store_file_open(real ? real : path, !st->readonly);
	if (!st->readonly && st->file_fd < 0) {
		ret = store_file_open_fail(path);
		goto fail;
	}
	flags |= st->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(real ? real : path, &st->db, flags, NULL)) {
		error("cannot open '%s': %s", path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto fail;
	}
	if ((ret = store_setup(st)))
		goto fail;
	/* A reader's statements are stopped past a limit: what a foreign file's schema runs cannot hang it. */
	if (st->readonly)
		store_time_limit(st, mode == STORE_SQL ? STORE_SQL_LIMIT : STORE_READ_LIMIT);
	/* The first read finds out whether the file is SQLite at all ("file is not a database"). */
	if (store_int(st, "PRAGMA user_version", &dummy)) {
		ret = store_open_err(st);
		goto fail;
	}
	if (st->readonly) {
		store_read_start(st);
		ret = store_check_ro(st);
		store_read_end(st);
		if (ret || (mode == STORE_SQL && (ret = store_functions_guard(st->db, &st->denied))))
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
			ret = store_open_err(st);
			goto fail;
		}
		if ((ret = store_migrate(st)) || (ret = store_schema_check_kinds(st->db, path)))
			goto fail;
	}
	st->real = real;
	*out = st;
	return 0;
fail:
	free(real);
	store_close(st);
	return ret;
}

int store_open_twin(const struct store *st, struct store **out)
{
	struct store *tw = xcalloc(1, sizeof(*tw));

	*out = NULL;
	tw->file_fd = tw->note_fd = -1;
	tw->path = xstrdup(st->path);
	tw->readonly = 1;
	tw->limit = st->limit;
	tw->interruptible = st->interruptible;
	/* No descriptor of its own on the file: closing one would drop the process's POSIX locks, st's
	 * among them. The same settings, functions and collations as st's. */
	if (sqlite3_open_v2(st->real ? st->real : st->path, &tw->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL)) {
		error("cannot open '%s': %s", st->path, tw->db ? sqlite3_errmsg(tw->db) : "out of memory");
		store_close(tw);
		return FAIL_IO;
	}
	if (store_setup(tw)) {
		store_close(tw);
		return FAIL_IO;
	}
	for (size_t i = 0; i < st->norders; i++)
		if (store_order_text(tw, st->orders[i].name, (const char *const *)st->orders[i].v,
				     st->orders[i].n)) {
			store_close(tw);
			return FAIL_IO;
		}
	*out = tw;
	return FAIL_OK;
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
	int moved = 0, ret;

	if (st->readonly)
		BUG("store_lock: a read-only store");
	if (st->note_fd >= 0)
		return 0;
	if ((ret = store_file_lock(st->path, st->real, st->file_fd, what, &st->note_fd)))
		return ret;
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
	store_bulk_reset(st, BULK_OFF);
	store_flight_release(&st->flight);
	for (size_t i = 0; i < st->norders; i++) {
		for (size_t k = 0; k < st->orders[i].n; k++)
			free(st->orders[i].v[k]);
		free(st->orders[i].v);
		free(st->orders[i].name);
	}
	free(st->orders);
	free(st->wk_id);
	free(st->path);
	free(st);
}
