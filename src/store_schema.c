/* store_schema.c: the versioned schema of the results database: one migration script per version. */
#include <string.h>
#include <strings.h>

#include "store_int.h"
#include "util.h"

/*
 * The triggers that keep cell_counts (migration 4): a cell counts under its sweep, replica and state.
 * Part of migration 4, so frozen like it; also what store_schema_triggers lists (the exact text
 * sqlite_master keeps, which merge accepts in an input) and what bulk planning drops and makes again
 * (store_cells.c). A run's dispatch turns them off and counts itself (store_dispatch.c).
 */
#define COUNT_COLS(x, op) \
	"planned = planned " op " (" x ".state = 'planned'), running = running " op " (" x ".state = 'running'), " \
	"ok = ok " op " (" x ".state = 'ok'), quarantined = quarantined " op " (" x ".state = 'quarantined'), " \
	"template = template " op " (" x ".state = 'template'), retired = retired " op " (" x ".state = 'retired')"
#define COUNT_ADD(x) \
	"INSERT INTO cell_counts VALUES(" x ".sweep, " x ".replica, " x ".state = 'planned', " \
	x ".state = 'running', " x ".state = 'ok', " x ".state = 'quarantined', " x ".state = 'template', " \
	x ".state = 'retired') " \
	"ON CONFLICT(sweep, replica) DO UPDATE SET planned = planned + excluded.planned, " \
	"running = running + excluded.running, ok = ok + excluded.ok, " \
	"quarantined = quarantined + excluded.quarantined, template = template + excluded.template, " \
	"retired = retired + excluded.retired; "
#define COUNT_SUB(x) \
	"UPDATE cell_counts SET " COUNT_COLS(x, "-") " WHERE sweep = " x ".sweep AND replica = " x ".replica; "
#define COUNT_INSERT "CREATE TRIGGER cells_count_insert AFTER INSERT ON cells BEGIN " COUNT_ADD("new") "END"
#define COUNT_DELETE "CREATE TRIGGER cells_count_delete AFTER DELETE ON cells BEGIN " COUNT_SUB("old") "END"
#define COUNT_STATE "CREATE TRIGGER cells_count_state AFTER UPDATE OF state ON cells" \
	" WHEN old.state IS NOT new.state AND old.sweep = new.sweep AND old.replica = new.replica BEGIN" \
	" UPDATE cell_counts SET planned = planned + (new.state = 'planned') - (old.state = 'planned')," \
	" running = running + (new.state = 'running') - (old.state = 'running')," \
	" ok = ok + (new.state = 'ok') - (old.state = 'ok')," \
	" quarantined = quarantined + (new.state = 'quarantined') - (old.state = 'quarantined')," \
	" template = template + (new.state = 'template') - (old.state = 'template')," \
	" retired = retired + (new.state = 'retired') - (old.state = 'retired')" \
	" WHERE sweep = new.sweep AND replica = new.replica; END"
#define COUNT_MOVE "CREATE TRIGGER cells_count_move AFTER UPDATE OF sweep, replica ON cells" \
	" WHEN old.sweep IS NOT new.sweep OR old.replica IS NOT new.replica BEGIN " COUNT_SUB("old") \
	COUNT_ADD("new") "END"


const struct store_schema_trigger store_schema_triggers[] = {
	{ "cells_count_insert", COUNT_INSERT }, { "cells_count_delete", COUNT_DELETE },
	{ "cells_count_state", COUNT_STATE }, { "cells_count_move", COUNT_MOVE }, { NULL, NULL },
};

/* What bulk planning drops and makes again, as the migrations made it: the key index (1) and the trigger
 * that counts an inserted cell (4). */
const struct store_schema_object store_schema_bulk[] = {
	{ "INDEX", "cells_key", "CREATE UNIQUE INDEX cells_key ON cells(key)" },
	{ "TRIGGER", "cells_count_insert", COUNT_INSERT },
	{ NULL, NULL, NULL },
};

/*
 * Schema migrations: store_schema_migrations[i] takes a database from user_version i to i + 1, inside
 * one transaction (store.c). Append only: a released script never changes, or databases made by it would
 * differ from those made by the new one. docs/database.md shows the resulting schema.
 */
const char *const store_schema_migrations[] = {
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
	/* FLIGHT_NONE, FLIGHT_SENT or FLIGHT_SUSPECT (store_int.h): 0 with no worker; 1 sent to a worker;
	 * 2 suspect: in flight when a job died, so it runs alone next (see store_recover). */
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
	/* 2: which rule ended a cell's sampling (noise, converged, timeout, max_samples, count), the launches a
	 * sample holds and the seconds of warm-up run, in v_results too */
	"ALTER TABLE results ADD COLUMN stop TEXT;\n"
	"ALTER TABLE results ADD COLUMN launches INTEGER;\n"
	"ALTER TABLE results ADD COLUMN warmup REAL;\n"
	"DROP VIEW v_results;\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error,\n"
	"	       r.stop AS stop, r.launches AS launches, r.warmup AS warmup\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
	/*
	 * 3: cells may be 'retired' (no longer in their sweep's spec: sweep run --replan) and results
	 * 'superseded' (a newer measurement of the cell replaced them: --replan, --force), so the CHECKs
	 * widen; they are edited in place (SQLite's documented writable_schema way for a CHECK that
	 * only accepts more: no row to copy; store.c bumps schema_version after it). And kernel
	 * defaults, which planning now writes into every cell's params, are filled into the cells of
	 * older plans, with their keys recomputed, so that a plan of the same spec finds them again.
	 */
	"PRAGMA writable_schema = ON;\n"
	"UPDATE sqlite_master SET sql = replace(sql, 'OR state = ''quarantined'' OR state = ''template'')',\n"
	"	'OR state = ''quarantined'' OR state = ''template'' OR state = ''retired'')')\n"
	"	WHERE type = 'table' AND name = 'cells';\n"
	"UPDATE sqlite_master SET sql = replace(sql, 'OR status = ''timeout'')',\n"
	"	'OR status = ''timeout'' OR status = ''superseded'')')\n"
	"	WHERE type = 'table' AND name = 'results';\n"
	"PRAGMA writable_schema = OFF;\n"
	"UPDATE cells SET params = sweep_param_defaults((SELECT kernel FROM sweeps WHERE name = cells.sweep),\n"
	"	params);\n"
	"UPDATE cells SET key = sweep_key(sweep, params, pass, replica)\n"
	"	WHERE key <> sweep_key(sweep, params, pass, replica);\n",
	/* 4: when a decision (sweep retry, run --force, a --replan that measures again) last put the cell
	 * back to planned: a merge takes the cell's state from the database whose decision is newer */
	"ALTER TABLE cells ADD COLUMN decided TEXT;\n",
	/* 5: what each run of a command cost (wait4: user and system CPU seconds, peak RSS in bytes), per
	 * sample and, for the result, the medians of the CPU times and the largest peak, in v_results too */
	"ALTER TABLE samples ADD COLUMN cpu_user REAL;\n"
	"ALTER TABLE samples ADD COLUMN cpu_sys REAL;\n"
	"ALTER TABLE samples ADD COLUMN peak_rss INTEGER;\n"
	"ALTER TABLE results ADD COLUMN cpu_user REAL;\n"
	"ALTER TABLE results ADD COLUMN cpu_sys REAL;\n"
	"ALTER TABLE results ADD COLUMN peak_rss INTEGER;\n"
	"DROP VIEW v_results;\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error,\n"
	"	       r.stop AS stop, r.launches AS launches, r.warmup AS warmup,\n"
	"	       r.cpu_user AS cpu_user, r.cpu_sys AS cpu_sys, r.peak_rss AS peak_rss\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
	/*
	 * 6: what a run's start and `sweep status` read without walking every cell: the cells of each sweep
	 * and replica counted by state (cell_counts, kept by the triggers of store_schema_triggers), the
	 * cells of each replica in run order (cells_ord: a run loads its pending cells a window at a time
	 * through it; no partial index, whose every mark of a cell cost the master an index write; replica
	 * first, or a report of one sweep's results goes through it, slower than scanning the results), the
	 * failed cells and the ok results above their noise target (partial indexes: both hold few), and
	 * the figures of the grid each sweep was planned from (grids).
	 */
	"CREATE TABLE cell_counts(\n"
	"	sweep TEXT NOT NULL,\n"
	"	replica TEXT NOT NULL,\n"
	"	planned INTEGER NOT NULL,\n"
	"	running INTEGER NOT NULL,\n"
	"	ok INTEGER NOT NULL,\n"
	"	quarantined INTEGER NOT NULL,\n"
	"	template INTEGER NOT NULL,\n"
	"	retired INTEGER NOT NULL,\n"
	"	PRIMARY KEY(sweep, replica)\n"
	") WITHOUT ROWID;\n"
	"INSERT INTO cell_counts SELECT sweep, replica, count(*) FILTER (WHERE state = 'planned'),\n"
	"	count(*) FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state = 'ok'),\n"
	"	count(*) FILTER (WHERE state = 'quarantined'), count(*) FILTER (WHERE state = 'template'),\n"
	"	count(*) FILTER (WHERE state = 'retired') FROM cells GROUP BY sweep, replica;\n"
	COUNT_INSERT ";\n" COUNT_DELETE ";\n" COUNT_STATE ";\n" COUNT_MOVE ";\n"
	"CREATE INDEX cells_ord ON cells(replica, sweep, ord);\n"
	"CREATE INDEX cells_failed ON cells(sweep, ord) WHERE error IS NOT NULL AND state <> 'ok';\n"
	"CREATE INDEX results_noisy ON results(cell) WHERE status = 'ok' AND NOT noise_ok;\n"
	"CREATE TABLE grids(\n"
	"	sweep TEXT PRIMARY KEY,\n"
	"	hash TEXT NOT NULL,\n"
	"	cells INTEGER NOT NULL,\n"
	"	key_sum INTEGER NOT NULL,\n"
	"	key_mix INTEGER NOT NULL,\n"
	"	shard TEXT NOT NULL\n"
	");\n",
	/*
	 * 7: what a measurement ran and under what: the hashes of the files a sweep's command runs and reads
	 * (identity.c; sweeps.inputs those its plan stands for, runs.inputs those a run measured, JSON
	 * {name: hash}), the commit of the sweep binary that ran (runs.revision; runs.version was there), and
	 * each worker's conditions at its start (workers.conditions, JSON: hostinfo_conditions)
	 */
	"ALTER TABLE sweeps ADD COLUMN inputs TEXT;\n"
	"ALTER TABLE runs ADD COLUMN revision TEXT;\n"
	"ALTER TABLE runs ADD COLUMN inputs TEXT;\n"
	"ALTER TABLE workers ADD COLUMN conditions TEXT;\n",
	/*
	 * 8: the 95 % interval of each result's median (ci_lo, ci_hi, in the median's unit), whether it met the
	 * precision asked (precise: what reports mark and --strict leaves out), and whether the SM clock had
	 * settled when sampling began (settled; NULL: no clock read), in v_results too. Results measured
	 * before have their interval computed here from their stored samples (median_ci, the same order
	 * statistics a run computes), and a kernel's is judged against the default precision, 0.005, which
	 * is what their specs ask now (none of them could name another); a command's result has no precision
	 * to miss. Their settled stays NULL: no one watched the clock. The few marked results are indexed as
	 * the noisy ones were (results_imprecise replaces results_noisy: status counts them through it).
	 */
	"ALTER TABLE results ADD COLUMN ci_lo REAL;\n"
	"ALTER TABLE results ADD COLUMN ci_hi REAL;\n"
	"ALTER TABLE results ADD COLUMN precise INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE results ADD COLUMN settled INTEGER;\n"
	"UPDATE results SET ci_lo = json_extract(s.ci, '$[0]'), ci_hi = json_extract(s.ci, '$[1]')\n"
	"	FROM (SELECT result, median_ci(seconds) AS ci FROM samples GROUP BY result) AS s\n"
	"	WHERE s.result = results.id;\n"
	"UPDATE results SET precise = CASE\n"
	"	WHEN (SELECT w.kernel FROM cells c JOIN sweeps w ON w.name = c.sweep WHERE c.id = results.cell)\n"
	"	     IS NULL THEN status = 'ok' OR status = 'superseded'\n"
	"	ELSE coalesce(ci_rel(ci_lo, ci_hi, median) <= 0.005, 0) END;\n"
	"DROP INDEX results_noisy;\n"
	"CREATE INDEX results_imprecise ON results(cell) WHERE status = 'ok' AND NOT precise;\n"
	"DROP VIEW v_results;\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error,\n"
	"	       r.stop AS stop, r.launches AS launches, r.warmup AS warmup,\n"
	"	       r.cpu_user AS cpu_user, r.cpu_sys AS cpu_sys, r.peak_rss AS peak_rss,\n"
	"	       r.ci_lo AS ci_lo, r.ci_hi AS ci_hi, r.precise AS precise, r.settled AS settled\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
	/*
	 * 9: the command line of the launcher that started a run (runs.launcher: mpirun's or srun's words, read
	 * from the launcher process, launcher.c; NULL for a run started as sweep run alone), so that the
	 * resume command status prints is the one that ran it, on the same hosts
	 */
	"ALTER TABLE runs ADD COLUMN launcher TEXT;\n",
	/*
	 * 10: the GPU's conditions beside each result, in v_results: the energy of one launch (joules) and the
	 * mean power over the samples' span (watts), and the SM and memory clocks a run locked the GPU at
	 * (lock_sm, lock_mem: what the spec asked, in MHz, base clock included) and what NVML read while the
	 * lock held (locked_sm, locked_mem). Each is a metric of the result (measure.c, executor.c), kept in
	 * metrics as every other one is (so merge, --metric and the reports take them as they are); NULL
	 * where none was read.
	 */
	"DROP VIEW v_results;\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error,\n"
	"	       r.stop AS stop, r.launches AS launches, r.warmup AS warmup,\n"
	"	       r.cpu_user AS cpu_user, r.cpu_sys AS cpu_sys, r.peak_rss AS peak_rss,\n"
	"	       r.ci_lo AS ci_lo, r.ci_hi AS ci_hi, r.precise AS precise, r.settled AS settled,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'joules') AS joules,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'watts') AS watts,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'lock_sm') AS lock_sm,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'lock_mem') AS lock_mem,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'locked_sm') AS locked_sm,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'locked_mem') AS locked_mem\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
	/*
	 * 11: a note beside a result that its reader should know (results.note, in v_results): a command
	 * cell's default combine averaged several records of one item in one run ("2 records of item r
	 * averaged"), which a report shows as a footnote. NULL where there is nothing to say. results_noted
	 * finds the few that have one without reading every result.
	 */
	"ALTER TABLE results ADD COLUMN note TEXT;\n"
	"CREATE INDEX results_noted ON results(note) WHERE note IS NOT NULL;\n"
	"DROP VIEW v_results;\n"
	"CREATE VIEW v_results AS\n"
	"	SELECT r.id AS id, r.cell AS cell, c.sweep AS sweep, c.key AS key, c.params AS params,\n"
	"	       c.pass AS pass, c.replica AS replica, r.status AS status, r.attempt AS attempt,\n"
	"	       r.median AS median, r.mean AS mean, r.min AS min, r.max AS max, r.stdev AS stdev,\n"
	"	       r.noise AS noise, r.noise_ok AS noise_ok, r.n AS n, h.hostname AS host,\n"
	"	       w.gpu AS gpu,\n"
	"	       r.run AS run, r.q1 AS q1, r.q3 AS q3, r.sm_clock AS sm_clock,\n"
	"	       r.throttled AS throttled, r.started AS started, r.wall AS wall, r.error AS error,\n"
	"	       r.stop AS stop, r.launches AS launches, r.warmup AS warmup,\n"
	"	       r.cpu_user AS cpu_user, r.cpu_sys AS cpu_sys, r.peak_rss AS peak_rss,\n"
	"	       r.ci_lo AS ci_lo, r.ci_hi AS ci_hi, r.precise AS precise, r.settled AS settled,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'joules') AS joules,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'watts') AS watts,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'lock_sm') AS lock_sm,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'lock_mem') AS lock_mem,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'locked_sm') AS locked_sm,\n"
	"	       (SELECT value FROM metrics WHERE result = r.id AND name = 'locked_mem') AS locked_mem,\n"
	"	       r.note AS note\n"
	"	FROM results r JOIN cells c ON c.id = r.cell\n"
	"	LEFT JOIN workers w ON w.id = r.worker\n"
	"	LEFT JOIN hosts h ON h.id = w.host;\n",
};

/*
 * What a migration did, said when it is applied (NULL: nothing worth saying): a query run before the
 * script, whose one integer fills the message's %lld.
 */
const struct store_schema_note store_schema_notes[] = {
	{ NULL, NULL },
	{ NULL, NULL },
	{ "SELECT count(*) FROM cells WHERE params <>"
	  " sweep_param_defaults((SELECT kernel FROM sweeps WHERE name = cells.sweep), params)",
	  "cells may now be retired and results superseded; kernel defaults were written into the params of"
	  " %lld cells (their keys recomputed)" },
	{ NULL, NULL },
	{ NULL, NULL },
	{ NULL, NULL },
	{ NULL, NULL },
	{ "SELECT count(*) FROM results WHERE n >= 6",
	  "results now keep the 95 %% interval of their median: computed from the stored samples of %lld"
	  " results; kernel results whose interval is wider than +-0.5 %% (the default precision) are marked" },
	{ NULL, NULL },
	{ NULL, NULL },
	{ NULL, NULL },
};
_Static_assert(ARRAY_SIZE(store_schema_notes) == ARRAY_SIZE(store_schema_migrations),
	       "a note (or NULL) for every migration");

/* Every table the migrations make (test_store checks the list against a new database). */
const char *const store_schema_tables[] = {
	"sweeps", "runs", "hosts", "workers", "cells", "results", "samples", "metrics", "items", "controls",
	"probes", "predictions", "cell_counts", "grids", NULL,
};

int store_schema_check_kinds(sqlite3 *db, const char *path)
{
	sqlite3_stmt *s;
	int rc, ret = 0;

	/* Names are compared as SQLite does (case aside); a virtual table's code is not SQLite's file. */
	if (sqlite3_prepare_v2(db, "SELECT name, type, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master"
			       " WHERE type IN ('table', 'view')", -1, &s, NULL))
		return (error("cannot open '%s': %s", path, sqlite3_errmsg(db)), store_fail(db));
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		const char *type = (const char *)sqlite3_column_text(s, 1);

		for (const char *const *t = store_schema_tables; *t && name && type && !ret; t++)
			if (!strcasecmp(name, *t) && (strcmp(type, "table") || sqlite3_column_int(s, 2)))
				ret = (error("'%s' is not a sweep database: its '%s' is a %s, where sweep keeps "
					     "a table; refusing to read it", path, name,
					     strcmp(type, "table") ? type : "virtual table"), FAIL_NOT_SWEEP);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = (error("cannot open '%s': %s", path, sqlite3_errmsg(db)), store_fail(db));
	sqlite3_finalize(s);
	return ret;
}

int store_schema_version(void)
{
	return (int)ARRAY_SIZE(store_schema_migrations);
}
