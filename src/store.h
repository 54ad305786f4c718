/* store.h: the results database (the store module, src/store*.c: only its files include sqlite3.h). */
#ifndef SWEEP_STORE_H
#define SWEEP_STORE_H

#include <stdint.h>
#include <stdio.h>
#include "result.h"
#include "spec.h"

struct store;
struct strbuf;

enum store_mode {
	STORE_RW,              /* create if missing, migrate to the current schema, WAL; the file must have one
				* name (store_lock) */
	STORE_RO,              /* read-only; fails when the file is missing or not a sweep database */
	STORE_SQL              /* STORE_RO for SQL a person typed (sweep sql): SQLite's defensive settings, and
				* only the functions and PRAGMAs known to touch no memory by address and no file,
				* no ATTACH; a refusal names what was refused */
};

/*
 * The one SQL condition that marks a result (r: the alias of results in the query): its median is not
 * known to the precision its spec asked (its 95 % interval is wider, or it has none: under 6 samples, a
 * cell stopped by its timeout or max_samples first). Reports mark the values holding one and --strict
 * leaves them out; a run's closing line and status count them.
 */
#define STORE_IMPRECISE(r) "NOT " r ".precise"

/* Open path. Registers the SQL functions median, quantile, geomean, stdev, ratio_ci, median_ci and
 * ci_rel on the connection. Returns 0 and *out, or a kind of failure (exitcode.h) after error(), decided
 * where it happens, for callers to pass up unchanged: FAIL_MISSING (no such file, or folder), FAIL_NOT_SWEEP
 * (not a regular file, not SQLite, another program's SQLite, a schema newer than this sweep's or, read-only,
 * older), FAIL_CORRUPT (SQLite finds it damaged), FAIL_IO (any other). store_close(NULL) is a no-op; closing
 * with a transaction open rolls it back. A store is used by one thread at a time. STORE_RW opens the file
 * by its name with every symbolic link followed, so that SQLite's -wal and -shm are that name's. */
int store_open(const char *path, enum store_mode mode, struct store **out);
void store_close(struct store *st);
/* Another read-only connection to st's file with st's settings, functions and collations, and no descriptor
 * of its own on the file (closing one would drop the process's locks, st's among them). FAIL_IO after
 * error(). */
int store_open_twin(const struct store *st, struct store **out);
/* The path it was opened with. */
const char *store_path(const struct store *st);
int store_schema_version(void);

/* Transactions (BEGIN IMMEDIATE for writers). Nesting is a BUG. */
int store_begin(struct store *st);
/*
 * store_begin for a transaction that plans about cells cells (store_add_cell). When the database has no
 * cell yet (a first plan: bulk mode), it writes through a rollback journal instead of the WAL until it
 * ends: its pages are new, so they are written once, into the file, instead of twice (into the WAL, then
 * by the checkpoint of its commit), and readers wait for it meanwhile. (A reader already open keeps the
 * WAL: nothing changes then.)
 */
int store_begin_plan(struct store *st, uint64_t cells);
int store_commit(struct store *st);
void store_rollback(struct store *st);
/*
 * Dispatch mode, on (1) while a run hands out cells and stores their results, off (0, as every
 * connection opens); outside a transaction. Foreign-key checks are off: each row dispatch writes names
 * a cell, run, worker or result it has just read or made under the writer lock, and the six checks a
 * short cell's result costs were an eighth of the master's time (tests run PRAGMA foreign_key_check on
 * what runs leave). The triggers that keep cell_counts are off too (their program, run by every mark
 * and result, cost a third of the master's time): the store counts what its own statements change (the
 * cells store_pending loads, their marks, results and hand-backs) and writes it at each commit.
 */
int store_dispatching(struct store *st, int on);

/*
 * While on, a statement of st stops when an interrupt has come (interrupt.h): it fails (-1, nothing
 * said) and its caller rolls back, so that a long step of a run's start (a plan, a recovery, replicas)
 * ends at Ctrl-C with the database as it was. Off (as opened) while a run stores results.
 */
void store_interruptible(struct store *st, int on);

/*
 * The time a read (store_query, and the checks of a read-only open) may take, in seconds; 0 for none. A
 * read past it is stopped and fails (-1 after error() naming the database and the limit). Read-only opens
 * start with STORE_READ_LIMIT, STORE_SQL with STORE_SQL_LIMIT (sweep sql --timeout), read-write ones with
 * none.
 */
#define STORE_READ_LIMIT 600
#define STORE_SQL_LIMIT 60
void store_time_limit(struct store *st, double seconds);

/* Record a spec under its sweep name (sweeps table: name, kernel, per, text, hash). Re-recording the
 * same name with another text updates it and is allowed: the cells keep their keys. */
int store_put_sweep(struct store *st, const struct spec *s);
/* The hashes of the files the sweep's plan stands for (sweeps.inputs, identity.h's JSON) into *json, a
 * new string, or NULL when none were recorded (no such sweep, or planned before schema 7); and set. */
int store_sweep_inputs(struct store *st, const char *sweep, char **json);
int store_sweep_set_inputs(struct store *st, const char *sweep, const char *json);

/*
 * Insert one planned cell; *added is 1 when new, 0 when a cell with that key existed (nothing changes).
 * state is "planned", or "template" for the base cells of per-host and per-gpu sweeps, which are never
 * run themselves: store_replicate copies them per host or GPU. Call inside a transaction for speed: a
 * transaction that adds the first cells of a database runs in bulk mode (the key index is rebuilt once,
 * before the transaction's first other statement; about 2-3 s per million cells on 2 cores).
 */
int store_add_cell(struct store *st, const char *sweep, const char *key, const char *params, int pass,
		   const char *replica, uint64_t ord, const char *state, int *added);
/* Make the replica of every template cell of sweep (state planned, key from plan_key); *added new ones. */
int store_replicate(struct store *st, const char *sweep, const char *replica, int *added);
/* The shard (0 .. nshards-1) of a cell, from its key without replica: the replicas of a per-host or
 * per-GPU cell share the shard of their template. */
unsigned store_shard(const char *sweep, const char *params, int pass, unsigned nshards);

/*
 * The figures of the grid a sweep's cells were planned from, kept when it is planned (table grids), so
 * that a run of the same spec checks its plan without expanding the grid again: the grid's cells (every
 * shard, replica "") and two order-free sums of their keys as 64-bit numbers (plan_db.c), and which
 * shard's cells were planned ("" every shard's, else "I/K"). store_grid_get: *found 0 when none is kept
 * for the spec the sweep has now (sweeps.hash). store_grid_put: for the spec store_put_sweep stored, in
 * the caller's transaction. 0, or -1 after error().
 */
struct store_grid {
	uint64_t cells, sum, mix;
	char shard[24];
};
int store_grid_get(struct store *st, const char *sweep, struct store_grid *g, int *found);
int store_grid_put(struct store *st, const char *sweep, const struct store_grid *g);

/* The text of the spec stored for sweep (*text NULL when the sweep is not there; the caller frees it). */
int store_sweep_spec(struct store *st, const char *sweep, char **text);

/*
 * Replanning a sweep whose spec changed (sweep run --replan), in the caller's transaction: every key the
 * current spec plans (replica "", every shard) is given to store_plan_key, then store_replan retires the
 * cells of sweep whose key (their template's, for replicas) was not given (state 'retired': kept with
 * their results, left out of runs and reports) and brings back retired cells that are in the spec again
 * (template, ok, quarantined or planned, as they would be). With remeasure (the measurement changed: kernel,
 * command, timing) every ok result of the sweep's other cells becomes 'superseded' and those cells are
 * planned again with no attempt counted. 0, or -1 after error().
 */
struct store_replan_stats {
	uint64_t retired, back, superseded, remeasured;
};
int store_plan_key(struct store *st, const char *key);
int store_replan(struct store *st, const char *sweep, int templates, int max_attempts, int remeasure,
		 struct store_replan_stats *out);

/*
 * Cells of sweep chosen by where (an SQL condition on c: the cell, r: its latest result, w and h: that
 * result's worker and host; NULL: every one; its text parameters are binds[0..nbind-1], as ?1..?nbind),
 * in the caller's transaction (a temporary table holds them meanwhile).
 * store_retry: those quarantined (RETRY_QUARANTINED) and/or planned again after failed attempts
 * (RETRY_FAILED) go back to planned with their attempts and error cleared; *n of them.
 * store_force: those with results (ok or quarantined) go back to planned, attempts cleared, to be
 * measured again; their ok results become 'superseded' (kept; reports read ok results, so the newest).
 * *cells chosen, *superseded results. 0, or -1 after error() (a bad where).
 */
enum { RETRY_QUARANTINED = 1, RETRY_FAILED = 2 };
int store_retry(struct store *st, const char *sweep, int states, const char *where, const char *const *binds,
		int nbind, uint64_t *n);
int store_force(struct store *st, const char *sweep, const char *where, const char *const *binds, int nbind,
		uint64_t *cells, uint64_t *superseded);
/* An interrupted run hands its cells in flight back: running ones to planned with the attempt their
 * marking counted taken back, prefetched ones to idle. *n cells. In a run's dispatch only the cells it
 * loaded are read. */
int store_unfly(struct store *st, const char *sweep, uint64_t *n);

/*
 * The writer lock: one process writes a database at a time (run, plan, retry, merge), readers are never
 * stopped. A lock of the database file itself, its inode (an open-file-description lock on a byte of
 * SQLite's lock page that SQLite does not lock), taken on a descriptor opened before SQLite opens the
 * file and held until store_close (store_lock) or store_unlock, so the kernel drops it with the process
 * however it ends. Every path to the file (a symbolic link, a bind mount, a new name after a rename)
 * finds the same lock, and nothing done to a name beside it (the note, -wal, -shm) lets a second writer
 * in. The note NAME-writer, where NAME is the database's path with every symbolic link followed, names
 * the holder (host, pid, start time, command) for the message that refuses a second writer at once, and
 * keeps the reserve (store_free_reserve); older sweeps locked the note itself, and that lock is taken
 * too. A file with several names (hard links: SQLite keeps a log per name) is refused, as is a note that
 * is a symbolic link or has several names. On taking the lock, what a dead writer left is put right:
 * runs still 'running' become 'killed', and a cell that has an ok result but is not 'ok' (a damage
 * older versions could leave when two runs shared a database) becomes 'ok'; both said on stderr. what:
 * the command, for the note. 0, or after error() FAIL_BUSY (held by another: the message names it) or
 * FAIL_IO.
 */
int store_lock(struct store *st, const char *what);
/* The same lock for a command that opens the database at path itself (merge): lk's descriptors, made
 * says whether locking made the file (empty). Release with store_unlock after every connection to the
 * file is closed. 0, or after error() FAIL_BUSY (held by another), FAIL_MISSING (its folder),
 * FAIL_NOT_SWEEP (not a regular file) or FAIL_IO. */
struct store_lock {
	int file, note, made;
};
int store_lock_path(const char *path, const char *what, struct store_lock *lk);
void store_unlock(struct store_lock *lk);
void store_unlock_fd(int fd);
/*
 * Whether the writer's database is still the file its path names: a run whose file is moved, renamed,
 * replaced or deleted under it must stop (a second writer may take the file now at the path, and SQLite
 * finds -wal and -shm by name). Looked at most every 0.2 s: at each store_commit (which then fails), and
 * by the caller's loop when nothing is committed for a while. When it is gone, what was committed is kept
 * in a file the user can open (the moved file, checkpointed; a file deleted or replaced is copied beside
 * its old name, NAME.saved-PID), every later store_begin is refused, and the message says where the
 * results are and how to go on; the side files left by the old name are removed at store_close when no
 * file has that name. 0, or -1 after error(). A reader: always 0.
 */
int store_watch(struct store *st);
/* The writer lock's note also keeps some megabytes of disk allocated (past its end: readers see its one
 * line). A writer whose disk is full gives them back with this, so that it can still record how it
 * stopped (the cells in flight handed back). 0, or -1 after error() (not a writer; the file failed). */
int store_free_reserve(struct store *st);
/* Whether a writer holds st's database now (1) or not (0), without taking or waiting for the lock: a run
 * still 'running' in runs while none does is a run whose processes are gone. -1: cannot tell. */
int store_writer_alive(const struct store *st);
/* Remove the database file at path and everything beside it (-wal, -shm, -journal, -writer): for a
 * command that made it and could not plan it, so that no half-made database says a sweep is there.
 * Nothing is removed by a name whose file went away under a writer of this process (store_watch): the
 * file there now is another's. */
void store_remove_files(const char *path);

/*
 * Whether a command may write the file at path (its --out, or a file it makes beside it; what names it in
 * the message, "--out"): no command writes over a database or its side files. Refused (-1 after error())
 * when path, links followed, is the database reading (same device and inode, so any link to it; reading
 * may be NULL), a file SQLite made (a database, a write-ahead log, its index or a rollback journal, by
 * their first bytes; with STORE_OUT_DB a database is what the command writes into, so only the others),
 * the -wal, -shm, -journal or -writer of a database, or a symbolic link to a missing file. 0 otherwise
 * (a missing folder included: the write then says so).
 */
enum { STORE_OUT_DB = 1, STORE_OUT_APPEND = 2, STORE_OUT_NEW = 4 };
int store_output_check(const char *what, const char *path, const char *reading, int flags);

/*
 * An output written whole or not at all: into a temporary file beside it (.NAME.XXXXXX in its folder,
 * links followed), put in place by a rename once every byte is on the disk. A full disk, a failed write
 * or an interrupted command leaves the old file as it was; a symbolic link swapped in meanwhile is
 * replaced, never written through. Checked at the open and again before the rename, by the descriptor
 * the name opens: store_output_check's rule against every database in dbs (NULL-terminated; NULL for
 * none) and its side files, and no file of several names (hard links). An existing device or pipe
 * (/dev/stdout) is written directly. flags: STORE_OUT_DB (the output is a database), STORE_OUT_APPEND
 * (what the file holds is kept, the writes go after it), STORE_OUT_NEW (never over an existing file).
 * store_out_open: 0 and w->f to write into, or -1 after error() (nothing made). store_out_close: 0 once
 * in place, or -1 after error() (nothing changed); store_out_abort drops it. Both free what w holds.
 */
struct store_out {
	FILE *f;                   /* where the output goes */
	char *tmp;                 /* the temporary file (NULL: a device, written directly) */
	/* private */
	const char *what, *path;
	char **dbs, *real;             /* dbs: a copy of the list */
	size_t ndbs;
	int flags;
};
int store_out_open(struct store_out *w, const char *what, const char *path, const char *const *dbs, int flags);
int store_out_close(struct store_out *w);
void store_out_abort(struct store_out *w);

/* Runs: started now with argv (joined), the spec hash and this binary's version and commit (version.h);
 * ended with a status ("ok", "failed", ...). */
int store_run_begin(struct store *st, const char *argv, const char *sweep, uint64_t spec_hash,
		    int64_t *run);
/* The files a run measures, as identity_json writes them (runs.inputs). */
int store_run_inputs(struct store *st, int64_t run, const char *inputs_json);
/* The launcher's command line that started run (runs.launcher, launcher.c); nothing for NULL. 0 or -1. */
int store_run_launcher(struct store *st, int64_t run, const char *line);
int store_run_end(struct store *st, int64_t run, const char *status);

/* The tables of Slurm jobs, slurm_jobs and slurm_runs, made when missing (outside the versioned schema:
 * only databases of Slurm jobs, or merged from them, have them). 0, or -1 after error(). */
int store_slurm_tables(struct store *st);
/* A submitted job into slurm_jobs (replacing one of its id), the tables made when missing: job is
 * { id, sweep, submitted (ISO time), nodes, gpus_per_node, shards, script, command }, as text. 0, or -1
 * after error(). */
int store_put_slurm_job(struct store *st, const char *const job[8]);
/* The Slurm job of a run into slurm_runs: run is { run id, job id, array task (or NULL), restarts, node }.
 * 0, or -1 after error(). */
int store_put_slurm_run(struct store *st, const char *const run[5]);

/* The labels (a JSON object) of the hosts of hostname into their facts ($.labels), the rest of the facts
 * kept. 0, or -1 after error(). */
int store_host_labels(struct store *st, const char *hostname, const char *labels_json);
/* The ok results of sweep's run as probes: the value of metric times scale, in unit, under name, one row
 * per worker's host and GPU. 0, or -1 after error(). */
int store_put_probes(struct store *st, const char *sweep, int64_t run, const char *name, const char *unit,
		     const char *metric, double scale);
/* A prediction: pred is { sweep, key, metric, value, blind (0 or 1), frozen_at, sha256, source }, as
 * text. 0, or -1 after error(). */
int store_put_prediction(struct store *st, const char *const pred[8]);

/* A host's facts (JSON object with at least "hostname"); the same facts give the same id. */
int store_put_host(struct store *st, const char *facts_json, int64_t *host);
/* A worker of a run: its rank, host, GPU (-1 for none), GPU UUID (may be NULL), binding (cpuset text),
 * the conditions at its start (a JSON object, hostinfo_conditions; may be NULL). */
int store_put_worker(struct store *st, int64_t run, int rank, int64_t host, int gpu, const char *gpu_uuid,
		     const char *binding, const char *conditions);

/*
 * Prepare a resume: every cell of sweep left in flight by a dead run (running, or sent behind the running
 * one) becomes a suspect: back to "planned" (a running cell's attempt stays counted) or to "quarantined"
 * when it has used max_attempts (error "worker died during the cell" unless it has one). A suspect is sent
 * only to an idle worker, as the cell it runs at once, so that its attempt is counted before it runs: a
 * cell that kills its worker is charged for it even when it crashed as soon as it started. Reads the cells
 * only when the sweep's latest run died (killed or failed): one that ended left none in flight.
 */
int store_recover(struct store *st, const char *sweep, int max_attempts);

/* Where a window of pending cells ended: the next starts after this ord, then id. */
struct store_cursor {
	int64_t ord, id;
};
#define STORE_CURSOR_INIT { INT64_MIN, 0 }
/*
 * The next window of pending cells of sweep and replica ("" for per: any), in run order (ord, then id),
 * after *cur: at most max of them, read through the index of cells in run order (the cells before the
 * window's first pending one are stepped over: a run that resumes a large sweep steps over those done), fn
 * called for each with a task (control 0, isolate 1 for suspects) whose strings are valid during the call
 * only; *cur moves past each. fn must not write to the store. *n: how many fn saw (under max: there are no
 * more now). fn returns non-zero to stop; store_pending then returns that value, 0 when the window was
 * read, -1 after error().
 */
int store_pending(struct store *st, const char *sweep, const char *replica, struct store_cursor *cur, int max,
		  int (*fn)(const struct task *, void *), void *data, int *n);

/* The cells of a sweep by state, from cell_counts (triggers count every insert, update and delete of
 * cells; a run's dispatch counts itself): of one replica, or of all when replica is NULL. 0, or -1 after
 * error(). */
struct store_counts {
	uint64_t planned, running, ok, quarantined, template, retired;
};
int store_cell_counts(struct store *st, const char *sweep, const char *replica, struct store_counts *c);
/* fn for each replica of sweep that has (or had) cells, "" first, with its counts; fn returns non-zero to
 * stop, and that is returned. */
int store_each_replica(struct store *st, const char *sweep,
		       int (*fn)(const char *replica, const struct store_counts *c, void *data), void *data);

/* The cell was sent to a worker behind the cell it runs (prefetched): not an attempt yet, but a job that
 * dies now makes it a suspect (store_recover). */
int store_mark_sent(struct store *st, int64_t cell);
/* The cell goes to "running" and its attempts grow by one (the attempt is counted even if the worker
 * then dies). */
int store_mark_running(struct store *st, int64_t cell);

/*
 * Store a result (with its samples, metrics, items, captured output, and its summary as r carries it) for
 * run and the worker's row, as the cell's attempt (its count of attempts), and move the cell to "ok",
 * back to "planned" for a retry (*again = 1), or to "quarantined" once it has failed max_attempts times;
 * a cell that is ok stays ok. Outside a transaction all of it or nothing is written; inside the caller's,
 * a failure (-1) leaves partial rows that the caller must roll back. A second ok result for a cell that
 * has one is not stored: a warning, *id = the kept one, 0. r->cell must be a cell (> 0): control cells go
 * to store_put_control. id and again may be NULL.
 */
int store_put_result(struct store *st, int64_t run, const struct result *r, int max_attempts, int64_t *id,
		     int *again);
/* A control-cell rerun (task control = 1) of sweep with params: one row of controls (median, noise, n
 * of r's samples; error when it failed). *id may be NULL. */
int store_put_control(struct store *st, int64_t run, const char *sweep, const char *params,
		      const struct result *r, int64_t *id);

/* A row handed to a query callback. Valid during the callback only. */
enum store_type { STORE_NULL, STORE_INT, STORE_FLOAT, STORE_TEXT, STORE_BLOB };
struct store_row {
	int ncol;
	const char *const *names;
	const char *const *text;   /* every value as text; NULL for NULL */
	const enum store_type *types;
	const double *num;         /* numeric value of INT/FLOAT columns, NaN otherwise */
};

/* A collation called name on st's connection: the n values in their order first, any other text after
 * them by bytes. A report orders a text parameter as its spec lists it (small, medium, large) this way.
 * The values are copied. -1 after error(). */
int store_order_text(struct store *st, const char *name, const char *const *values, size_t n);

/*
 * Run one SQL statement with text parameters bound in order (?1..?n; nbind must equal the statement's
 * parameter count), calling fn for each row (fn may be NULL). fn returns non-zero to stop early, and
 * store_query then returns that value; 0 when all rows were seen. readonly: refuse a statement that
 * writes (sqlite3_stmt_readonly). Errors print "sql error: ..." with the statement's message and return -1.
 */
int store_query(struct store *st, const char *sql, const char *const *binds, int nbind, int readonly,
		int (*fn)(const struct store_row *, void *), void *data);

/*
 * store_query's statement split over the results: part, a SELECT with the parameters binds, but for
 * ?at and ?at+1, set to the first and the last results.id of a slice (r.id BETWEEN ?at AND ?at+1), runs over the slices at once, one per core (up to
 * 4), each on its own read-only connection (store_open_twin) and thread; its rows, slice after slice, go
 * into temp.sweep_part(c1, ..., cN), which final (no parameters) reads, and final's rows go to fn. The
 * slices read one state of the database: when a commit came between their first reads, one slice reads
 * all. For a statement whose cost is its rows: part aggregates each slice (sweep_values keeps what a
 * statistic needs), final merges the slices' groups. -1 after error().
 */
int store_query_split(struct store *st, const char *part, const char *final, const char *const *binds,
		      int nbind, int at, int (*fn)(const struct store_row *, void *), void *data);

/* --- snapshot --- */

/*
 * A consistent copy of the database at path, which a run may be writing at the time (WAL), into the new
 * file out (it must not exist): one read transaction (VACUUM INTO) sees every transaction committed
 * before it began and none after, never half of one, which a copy of the file and its -wal would not
 * promise. out is a single file in rollback-journal mode that passed quick_check. 0, or after error()
 * store_open's kind for path, else FAIL_IO (out is not left behind).
 */
int store_snapshot(const char *path, const char *out);

/* --- merge --- (store_merge*.c) */

/* What one input brought to a merge's output. */
struct store_merge_stats {
	uint64_t cells;                    /* cells of the input to be measured (of the shard, of opts.sweep):
					    * not templates, not retired */
	uint64_t cells_new;                /* cells new to the output */
	uint64_t cells_decided;            /* cells that took the input's newer decision (cells.decided) */
	uint64_t results_new, results_same;   /* results copied; results the output already had */
	uint64_t conflicts;                /* ok results kept apart: the cell had another ok result */
	uint64_t results_hosts;            /* ok results of a per: any cell measured by another host than the
					    * output's: kept in their host's own cell */
	uint64_t runs_new, hosts_new, controls_new, probes_new, predictions_new;
};

/* nshards > 0: copy only the cells of shard `shard` (store_shard) and their results. sweep not NULL:
 * stats count the cells of that sweep only (every sweep is copied). */
struct store_merge_opts {
	unsigned shard, nshards;
	const char *sweep;
};

/*
 * Merge the sweep databases inputs[0..n-1] into out, which is made when missing. Every input is
 * untrusted: opened read-only with SQLite's defensive settings (no trigger or view of it runs), its
 * integrity (quick_check), schema version, tables, columns, value types, cell keys and references
 * checked before anything is written; a bad input is refused with a message naming it, and out is left
 * as it was (a made out is removed). Cells are matched by key; runs (by their start, command and
 * workers), hosts (facts hash), workers, results (with samples, metrics, items), controls, probes and
 * predictions by what identifies them, so merging a file again adds nothing. An ok result for a cell
 * that has another ok result with different values goes to the conflicts table, never over the kept
 * one. A cell whose decision (cells.decided: sweep retry, run --force, --replan) is newer in an input
 * takes its state, attempts, error and ok results from there. One transaction: all or nothing. o may
 * be NULL; stats (n entries) may be NULL. 0, or a kind of failure (exitcode.h) after error(): FAIL_USAGE
 * for an input refused, FAIL_UNSAFE for an output refused (one of the inputs, a file SQLite made beside
 * a database), store_open's kind for an output that is no sweep database (FAIL_NOT_SWEEP: nothing
 * written), FAIL_BUSY when another sweep writes out now (its writer lock), FAIL_IO when writing the
 * output failed.
 */
int store_merge(const char *out, const char *const *inputs, int n, const struct store_merge_opts *o,
		struct store_merge_stats *stats);
/* What n conflicts in a merge's output are and the command that lists them (out_word: the output's path
 * as one shell word), appended to sb as one line without its newline. */
void store_merge_conflicts_note(const char *out_word, uint64_t n, struct strbuf *sb);

#endif
