/* store_int.h: what the store's files share: the connection, its cached statements, bind and step helpers. */
#ifndef SWEEP_STORE_INT_H
#define SWEEP_STORE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "exitcode.h"
#include "store.h"

/*
 * The store module's files, lowest first: store_schema.c (the migration scripts), store_functions.c and
 * store_keys.c (SQL functions) and store_file.c (the database as a file: its name, lock, side files) call no
 * other store file; store.c (the connection: open, migrate, transactions, cached statements and the helpers
 * below) calls them; store_cells.c, store_results.c and store_query.c call store.c; store_merge*.c
 * (store_merge_int.h) call those. No file calls one above it.
 */

/* Statements prepared once, on first use, and kept for the life of the connection (text in store.c). */
enum store_sql {
	SQL_BEGIN, SQL_COMMIT, SQL_ROLLBACK,
	SQL_SWEEP, SQL_ADD_CELL, SQL_ADD_CELL_BULK, SQL_ADD_CELL_BULK1, SQL_REPLICATE, SQL_RUN_BEGIN, SQL_RUN_END,
	SQL_HOST,
	SQL_HOST_ID,
	SQL_WORKER, SQL_WORKER_ID, SQL_PENDING, SQL_MARK_RUNNING, SQL_MARK_SENT,
	SQL_OK_RESULT, SQL_RESULT, SQL_SAMPLE, SQL_SAMPLE_USAGE, SQL_METRIC, SQL_ITEM, SQL_CELL_OK, SQL_CELL_RETRY,
	SQL_CELL_QUARANTINE,
	SQL_CONTROL, SQL_PLAN_KEY, SQL_COUNT
};

/*
 * Bulk planning. A million cells inserted one at a time into a table with a unique index on random keys
 * spend most of their time in that index. So when a transaction starts adding cells to an empty cells
 * table, cells_key is dropped, each new key is checked against a set of the 64-bit hashes of the keys
 * added so far, and the index is rebuilt in one sort before any other statement runs (store_settle):
 * about 40% faster. The trigger that counts an inserted cell goes too (the schema's store_schema_bulk: a
 * third of a plan's time); the cells added are tallied here by sweep, replica and state and written into
 * cell_counts when it is made again. cells_ord stays: its entries come in order, at its end. A hash seen
 * before (a duplicate key, or a collision) ends bulk mode first, so *added stays exact. Entered by
 * store_add_cell (store_cells.c); ended by store_settle and the end of the transaction (store.c).
 */
enum bulk_state { BULK_UNTRIED, BULK_ON, BULK_OFF };
struct bulk_tally {
	char *sweep, *replica, *state;
	uint64_t n;
};
#define BULK_ROWS 64                   /* cells a bulk INSERT writes at once */
struct store_bulk {
	enum bulk_state state;         /* for the current transaction */
	uint64_t expect;               /* cells the plan adds (store_begin_plan): the set's size at once */
	uint64_t *set;                 /* open addressing, 0 marks a free slot; at most 3/4 full */
	size_t cap, n;
	struct bulk_tally *tally;      /* the cells added, by sweep, replica and state */
	size_t ntally, alloc_tally;
	/* Cells waiting for the next INSERT of BULK_ROWS rows (one statement a cell cost a third more):
	 * their text values back to back in text, each at its offset. */
	struct strbuf text;
	size_t at[BULK_ROWS][5];       /* sweep, key, params, replica, state */
	int64_t num[BULK_ROWS][2];     /* pass, ord */
	int nrows;
};

/* cells.flight, as SQL text (a statement is written with them: "flight = " FLIGHT_SENT): where a cell is
 * between the master and a worker. */
#define FLIGHT_NONE "0"        /* with no worker */
#define FLIGHT_SENT "1"        /* sent to a worker (running, or prefetched behind its running cell) */
#define FLIGHT_SUSPECT "2"     /* in flight when a job died: it runs alone next (store_recover) */

/* A run's dispatch: the cells the store noted (loaded or in flight), its counts' deltas (store_dispatch.c),
 * by the cell's state as cell_counts counts it. */
enum count_state { COUNT_PLANNED, COUNT_RUNNING, COUNT_OK, COUNT_QUARANTINED };
struct flight_cell {
	int64_t id;                    /* 0: a free slot */
	int pair;
};
struct flight_pair {
	char *sweep, *replica;
	int64_t delta[4];              /* by enum count_state, in the current transaction */
};
struct store_flight {
	int on;                        /* dispatch mode (store_dispatching) */
	int unsure;                    /* a transaction was rolled back since: the cells noted may be out of date */
	struct flight_cell *cells;     /* open addressing on id, at most 3/4 full */
	size_t cap, n;
	struct flight_pair *pairs;
	size_t npairs, alloc_pairs;
};

/* What the guard of typed SQL refused last ("the function fts3_tokenizer()"), said by store_sqlerr. */
struct store_denied {
	char what[96];
};

/* One connection, used by one thread at a time (opened with SQLITE_OPEN_NOMUTEX). store_close frees
 * everything it holds. */
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
	int plan_keys;                 /* temp.plan_keys is being filled (store_plan_key) */
	char *real;                    /* a writer's path with every link followed (store_file_real) */
	int file_fd;                   /* the database file itself, opened before SQLite opens it and closed
					* after: it holds the writer lock (store_lock); -1 when not open */
	int note_fd;                   /* the note beside it, NAME-writer (store_lock), -1 when not held */
	enum { GONE_NOT, GONE_MOVED, GONE_LOST } gone;   /* the writer's file was moved away (store_watch),
					* or has no name left: GONE_LOST is written no more, GONE_MOVED only while
					* no file has its old name (store_begin) */
	double watched;                /* when store_watch last looked (now_mono) */
	struct store_denied denied;    /* STORE_SQL: what the guard refused last */
	int interruptible;             /* store_interruptible: an interrupt stops a statement */
	double limit;                  /* store_time_limit: seconds a read may take (0: no limit) */
	double deadline;               /* while a read runs under the limit: when it is stopped (now_mono) */
	int timed_out;                 /* the last statement was stopped by the limit */
	int wal_after;                 /* this transaction left WAL for a rollback journal (store_begin_plan) */
	struct store_flight flight;    /* store_dispatching: no triggers, the store counts cells itself */
	struct store_order {           /* the collations of store_order_text, for store_open_twin */
		char *name, **v;
		size_t n;
	} *orders;
	size_t norders;
	sqlite3_stmt *stmt[SQL_COUNT];
};

/* --- store.c --- */

/* A read under the time limit (store_time_limit) begins and ends: the limit counts from its start. */
void store_read_start(struct store *st);
void store_read_end(struct store *st);
/* error("sql error: <SQLite's message>"); returns -1. */
int store_sqlerr(struct store *st);
/* A cell added in bulk mode: written with the next BULK_ROWS, or by store_settle; an error of the INSERT
 * comes from the call that writes it. 0, or -1 after error(). */
int store_bulk_row(struct store *st, const char *sweep, const char *key, const char *params, int pass,
		   const char *replica, uint64_t ord, const char *state);
/* End bulk mode (rebuild cells_key): every statement but a bulk insert needs it first. 0, or -1 after
 * error(). */
int store_settle(struct store *st);
/* Forget the bulk mode's rows, tallies and key set, and leave it in state. */
void store_bulk_reset(struct store *st, enum bulk_state state);
/* The cached statement, prepared on first use (after store_settle); NULL after error(). */
sqlite3_stmt *store_stmt(struct store *st, enum store_sql which);
/* Bind text (NULL binds NULL; bound SQLITE_STATIC: v must stay valid until the statement is stepped), a
 * number (NaN binds NULL), an id (0 or less binds NULL). */
void store_bind_text(sqlite3_stmt *s, int i, const char *v);
void store_bind_num(sqlite3_stmt *s, int i, double v);
void store_bind_id(sqlite3_stmt *s, int i, int64_t id);
/* Step a bound statement to its end (rows ignored) and reset it; 0, or -1 after error(). */
int store_step(struct store *st, sqlite3_stmt *s);
/* Step a bound statement expected to give at most one row: *found, and the integers of its first ncol
 * columns (NULL reads as 0). Resets it. 0, or -1 after error(). */
int store_step_row(struct store *st, sqlite3_stmt *s, int *found, int64_t *col, int ncol);
/* The kind of failure (exitcode.h) of db's last error: FAIL_NOT_SWEEP for SQLITE_NOTADB (a text file),
 * FAIL_CORRUPT for SQLITE_CORRUPT (a damaged database), FAIL_IO for any other. */
static inline int store_fail(sqlite3 *db)
{
	/* Inline: store.c, store_stmt.c and store_schema.c each ask it, and a function in one of them would
	 * make a loop of calls between them. */
	switch (sqlite3_errcode(db) & 0xff) {
	case SQLITE_NOTADB:
		return FAIL_NOT_SWEEP;
	case SQLITE_CORRUPT:
		return FAIL_CORRUPT;
	default:
		return FAIL_IO;
	}
}
/* The integer value of a one-row statement (a PRAGMA); -1 without a message when it fails. */
int store_int(struct store *st, const char *sql, int64_t *out);
/* The wall-clock time now, as stored (ISO 8601). */
void store_now(char *buf, size_t n);

/* --- store_results.c --- */

/* The tables of Slurm jobs (CREATE ... IF NOT EXISTS): slurm.c's through store_slurm_tables, and merge's. */
extern const char store_slurm_schema[];
/* --- store_dispatch.c (each a no-op outside dispatch mode) --- */

/* Note a cell loaded for the run under its sweep and replica. */
void store_flight_note(struct store *st, int64_t cell, const char *sweep, const char *replica);
/* The cell went from one state to another (its pair read when it was not noted); done: it left flight.
 * Outside a transaction the counts are written at once. 0, or -1 after error(). */
int store_flight_move(struct store *st, int64_t cell, enum count_state from, enum count_state to, int done);
/* n cells of sweep and replica went from one state to another, in the current transaction. */
void store_flight_count(struct store *st, const char *sweep, const char *replica, enum count_state from,
			enum count_state to, int64_t n);
/* fn for each cell noted (fn may take cells out: store_flight_move with done); stops at fn's non-zero,
 * which it returns. */
int store_flight_each(struct store *st, int (*fn)(struct store *, int64_t, void *), void *data);
/* Write the transaction's deltas into cell_counts (before its commit); drop them (its rollback). */
int store_flight_flush(struct store *st);
void store_flight_drop(struct store *st);
void store_flight_release(struct store_flight *f);

/* --- store_schema.c --- */

/* store_schema_migrations[i] takes a database from user_version i to i + 1; store_schema_version()
 * scripts in all. */
extern const char *const store_schema_migrations[];
/* store_schema_notes[i]: what migration i says it did (both NULL: nothing). */
struct store_schema_note {
	const char *count_sql;     /* run before the script: one integer */
	const char *fmt;           /* the message, with one %lld for that integer */
};
extern const struct store_schema_note store_schema_notes[];
/* The triggers of the schema (name and the exact text sqlite_master holds), NULL-terminated. */
struct store_schema_trigger {
	const char *name, *sql;
};
extern const struct store_schema_trigger store_schema_triggers[];
/* The schema objects bulk planning drops and makes again (type, name, the statement that makes it),
 * NULL-terminated. */
struct store_schema_object {
	const char *type, *name, *sql;
};
extern const struct store_schema_object store_schema_bulk[];
/* The names of the schema's tables, NULL-terminated. */
extern const char *const store_schema_tables[];
/* Refuse (FAIL_NOT_SWEEP after error() naming path and the object) a database where one of the schema's
 * tables is a view or a virtual table: its SQL would run on every read (a recursive view never ends); 0
 * when not, store_fail(db) when SQLite fails. */
int store_schema_check_kinds(sqlite3 *db, const char *path);

/* --- store_functions.c --- */

/* Register the SQL functions on db; 0, or -1 after error(). */
int store_functions_register(sqlite3 *db);
/* Register sweep_param and sweep_group (store_keys.c) on db; 0, or -1 after error(). */
int store_keys_register(sqlite3 *db);
/* Guard db for SQL a person typed (STORE_SQL): SQLite's defensive settings, and an authorizer that allows
 * only the functions and PRAGMAs on its lists and no ATTACH, noting a refusal in *den (which must live as
 * long as db). 0, or -1 after error(). */
int store_functions_guard(sqlite3 *db, struct store_denied *den);

/* --- store_file.c --- */

/* The name path has with every symbolic link followed (of its folder when the file does not exist yet;
 * a link to a missing file is refused); *real is the caller's to free. 0, or after error() FAIL_MISSING
 * (the link's file or the folder is missing) or FAIL_IO. */
int store_file_real(const char *path, char **real);
/* A database is written through one name: refused (-1 after error(), naming path) when the file real has
 * several (hard links), or its -wal, -shm or -journal is a link. 0 when it does not exist. */
int store_file_one_name(const char *path, const char *real);
/* The database file at path opened for its lock: a writer's read-write (made when missing, never through a
 * symbolic link), a reader's read-only; a regular file. The descriptor, or -1 with errno (EINVAL: not a
 * regular file). Close it only when this process has no SQLite connection to the file left: closing any
 * descriptor of a file drops every POSIX lock the process holds on it, SQLite's included. */
int store_file_open(const char *path, int writer);
/* After store_file_open failed (errno as it left it): error() saying why path cannot be opened, and its
 * kind: FAIL_MISSING (no such file or folder), FAIL_NOT_SWEEP (a folder, not a regular file), FAIL_IO. */
int store_file_open_fail(const char *path);
/* Take the writer lock on fd, the file real (path as given) opened by store_file_open, and write the note
 * beside it (NAME-writer: who writes, the reserve) into *note. 0, or after error(): FAIL_BUSY when
 * another process holds it (the message names it), FAIL_IO when it cannot be taken (the file no longer at
 * real, the note). */
int store_file_lock(const char *path, const char *real, int fd, const char *what, int *note);
/* Whether a writer holds the lock of fd, the file real (1) or not (0); -1 when the test fails or no
 * writer is known to have written it (no note beside it: a snapshot). who (n bytes) gets the holder its
 * note names ("host H pid P since T: COMMAND", untrusted text), "" when not known. */
int store_file_writer(int fd, const char *real, char *who, size_t n);
/* The file a writer of this process had at real went away (moved, replaced, deleted): store_remove_files
 * leaves what has that name now. */
void store_file_gone(const char *real);
/* Whether fd is no longer the file at real (1: moved, replaced or deleted) or still is (0), and where it
 * is now into where (n bytes; "" when it has no name left or it cannot be told). */
int store_file_moved(int fd, const char *real, char *where, size_t n);

#endif
