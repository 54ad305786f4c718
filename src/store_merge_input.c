/* store_merge_input.c: checking an untrusted input of a merge: file, schema, tables, columns and rows. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store_merge_int.h"
#include "json.h"
#include "plan.h"
#include "util.h"

/* ---- the tables read from an input, with the type every column must hold ---- */

#define TABLE(name, cols) { name, cols, (int)ARRAY_SIZE(cols), 0, NULL }
#define OPTIONAL_TABLE(name, cols, late) { name, cols, (int)ARRAY_SIZE(cols), 1, late }

static const struct mcol sweeps_cols[] = {
	{ "name", K_TEXT }, { "kernel", K_TEXT_NULL }, { "command", K_TEXT_NULL }, { "per", K_TEXT },
	{ "spec", K_TEXT }, { "hash", K_TEXT }, { "updated", K_TEXT }, { "inputs", K_TEXT_NULL },
};
static const struct mcol runs_cols[] = {
	{ "id", K_INT }, { "sweep", K_TEXT_NULL }, { "started", K_TEXT }, { "finished", K_TEXT_NULL },
	{ "argv", K_TEXT_NULL }, { "spec_hash", K_TEXT_NULL }, { "version", K_TEXT_NULL }, { "status", K_TEXT },
	{ "revision", K_TEXT_NULL }, { "inputs", K_TEXT_NULL }, { "launcher", K_TEXT_NULL },
};
static const struct mcol hosts_cols[] = {
	{ "id", K_INT }, { "hostname", K_TEXT }, { "facts", K_TEXT }, { "hash", K_TEXT }, { "seen", K_TEXT },
};
static const struct mcol workers_cols[] = {
	{ "id", K_INT }, { "run", K_INT }, { "rank", K_INT }, { "host", K_INT_NULL }, { "gpu", K_INT_NULL },
	{ "gpu_uuid", K_TEXT_NULL }, { "binding", K_TEXT_NULL }, { "conditions", K_TEXT_NULL },
};
static const struct mcol cells_cols[] = {
	{ "id", K_INT }, { "sweep", K_TEXT }, { "key", K_TEXT }, { "params", K_TEXT }, { "pass", K_INT },
	{ "replica", K_TEXT }, { "ord", K_INT }, { "state", K_TEXT }, { "attempts", K_INT },
	{ "error", K_TEXT_NULL }, { "flight", K_INT }, { "decided", K_TEXT_NULL },
};
/* The order matters: copy_result binds columns 1.. (after id and cell) by position. */
static const struct mcol results_cols[] = {
	{ "id", K_INT }, { "cell", K_INT }, { "run", K_INT_NULL }, { "worker", K_INT_NULL },
	{ "status", K_TEXT }, { "attempt", K_INT }, { "started", K_TEXT_NULL }, { "wall", K_REAL_NULL },
	{ "n", K_INT }, { "median", K_REAL_NULL }, { "mean", K_REAL_NULL }, { "min", K_REAL_NULL },
	{ "max", K_REAL_NULL }, { "stdev", K_REAL_NULL }, { "q1", K_REAL_NULL }, { "q3", K_REAL_NULL },
	{ "noise", K_REAL_NULL }, { "noise_ok", K_INT }, { "throttled", K_INT }, { "sm_clock", K_REAL_NULL },
	{ "error", K_TEXT_NULL }, { "stdout", K_TEXT_NULL }, { "stderr", K_TEXT_NULL }, { "stop", K_TEXT_NULL },
	{ "launches", K_INT_NULL }, { "warmup", K_REAL_NULL }, { "cpu_user", K_REAL_NULL },
	{ "cpu_sys", K_REAL_NULL }, { "peak_rss", K_INT_NULL },
	{ "ci_lo", K_REAL_NULL }, { "ci_hi", K_REAL_NULL }, { "precise", K_INT }, { "settled", K_INT_NULL },
	{ "note", K_TEXT_NULL },
};
/* input.lacks has a bit a column; results is the widest table. */
_Static_assert(ARRAY_SIZE(results_cols) <= 64, "a table of more columns than input.lacks has bits");
static const struct mcol samples_cols[] = {
	{ "result", K_INT }, { "i", K_INT }, { "seconds", K_REAL }, { "sm_clock", K_REAL_NULL },
	{ "cpu_user", K_REAL_NULL }, { "cpu_sys", K_REAL_NULL }, { "peak_rss", K_INT_NULL },
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

/* Slurm's, as store_slurm_schema makes them. */
static const struct mcol slurm_jobs_cols[] = {
	{ "job", K_TEXT }, { "sweep", K_TEXT }, { "submitted", K_TEXT }, { "nodes", K_INT_NULL },
	{ "gpus_per_node", K_INT_NULL }, { "shards", K_INT }, { "script", K_TEXT }, { "command", K_TEXT_NULL },
};
static const struct mcol slurm_runs_cols[] = {
	{ "run", K_INT }, { "job", K_TEXT }, { "task", K_INT_NULL }, { "restarts", K_INT }, { "node", K_TEXT_NULL },
};

const struct mtable store_merge_tables[NTABLES] = {
	TABLE("sweeps", sweeps_cols), TABLE("runs", runs_cols), TABLE("hosts", hosts_cols),
	TABLE("workers", workers_cols), TABLE("cells", cells_cols), TABLE("results", results_cols),
	TABLE("samples", samples_cols), TABLE("metrics", metrics_cols), TABLE("items", items_cols),
	TABLE("controls", controls_cols), TABLE("probes", probes_cols), TABLE("predictions", predictions_cols),
	OPTIONAL_TABLE("slurm_jobs", slurm_jobs_cols, "command"), OPTIONAL_TABLE("slurm_runs", slurm_runs_cols, NULL),
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
	{ T_SLURM_RUNS, "run", T_RUNS },
};

int store_merge_input_err(struct input *in, const char *what)
{
	return error("cannot merge '%s': %s: %s", in->path, what, sqlite3_errmsg(in->db));
}

/* "SELECT "c1", "c2", ... FROM "table"" and then tail; NULL for column c when bit c of lacks is set (a
 * late column the input lacks: input.lacks). */
void store_merge_input_select(struct strbuf *sb, const struct mtable *t, uint64_t lacks, const char *tail)
{
	sb_reset(sb);
	sb_adds(sb, "SELECT ");
	for (int i = 0; i < t->ncols; i++) {
		sb_adds(sb, i ? ", " : "");
		if (lacks >> i & 1)
			sb_adds(sb, "NULL");
		else
			sb_addf(sb, "\"%s\"", t->cols[i].name);
	}
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

/* "results row with id 7": the row by its first column, for messages. */
static const char *row_name(const struct mtable *t, sqlite3_stmt *s, char *buf, size_t n)
{
	const unsigned char *v = sqlite3_column_text(s, 0);
	char a[52];

	snprintf(buf, n, "%s row with %s = %s", t->name, t->cols[0].name, shown(a, (const char *)v));
	return buf;
}

/* Columns lo, median, hi of s: no interval (both ends NULL), or one that holds a median. */
static int interval_holds(sqlite3_stmt *s, int lo, int median, int hi)
{
	int none = sqlite3_column_type(s, lo) == SQLITE_NULL;

	if (none || sqlite3_column_type(s, hi) == SQLITE_NULL || sqlite3_column_type(s, median) == SQLITE_NULL)
		return none && sqlite3_column_type(s, hi) == SQLITE_NULL;
	return sqlite3_column_double(s, lo) <= sqlite3_column_double(s, median) &&
	       sqlite3_column_double(s, median) <= sqlite3_column_double(s, hi);
}

/*
 * Values no run can write: a number that is not finite (a report would print inf; SQLite stores NaN as
 * NULL), a negative count, an ok result without a median, an interval of a median that does not hold it.
 */
static int check_values(struct input *in, const struct mtable *t, sqlite3_stmt *s)
{
	char row[128];
	int status = -1, median = -1, lo = -1, hi = -1;

	for (int i = 0; i < t->ncols; i++) {
		const char *name = t->cols[i].name;
		int type = sqlite3_column_type(s, i);

		if (type == SQLITE_FLOAT && !isfinite(sqlite3_column_double(s, i)))
			return error("cannot merge '%s': %s: %s is %g, not a finite number", in->path,
				     row_name(t, s, row, sizeof(row)), name, sqlite3_column_double(s, i));
		if (type == SQLITE_INTEGER && sqlite3_column_int64(s, i) < 0 &&
		    (!strcmp(name, "n") || !strcmp(name, "attempt") || !strcmp(name, "attempts") ||
		     !strcmp(name, "peak_rss")))
			return error("cannot merge '%s': %s: %s is %lld, a negative count", in->path,
				     row_name(t, s, row, sizeof(row)), name, (long long)sqlite3_column_int64(s, i));
		/* CPU seconds a run took: never below zero. */
		if (type != SQLITE_NULL && sqlite3_column_double(s, i) < 0 &&
		    (!strcmp(name, "cpu_user") || !strcmp(name, "cpu_sys")))
			return error("cannot merge '%s': %s: %s is %g, a negative time", in->path,
				     row_name(t, s, row, sizeof(row)), name, sqlite3_column_double(s, i));
		if (!strcmp(name, "status"))
			status = i;
		if (!strcmp(name, "median"))
			median = i;
		if (!strcmp(name, "ci_lo"))
			lo = i;
		if (!strcmp(name, "ci_hi"))
			hi = i;
	}
	if (!strcmp(t->name, "results") && status >= 0 && median >= 0 && col_text(s, status) &&
	    !strcmp(col_text(s, status), "ok") && sqlite3_column_type(s, median) == SQLITE_NULL)
		return error("cannot merge '%s': %s: an ok result without a median", in->path,
			     row_name(t, s, row, sizeof(row)));
	if (median >= 0 && lo >= 0 && hi >= 0 && !interval_holds(s, lo, median, hi))
		return error("cannot merge '%s': %s: the interval [%s, %s] does not hold the median %s", in->path,
			     row_name(t, s, row, sizeof(row)), col_text(s, lo) ? col_text(s, lo) : "NULL",
			     col_text(s, hi) ? col_text(s, hi) : "NULL", col_text(s, median) ? col_text(s, median) :
			     "NULL");
	return 0;
}

int store_merge_time_ok(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	if (!s)
		return 1;
	for (i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
			return 0;
	/* Then milliseconds and the zone, as store_now writes them: ".mmmZ", or "Z". */
	if (s[i] == '.' && isdigit((unsigned char)s[i + 1]))
		for (i++; isdigit((unsigned char)s[i]); i++)
			;
	return s[i] == 'Z' && !s[i + 1];
}

/* Every column of the current row of s holds what t says it must. */
int store_merge_input_check_row(struct input *in, const struct mtable *t, sqlite3_stmt *s)
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
	return check_values(in, t, s);
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

/* Whether a trigger is one of the schema's, as made. */
static int own_trigger(const char *name, const char *sql)
{
	for (const struct store_schema_trigger *t = store_schema_triggers; t->name; t++)
		if (name && sql && !strcmp(name, t->name) && !strcmp(sql, t->sql))
			return 1;
	return 0;
}

/* No trigger but the schema's own (cell_counts'), letter for letter: another is there to run code when
 * written (this connection runs none: triggers are off); no table merge reads is a virtual table. 0, or
 * -1 after error(). */
static int input_check_objects(struct input *in)
{
	sqlite3_stmt *s;
	int rc;

	if (!(s = prep(in->db, "SELECT type, name, coalesce(sql, '') FROM sqlite_master")))
		return store_merge_input_err(in, "cannot read its schema");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *type = col_text(s, 0), *name = col_text(s, 1), *sql = col_text(s, 2);

		if (type && !strcmp(type, "trigger") && !own_trigger(name, sql)) {
			char a[52];

			error("'%s' has a trigger ('%s'), which no sweep database has: refusing it", in->path,
			      shown(a, name));
			sqlite3_finalize(s);
			return -1;
		}
		if (type && !strcmp(type, "table") && sql && !strncasecmp(sql, "CREATE VIRTUAL", 14)) {
			for (int t = 0; t < NTABLES; t++)
				if (name && !strcmp(name, store_merge_tables[t].name)) {
					error("'%s': table '%s' is a virtual table: not a sweep database", in->path, name);
					sqlite3_finalize(s);
					return -1;
				}
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_merge_input_err(in, "cannot read its schema");
	return 0;
}

/* The tables, columns and objects of the input's schema are those of a sweep database. */
static int input_check_schema(struct input *in)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s;
	int ret = -1, rc, *found = NULL;   /* found[c]: the table has its column c (sized per table) */

	if (input_check_objects(in))
		goto out;
	for (int t = 0; t < NTABLES; t++) {
		const struct mtable *tb = &store_merge_tables[t];
		int known;
		int64_t n;

		sb_reset(&sb);
		sb_addf(&sb, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'", tb->name);
		if (int_query(in->db, sb.buf, &n)) {
			store_merge_input_err(in, "cannot read its schema");
			goto out;
		}
		in->has[t] = n == 1;
		if (n != 1 && tb->optional)
			continue;
		free(found);
		found = xcalloc((size_t)tb->ncols, sizeof(*found));
		if (n != 1) {
			error("'%s' is not a sweep database: it has no table '%s'", in->path, tb->name);
			goto out;
		}
		/* Hidden (generated) columns are computed when read: a sweep database has none. */
		sb_reset(&sb);
		sb_addf(&sb, "PRAGMA table_xinfo(\"%s\")", tb->name);
		if (!(s = prep(in->db, sb.buf))) {
			store_merge_input_err(in, "cannot read its schema");
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
			store_merge_input_err(in, "cannot read its schema");
			goto out;
		}
		for (int c = 0; c < tb->ncols; c++)
			if (!found[c] && tb->late && !strcmp(tb->cols[c].name, tb->late))
				in->lacks[t] |= (uint64_t)1 << c;
			else if (!found[c]) {
				error("'%s' is not a sweep database: table '%s' has no column '%s'", in->path, tb->name,
				      tb->cols[c].name);
				goto out;
			}
	}
	ret = 0;
out:
	free(found);
	sb_release(&sb);
	return ret;
}

int store_merge_input_open(struct input *in)
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
	in->fd = store_file_open(in->path, 0);
	if (sqlite3_open_v2(in->path, &in->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL))
		return error("cannot open '%s': %s", in->path, in->db ? sqlite3_errmsg(in->db) : "out of memory");
	/* Defensive: the schema is the input's, so nothing in it is trusted to run. And no double-quoted
	 * string literals: the reads name columns in double quotes, and a name that is not a column must
	 * fail there rather than read as its own text (the column checks are then not the only guard). */
	if (sqlite3_db_config(in->db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_VIEW, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_DQS_DML, off, NULL) ||
	    sqlite3_db_config(in->db, SQLITE_DBCONFIG_DQS_DDL, off, NULL) ||
	    sqlite3_exec(in->db, "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0",
			 NULL, NULL, NULL))
		return store_merge_input_err(in, "cannot set defensive options");
	sqlite3_busy_timeout(in->db, 10000);
	sqlite3_set_authorizer(in->db, input_authorizer, NULL);
	/* The first read finds out whether it is SQLite at all; the read transaction then holds one
	 * snapshot for the checks and the copy, even while a run still writes the file. */
	if (sqlite3_exec(in->db, "BEGIN", NULL, NULL, NULL) || int_query(in->db, "PRAGMA user_version", &version))
		return error("cannot merge '%s': %s", in->path, sqlite3_errmsg(in->db));
	if (!(s = prep(in->db, "PRAGMA quick_check")))
		return store_merge_input_err(in, "cannot check it");
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
/* A cell's row: its state one of the schema's, params a flat JSON object, decided a time, and its key
 * the hash of what it is. 0, or -1 after error(). */
static int input_check_cell(struct input *in, sqlite3_stmt *s)
{
	static const char *const states[] = { "planned", "running", "ok", "quarantined", "template", "retired" };
	const char *params = col_text(s, 3), *state = col_text(s, 7);
	struct json_obj o = JSON_OBJ_INIT;
	char err[128], key[17], a[52], b[52];
	size_t i;
	int bad;

	for (i = 0; i < ARRAY_SIZE(states) && strcmp(states[i], state); i++)
		;
	if (i == ARRAY_SIZE(states))
		return error("'%s': cell %s has state '%s'", in->path, shown(a, col_text(s, 2)), shown(b, state));
	bad = json_parse_flat(params, &o, 0, err, sizeof(err));
	json_obj_release(&o);
	if (bad)
		return error("'%s': cell %s: params are not a flat JSON object: %s", in->path,
			     shown(a, col_text(s, 2)), err);
	/* A decision newer than the output's takes its cells: it must be a time. */
	if (!store_merge_time_ok(col_text(s, 11)))
		return error("'%s': cell %s: decided is '%s', not a time", in->path, shown(a, col_text(s, 2)),
			     shown(b, col_text(s, 11)));
	/* Cells are matched by key: a key must be the hash of what the cell is. */
	plan_key(col_text(s, 1), params, sqlite3_column_int(s, 4), col_text(s, 5), key);
	if (strcmp(key, col_text(s, 2)))
		return error("'%s': cell %s does not have the key of its sweep, params, pass and replica (%s)",
			     in->path, shown(a, col_text(s, 2)), key);
	return 0;
}

int store_merge_input_check_rows(struct input *in)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	struct json_obj o = JSON_OBJ_INIT;
	char err[128];
	int ret = -1, rc;

	for (int t = 0; t < NTABLES; t++) {
		if (!in->has[t])
			continue;
		store_merge_input_select(&sb, &store_merge_tables[t], in->lacks[t], "");
		if (!(s = prep(in->db, sb.buf))) {
			store_merge_input_err(in, "cannot read it");
			goto out;
		}
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			if (store_merge_input_check_row(in, &store_merge_tables[t], s))
				goto out;
			if (t == T_CELLS && input_check_cell(in, s))
				goto out;
			if (t == T_HOSTS) {
				char a[52];

				if (json_parse_flat(col_text(s, 2), &o, 1, err, sizeof(err))) {
					error("'%s': host %s: facts are not a JSON object: %s", in->path,
					      shown(a, col_text(s, 1)), err);
					goto out;
				}
				json_obj_release(&o);
			} else if (t == T_SLURM_JOBS || t == T_SLURM_RUNS) {
				const char *job = col_text(s, t == T_SLURM_JOBS ? 0 : 1);
				char a[52];

				/* Job ids go on squeue's command line (sweep status): digits only. */
				if (!*job || strspn(job, "0123456789") != strlen(job)) {
					error("'%s': %s: job '%s' is not a Slurm job id", in->path,
					      store_merge_tables[t].name, shown(a, job));
					goto out;
				}
			} else if (t == T_RESULTS) {
				const char *st = col_text(s, 4);
				char a[52];

				if (strcmp(st, "ok") && strcmp(st, "error") && strcmp(st, "timeout") &&
				    strcmp(st, "superseded")) {
					error("'%s': a result has status '%s'", in->path, shown(a, st));
					goto out;
				}
			}
		}
		if (rc != SQLITE_DONE) {
			store_merge_input_err(in, "cannot read it");
			goto out;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(refs); i++) {
		const char *from = store_merge_tables[refs[i].table].name;
		const char *to = store_merge_tables[refs[i].target].name;
		int64_t n;

		if (!in->has[refs[i].table])
			continue;
		sb_reset(&sb);
		sb_addf(&sb, "SELECT count(*) FROM \"%s\" WHERE \"%s\" IS NOT NULL AND \"%s\" NOT IN"
			" (SELECT id FROM \"%s\")", from, refs[i].col, refs[i].col, to);
		if (int_query(in->db, sb.buf, &n)) {
			store_merge_input_err(in, "cannot read it");
			goto out;
		}
		if (n) {
			error("'%s': %" PRId64 " row%s of %s name%s a row of %s that is not there (%s.%s)", in->path,
			      n, n == 1 ? "" : "s", from, n == 1 ? "s" : "", to, from, refs[i].col);
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

void store_merge_input_busy(struct input *in)
{
	char who[256], whob[124], a[52], b[52], c[52], *real;
	struct strbuf runs = STRBUF_INIT;
	sqlite3_stmt *s;
	int alive;

	if (in->fd < 0 || !(real = realpath(in->path, NULL)))
		return;
	alive = store_file_writer(in->fd, real, who, sizeof(who));
	free(real);
	if (alive != 1)
		return;
	/* Its runs still going come in 'running', unfinished: a later merge of it brings their end. */
	if ((s = prep(in->db, "SELECT id, sweep, started FROM runs WHERE status = 'running' ORDER BY id"))) {
		while (sqlite3_step(s) == SQLITE_ROW)
			sb_addf(&runs, "%srun %s of %s (started %s)", runs.len ? ", " : "", shown(a, col_text(s, 0)),
				shown(b, col_text(s, 1)), shown(c, col_text(s, 2)));
		sqlite3_finalize(s);
	}
	warning("'%s' is being written now (%s)%s%s%s: merged as it is now; merge it again once it has ended",
		in->path, *who ? printable(whob, who, 120) : "by a sweep that has not said who it is",
		runs.len ? ": " : "", runs.len ? runs.buf : "", runs.len ? " still going" : "");
	sb_release(&runs);
}

void store_merge_input_close(struct input *in)
{
	if (in->db) {
		sqlite3_exec(in->db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close_v2(in->db);
	}
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}
