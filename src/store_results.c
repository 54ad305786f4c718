/* store_results.c: what a run writes: runs, hosts, workers, results (samples, metrics, items), controls. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "json.h"
#include "stats.h"
#include "util.h"
#include "version.h"

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
	store_bind_text(s, 1, sweep);
	store_bind_text(s, 2, now);
	store_bind_text(s, 3, argv);
	store_bind_text(s, 4, hash);
	store_bind_text(s, 5, version_string());
	store_bind_text(s, 6, version_commit());
	if (store_step(st, s))
		return -1;
	*run = sqlite3_last_insert_rowid(st->db);
	return 0;
}

int store_run_launcher(struct store *st, int64_t run, const char *line)
{
	char id[24];
	const char *bind[] = { id, line };

	if (!line)
		return 0;
	snprintf(id, sizeof(id), "%" PRId64, run);
	return store_query(st, "UPDATE runs SET launcher = ?2 WHERE id = CAST(?1 AS INTEGER)", bind, 2, 0, NULL, NULL);
}

int store_run_inputs(struct store *st, int64_t run, const char *inputs_json)
{
	char id[24];
	const char *bind[] = { id, inputs_json };

	snprintf(id, sizeof(id), "%" PRId64, run);
	return store_query(st, "UPDATE runs SET inputs = ?2 WHERE id = CAST(?1 AS INTEGER)", bind, 2, 0, NULL, NULL);
}

int store_run_end(struct store *st, int64_t run, const char *status)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RUN_END);
	char now[32];

	if (!s)
		return -1;
	store_now(now, sizeof(now));
	sqlite3_bind_int64(s, 1, run);
	store_bind_text(s, 2, now);
	store_bind_text(s, 3, status);
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
	store_bind_text(s, 1, hostname);
	store_bind_text(s, 2, facts_json);
	store_bind_text(s, 3, hash);
	store_bind_text(s, 4, now);
	if (store_step(st, s))
		goto out;
	/* last_insert_rowid is stale after the update branch of an upsert: look the row up. */
	store_bind_text(q, 1, hash);
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
		     const char *binding, const char *conditions)
{
	sqlite3_stmt *s = store_stmt(st, SQL_WORKER);

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_int(s, 2, rank);
	store_bind_id(s, 3, host);
	if (gpu >= 0)
		sqlite3_bind_int(s, 4, gpu);
	else
		sqlite3_bind_null(s, 4);
	store_bind_text(s, 5, gpu_uuid);
	store_bind_text(s, 6, binding);
	store_bind_text(s, 7, conditions);
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

/* ---- Slurm jobs ---- */

/*
 * Tables of jobs, outside the versioned schema (only databases of Slurm jobs, and those merged from them,
 * have them). slurm_jobs: what `sweep submit` sent, the script included. slurm_runs: the job (and array
 * task and restart) each run of the database ran in.
 */
const char store_slurm_schema[] =
	"CREATE TABLE IF NOT EXISTS slurm_jobs(job TEXT PRIMARY KEY, sweep TEXT NOT NULL, submitted TEXT NOT NULL,"
	" nodes INTEGER, gpus_per_node INTEGER, shards INTEGER NOT NULL DEFAULT 0, script TEXT NOT NULL,"
	" command TEXT);\n"
	"CREATE TABLE IF NOT EXISTS slurm_runs(run INTEGER PRIMARY KEY REFERENCES runs(id), job TEXT NOT NULL,"
	" task INTEGER, restarts INTEGER NOT NULL DEFAULT 0, node TEXT);\n";

int store_slurm_tables(struct store *st)
{
	int64_t have = 0;

	if (store_settle(st) || sqlite3_exec(st->db, store_slurm_schema, NULL, NULL, NULL))
		return store_sqlerr(st);
	/* The command that submitted a job (for resubmitting) came later: a table made before gets it now. */
	if (store_int(st, "SELECT count(*) FROM pragma_table_info('slurm_jobs') WHERE name = 'command'", &have))
		return store_sqlerr(st);
	if (!have && sqlite3_exec(st->db, "ALTER TABLE slurm_jobs ADD COLUMN command TEXT", NULL, NULL, NULL))
		return store_sqlerr(st);
	return 0;
}

int store_put_slurm_job(struct store *st, const char *const job[8])
{
	if (store_slurm_tables(st))
		return -1;
	return store_query(st, "INSERT OR REPLACE INTO slurm_jobs(job, sweep, submitted, nodes, gpus_per_node,"
			   " shards, script, command) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", job, 8, 0, NULL,
			   NULL) ? -1 : 0;
}

int store_put_slurm_run(struct store *st, const char *const run[5])
{
	if (store_slurm_tables(st))
		return -1;
	return store_query(st, "INSERT OR REPLACE INTO slurm_runs(run, job, task, restarts, node)"
			   " VALUES(?1, ?2, ?3, ?4, ?5)", run, 5, 0, NULL, NULL) ? -1 : 0;
}

int store_host_labels(struct store *st, const char *hostname, const char *labels_json)
{
	const char *bind[] = { hostname, labels_json };

	/* json_set keeps the rest of the facts as the worker reported them. */
	return store_query(st, "UPDATE hosts SET facts = json_set(facts, '$.labels', json(?2))"
			   " WHERE hostname = ?1", bind, 2, 0, NULL, NULL) ? -1 : 0;
}

int store_put_probes(struct store *st, const char *sweep, int64_t run, const char *name, const char *unit,
		     const char *metric, double scale)
{
	char runs[32], scales[32];
	const char *bind[] = { name, unit, metric, scales, sweep, runs };

	snprintf(runs, sizeof(runs), "%lld", (long long)run);
	snprintf(scales, sizeof(scales), "%.17g", scale);
	return store_query(st, "INSERT INTO probes(host, gpu, name, value, unit, run, measured)"
			   " SELECT w.host, CASE WHEN w.gpu >= 0 THEN w.gpu END, ?1, m.value * ?4, ?2, r.run,"
			   " r.started FROM results r JOIN cells c ON c.id = r.cell JOIN workers w ON w.id = r.worker"
			   " JOIN metrics m ON m.result = r.id AND m.name = ?3"
			   " WHERE c.sweep = ?5 AND r.status = 'ok' AND r.run = ?6", bind, 6, 0, NULL, NULL) ? -1 : 0;
}

int store_put_prediction(struct store *st, const char *const pred[8])
{
	return store_query(st, "INSERT INTO predictions(sweep, key, metric, value, blind, frozen_at, sha256,"
			   " source) VALUES(?1, ?2, ?3, CAST(?4 AS REAL), CAST(?5 AS INTEGER), ?6, ?7, ?8)", pred, 8,
			   0, NULL, NULL) ? -1 : 0;
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

/* What a command's runs cost, for the result row: the median user and system CPU seconds and the largest
 * peak RSS (bytes); NaN without usage. */
static void result_usage(const struct result *r, double *user, double *sys, double *rss)
{
	double *v;

	*user = *sys = *rss = NAN;
	if (!r->usage || !r->nsamples)
		return;
	v = xmalloc(r->nsamples * sizeof(*v));
	for (int i = 0; i < r->nsamples; i++)
		v[i] = r->usage[i].user;
	*user = stats_median(v, r->nsamples);
	for (int i = 0; i < r->nsamples; i++)
		v[i] = r->usage[i].sys;
	*sys = stats_median(v, r->nsamples);
	*rss = 0;
	for (int i = 0; i < r->nsamples; i++)
		*rss = fmax(*rss, r->usage[i].rss);
	free(v);
}

/* A metric's value as it travels (the text of a JSON number): parse_double refuses the ERANGE strtod sets
 * for a subnormal (4.9e-324), which would be stored as NULL. NaN for a value that is not a finite number. */
static double metric_value(const struct json_pair *p)
{
	char *end;
	double v;

	if (p->type != JSON_NUM || !*p->val)
		return NAN;
	v = strtod(p->val, &end);
	return *end || !isfinite(v) ? NAN : v;
}

static int store_put_details(struct store *st, int64_t id, const struct result *r)
{
	sqlite3_stmt *s = store_stmt(st, r->usage ? SQL_SAMPLE_USAGE : SQL_SAMPLE), *m = store_stmt(st, SQL_METRIC);
	sqlite3_stmt *it = store_stmt(st, SQL_ITEM);

	if (!s || !m || !it)
		return -1;
	for (int i = 0; i < r->nsamples; i++) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_int(s, 2, i);
		sqlite3_bind_double(s, 3, r->samples[i]);
		store_bind_num(s, 4, r->clocks && r->clocks[i] > 0 ? r->clocks[i] : NAN);
		if (r->usage) {
			sqlite3_bind_double(s, 5, r->usage[i].user);
			sqlite3_bind_double(s, 6, r->usage[i].sys);
			sqlite3_bind_int64(s, 7, (sqlite3_int64)r->usage[i].rss);
		}
		if (store_step(st, s))
			return -1;
	}
	for (size_t i = 0; i < r->metrics.n; i++) {
		const struct json_pair *p = &r->metrics.v[i];

		sqlite3_bind_int64(m, 1, id);
		store_bind_text(m, 2, p->key);
		store_bind_num(m, 3, metric_value(p));
		if (store_step(st, m))
			return -1;
	}
	for (size_t i = 0; i < r->nitems; i++) {
		sqlite3_bind_int64(it, 1, id);
		store_bind_text(it, 2, r->items[i].item);
		store_bind_text(it, 3, r->items[i].metric);
		store_bind_num(it, 4, r->items[i].value);
		if (store_step(st, it))
			return -1;
	}
	return 0;
}

/* A failed attempt's cell: planned again while it has attempts left (1), else quarantined (0); a cell
 * that is ok already stays so (0). A failure no attempt can change (RESULT_INVALID) quarantines at once. */
static int store_cell_failed(struct store *st, const struct result *r, int max_attempts)
{
	sqlite3_stmt *retry = store_stmt(st, SQL_CELL_RETRY), *q = store_stmt(st, SQL_CELL_QUARANTINE);
	const char *why = r->error ? r->error : result_status_name[r->status];

	if (!retry || !q)
		return -1;
	if (r->status == RESULT_INVALID)
		max_attempts = 0;
	sqlite3_bind_int64(retry, 1, r->cell);
	store_bind_text(retry, 2, why);
	sqlite3_bind_int(retry, 3, max_attempts);
	if (store_step(st, retry))
		return -1;
	if (sqlite3_changes(st->db))
		return store_flight_move(st, r->cell, COUNT_RUNNING, COUNT_PLANNED, 1) ? -1 : 1;
	sqlite3_bind_int64(q, 1, r->cell);
	store_bind_text(q, 2, why);
	if (store_step(st, q))
		return -1;
	return sqlite3_changes(st->db) ? store_flight_move(st, r->cell, COUNT_RUNNING, COUNT_QUARANTINED, 1) : 0;
}

/* Insert the result row and its details, and move the cell on, in the caller's transaction: 0, or 1
 * when the cell is planned again (store_cell_failed); 2 when the cell has an ok result already and r is
 * ok too (nothing written). */
static int store_put_result_rows(struct store *st, int64_t run, const struct result *r, int max_attempts,
				 int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_RESULT), *c;
	const struct summary *sum = &r->sum;
	double user, sys, rss;
	char started[32];
	int64_t worker;
	int rc;

	if (!s || store_worker_id(st, run, r->worker, &worker))
		return -1;
	iso_time(r->started, started, sizeof(started));
	sqlite3_bind_int64(s, 1, r->cell);
	store_bind_id(s, 2, run);
	store_bind_id(s, 3, worker);
	store_bind_text(s, 4, result_status_name[r->status]);
	store_bind_text(s, 6, r->started > 0 ? started : NULL);
	store_bind_num(s, 7, r->wall);
	sqlite3_bind_int(s, 8, r->nsamples);
	store_bind_num(s, 9, sum->median);
	store_bind_num(s, 10, sum->mean);
	store_bind_num(s, 11, sum->min);
	store_bind_num(s, 12, sum->max);
	store_bind_num(s, 13, sum->stdev);
	store_bind_num(s, 14, sum->q1);
	store_bind_num(s, 15, sum->q3);
	store_bind_num(s, 16, sum->noise);
	sqlite3_bind_int(s, 17, r->noise_ok);
	sqlite3_bind_int(s, 18, r->throttled);
	store_bind_num(s, 19, result_clock(r));
	store_bind_text(s, 20, r->error);
	store_bind_text(s, 21, r->out);
	store_bind_text(s, 22, r->err);
	store_bind_text(s, 23, r->stop > STOP_NONE && r->stop < NSTOP ? stop_rule_name[r->stop] : NULL);
	store_bind_num(s, 24, r->launches > 0 ? r->launches : NAN);
	store_bind_num(s, 25, r->warmup);
	result_usage(r, &user, &sys, &rss);
	store_bind_num(s, 26, user);
	store_bind_num(s, 27, sys);
	store_bind_num(s, 28, rss);
	store_bind_num(s, 29, sum->ci_lo);
	store_bind_num(s, 30, sum->ci_hi);
	sqlite3_bind_int(s, 31, r->precise);
	store_bind_num(s, 32, r->settled >= 0 ? r->settled : NAN);
	store_bind_text(s, 33, r->note);
	/* No look-up before the insert (it was a tenth of a short cell's cost): the constraints answer. A
	 * failed statement is undone alone; the transaction goes on. */
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		int ext = sqlite3_extended_errcode(st->db);

		if (ext == SQLITE_CONSTRAINT_NOTNULL)
			rc = error("result for cell %" PRId64 ", which is not in '%s'", r->cell, st->path);
		else if (ext == SQLITE_CONSTRAINT_UNIQUE && r->status == RESULT_OK)
			rc = 2;   /* results_one_ok */
		else
			rc = store_sqlerr(st);
		sqlite3_reset(s);
		return rc;
	}
	sqlite3_reset(s);
	*id = sqlite3_last_insert_rowid(st->db);
	if (store_put_details(st, *id, r))
		return -1;
	if (r->status != RESULT_OK)
		return store_cell_failed(st, r, max_attempts);
	if (!(c = store_stmt(st, SQL_CELL_OK)))
		return -1;
	sqlite3_bind_int64(c, 1, r->cell);
	return store_step(st, c) || store_flight_move(st, r->cell, COUNT_RUNNING, COUNT_OK, 1) ? -1 : 0;
}

/* The ok result a cell already has, when another came: its id, and a warning that it is kept. */
static int store_kept_ok(struct store *st, int64_t cell, int64_t *id)
{
	sqlite3_stmt *q = store_stmt(st, SQL_OK_RESULT);
	int found;

	if (!q)
		return -1;
	sqlite3_bind_int64(q, 1, cell);
	if (store_step_row(st, q, &found, id, 1))
		return -1;
	warning("cell %" PRId64 " already has an ok result (%" PRId64 "); keeping that one", cell, *id);
	return 0;
}

int store_put_result(struct store *st, int64_t run, const struct result *r, int max_attempts, int64_t *id,
		     int *again)
{
	int64_t rid = 0;
	int own = !st->in_tx, rc;

	if (r->cell <= 0)
		BUG("store_put_result: cell %" PRId64 " (a control cell goes to store_put_control)", r->cell);
	/* Inside the caller's transaction a failure leaves the rollback to the caller: a savepoint per
	 * result would copy every page it touches to a statement journal (a third of a short cell's cost). */
	if (own && store_begin(st))
		return -1;
	rc = store_put_result_rows(st, run, r, max_attempts, &rid);
	if (again)
		*again = rc == 1;
	if (rc == 2)   /* one ok result per cell: a second one (two runs raced on a resume) is dropped */
		rc = store_kept_ok(st, r->cell, &rid);
	else if (rc == 1)
		rc = 0;
	if (own && (rc || store_commit(st))) {
		store_rollback(st);
		return -1;
	}
	if (!rc && id)
		*id = rid;
	return rc;
}

int store_put_control(struct store *st, int64_t run, const char *sweep, const char *params,
		      const struct result *r, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(st, SQL_CONTROL);
	char started[32];
	int64_t worker;

	if (!s || store_worker_id(st, run, r->worker, &worker))
		return -1;
	iso_time(r->started, started, sizeof(started));
	store_bind_id(s, 1, run);
	store_bind_id(s, 2, worker);
	store_bind_text(s, 3, sweep);
	store_bind_text(s, 4, params);
	store_bind_text(s, 5, r->started > 0 ? started : NULL);
	store_bind_num(s, 6, r->sum.median);
	store_bind_num(s, 7, r->sum.noise);
	sqlite3_bind_int(s, 8, r->nsamples);
	store_bind_text(s, 9, r->status == RESULT_OK ? NULL : r->error ? r->error : result_status_name[r->status]);
	if (store_step(st, s))
		return -1;
	if (id)
		*id = sqlite3_last_insert_rowid(st->db);
	return 0;
}
