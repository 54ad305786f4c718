/* store_merge.c: `sweep merge`: sweep databases from other hosts or jobs into one; every input untrusted. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>

#include "cli.h"
#include "json.h"
#include "plan.h"
#include "store.h"
#include "util.h"

/*
 * Tables merging adds to its output. They are not in the versioned schema (store.c): only merged
 * databases have them, and a database without them lacks nothing. merges logs each input that added
 * something; conflicts keeps an ok result whose cell already had another ok result (with different
 * values) in the output: summary, samples, metrics and items as JSON, nothing dropped.
 */
static const char merge_schema[] =
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
	"	sm_clock REAL, samples TEXT, metrics TEXT, items TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS conflicts_cell ON conflicts(cell);\n";

/* ---- the tables read from an input, with the type every column must hold ---- */

enum kind { K_INT, K_INT_NULL, K_REAL, K_REAL_NULL, K_TEXT, K_TEXT_NULL };

struct mcol {
	const char *name;
	enum kind kind;
};

struct mtable {
	const char *name;
	const struct mcol *cols;
	int ncols;
};

#define TABLE(name, cols) { name, cols, (int)ARRAY_SIZE(cols) }

static const struct mcol sweeps_cols[] = {
	{ "name", K_TEXT }, { "kernel", K_TEXT_NULL }, { "command", K_TEXT_NULL }, { "per", K_TEXT },
	{ "spec", K_TEXT }, { "hash", K_TEXT }, { "updated", K_TEXT },
};
static const struct mcol runs_cols[] = {
	{ "id", K_INT }, { "sweep", K_TEXT_NULL }, { "started", K_TEXT }, { "finished", K_TEXT_NULL },
	{ "argv", K_TEXT_NULL }, { "spec_hash", K_TEXT_NULL }, { "version", K_TEXT_NULL }, { "status", K_TEXT },
};
static const struct mcol hosts_cols[] = {
	{ "id", K_INT }, { "hostname", K_TEXT }, { "facts", K_TEXT }, { "hash", K_TEXT }, { "seen", K_TEXT },
};
static const struct mcol workers_cols[] = {
	{ "id", K_INT }, { "run", K_INT }, { "rank", K_INT }, { "host", K_INT_NULL }, { "gpu", K_INT_NULL },
	{ "gpu_uuid", K_TEXT_NULL }, { "binding", K_TEXT_NULL },
};
static const struct mcol cells_cols[] = {
	{ "id", K_INT }, { "sweep", K_TEXT }, { "key", K_TEXT }, { "params", K_TEXT }, { "pass", K_INT },
	{ "replica", K_TEXT }, { "ord", K_INT }, { "state", K_TEXT }, { "attempts", K_INT },
	{ "error", K_TEXT_NULL }, { "flight", K_INT },
};
/* The order matters: copy_result binds columns 1.. (after id and cell) by position. */
static const struct mcol results_cols[] = {
	{ "id", K_INT }, { "cell", K_INT }, { "run", K_INT_NULL }, { "worker", K_INT_NULL },
	{ "status", K_TEXT }, { "attempt", K_INT }, { "started", K_TEXT_NULL }, { "wall", K_REAL_NULL },
	{ "n", K_INT }, { "median", K_REAL_NULL }, { "mean", K_REAL_NULL }, { "min", K_REAL_NULL },
	{ "max", K_REAL_NULL }, { "stdev", K_REAL_NULL }, { "q1", K_REAL_NULL }, { "q3", K_REAL_NULL },
	{ "noise", K_REAL_NULL }, { "noise_ok", K_INT }, { "throttled", K_INT }, { "sm_clock", K_REAL_NULL },
	{ "error", K_TEXT_NULL }, { "stdout", K_TEXT_NULL }, { "stderr", K_TEXT_NULL },
};
static const struct mcol samples_cols[] = {
	{ "result", K_INT }, { "i", K_INT }, { "seconds", K_REAL }, { "sm_clock", K_REAL_NULL },
};
static const struct mcol metrics_cols[] = {
	{ "result", K_INT }, { "name", K_TEXT }, { "value", K_REAL_NULL },
};
static const struct mcol items_cols[] = {
	{ "result", K_INT }, { "item", K_TEXT }, { "metric", K_TEXT }, { "value", K_REAL_NULL },
};
static const struct mcol controls_cols[] = {
	{ "id", K_INT }, { "run", K_INT_NULL }, { "worker", K_INT_NULL }, { "sweep", K_TEXT },
	{ "params", K_TEXT }, { "started", K_TEXT_NULL }, { "median", K_REAL_NULL }, { "noise", K_REAL_NULL },
	{ "n", K_INT }, { "error", K_TEXT_NULL },
};
static const struct mcol probes_cols[] = {
	{ "id", K_INT }, { "host", K_INT_NULL }, { "gpu", K_INT_NULL }, { "name", K_TEXT },
	{ "value", K_REAL_NULL }, { "unit", K_TEXT_NULL }, { "run", K_INT_NULL }, { "measured", K_TEXT_NULL },
};
static const struct mcol predictions_cols[] = {
	{ "id", K_INT }, { "sweep", K_TEXT }, { "key", K_TEXT_NULL }, { "metric", K_TEXT },
	{ "value", K_REAL_NULL }, { "blind", K_INT }, { "frozen_at", K_TEXT_NULL }, { "sha256", K_TEXT_NULL },
	{ "source", K_TEXT_NULL },
};

enum { T_SWEEPS, T_RUNS, T_HOSTS, T_WORKERS, T_CELLS, T_RESULTS, T_SAMPLES, T_METRICS, T_ITEMS, T_CONTROLS,
       T_PROBES, T_PREDICTIONS, NTABLES };
static const struct mtable tables[NTABLES] = {
	TABLE("sweeps", sweeps_cols), TABLE("runs", runs_cols), TABLE("hosts", hosts_cols),
	TABLE("workers", workers_cols), TABLE("cells", cells_cols), TABLE("results", results_cols),
	TABLE("samples", samples_cols), TABLE("metrics", metrics_cols), TABLE("items", items_cols),
	TABLE("controls", controls_cols), TABLE("probes", probes_cols), TABLE("predictions", predictions_cols),
};

/* Columns that hold the id of a row of another table: each must name a row of the same input. */
static const struct {
	int table;
	const char *col;
	int target;
} refs[] = {
	{ T_WORKERS, "run", T_RUNS }, { T_WORKERS, "host", T_HOSTS }, { T_RESULTS, "cell", T_CELLS },
	{ T_RESULTS, "run", T_RUNS }, { T_RESULTS, "worker", T_WORKERS }, { T_SAMPLES, "result", T_RESULTS },
	{ T_METRICS, "result", T_RESULTS }, { T_ITEMS, "result", T_RESULTS }, { T_CONTROLS, "run", T_RUNS },
	{ T_CONTROLS, "worker", T_WORKERS }, { T_PROBES, "host", T_HOSTS }, { T_PROBES, "run", T_RUNS },
};

/* ids of an input's rows and of the rows they became in the output; filled in ascending input id. */
struct idmap {
	int64_t *from, *to;
	size_t n, alloc_from, alloc_to;
};

static void idmap_put(struct idmap *m, int64_t from, int64_t to)
{
	if (m->n && m->from[m->n - 1] >= from)
		BUG("idmap_put: ids out of order (%" PRId64 " after %" PRId64 ")", from, m->from[m->n - 1]);
	ALLOC_GROW(m->from, m->n + 1, m->alloc_from);
	ALLOC_GROW(m->to, m->n + 1, m->alloc_to);
	m->from[m->n] = from;
	m->to[m->n++] = to;
}

/* The output id of input id from, or 0 when it has none (a cell outside the shard). */
static int64_t idmap_get(const struct idmap *m, int64_t from)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->from[mid] == from)
			return m->to[mid];
		if (m->from[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void idmap_release(struct idmap *m)
{
	free(m->from);
	free(m->to);
	memset(m, 0, sizeof(*m));
}

/* A run's identity across databases: a hash of its row and of its workers' ranks, hosts and GPUs. */
struct runprint {
	uint64_t print;
	int64_t id;
};

struct input {
	const char *path;
	sqlite3 *db;
	struct idmap runs, hosts, workers, cells;
	struct store_merge_stats *st;
	int64_t merge;         /* merges.id in the output */
};

/* Prepared output statements, by name, each prepared on first use. */
enum ostmt {
	O_SWEEP_FIND, O_SWEEP_NEWER, O_SWEEP_ADD, O_HOST_FIND, O_HOST_ADD, O_HOST_LABELS, O_RUN_ADD, O_RUN_END,
	O_WORKER_FIND, O_WORKER_ADD, O_CELL_FIND, O_CELL_ADD, O_CELL_OK, O_CELL_QUARANTINE, O_RESULT_FIND,
	O_RESULT_OK, O_RESULT_ADD, O_SAMPLE_ADD, O_METRIC_ADD, O_ITEM_ADD, O_CONFLICT_FIND, O_CONFLICT_ADD,
	O_CONTROL_FIND, O_CONTROL_ADD, O_PROBE_FIND, O_PROBE_ADD, O_PREDICTION_FIND, O_PREDICTION_ADD, NOSTMT
};

/* The merge in progress. */
struct merge {
	const struct store_merge_opts *o;
	sqlite3 *out;
	const char *out_path;
	struct runprint *prints;
	size_t nprints, alloc_prints;
	char now[32];
	sqlite3_stmt *stmt[NOSTMT];
};

static int in_err(struct input *in, const char *what)
{
	return error("cannot merge '%s': %s: %s", in->path, what, sqlite3_errmsg(in->db));
}

static int out_err(struct merge *m)
{
	return error("cannot merge into '%s': %s", m->out_path, sqlite3_errmsg(m->out));
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

/* "SELECT "c1", "c2", ... FROM "table"" and then tail. */
static void select_sql(struct strbuf *sb, const struct mtable *t, const char *tail)
{
	sb_reset(sb);
	sb_adds(sb, "SELECT ");
	for (int i = 0; i < t->ncols; i++)
		sb_addf(sb, "%s\"%s\"", i ? ", " : "", t->cols[i].name);
	sb_addf(sb, " FROM \"%s\"%s", t->name, tail);
}

static const char *type_name(int type)
{
	switch (type) {
	case SQLITE_INTEGER: return "an integer";
	case SQLITE_FLOAT: return "a real number";
	case SQLITE_TEXT: return "text";
	case SQLITE_BLOB: return "a blob";
	default: return "NULL";
	}
}

/* Every column of the current row of s holds what t says it must. */
static int check_row(struct input *in, const struct mtable *t, sqlite3_stmt *s)
{
	for (int i = 0; i < t->ncols; i++) {
		int type = sqlite3_column_type(s, i), ok;

		switch (t->cols[i].kind) {
		case K_INT_NULL: ok = type == SQLITE_NULL || type == SQLITE_INTEGER; break;
		case K_INT: ok = type == SQLITE_INTEGER; break;
		case K_REAL_NULL: ok = type == SQLITE_NULL || type == SQLITE_INTEGER || type == SQLITE_FLOAT; break;
		case K_REAL: ok = type == SQLITE_INTEGER || type == SQLITE_FLOAT; break;
		case K_TEXT_NULL: ok = type == SQLITE_NULL || type == SQLITE_TEXT; break;
		default: ok = type == SQLITE_TEXT; break;
		}
		if (!ok)
			return error("'%s' is not a valid sweep database: %s.%s holds %s", in->path, t->name,
				     t->cols[i].name, type_name(type));
	}
	return 0;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

/* Text from an input made fit for a message: at most 48 bytes, control bytes as '?' (no escapes to a
 * terminal from a hostile file). */
static const char *shown(char buf[52], const char *s)
{
	return s ? printable(buf, s, 48) : "NULL";
}

/* ---- opening and checking an input ---- */

/*
 * Everything the merge does on an input is a plain SELECT of named columns of named tables, a few
 * PRAGMAs and the read transaction around them. The authorizer refuses anything else, so that even a
 * schema object that slipped through the checks cannot make this connection do more.
 */
static int input_authorizer(void *data, int action, const char *a, const char *b, const char *c,
			    const char *d)
{
	static const char *const pragmas[] = { "quick_check", "user_version", "table_xinfo" };

	(void)data, (void)b, (void)c, (void)d;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_FUNCTION:
	case SQLITE_TRANSACTION:
		return SQLITE_OK;
	case SQLITE_PRAGMA:
		for (size_t i = 0; i < ARRAY_SIZE(pragmas); i++)
			if (a && !strcmp(a, pragmas[i]))
				return SQLITE_OK;
		return SQLITE_DENY;
	default:
		return SQLITE_DENY;
	}
}

static int int_query(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *s = prep(db, sql);
	int rc;

	if (!s)
		return -1;
	rc = sqlite3_step(s);
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The tables, columns and objects of the input's schema are those of a sweep database. */
static int input_check_schema(struct input *in)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s;
	int ret = -1, rc;

	/* No trigger: a sweep database has none, and one here is there to run code when written. */
	if (!(s = prep(in->db, "SELECT type, name, coalesce(sql, '') FROM sqlite_master"))) {
		in_err(in, "cannot read its schema");
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *type = col_text(s, 0), *name = col_text(s, 1), *sql = col_text(s, 2);

		if (type && !strcmp(type, "trigger")) {
			char a[52];

			error("'%s' has a trigger ('%s'), which no sweep database has: refusing it", in->path,
			      shown(a, name));
			sqlite3_finalize(s);
			goto out;
		}
		if (type && !strcmp(type, "table") && sql && !strncasecmp(sql, "CREATE VIRTUAL", 14)) {
			for (int t = 0; t < NTABLES; t++)
				if (name && !strcmp(name, tables[t].name)) {
					error("'%s': table '%s' is a virtual table: not a sweep database", in->path, name);
					sqlite3_finalize(s);
					goto out;
				}
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		in_err(in, "cannot read its schema");
		goto out;
	}
	for (int t = 0; t < NTABLES; t++) {
		const struct mtable *tb = &tables[t];
		int found[32] = { 0 }, known;
		int64_t n;

		sb_reset(&sb);
		sb_addf(&sb, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", tb->name);
		if (int_query(in->db, sb.buf, &n)) {
			in_err(in, "cannot read its schema");
			goto out;
		}
		if (n != 1) {
			error("'%s' is not a sweep database: it has no table '%s'", in->path, tb->name);
			goto out;
		}
		/* Hidden (generated) columns are computed when read: a sweep database has none. */
		sb_reset(&sb);
		sb_addf(&sb, "PRAGMA table_xinfo(\"%s\")", tb->name);
		if (!(s = prep(in->db, sb.buf))) {
			in_err(in, "cannot read its schema");
			goto out;
		}
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *name = col_text(s, 1);

			if (sqlite3_column_int(s, 6)) {
				char a[52];

				error("'%s': column %s.%s is generated: not a sweep database", in->path, tb->name,
				      shown(a, name));
				sqlite3_finalize(s);
				goto out;
			}
			known = 0;
			for (int c = 0; c < tb->ncols; c++)
				if (name && !strcmp(name, tb->cols[c].name))
					found[c] = known = 1;
			/* The copy reads named columns only: another column's values would be dropped
			 * without a word (as out_check_columns refuses for the output). */
			if (!known) {
				char a[52];

				error("'%s': table '%s' has column '%s', which sweep merge does not copy: not a "
				      "sweep database of this version", in->path, tb->name, shown(a, name));
				sqlite3_finalize(s);
				goto out;
			}
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE) {
			in_err(in, "cannot read its schema");
			goto out;
		}
		for (int c = 0; c < tb->ncols; c++)
			if (!found[c]) {
				error("'%s' is not a sweep database: table '%s' has no column '%s'", in->path, tb->name,
				      tb->cols[c].name);
				goto out;
			}
	}
	ret = 0;
out:
	sb_release(&sb);
	return ret;
}

static int input_open(struct input *in)
{
	int64_t version;
	sqlite3_stmt *s;
	struct stat sb;
	int on = 1, off = 0, rc;
	const char *msg;

	if (stat(in->path, &sb))
		return error("cannot open '%s': %s", in->path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return error("cannot merge '%s': not a regular file", in->path);
	if (sqlite3_open_v2(in->path, &in->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL))
		return error("cannot open '%s': %s", in->path, in->db ? sqlite3_errmsg(in->db) : "out of memory");
	/* Defensive: the schema is the input's, so nothing in it is trusted to run. */
	if (sqlite3_db_config(in->db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_VIEW, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, off, NULL) ||
	    sqlite3_exec(in->db, "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0",
			 NULL, NULL, NULL))
		return in_err(in, "cannot set defensive options");
	sqlite3_busy_timeout(in->db, 10000);
	sqlite3_set_authorizer(in->db, input_authorizer, NULL);
	/* The first read finds out whether it is SQLite at all; the read transaction then holds one
	 * snapshot for the checks and the copy, even while a run still writes the file. */
	if (sqlite3_exec(in->db, "BEGIN", NULL, NULL, NULL) || int_query(in->db, "PRAGMA user_version", &version))
		return error("cannot merge '%s': %s", in->path, sqlite3_errmsg(in->db));
	if (!(s = prep(in->db, "PRAGMA quick_check")))
		return in_err(in, "cannot check it");
	rc = sqlite3_step(s);
	msg = rc == SQLITE_ROW ? col_text(s, 0) : NULL;
	if (rc != SQLITE_ROW || !msg || strcmp(msg, "ok")) {
		char *why = xstrdup(msg ? msg : sqlite3_errmsg(in->db));

		/* quick_check's report has line breaks; the message is one line. */
		for (char *p = why; *p; p++)
			if (*p == '\n')
				*p = ' ';
		error("cannot merge '%s': the database is corrupt (%.200s)", in->path, why);
		free(why);
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	if (version == 0)
		return error("'%s' is not a sweep database (no sweep schema version)", in->path);
	if (version > store_schema_version())
		return error("'%s' has schema version %" PRId64 ", newer than this sweep knows (%d): upgrade sweep",
			     in->path, version, store_schema_version());
	if (version != store_schema_version())
		return error("'%s' has schema version %" PRId64 " (current %d): let this sweep migrate a copy "
			     "of it ('sweep plan SPEC --db COPY') and merge the copy", in->path, version,
			     store_schema_version());
	return input_check_schema(in);
}

/* Every row of every table is well typed, cells carry the keys of their contents, ids refer to rows. */
static int input_check_rows(struct input *in)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	struct json_obj o = JSON_OBJ_INIT;
	char err[128], key[17];
	int ret = -1, rc;

	for (int t = 0; t < NTABLES; t++) {
		select_sql(&sb, &tables[t], "");
		if (!(s = prep(in->db, sb.buf))) {
			in_err(in, "cannot read it");
			goto out;
		}
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (check_row(in, &tables[t], s))
				goto out;
			if (t == T_CELLS) {
				const char *params = col_text(s, 3), *state = col_text(s, 7);
				char a[52], b[52];
				static const char *const states[] = { "planned", "running", "ok", "quarantined",
								      "template" };
				size_t i;

				for (i = 0; i < ARRAY_SIZE(states) && strcmp(states[i], state); i++)
					;
				if (i == ARRAY_SIZE(states)) {
					error("'%s': cell %s has state '%s'", in->path, shown(a, col_text(s, 2)),
					      shown(b, state));
					goto out;
				}
				if (json_parse_flat(params, &o, 0, err, sizeof(err))) {
					error("'%s': cell %s: params are not a flat JSON object: %s", in->path,
					      shown(a, col_text(s, 2)), err);
					goto out;
				}
				json_obj_release(&o);
				/* Cells are matched by key: a key must be the hash of what the cell is. */
				plan_key(col_text(s, 1), params, sqlite3_column_int(s, 4), col_text(s, 5), key);
				if (strcmp(key, col_text(s, 2))) {
					error("'%s': cell %s does not have the key of its sweep, params, pass and "
					      "replica (%s)", in->path, shown(a, col_text(s, 2)), key);
					goto out;
				}
			} else if (t == T_HOSTS) {
				char a[52];

				if (json_parse_flat(col_text(s, 2), &o, 1, err, sizeof(err))) {
					error("'%s': host %s: facts are not a JSON object: %s", in->path,
					      shown(a, col_text(s, 1)), err);
					goto out;
				}
				json_obj_release(&o);
			} else if (t == T_RESULTS) {
				const char *st = col_text(s, 4);
				char a[52];

				if (strcmp(st, "ok") && strcmp(st, "error") && strcmp(st, "timeout")) {
					error("'%s': a result has status '%s'", in->path, shown(a, st));
					goto out;
				}
			}
		}
		if (rc != SQLITE_DONE) {
			in_err(in, "cannot read it");
			goto out;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
		int64_t n;

		sb_reset(&sb);
		sb_addf(&sb, "SELECT count(*) FROM \"%s\" WHERE \"%s\" IS NOT NULL AND \"%s\" NOT IN"
			" (SELECT id FROM \"%s\")", tables[refs[i].table].name, refs[i].col, refs[i].col,
			tables[refs[i].target].name);
		if (int_query(in->db, sb.buf, &n)) {
			in_err(in, "cannot read it");
			goto out;
		}
		if (n) {
			error("'%s': %" PRId64 " row%s of %s name%s a row of %s that is not there (%s.%s)", in->path,
			      n, n == 1 ? "" : "s", tables[refs[i].table].name, n == 1 ? "s" : "",
			      tables[refs[i].target].name, tables[refs[i].table].name, refs[i].col);
			goto out;
		}
	}
	ret = 0;
out:
	sqlite3_finalize(s);
	json_obj_release(&o);
	sb_release(&sb);
	return ret;
}

/* ---- run identities ---- */

static uint64_t print_text(uint64_t h, const char *s)
{
	/* NULL and "" differ: NULL hashes a byte no text holds. */
	if (!s)
		return hash64(h, "\xff", 2);
	return hash64(h, s, strlen(s) + 1);
}

/* The identity of run id of db from f (its sweep, start, argv, spec hash and version), then for each
 * worker in rank order its rank, its host's hash and its GPU. -1 after error(). */
static int run_print(sqlite3 *db, const char *const f[5], int64_t id, uint64_t *out)
{
	static const char wsql[] = "SELECT w.rank, h.hash, w.gpu FROM workers w LEFT JOIN hosts h ON h.id = w.host"
		" WHERE w.run = ?1 ORDER BY w.rank, w.id";
	sqlite3_stmt *w = prep(db, wsql);
	uint64_t h = HASH64_INIT;
	int rc;

	if (!w)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	for (int i = 0; i < 5; i++)
		h = print_text(h, f[i]);
	sqlite3_bind_int64(w, 1, id);
	while ((rc = sqlite3_step(w)) == SQLITE_ROW)
		for (int i = 0; i < 3; i++)
			h = print_text(h, (const char *)sqlite3_column_text(w, i));
	sqlite3_finalize(w);
	if (rc != SQLITE_DONE)
		return error("cannot read workers: %s", sqlite3_errmsg(db));
	*out = h;
	return 0;
}

static const char run_print_sql[] =
	"SELECT sweep, started, argv, spec_hash, version, id FROM runs ORDER BY id";

static int load_out_prints(struct merge *m)
{
	sqlite3_stmt *s = prep(m->out, run_print_sql);
	int rc;

	if (!s)
		return out_err(m);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *f[5] = { col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4) };
		struct runprint rp;

		rp.id = sqlite3_column_int64(s, 5);
		if (run_print(m->out, f, rp.id, &rp.print)) {
			sqlite3_finalize(s);
			return -1;
		}
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints++] = rp;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : out_err(m);
}

/* ---- copying ---- */

static void bind_col(sqlite3_stmt *dst, int i, sqlite3_stmt *src, int j)
{
	sqlite3_bind_value(dst, i, sqlite3_column_value(src, j));
}

static void bind_id(sqlite3_stmt *s, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(s, i, id);
	else
		sqlite3_bind_null(s, i);
}

/* Step an output statement to its end; *found and the first column of its first row (when wanted). */
static int out_step(struct merge *m, sqlite3_stmt *s, int *found, int64_t *val)
{
	int rc = sqlite3_step(s);

	if (found)
		*found = rc == SQLITE_ROW;
	if (val)
		*val = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : out_err(m);
}

static const char *const ostmt_sql[NOSTMT] = {
	[O_SWEEP_FIND] = "SELECT hash, updated FROM sweeps WHERE name = ?1",
	[O_SWEEP_NEWER] = "UPDATE sweeps SET kernel = ?2, command = ?3, per = ?4, spec = ?5, hash = ?6, updated = ?7"
		" WHERE name = ?1",
	[O_SWEEP_ADD] = "INSERT INTO sweeps(name, kernel, command, per, spec, hash, updated)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[O_HOST_FIND] = "SELECT id FROM hosts WHERE hash = ?1",
	[O_HOST_ADD] = "INSERT INTO hosts(hostname, facts, hash, seen) VALUES(?1, ?2, ?3, ?4)",
	/* Labels come from an inventory after the run: the input's fill in where the output has none. */
	[O_HOST_LABELS] = "UPDATE hosts SET facts = json_set(facts, '$.labels', json_extract(?2, '$.labels')),"
		" seen = max(seen, ?3) WHERE id = ?1 AND json_extract(facts, '$.labels') IS NULL"
		" AND json_type(?2, '$.labels') = 'object'",
	[O_RUN_ADD] = "INSERT INTO runs(sweep, started, finished, argv, spec_hash, version, status)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	/* A run that was still going when its database was first merged has ended since. */
	[O_RUN_END] = "UPDATE runs SET finished = ?2, status = ?3 WHERE id = ?1 AND finished IS NULL"
		" AND ?2 IS NOT NULL",
	[O_WORKER_FIND] = "SELECT id FROM workers WHERE run = ?1 AND rank = ?2",
	[O_WORKER_ADD] = "INSERT INTO workers(run, rank, host, gpu, gpu_uuid, binding)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	[O_CELL_FIND] = "SELECT id FROM cells WHERE key = ?1",
	[O_CELL_ADD] = "INSERT INTO cells(sweep, key, params, pass, replica, ord, state, attempts, error)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[O_CELL_OK] = "UPDATE cells SET state = 'ok', error = NULL WHERE id = ?1",
	/* What made a cell quarantined elsewhere is news where it has not run yet. */
	[O_CELL_QUARANTINE] = "UPDATE cells SET state = 'quarantined', error = ?2, attempts = max(attempts, ?3)"
		" WHERE id = ?1 AND state = 'planned'",
	[O_RESULT_FIND] = "SELECT id FROM results WHERE cell = ?1 AND attempt = ?2 AND run IS ?3"
		" AND started IS ?4 AND status = ?5",
	[O_RESULT_OK] = "SELECT id, n, median, mean, min, max FROM results WHERE cell = ?1 AND status = 'ok'",
	[O_RESULT_ADD] = "INSERT INTO results(cell, run, worker, status, attempt, started, wall, n, median, mean,"
		" min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, error, stdout, stderr)"
		" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,"
		" ?20, ?21, ?22)",
	[O_SAMPLE_ADD] = "INSERT INTO samples(result, i, seconds, sm_clock) VALUES(?1, ?2, ?3, ?4)",
	[O_METRIC_ADD] = "INSERT INTO metrics(result, name, value) VALUES(?1, ?2, ?3)",
	[O_ITEM_ADD] = "INSERT INTO items(result, item, metric, value) VALUES(?1, ?2, ?3, ?4)",
	[O_CONFLICT_FIND] = "SELECT id FROM conflicts WHERE cell = ?1 AND attempt = ?2 AND run IS ?3"
		" AND started IS ?4",
	[O_CONFLICT_ADD] = "INSERT INTO conflicts(merge, cell, kept, source, run, worker, attempt, started, wall,"
		" n, median, mean, min, max, stdev, q1, q3, noise, noise_ok, throttled, sm_clock, samples, metrics,"
		" items) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
		" ?19, ?20, ?21, ?22, ?23, ?24)",
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
};

static sqlite3_stmt *ost(struct merge *m, enum ostmt which)
{
	if (!m->stmt[which] && !(m->stmt[which] = prep(m->out, ostmt_sql[which])))
		out_err(m);
	return m->stmt[which];
}

static void ost_release(struct merge *m)
{
	for (int i = 0; i < NOSTMT; i++) {
		sqlite3_finalize(m->stmt[i]);
		m->stmt[i] = NULL;
	}
}

/* Read every row of table t of the input (ORDER BY tail) and hand it to fn. */
static int each_row(struct merge *m, struct input *in, int t, const char *tail,
		    int (*fn)(struct merge *, struct input *, sqlite3_stmt *))
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc, ret = 0;

	select_sql(&sb, &tables[t], tail);
	s = prep(in->db, sb.buf);
	sb_release(&sb);
	if (!s)
		return in_err(in, "cannot read it");
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = check_row(in, &tables[t], s) || fn(m, in, s) ? -1 : 0;
	if (!ret && rc != SQLITE_DONE)
		ret = in_err(in, "cannot read it");
	sqlite3_finalize(s);
	return ret;
}

static int copy_sweep(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_SWEEP_FIND), *a = ost(m, O_SWEEP_ADD), *u = ost(m, O_SWEEP_NEWER);
	int rc, newer = 0;

	if (!f || !a || !u)
		return -1;
	bind_col(f, 1, s, 0);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		const char *hash = (const char *)sqlite3_column_text(f, 0);
		const char *updated = (const char *)sqlite3_column_text(f, 1);

		/* Another spec under the same name (the grid grew, say): cells still match by key, and the
		 * sweep keeps the newer text. */
		if (hash && strcmp(hash, col_text(s, 5))) {
			char a[52];

			newer = updated && strcmp(col_text(s, 6), updated) > 0;
			warning("'%s': sweep '%s' has another spec than in '%s'; keeping the newer one, %s's",
				in->path, shown(a, col_text(s, 0)), m->out_path, newer ? in->path : m->out_path);
		}
		sqlite3_reset(f);
		if (!newer)
			return 0;
		for (int i = 0; i < 7; i++)
			bind_col(u, i + 1, s, i);
		return out_step(m, u, NULL, NULL);
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return out_err(m);
	for (int i = 0; i < 7; i++)
		bind_col(a, i + 1, s, i);
	return out_step(m, a, NULL, NULL);
}

static int copy_host(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_HOST_FIND), *a = ost(m, O_HOST_ADD), *l = ost(m, O_HOST_LABELS);
	int64_t id;
	int found;

	if (!f || !a || !l)
		return -1;
	bind_col(f, 1, s, 3);
	if (out_step(m, f, &found, &id))
		return -1;
	if (found) {
		sqlite3_bind_int64(l, 1, id);
		bind_col(l, 2, s, 2);
		bind_col(l, 3, s, 4);
		if (out_step(m, l, NULL, NULL))
			return -1;
	} else {
		for (int i = 1; i < 5; i++)
			bind_col(a, i, s, i);
		if (out_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		in->st->hosts_new++;
	}
	idmap_put(&in->hosts, sqlite3_column_int64(s, 0), id);
	return 0;
}

static int copy_run(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	const char *f[5] = { col_text(s, 1), col_text(s, 2), col_text(s, 4), col_text(s, 5), col_text(s, 6) };
	sqlite3_stmt *a = ost(m, O_RUN_ADD), *e = ost(m, O_RUN_END);
	int64_t src = sqlite3_column_int64(s, 0), id = 0;
	uint64_t print;

	if (!a || !e || run_print(in->db, f, src, &print))
		return -1;
	for (size_t i = 0; i < m->nprints && !id; i++)
		if (m->prints[i].print == print)
			id = m->prints[i].id;
	if (id) {
		sqlite3_bind_int64(e, 1, id);
		bind_col(e, 2, s, 3);
		bind_col(e, 3, s, 7);
		if (out_step(m, e, NULL, NULL))
			return -1;
	} else {
		for (int i = 1; i < 8; i++)
			bind_col(a, i, s, i);
		if (out_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		ALLOC_GROW(m->prints, m->nprints + 1, m->alloc_prints);
		m->prints[m->nprints].print = print;
		m->prints[m->nprints++].id = id;
		in->st->runs_new++;
	}
	idmap_put(&in->runs, src, id);
	return 0;
}

static int copy_worker(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_WORKER_FIND), *a = ost(m, O_WORKER_ADD);
	int64_t run = idmap_get(&in->runs, sqlite3_column_int64(s, 1)), id;
	int found;

	if (!f || !a)
		return -1;
	if (!run)
		BUG("worker of an unmapped run");
	sqlite3_bind_int64(f, 1, run);
	bind_col(f, 2, s, 2);
	if (out_step(m, f, &found, &id))
		return -1;
	if (!found) {
		sqlite3_bind_int64(a, 1, run);
		bind_col(a, 2, s, 2);
		bind_id(a, 3, sqlite3_column_type(s, 3) == SQLITE_NULL ? 0 :
			idmap_get(&in->hosts, sqlite3_column_int64(s, 3)));
		bind_col(a, 4, s, 4);
		bind_col(a, 5, s, 5);
		bind_col(a, 6, s, 6);
		if (out_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
	}
	idmap_put(&in->workers, sqlite3_column_int64(s, 0), id);
	return 0;
}

static int copy_cell(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_CELL_FIND), *a = ost(m, O_CELL_ADD), *q = ost(m, O_CELL_QUARANTINE);
	const char *state = col_text(s, 7);
	int64_t id;
	int found;

	if (!f || !a || !q)
		return -1;
	if (m->o && m->o->nshards &&
	    store_shard(col_text(s, 1), col_text(s, 3), sqlite3_column_int(s, 4), m->o->nshards) != m->o->shard)
		return 0;
	in->st->cells++;
	bind_col(f, 1, s, 2);
	if (out_step(m, f, &found, &id))
		return -1;
	if (!found) {
		/* Nothing runs the cell in the output, and it becomes ok with its ok result only. */
		if (!strcmp(state, "running") || !strcmp(state, "ok"))
			state = "planned";
		for (int i = 1; i < 7; i++)
			bind_col(a, i, s, i);
		sqlite3_bind_text(a, 7, state, -1, SQLITE_TRANSIENT);
		bind_col(a, 8, s, 8);
		bind_col(a, 9, s, 9);
		if (out_step(m, a, NULL, NULL))
			return -1;
		id = sqlite3_last_insert_rowid(m->out);
		in->st->cells_new++;
	} else if (!strcmp(state, "quarantined")) {
		sqlite3_bind_int64(q, 1, id);
		bind_col(q, 2, s, 9);
		bind_col(q, 3, s, 8);
		if (out_step(m, q, NULL, NULL))
			return -1;
	}
	idmap_put(&in->cells, sqlite3_column_int64(s, 0), id);
	return 0;
}

/* JSON of a result's samples, metrics and items in the input, for a conflict row. */
static int result_json(struct input *in, int64_t id, struct strbuf *samples, struct strbuf *metrics,
		       struct strbuf *items)
{
	static const char *const sql[] = {
		"SELECT seconds FROM samples WHERE result = ?1 ORDER BY i",
		"SELECT name, value FROM metrics WHERE result = ?1 ORDER BY name",
		"SELECT item, metric, value FROM items WHERE result = ?1 ORDER BY item, metric",
	};
	struct strbuf *out[] = { samples, metrics, items };

	for (int k = 0; k < 3; k++) {
		sqlite3_stmt *s = prep(in->db, sql[k]);
		int rc, n = 0;

		if (!s)
			return in_err(in, "cannot read it");
		sqlite3_bind_int64(s, 1, id);
		sb_addc(out[k], k == 1 ? '{' : '[');
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			double v = sqlite3_column_double(s, k);

			if (n++)
				sb_addc(out[k], ',');
			if (k == 1) {
				json_add_str(out[k], col_text(s, 0) ? col_text(s, 0) : "");
				sb_addc(out[k], ':');
			} else if (k == 2) {
				sb_addc(out[k], '[');
				json_add_str(out[k], col_text(s, 0) ? col_text(s, 0) : "");
				sb_addc(out[k], ',');
				json_add_str(out[k], col_text(s, 1) ? col_text(s, 1) : "");
				sb_addc(out[k], ',');
			}
			if (sqlite3_column_type(s, k) == SQLITE_NULL)
				sb_adds(out[k], "null");
			else
				json_add_num(out[k], v);
			if (k == 2)
				sb_addc(out[k], ']');
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return in_err(in, "cannot read it");
		sb_addc(out[k], k == 1 ? '}' : ']');
	}
	return 0;
}

/* Two ok results say the same: equal counts and summaries (NULL equal to NULL). */
static int same_values(sqlite3_stmt *kept, sqlite3_stmt *s)
{
	/* kept: id, n, median, mean, min, max; s: results_cols (n 8, median 9, mean 10, min 11, max 12). */
	static const int pairs[][2] = { { 1, 8 }, { 2, 9 }, { 3, 10 }, { 4, 11 }, { 5, 12 } };

	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		int a = sqlite3_column_type(kept, pairs[i][0]), b = sqlite3_column_type(s, pairs[i][1]);

		if ((a == SQLITE_NULL) != (b == SQLITE_NULL))
			return 0;
		if (a != SQLITE_NULL &&
		    sqlite3_column_double(kept, pairs[i][0]) != sqlite3_column_double(s, pairs[i][1]))
			return 0;
	}
	return 1;
}

static int add_conflict(struct merge *m, struct input *in, sqlite3_stmt *s, int64_t cell, int64_t run,
			int64_t worker, int64_t kept)
{
	sqlite3_stmt *f = ost(m, O_CONFLICT_FIND), *a = ost(m, O_CONFLICT_ADD);
	struct strbuf samples = STRBUF_INIT, metrics = STRBUF_INIT, items = STRBUF_INIT;
	int found, ret = -1;

	if (!f || !a)
		return -1;
	sqlite3_bind_int64(f, 1, cell);
	bind_col(f, 2, s, 5);
	bind_id(f, 3, run);
	bind_col(f, 4, s, 6);
	if (out_step(m, f, &found, NULL))
		return -1;
	if (found) {
		in->st->results_same++;
		return 0;
	}
	if (result_json(in, sqlite3_column_int64(s, 0), &samples, &metrics, &items))
		goto out;
	sqlite3_bind_int64(a, 1, in->merge);
	sqlite3_bind_int64(a, 2, cell);
	sqlite3_bind_int64(a, 3, kept);
	sqlite3_bind_text(a, 4, in->path, -1, SQLITE_TRANSIENT);
	bind_id(a, 5, run);
	bind_id(a, 6, worker);
	/* attempt .. sm_clock: results_cols 5 .. 19, except status (4). */
	for (int i = 5; i <= 19; i++)
		bind_col(a, 7 + i - 5, s, i);
	sqlite3_bind_text(a, 22, samples.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(a, 23, metrics.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(a, 24, items.buf, -1, SQLITE_TRANSIENT);
	if (out_step(m, a, NULL, NULL))
		goto out;
	in->st->conflicts++;
	ret = 0;
out:
	sb_release(&samples);
	sb_release(&metrics);
	sb_release(&items);
	return ret;
}

/* Samples, metrics and items of input result src, as children of output result dst. */
static int copy_details(struct merge *m, struct input *in, int64_t src, int64_t dst)
{
	static const struct {
		int table;
		enum ostmt add;
	} kids[] = { { T_SAMPLES, O_SAMPLE_ADD }, { T_METRICS, O_METRIC_ADD }, { T_ITEMS, O_ITEM_ADD } };
	struct strbuf sb = STRBUF_INIT;

	for (size_t k = 0; k < ARRAY_SIZE(kids); k++) {
		const struct mtable *t = &tables[kids[k].table];
		sqlite3_stmt *s, *a = ost(m, kids[k].add);
		int rc = SQLITE_DONE;

		select_sql(&sb, t, " WHERE result = ?1");
		if (!a || !(s = prep(in->db, sb.buf))) {
			sb_release(&sb);
			return a ? in_err(in, "cannot read it") : -1;
		}
		sqlite3_bind_int64(s, 1, src);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (check_row(in, t, s))
				break;
			sqlite3_bind_int64(a, 1, dst);
			for (int i = 1; i < t->ncols; i++)
				bind_col(a, i + 1, s, i);
			if (out_step(m, a, NULL, NULL))
				break;
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE) {
			sb_release(&sb);
			return rc == SQLITE_ROW ? -1 : in_err(in, "cannot read it");
		}
	}
	sb_release(&sb);
	return 0;
}

static int copy_result(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_RESULT_FIND), *k = ost(m, O_RESULT_OK), *a = ost(m, O_RESULT_ADD);
	sqlite3_stmt *c = ost(m, O_CELL_OK);
	int64_t cell = idmap_get(&in->cells, sqlite3_column_int64(s, 1)), run = 0, worker = 0, id;
	int ok = !strcmp(col_text(s, 4), "ok"), found;

	if (!f || !k || !a || !c)
		return -1;
	if (!cell)
		return 0;   /* a cell of another shard */
	if (sqlite3_column_type(s, 2) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 2));
	if (sqlite3_column_type(s, 3) != SQLITE_NULL)
		worker = idmap_get(&in->workers, sqlite3_column_int64(s, 3));
	sqlite3_bind_int64(f, 1, cell);
	bind_col(f, 2, s, 5);
	bind_id(f, 3, run);
	bind_col(f, 4, s, 6);
	bind_col(f, 5, s, 4);
	if (out_step(m, f, &found, NULL))
		return -1;
	if (found) {
		in->st->results_same++;
		return 0;
	}
	if (ok) {
		int rc;

		sqlite3_bind_int64(k, 1, cell);
		rc = sqlite3_step(k);
		if (rc == SQLITE_ROW) {
			int64_t kept = sqlite3_column_int64(k, 0);
			int same = same_values(k, s);

			sqlite3_reset(k);
			if (same) {
				in->st->results_same++;
				return 0;
			}
			return add_conflict(m, in, s, cell, run, worker, kept);
		}
		sqlite3_reset(k);
		if (rc != SQLITE_DONE)
			return out_err(m);
	}
	sqlite3_bind_int64(a, 1, cell);
	bind_id(a, 2, run);
	bind_id(a, 3, worker);
	for (int i = 4; i < (int)ARRAY_SIZE(results_cols); i++)
		bind_col(a, i, s, i);
	if (out_step(m, a, NULL, NULL))
		return -1;
	id = sqlite3_last_insert_rowid(m->out);
	if (copy_details(m, in, sqlite3_column_int64(s, 0), id))
		return -1;
	in->st->results_new++;
	if (ok) {
		sqlite3_bind_int64(c, 1, cell);
		return out_step(m, c, NULL, NULL);
	}
	return 0;
}

static int copy_control(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_CONTROL_FIND), *a = ost(m, O_CONTROL_ADD);
	int64_t run = 0, worker = 0;
	int found;

	if (!f || !a)
		return -1;
	if (sqlite3_column_type(s, 1) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 1));
	if (sqlite3_column_type(s, 2) != SQLITE_NULL)
		worker = idmap_get(&in->workers, sqlite3_column_int64(s, 2));
	bind_id(f, 1, run);
	bind_id(f, 2, worker);
	bind_col(f, 3, s, 3);
	bind_col(f, 4, s, 4);
	bind_col(f, 5, s, 5);
	if (out_step(m, f, &found, NULL))
		return -1;
	if (found)
		return 0;
	bind_id(a, 1, run);
	bind_id(a, 2, worker);
	for (int i = 3; i < 10; i++)
		bind_col(a, i, s, i);
	if (out_step(m, a, NULL, NULL))
		return -1;
	in->st->controls_new++;
	return 0;
}

static int copy_probe(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_PROBE_FIND), *a = ost(m, O_PROBE_ADD);
	int64_t host = 0, run = 0;
	int found;

	if (!f || !a)
		return -1;
	if (sqlite3_column_type(s, 1) != SQLITE_NULL)
		host = idmap_get(&in->hosts, sqlite3_column_int64(s, 1));
	if (sqlite3_column_type(s, 6) != SQLITE_NULL)
		run = idmap_get(&in->runs, sqlite3_column_int64(s, 6));
	bind_id(f, 1, host);
	bind_col(f, 2, s, 2);
	bind_col(f, 3, s, 3);
	bind_id(f, 4, run);
	bind_col(f, 5, s, 7);
	if (out_step(m, f, &found, NULL))
		return -1;
	if (found)
		return 0;
	bind_id(a, 1, host);
	bind_col(a, 2, s, 2);
	bind_col(a, 3, s, 3);
	bind_col(a, 4, s, 4);
	bind_col(a, 5, s, 5);
	bind_id(a, 6, run);
	bind_col(a, 7, s, 7);
	if (out_step(m, a, NULL, NULL))
		return -1;
	in->st->probes_new++;
	return 0;
}

static int copy_prediction(struct merge *m, struct input *in, sqlite3_stmt *s)
{
	sqlite3_stmt *f = ost(m, O_PREDICTION_FIND), *a = ost(m, O_PREDICTION_ADD);
	int rc;

	if (!f || !a)
		return -1;
	bind_col(f, 1, s, 1);
	bind_col(f, 2, s, 2);
	bind_col(f, 3, s, 3);
	rc = sqlite3_step(f);
	if (rc == SQLITE_ROW) {
		char a[52], b[52];

		/* A prediction is registered once, before the run: the output's stands. */
		if (sqlite3_column_double(f, 0) != sqlite3_column_double(s, 4))
			warning("'%s': prediction of %s for cell %s differs from the one in '%s'; keeping that one",
				in->path, shown(a, col_text(s, 3)), shown(b, col_text(s, 2)), m->out_path);
		sqlite3_reset(f);
		return 0;
	}
	sqlite3_reset(f);
	if (rc != SQLITE_DONE)
		return out_err(m);
	for (int i = 1; i < 9; i++)
		bind_col(a, i, s, i);
	if (out_step(m, a, NULL, NULL))
		return -1;
	in->st->predictions_new++;
	return 0;
}

static int copy_input(struct merge *m, struct input *in)
{
	sqlite3_stmt *s;
	uint64_t added;

	if (!(s = prep(m->out, "INSERT INTO merges(source, merged, cells, results, conflicts)"
			       " VALUES(?1, ?2, 0, 0, 0)")))
		return out_err(m);
	sqlite3_bind_text(s, 1, in->path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, m->now, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return out_err(m);
	}
	sqlite3_finalize(s);
	in->merge = sqlite3_last_insert_rowid(m->out);
	if (each_row(m, in, T_SWEEPS, " ORDER BY name", copy_sweep) ||
	    each_row(m, in, T_HOSTS, " ORDER BY id", copy_host) ||
	    each_row(m, in, T_RUNS, " ORDER BY id", copy_run) ||
	    each_row(m, in, T_WORKERS, " ORDER BY id", copy_worker) ||
	    each_row(m, in, T_CELLS, " ORDER BY id", copy_cell) ||
	    each_row(m, in, T_RESULTS, " ORDER BY id", copy_result) ||
	    each_row(m, in, T_CONTROLS, " ORDER BY id", copy_control) ||
	    each_row(m, in, T_PROBES, " ORDER BY id", copy_probe) ||
	    each_row(m, in, T_PREDICTIONS, " ORDER BY id", copy_prediction))
		return -1;
	/* The log names inputs that brought something: merging a file again leaves no trace. */
	added = in->st->cells_new + in->st->results_new + in->st->conflicts + in->st->runs_new +
		in->st->hosts_new + in->st->controls_new + in->st->probes_new + in->st->predictions_new;
	if (!(s = prep(m->out, added ? "UPDATE merges SET cells = ?2, results = ?3, conflicts = ?4 WHERE id = ?1"
				     : "DELETE FROM merges WHERE id = ?1")))
		return out_err(m);
	sqlite3_bind_int64(s, 1, in->merge);
	if (added) {
		sqlite3_bind_int64(s, 2, (sqlite3_int64)in->st->cells_new);
		sqlite3_bind_int64(s, 3, (sqlite3_int64)in->st->results_new);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)in->st->conflicts);
	}
	if (sqlite3_step(s) != SQLITE_DONE) {
		sqlite3_finalize(s);
		return out_err(m);
	}
	sqlite3_finalize(s);
	return 0;
}

static void input_close(struct input *in)
{
	if (in->db) {
		sqlite3_exec(in->db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close_v2(in->db);
	}
	idmap_release(&in->runs);
	idmap_release(&in->hosts);
	idmap_release(&in->workers);
	idmap_release(&in->cells);
}

/*
 * Every column of the output's tables is one this file copies: a column added to the schema without
 * being added here would be dropped by every merge, so it stops merging instead.
 */
static int out_check_columns(struct merge *m)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = 0;

	for (int t = 0; t < NTABLES && !ret; t++) {
		sqlite3_stmt *s;
		int rc;

		sb_reset(&sb);
		sb_addf(&sb, "SELECT name FROM pragma_table_info('%s')", tables[t].name);
		if (!(s = prep(m->out, sb.buf))) {
			ret = out_err(m);
			break;
		}
		while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW) {
			const char *name = col_text(s, 0);
			int known = 0;

			for (int c = 0; c < tables[t].ncols && name; c++)
				known |= !strcmp(name, tables[t].cols[c].name);
			if (!known)
				ret = error("sweep merge does not know column %s.%s, which it would lose: "
					    "store_merge.c lags behind the schema", tables[t].name, name ? name : "?");
		}
		if (!ret && rc != SQLITE_DONE)
			ret = out_err(m);
		sqlite3_finalize(s);
	}
	sb_release(&sb);
	return ret;
}

/* The output: made (schema by store.c) when missing, then opened here for the copy. */
static int out_open(struct merge *m, int *made)
{
	struct store *st;
	struct stat sb;

	*made = stat(m->out_path, &sb) != 0;
	if (store_open(m->out_path, STORE_RW, &st))
		return -1;
	store_close(st);
	if (sqlite3_open_v2(m->out_path, &m->out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL))
		return error("cannot open '%s': %s", m->out_path, m->out ? sqlite3_errmsg(m->out) : "out of memory");
	sqlite3_busy_timeout(m->out, 10000);
	if (sqlite3_exec(m->out, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", NULL, NULL, NULL))
		return out_err(m);
	return out_check_columns(m);
}

static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int store_merge(const char *out, const char *const *inputs, int n, const struct store_merge_opts *o,
		struct store_merge_stats *stats)
{
	struct merge m = { .o = o, .out_path = out };
	struct input *in = xcalloc((size_t)(n ? n : 1), sizeof(*in));
	struct store_merge_stats *st = stats ? stats : xcalloc((size_t)(n ? n : 1), sizeof(*st));
	int made = 0, ret = -1;
	char *msg = NULL;

	if (sqlite3_libversion_number() < 3031000) {
		error("sweep merge needs SQLite 3.31 or newer for its defensive settings (this is %s)",
		      sqlite3_libversion());
		goto out;
	}
	memset(st, 0, (size_t)n * sizeof(*st));
	/* Every input is checked before anything is written: a bad one leaves the output as it was. */
	for (int i = 0; i < n; i++) {
		in[i].path = inputs[i];
		in[i].st = &st[i];
		if (same_file(inputs[i], out)) {
			error("'%s' is the output itself", inputs[i]);
			goto out;
		}
		if (input_open(&in[i]) || input_check_rows(&in[i]))
			goto out;
	}
	if (out_open(&m, &made))
		goto out;
	iso_time(now_wall(), m.now, sizeof(m.now));
	if (sqlite3_exec(m.out, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
		out_err(&m);
		goto out;
	}
	if (sqlite3_exec(m.out, merge_schema, NULL, NULL, &msg)) {
		error("cannot merge into '%s': %s", out, msg);
		sqlite3_free(msg);
		goto rollback;
	}
	if (load_out_prints(&m))
		goto rollback;
	for (int i = 0; i < n; i++)
		if (copy_input(&m, &in[i]))
			goto rollback;
	ost_release(&m);
	if (sqlite3_exec(m.out, "COMMIT", NULL, NULL, NULL)) {
		out_err(&m);
		goto rollback;
	}
	ret = 0;
	goto out;
rollback:
	ost_release(&m);
	if (!sqlite3_get_autocommit(m.out))
		sqlite3_exec(m.out, "ROLLBACK", NULL, NULL, NULL);
out:
	ost_release(&m);
	for (int i = 0; i < n; i++)
		input_close(&in[i]);
	if (m.out)
		sqlite3_close_v2(m.out);
	/* An output this merge made and could not fill is not left behind half made. */
	if (ret && made) {
		char *p;

		unlink(out);
		p = xasprintf("%s-wal", out);
		unlink(p);
		free(p);
		p = xasprintf("%s-shm", out);
		unlink(p);
		free(p);
	}
	free(m.prints);
	free(in);
	if (!stats)
		free(st);
	return ret;
}

/* ---- sweep merge ---- */

static int print_conflict(const struct store_row *row, void *data)
{
	int *n = data;
	char a[52];

	if (!(*n)++)
		printf("\nconflicts (ok results kept apart; the output keeps its own):\n");
	printf("  %s %s: kept median %s, %s has %s (run %s)\n", shown(a, row->text[0]), row->text[1],
	       row->text[2] ? row->text[2] : "NULL", row->text[3], row->text[4] ? row->text[4] : "NULL",
	       row->text[5] ? row->text[5] : "-");
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 },
	};
	struct store_merge_stats *stats;
	struct store *st;
	uint64_t conflicts = 0;
	int opt, quiet = 0, n, listed = 0;

	while ((opt = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
		if (opt == 'q')
			quiet = 1;
		else
			return cli_usage("merge");
	}
	if (argc - optind < 2)
		return cli_usage("merge");
	n = argc - optind - 1;
	stats = xcalloc((size_t)n, sizeof(*stats));
	if (store_merge(argv[optind], (const char *const *)argv + optind + 1, n, NULL, stats)) {
		free(stats);
		error("nothing was merged; '%s' is as it was", argv[optind]);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++) {
		const struct store_merge_stats *s = &stats[i];

		conflicts += s->conflicts;
		if (!quiet)
			printf("%s: %" PRIu64 " cells (%" PRIu64 " new), %" PRIu64 " results new, %" PRIu64
			       " already there, %" PRIu64 " conflicts; %" PRIu64 " runs, %" PRIu64 " hosts new\n",
			       argv[optind + 1 + i], s->cells, s->cells_new, s->results_new, s->results_same,
			       s->conflicts, s->runs_new, s->hosts_new);
	}
	free(stats);
	if (conflicts && !store_open(argv[optind], STORE_RO, &st)) {
		store_query(st, "SELECT c.sweep, c.key, r.median, x.source, x.median, x.run FROM conflicts x"
			    " JOIN cells c ON c.id = x.cell LEFT JOIN results r ON r.id = x.kept"
			    " ORDER BY x.id LIMIT 50", NULL, 0, 1, print_conflict, &listed);
		store_close(st);
	}
	return EXIT_OK;
}
