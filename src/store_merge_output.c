/* store_merge_output.c: the output of a merge: made when missing, opened, checked; its statements. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "store_merge_int.h"
#include "util.h"

/*
 * Tables merging adds to its output. They are not in the versioned schema (store_schema.c): only merged
 * databases have them, and a database without them lacks nothing. merges logs each input that added
 * something; conflicts keeps an ok result whose cell already had another ok result (with different
 * values) in the output: summary, samples, metrics and items as JSON, nothing dropped. (The tables of
 * Slurm jobs, store_slurm_schema, are made too: inputs of array tasks bring theirs.)
 */
const char store_merge_output_schema[] =
	"CREATE TABLE IF NOT EXISTS merges(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	source TEXT NOT NULL,\n"
	"	merged TEXT NOT NULL,\n"
	"	cells INTEGER NOT NULL,\n"
	"	results INTEGER NOT NULL,\n"
	"	conflicts INTEGER NOT NULL\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS conflicts(\n"
	"	id INTEGER PRIMARY KEY,\n"
	"	merge INTEGER REFERENCES merges(id),\n"
	"	cell INTEGER NOT NULL REFERENCES cells(id),\n"
	"	kept INTEGER REFERENCES results(id),\n"
	"	source TEXT NOT NULL,\n"
	"	run INTEGER REFERENCES runs(id),\n"
	"	worker INTEGER REFERENCES workers(id),\n"
	"	attempt INTEGER, started TEXT, wall REAL, n INTEGER, median REAL, mean REAL, min REAL,\n"
	"	max REAL, stdev REAL, q1 REAL, q3 REAL, noise REAL, noise_ok INTEGER, throttled INTEGER,\n"
	"	sm_clock REAL, samples TEXT, metrics TEXT, items TEXT, ci_lo REAL, ci_hi REAL, precise INTEGER\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS conflicts_cell ON conflicts(cell);\n";

/* Columns conflicts gained after its first version: a merged database made before has them added. */
static const char *const conflicts_added[] = { "ci_lo REAL", "ci_hi REAL", "precise INTEGER" };

int store_merge_output_conflicts(struct merge *m)
{
	char sql[128];

	for (size_t i = 0; i < ARRAY_SIZE(conflicts_added); i++) {
		const char *type = strchr(conflicts_added[i], ' ');
		sqlite3_stmt *s;
		int rc, have;

		snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('conflicts') WHERE name = '%.*s'",
			 (int)(type - conflicts_added[i]), conflicts_added[i]);
		if (!(s = prep(m->out, sql)))
			return store_merge_output_err(m);
		rc = sqlite3_step(s);
		have = rc == SQLITE_ROW;
		sqlite3_finalize(s);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return store_merge_output_err(m);
		snprintf(sql, sizeof(sql), "ALTER TABLE conflicts ADD COLUMN %s", conflicts_added[i]);
		if (!have && sqlite3_exec(m->out, sql, NULL, NULL, NULL))
			return store_merge_output_err(m);
	}
	return 0;
}

int store_merge_output_err(struct merge *m)
{
	return error("cannot merge into '%s': %s", m->out_path, sqlite3_errmsg(m->out));
}

/* Step an output statement to its end; *found and the first column of its first row (when wanted). */
int store_merge_output_step(struct merge *m, sqlite3_stmt *s, int *found, int64_t *val)
{
	int rc = sqlite3_step(s);

	if (found)
		*found = rc == SQLITE_ROW;
	if (val)
		*val = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : store_merge_output_err(m);
}

static const char *const ostmt_sql[NOSTMT] = {
	[O_SWEEP_FIND] = "SELECT hash, updated FROM sweeps WHERE name = ?1",
	[O_SWEEP_NEWER] = "UPDATE sweeps SET kernel = ?2, command = ?3, per = ?4, spec = ?5, hash = ?6, updated = ?7,"
		" inputs = ?8 WHERE name = ?1",
	[O_SWEEP_ADD] = "INSERT INTO sweeps(name, kernel, command, per, spec, hash, updated, inputs)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[O_HOST_FIND] = "SELECT id FROM hosts WHERE hash = ?1",
	[O_HOST_ADD] = "INSERT INTO hosts(hostname, facts, hash, seen) VALUES(?1, ?2, ?3, ?4)",
	/* Labels come from an inventory after the run: the input's fill in where the output has none. */
	[O_HOST_LABELS] = "UPDATE hosts SET facts = json_set(facts, '$.labels', json_extract(?2, '$.labels')),"
		" seen = max(seen, ?3) WHERE id = ?1 AND json_extract(facts, '$.labels') IS NULL"
		" AND json_type(?2, '$.labels') = 'object'",
	[O_RUN_ADD] = "INSERT INTO runs(sweep, started, finished, argv, spec_hash, version, status, revision, inputs,"
		" launcher) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	/* A run that was still going when its database was first merged has ended since (a writer of the
	 * output that found it 'running' recorded it 'killed': its own database knows better). */
	[O_RUN_END] = "UPDATE runs SET finished = ?2, status = ?3 WHERE id = ?1 AND ?2 IS NOT NULL"
		" AND (finished IS NULL OR (status = 'killed' AND ?3 <> 'killed'))",
	[O_WORKER_FIND] = "SELECT id FROM workers WHERE run = ?1 AND rank = ?2",
	[O_WORKER_ADD] = "INSERT INTO workers(run, rank, host, gpu, gpu_uuid, binding, conditions)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	/* Who measured a result: its worker's hostname (a host's cell is named after it, as per: host does). */
	[O_WORKER_HOST] = "SELECT h.hostname FROM workers w JOIN hosts h ON h.id = w.host WHERE w.id = ?1",
	[O_CELL_FIND] = "SELECT id FROM cells WHERE key = ?1",
	[O_CELL_GET] = "SELECT sweep, params, pass, replica, ord FROM cells WHERE id = ?1",
	[O_CELL_ADD] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state, attempts, error, decided)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	/* A host's cell of a per: any sweep exists for that host's ok result: one whose result the output
	 * already had in the per: any cell is left empty by the copy, and no run would ever take it. */
	[O_CELL_DROP_EMPTY] = "DELETE FROM cells WHERE replica != '' AND state = 'planned'"
		" AND sweep IN (SELECT name FROM sweeps WHERE per = 'any')"
		" AND NOT EXISTS (SELECT 1 FROM results r WHERE r.cell = cells.id)",
	/* Its ok result's attempt ?2 was one of its attempts. */
	[O_CELL_OK] = "UPDATE cells SET state = 'ok', error = NULL, attempts = max(attempts, ?2)"
		" WHERE id = ?1 AND state <> 'retired'",
	/* What made a cell quarantined elsewhere is news where it has not run yet, unless a newer decision
	 * (sweep retry) put it back to planned here. */
	[O_CELL_QUARANTINE] = "UPDATE cells SET state = 'quarantined', error = ?2, attempts = max(attempts, ?3)"
		" WHERE id = ?1 AND state = 'planned' AND (decided IS NULL OR decided <= ?4)",
	/* A newer decision on the cell (?5: sweep retry, run --force, a remeasuring --replan) elsewhere: the
	 * cell's state, attempts and error are the input's; template and retired cells are the spec's. */
	[O_CELL_DECIDE] = "UPDATE cells SET state = ?2, attempts = ?3, error = ?4, decided = ?5, flight = " FLIGHT_NONE
		" WHERE id = ?1 AND state IN ('planned', 'running', 'ok', 'quarantined')"
		" AND (decided IS NULL OR decided < ?5)",
	/* ... and the ok results it has are those of the decision's database (store_merge_copy.c). */
	[O_CELL_SUPERSEDE] = "UPDATE results SET status = 'superseded' WHERE cell = ?1 AND status = 'ok'",
	/* One result, ok or superseded: a decision elsewhere may have superseded it. The same status first
	 * (an older merge could leave both). */
	[O_RESULT_FIND] = "SELECT id, status = ?5 FROM results WHERE cell = ?1 AND attempt = ?2 AND run IS ?3"
		" AND started IS ?4 AND (status = ?5 OR (status IN ('ok', 'superseded') AND ?5 IN ('ok', 'superseded')))"
		" ORDER BY status = ?5 DESC LIMIT 1",
	[O_RESULT_OK] = "SELECT r.id, r.n, r.median, r.mean, r.min, r.max, h.hostname FROM results r"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host"
		" WHERE r.cell = ?1 AND r.status = 'ok'",
	/* An ok result of the newer decision's database, superseded here: ok again, the cell's only one. */
	[O_RESULT_RESTORE] = "UPDATE results SET status = 'ok' WHERE id = ?1 AND status = 'superseded'"
		" AND NOT EXISTS (SELECT 1 FROM results r WHERE r.cell = ?2 AND r.status = 'ok')",
	[O_RESULT_ADD] = "INSERT INTO results(cell, run, worker, status, attempt, started, wall, n, median, mean,"
		" min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, error, stdout, stderr, stop, launches,"
		" warmup, cpu_user, cpu_sys, peak_rss, ci_lo, ci_hi, precise, settled, note) VALUES(?1, ?2, ?3, ?4,"
		" ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25,"
		" ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33)",
	[O_SAMPLE_ADD] = "INSERT INTO samples(result, i, seconds, sm_clock, cpu_user, cpu_sys, peak_rss)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[O_METRIC_ADD] = "INSERT INTO metrics(result, name, value) VALUES(?1, ?2, ?3)",
	[O_ITEM_ADD] = "INSERT INTO items(result, item, metric, value) VALUES(?1, ?2, ?3, ?4)",
	[O_CONFLICT_FIND] = "SELECT id FROM conflicts WHERE cell = ?1 AND attempt = ?2 AND run IS ?3"
		" AND started IS ?4",
	[O_CONFLICT_ADD] = "INSERT INTO conflicts(merge, cell, kept, source, run, worker, attempt, started, wall,"
		" n, median, mean, min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, samples, metrics,"
		" items, ci_lo, ci_hi, precise) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
	[O_CONTROL_FIND] = "SELECT id FROM controls WHERE run IS ?1 AND worker IS ?2 AND sweep = ?3 AND params = ?4"
		" AND started IS ?5",
	[O_CONTROL_ADD] = "INSERT INTO controls(run, worker, sweep, params, started, median, noise, n, error)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[O_PROBE_FIND] = "SELECT id FROM probes WHERE host IS ?1 AND gpu IS ?2 AND name = ?3 AND run IS ?4"
		" AND measured IS ?5",
	[O_PROBE_ADD] = "INSERT INTO probes(host, gpu, name, value, unit, run, measured)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[O_PREDICTION_FIND] = "SELECT value FROM predictions WHERE sweep = ?1 AND key IS ?2 AND metric = ?3",
	[O_PREDICTION_ADD] = "INSERT INTO predictions(sweep, key, metric, value, blind, frozen_at, sha256, source)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	/* A job is the same job in every database that knows it; a run ran in one job. */
	[O_SLURM_JOB_ADD] = "INSERT INTO slurm_jobs(job, sweep, submitted, nodes, gpus_per_node, shards, script,"
		" command) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(job) DO NOTHING",
	[O_SLURM_RUN_ADD] = "INSERT INTO slurm_runs(run, job, task, restarts, node) VALUES(?1, ?2, ?3, ?4, ?5)"
		" ON CONFLICT(run) DO NOTHING",
};

sqlite3_stmt *store_merge_output_stmt(struct merge *m, enum ostmt which)
{
	if (!m->stmt[which] && !(m->stmt[which] = prep(m->out, ostmt_sql[which])))
		store_merge_output_err(m);
	return m->stmt[which];
}

void store_merge_output_release(struct merge *m)
{
	for (int i = 0; i < NOSTMT; i++) {
		sqlite3_finalize(m->stmt[i]);
		m->stmt[i] = NULL;
	}
}


/*
 * Every column of the output's tables is one merge copies (store_merge_tables): a column added to the
 * schema without being added there would be dropped by every merge, so it stops merging instead.
 */
static int out_check_columns(struct merge *m)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	for (int t = 0; t < NTABLES && !ret; t++) {
		const struct mtable *tb = &store_merge_tables[t];
		sqlite3_stmt *s;
		int rc;

		sb_reset(&sb);
		sb_addf(&sb, "SELECT name FROM pragma_table_info('%s')", tb->name);
		if (!(s = prep(m->out, sb.buf))) {
			ret = store_merge_output_err(m);
			break;
		}
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *name = col_text(s, 0);
			int known = 0;

			for (int c = 0; c < tb->ncols && name; c++)
				known |= !strcmp(name, tb->cols[c].name);
			if (!known)
				ret = error("sweep merge does not know column %s.%s, which it would lose: "
					    "store_merge_input.c lags behind the schema", tb->name, name ? name : "?");
		}
		if (!ret && rc != SQLITE_DONE)
			ret = store_merge_output_err(m);
		sqlite3_finalize(s);
	}
	sb_release(&sb);
	return ret;
}

/* The output: made (schema by store_open) when missing, then opened here for the copy. */
int store_merge_output_open(struct merge *m, int *made)
{
	struct store *st;
	struct stat sb;
	char *real;
	int rc;

	*made = stat(m->out_path, &sb) != 0;
	if ((rc = store_open(m->out_path, STORE_RW, &st)))
		return rc;
	store_close(st);
	/* By the name store_open opened it by (links followed), for the same -wal and -shm. */
	if ((rc = store_file_real(m->out_path, &real)))
		return rc;
	rc = sqlite3_open_v2(real, &m->out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	free(real);
	if (rc)
		return error("cannot open '%s': %s", m->out_path, m->out ? sqlite3_errmsg(m->out) : "out of memory");
	sqlite3_busy_timeout(m->out, 10000);
	if (sqlite3_exec(m->out, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", NULL, NULL, NULL))
		return store_merge_output_err(m);
	return out_check_columns(m);
}
