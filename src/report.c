/* report.c: the core every report shares: opening the sweep, metric and key lookups, SQL pieces. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "report.h"
#include "stats.h"

/* ---- small helpers ---- */

void report_note(const char *fmt, ...)
{
	va_list ap;

	fputs("note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int report_split(const char *what, const char *list, char ***out, int *n)
{
	const char *p = list;

	*out = NULL;
	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (!len) {
			error("%s: empty name in '%s'", what, list);
			goto fail;
		}
		*out = xrealloc(*out, (size_t)(*n + 1) * sizeof(**out));
		(*out)[(*n)++] = xstrndup(p, len);
		if (!p[len])
			return 0;
		p += len + 1;
	}
fail:
	for (int i = 0; i < *n; i++)
		free((*out)[i]);
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void report_bind(struct report *r, struct strbuf *sql, const char *value)
{
	ALLOC_GROW(r->binds, r->nbind + 1, r->alloc_binds);
	r->binds[r->nbind++] = xstrdup(value);
	sb_addf(sql, "?%zu", r->nbind);
}

void report_binds_reset(struct report *r)
{
	for (size_t i = 0; i < r->nbind; i++)
		free(r->binds[i]);
	r->nbind = 0;
}

const char *report_stat_sql(const char *stat)
{
	if (!strcmp(stat, "mean"))
		return "avg";
	return stat;           /* median, geomean, min, max: SQL functions of the same name */
}

int report_stat_check(const char *stat)
{
	static const char *const stats[] = { "median", "mean", "geomean", "min", "max" };

	for (size_t i = 0; i < ARRAY_SIZE(stats); i++)
		if (!strcmp(stat, stats[i]))
			return 0;
	return error("--stat is median, mean, geomean, min or max, not '%s'", stat);
}

void report_num(const struct report *r, double v, int sig, char *buf, size_t n)
{
	/* unknown: "-" for reading, an empty field (null in JSON) for programs */
	if (isnan(v) && !r->fmt->reading) {
		snprintf(buf, n, "%s", "");
		return;
	}
	if (!sig) {
		if (isnan(v))
			snprintf(buf, n, "-");
		else
			snprintf(buf, n, "%.0f", v);
		return;
	}
	if (r->digits) {
		sig = r->digits;
	} else if (!r->fmt->reading && isfinite(v)) {
		/* for programs: more digits, no trailing zeros */
		snprintf(buf, n, "%.6g", v);
		return;
	}
	stats_format(v, sig, buf, n);
}

/* ---- lookups ---- */

struct names {
	char **v;
	size_t n, alloc;
};

/* Collects the first column of every row as a NULL-terminated list. */
static int collect_name(const struct store_row *row, void *data)
{
	struct names *l = data;

	if (!row->text[0])
		return 0;
	ALLOC_GROW(l->v, l->n + 2, l->alloc);
	l->v[l->n++] = xstrdup(row->text[0]);
	l->v[l->n] = NULL;
	return 0;
}

static int query_names(struct report *r, const char *sql, const char *bind, char ***out, size_t *n)
{
	struct names l = { NULL, 0, 0 };
	const char *b[] = { bind };

	if (store_query(r->st, sql, b, bind ? 1 : 0, 1, collect_name, &l)) {
		free_list(l.v, l.n);
		return -1;
	}
	if (!l.v)
		l.v = xcalloc(1, sizeof(*l.v));
	*out = l.v;
	*n = l.n;
	return 0;
}

static void join_names(struct strbuf *sb, char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%s", i ? ", " : "", v[i]);
	if (!n)
		sb_adds(sb, "none");
}

/* The sweep: as given, else the only one with results (or the only one at all). The sweeps that
 * `sweep hosts probe` runs (probe.NAME.TIME) are never offered, listed or chosen: their results are in
 * probes. Asked for by name, one is reported. */
static int report_choose_sweep(struct report *r, const char *given)
{
	struct strbuf sb = STRBUF_INIT;
	char **v;
	size_t n;

	if (query_names(r, "SELECT name FROM sweeps WHERE name NOT LIKE 'probe.%' ORDER BY name", NULL, &v, &n))
		return -1;
	if (given) {
		char **p;
		size_t np;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(v[i], given))
				goto found;
		if (query_names(r, "SELECT name FROM sweeps WHERE name = ?1", given, &p, &np))
			goto fail;
		free_list(p, np);
		if (np)
			goto found;
		join_names(&sb, v, n);
		error("no sweep '%s' in '%s' (it has: %s)", given, r->db, sb.buf);
		goto fail;
found:
		r->sweep = xstrdup(given);
	} else if (!n) {
		char **p;
		size_t np;

		if (query_names(r, "SELECT name FROM sweeps LIMIT 1", NULL, &p, &np))
			goto fail;
		free_list(p, np);
		error("'%s' holds no sweep yet%s", r->db, np ? " (only the probe sweeps of `sweep hosts probe`, whose"
		      " values are in the table probes, for --limit)" : "");
		goto fail;
	} else {
		struct names ok = { NULL, 0, 0 };

		if (store_query(r->st, "SELECT name FROM sweeps WHERE name NOT LIKE 'probe.%' AND EXISTS"
				" (SELECT 1 FROM cells WHERE sweep = sweeps.name AND state = 'ok') ORDER BY name",
				NULL, 0, 1, collect_name, &ok))
			goto fail;
		if (ok.n > 1 || (!ok.n && n > 1)) {
			join_names(&sb, ok.n ? ok.v : v, ok.n ? ok.n : n);
			error("'%s' holds several sweeps (%s): choose one with --sweep", r->db, sb.buf);
			free_list(ok.v, ok.n);
			goto fail;
		}
		r->sweep = xstrdup(ok.n ? ok.v[0] : v[0]);
		free_list(ok.v, ok.n);
	}
	free_list(v, n);
	sb_release(&sb);
	return 0;
fail:
	free_list(v, n);
	sb_release(&sb);
	return -1;
}

/* Whether the SQLite version (text such as "3.40.1") is at least 3.35, which knows AS MATERIALIZED. */
static int read_version(const struct store_row *row, void *data)
{
	int major = 0, minor = 0;

	if (row->text[0])
		sscanf(row->text[0], "%d.%d", &major, &minor);
	*(int *)data = major > 3 || (major == 3 && minor >= 35);
	return 0;
}

static int count_row(const struct store_row *row, void *data)
{
	*(double *)data = row->num[0];
	return 0;
}

/* Retired cells are left out of every report (report_from): said once, so that a table is not read as
 * the whole plan. */
static int report_note_retired(struct report *r)
{
	const char *bind[] = { r->sweep };
	double n = 0;

	if (store_query(r->st, "SELECT count(*) FROM cells WHERE sweep = ?1 AND state = 'retired'", bind, 1, 1,
			count_row, &n))
		return -1;
	if (n > 0)
		fprintf(stderr, "sweep: %s: %.0f retired cells (no longer in the spec: run --replan) left out\n",
			r->sweep, n);
	return 0;
}

int report_open(struct report *r)
{
	if (store_open(r->db, STORE_RO, &r->st))
		return -1;
	if (report_choose_sweep(r, r->sweep_arg))
		return -1;
	/* Every cell of a sweep has the same parameter names, so a sample of cells finds them all; the
	 * metrics may differ between results (a command prints what it likes), so more are sampled. */
	if (query_names(r, "SELECT DISTINCT j.key FROM (SELECT params FROM cells WHERE sweep = ?1 LIMIT 200)"
			" AS c, json_each(c.params) AS j ORDER BY 1", r->sweep, &r->params, &r->nparams) ||
	    query_names(r, "SELECT DISTINCT m.name FROM (SELECT r.id FROM cells c JOIN results r"
			" ON r.cell = c.id AND r.status = 'ok' WHERE c.sweep = ?1 AND c.state = 'ok'"
			" LIMIT 2000) AS x JOIN metrics m ON m.result = x.id ORDER BY 1", r->sweep,
			&r->metrics, &r->nmetrics) ||
	    query_names(r, "SELECT DISTINCT name FROM probes ORDER BY 1", NULL, &r->probes, &r->nprobes) ||
	    store_query(r->st, "SELECT sqlite_version()", NULL, 0, 1, read_version, &r->materialize) ||
	    report_note_retired(r))
		return -1;
	return 0;
}

void report_release(struct report *r)
{
	store_close(r->st);
	free(r->sweep);
	for (int i = 0; i < r->nrows; i++)
		free(r->rows[i]);
	free(r->rows);
	for (int i = 0; i < r->ncols; i++)
		free(r->cols[i]);
	free(r->cols);
	for (int i = 0; i < r->npool; i++)
		free(r->pool[i]);
	free(r->pool);
	free(r->metric_base);
	free_list(r->params, r->nparams);
	free_list(r->metrics, r->nmetrics);
	free_list(r->probes, r->nprobes);
	free_list(r->excluded, r->nexcluded);
	free_list(r->joined, r->njoined);
	report_binds_reset(r);
	free(r->binds);
}

static int in_list(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* Metrics reports derive from stored ones: a GPU kernel stores gflops, a reader asks for tflops. */
static const struct {
	const char *name, *base;
	double scale;
} metric_alias[] = {
	{ "tflops", "gflops", 1e-3 }, { "tbs", "gbs", 1e-3 }, { "ms", "seconds", 1e3 },
	{ "us", "seconds", 1e6 },
};

int report_metric_lookup(const struct report *r, const char *name, const char **base, double *scale)
{
	*base = name;
	*scale = 1;
	if (in_list(r->metrics, r->nmetrics, name))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(metric_alias); i++)
		if (!strcmp(name, metric_alias[i].name) &&
		    in_list(r->metrics, r->nmetrics, metric_alias[i].base)) {
			*base = metric_alias[i].base;
			*scale = metric_alias[i].scale;
			return 1;
		}
	return 0;
}

int report_metric(struct report *r, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	const char *near, *base;

	free(r->metric_base);
	r->metric_base = NULL;
	r->metric_scale = 1;
	r->metric_noise = 0;
	if (report_metric_lookup(r, name, &base, &r->metric_scale)) {
		r->metric_base = xstrdup(base);
		return 0;
	}
	if (!strcmp(name, "noise")) {
		r->metric_base = xstrdup(name);
		r->metric_noise = 1;
		return 0;
	}
	join_names(&sb, r->metrics, r->nmetrics);
	near = r->nmetrics ? closest_name(name, (const char *const *)r->metrics) : NULL;
	if (near)
		error("no metric '%s' in the results of sweep '%s' (did you mean '%s'? it has: %s)", name,
		      r->sweep, near, sb.buf);
	else
		error("no metric '%s' in the results of sweep '%s' (it has: %s)", name, r->sweep, sb.buf);
	sb_release(&sb);
	return -1;
}

void report_metric_value(struct report *r, struct strbuf *sql)
{
	if (r->metric_scale == 1)
		sb_adds(sql, "m.value");
	else
		sb_addf(sql, "(m.value * %.17g)", r->metric_scale);
}

/* A JSON path for one object member, quoted so that any name but one holding '"' works. */
static int json_path(const char *prefix, const char *name, char *buf, size_t n)
{
	if (strchr(name, '"') || strchr(name, '\\'))
		return error("a key cannot hold '\"' or '\\': '%s'", name);
	snprintf(buf, n, "%s\"%s\"", prefix, name);
	return 0;
}

int report_key_sql(struct report *r, const char *key, struct strbuf *sql)
{
	static const char *const special[][2] = {
		{ "host", "h.hostname" }, { "gpu", "w.gpu" }, { "pass", "c.pass" },
		{ "replica", "c.replica" }, { "sweep", "c.sweep" },
	};
	struct strbuf known = STRBUF_INIT;
	const char *name = key, *near;
	char path[512];

	for (size_t i = 0; i < ARRAY_SIZE(special); i++)
		if (!strcmp(key, special[i][0])) {
			sb_adds(sql, special[i][1]);
			return 0;
		}
	if (!strncmp(key, "label.", 6) && key[6]) {
		if (json_path("$.labels.", key + 6, path, sizeof(path)))
			return -1;
		sb_adds(sql, "json_extract(h.facts, ");
		report_bind(r, sql, path);
		sb_addc(sql, ')');
		return 0;
	}
	if (!strncmp(key, "param.", 6) && key[6])
		name = key + 6;
	if (in_list(r->params, r->nparams, name)) {
		if (json_path("$.", name, path, sizeof(path)))
			return -1;
		sb_adds(sql, "json_extract(c.params, ");
		report_bind(r, sql, path);
		sb_addc(sql, ')');
		return 0;
	}
	join_names(&known, r->params, r->nparams);
	near = r->nparams ? closest_name(name, (const char *const *)r->params) : NULL;
	error("unknown key '%s'%s%s%s: not a parameter of sweep '%s' (%s), nor host, gpu, pass, replica or "
	      "label.NAME", key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
	      r->sweep, known.buf);
	sb_release(&known);
	return -1;
}
