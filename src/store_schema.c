/* store_schema.c: the versioned schema of the results database: one migration script per version. */
#include "store_int.h"
#include "util.h"

/*
 * Schema migrations: store_schema_migrations[i] takes a database from user_version i to i + 1, inside
 * one transaction (store.c). Append only: a released script never changes, or databases made by it would
 * differ from those made by the new one. ARCHITECTURE.md shows the resulting schema.
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
	/*
	 * 4: the 95 % interval of each result's median (ci_lo, ci_hi, in the median's unit), whether it met the
	 * precision asked (precise: what reports mark and --strict leaves out), and whether the SM clock had
	 * settled when sampling began (settled; NULL: no clock read), in v_results too. Results measured
	 * before have their interval computed here from their stored samples (median_ci, the same order
	 * statistics a run computes), and a kernel's is judged against the default precision, 0.005, which
	 * is what their specs ask now (none of them could name another); a command's result has no precision
	 * to miss. Their settled stays NULL: no one watched the clock.
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
	"	       r.ci_lo AS ci_lo, r.ci_hi AS ci_hi, r.precise AS precise, r.settled AS settled\n"
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
	{ "SELECT count(*) FROM results WHERE n >= 6",
	  "results now keep the 95 %% interval of their median: computed from the stored samples of %lld"
	  " results; kernel results whose interval is wider than +-0.5 %% (the default precision) are marked" },
};

int store_schema_version(void)
{
	return (int)ARRAY_SIZE(store_schema_migrations);
}
