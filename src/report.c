/* report.c: `sweep report`: options, the lookups every report shares, and the plain and pivoted tables. */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

void report_num(const struct report *r, double v, int sig, char *buf, size_t n)
{
	/* unknown: "-" for reading, an empty field (null in JSON) for programs */
	if (isnan(v) && (r->fmt == TABLE_CSV || r->fmt == TABLE_JSON)) {
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
	} else if ((r->fmt == TABLE_CSV || r->fmt == TABLE_JSON) && isfinite(v)) {
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

/* The sweep: as given, else the only one with results (or the only one at all). */
static int report_choose_sweep(struct report *r, const char *given)
{
	struct strbuf sb = STRBUF_INIT;
	char **v;
	size_t n;

	if (query_names(r, "SELECT name FROM sweeps ORDER BY (SELECT count(*) FROM"
			" (SELECT 1 FROM cells WHERE sweep = sweeps.name AND state = 'ok' LIMIT 1)) DESC, name",
			NULL, &v, &n))
		return -1;
	if (given) {
		for (size_t i = 0; i < n; i++)
			if (!strcmp(v[i], given))
				goto found;
		join_names(&sb, v, n);
		error("no sweep '%s' in '%s' (it has: %s)", given, r->db, sb.buf);
		goto fail;
found:
		r->sweep = xstrdup(given);
	} else if (!n) {
		error("'%s' holds no sweep yet", r->db);
		goto fail;
	} else {
		struct names ok = { NULL, 0, 0 };

		if (store_query(r->st, "SELECT name FROM sweeps WHERE EXISTS (SELECT 1 FROM cells"
				" WHERE sweep = sweeps.name AND state = 'ok') ORDER BY name", NULL, 0, 1,
				collect_name, &ok))
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
			" ON r.cell = c.id AND r.status = 'ok' WHERE c.sweep = ?1 AND c.state = 'ok' LIMIT 2000)"
			" AS x JOIN metrics m ON m.result = x.id ORDER BY 1", r->sweep, &r->metrics, &r->nmetrics) ||
	    query_names(r, "SELECT DISTINCT name FROM probes ORDER BY 1", NULL, &r->probes, &r->nprobes) ||
	    store_query(r->st, "SELECT sqlite_version()", NULL, 0, 1, read_version, &r->materialize))
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
	{ "tflops", "gflops", 1e-3 }, { "tbs", "gbs", 1e-3 }, { "ms", "seconds", 1e3 }, { "us", "seconds", 1e6 },
};

int report_metric(struct report *r, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	const char *near;

	free(r->metric_base);
	r->metric_base = NULL;
	r->metric_scale = 1;
	if (in_list(r->metrics, r->nmetrics, name)) {
		r->metric_base = xstrdup(name);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(metric_alias); i++)
		if (!strcmp(name, metric_alias[i].name) && in_list(r->metrics, r->nmetrics, metric_alias[i].base)) {
			r->metric_base = xstrdup(metric_alias[i].base);
			r->metric_scale = metric_alias[i].scale;
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
		{ "host", "h.hostname" }, { "gpu", "w.gpu" }, { "pass", "c.pass" }, { "replica", "c.replica" },
		{ "sweep", "c.sweep" },
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
	      "label.NAME", key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", r->sweep,
	      known.buf);
	sb_release(&known);
	return -1;
}

int report_from(struct report *r, struct strbuf *sql, int join)
{
	sb_adds(sql, " FROM results r JOIN cells c ON c.id = r.cell"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host");
	if (join & JOIN_METRIC) {
		sb_adds(sql, " JOIN metrics m ON m.result = r.id AND m.name = ");
		report_bind(r, sql, r->metric_base);
	}
	if (join & JOIN_ITEMS) {
		sb_adds(sql, " JOIN items i ON i.result = r.id AND i.metric = ");
		report_bind(r, sql, r->metric_base);
	}
	for (size_t i = 0; (join & JOIN_PROBES) && i < r->njoined; i++) {
		sb_addf(sql, " LEFT JOIN report_probes rp%zu ON rp%zu.worker = r.worker AND rp%zu.name = ", i, i, i);
		report_bind(r, sql, r->joined[i]);
	}
	sb_adds(sql, " WHERE r.status = 'ok' AND c.sweep = ");
	report_bind(r, sql, r->sweep);
	if (r->where) {
		sb_adds(sql, " AND (");
		if (report_expr_sql(r, "--where", r->where, 0, sql))
			return -1;
		sb_addc(sql, ')');
	}
	if (r->nexcluded) {
		sb_adds(sql, " AND coalesce(h.hostname, '') NOT IN (");
		for (size_t i = 0; i < r->nexcluded; i++) {
			if (i)
				sb_addc(sql, ',');
			report_bind(r, sql, r->excluded[i]);
		}
		sb_addc(sql, ')');
	}
	return 0;
}

/* ---- the table a report builds, and printing it ---- */

void rtab_init(struct rtab *t, int nkeys, const char *const *keyname, int nvals,
	       const char *const *valname)
{
	memset(t, 0, sizeof(*t));
	t->nkeys = nkeys;
	t->nvals = nvals;
	t->keyname = xcalloc((size_t)nkeys + 1, sizeof(*t->keyname));
	t->valname = xcalloc((size_t)nvals + 1, sizeof(*t->valname));
	t->sig = xcalloc((size_t)nvals + 1, sizeof(*t->sig));
	t->nosum = xcalloc((size_t)nvals + 1, sizeof(*t->nosum));
	t->dgroup = xcalloc((size_t)nvals + 1, sizeof(*t->dgroup));
	for (int i = 0; i < nkeys; i++)
		t->keyname[i] = xstrdup(keyname[i]);
	for (int i = 0; i < nvals; i++) {
		t->valname[i] = xstrdup(valname[i]);
		t->sig[i] = 4;
	}
	t->ci_at = -1;
}

void rtab_add(struct rtab *t, const char *const *key, const double *val, const char *group)
{
	ALLOC_GROW(t->key, (t->n + 1) * (size_t)t->nkeys, t->alloc_key);
	ALLOC_GROW(t->val, (t->n + 1) * (size_t)t->nvals, t->alloc_val);
	ALLOC_GROW(t->group, t->n + 1, t->alloc_group);
	for (int i = 0; i < t->nkeys; i++)
		t->key[t->n * (size_t)t->nkeys + (size_t)i] = key[i] ? xstrdup(key[i]) : NULL;
	for (int i = 0; i < t->nvals; i++)
		t->val[t->n * (size_t)t->nvals + (size_t)i] = val[i];
	t->group[t->n] = group ? xstrdup(group) : NULL;
	t->n++;
}

void rtab_release(struct rtab *t)
{
	for (size_t i = 0; i < t->n * (size_t)t->nkeys; i++)
		free(t->key[i]);
	for (size_t i = 0; i < t->n; i++)
		free(t->group[i]);
	free_list(t->keyname, (size_t)t->nkeys);
	free_list(t->valname, (size_t)t->nvals);
	free(t->key);
	free(t->val);
	free(t->group);
	free(t->sig);
	free(t->nosum);
	free(t->dgroup);
	memset(t, 0, sizeof(*t));
}

int report_out_open(struct report *r, FILE **f)
{
	*f = stdout;
	if (r->out && !(*f = fopen(r->out, "w")))
		return error("cannot write '%s': %m", r->out);
	return 0;
}

int report_out_close(struct report *r, FILE *f)
{
	if (f == stdout)
		return fflush(f) ? error("cannot write the report: %m") : 0;
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %m", r->out);
	return 0;
}

static int human(const struct report *r)
{
	return r->fmt == TABLE_TEXT || r->fmt == TABLE_MD || r->fmt == TABLE_LATEX;
}

/*
 * Decimals for a column printed for reading: enough for the largest value to show its significant digits,
 * the same for every row so the column lines up (12.50 and 7.50, not 12.50 and 7.500). -1: each value
 * with its own significant digits (machine formats, counts, an empty column, a wide range).
 */
static int column_decimals(const struct report *r, const struct rtab *t, int col)
{
	int sig = r->digits ? r->digits : t->sig[col], d;
	double max = 0, min = INFINITY;

	if (!human(r) || !t->sig[col])
		return -1;
	for (int c = 0; c < t->nvals; c++) {
		if (c != col && (!t->dgroup[col] || t->dgroup[c] != t->dgroup[col]))
			continue;
		for (size_t j = 0; j < t->n; j++)
			for (int k = 0; k < (c == t->ci_at ? 3 : 1); k++) {
				double v = fabs(t->val[j * (size_t)t->nvals + (size_t)(c + k)]);

				if (isfinite(v) && v > max)
					max = v;
				if (isfinite(v) && v > 0 && v < min)
					min = v;
			}
	}
	/* A column spanning orders of magnitude (times from 64 to 8192) keeps significant digits. */
	if (!(max > 0) || max / min > 100)
		return -1;
	d = sig - 1 - (int)floor(log10(max));
	return d < 0 ? 0 : d > 15 ? 15 : d;
}

/* v with dec decimals, unless that leaves it fewer than two significant digits (a column spanning
 * orders of magnitude): then with its own significant digits. */
static void format_num(const struct report *r, double v, int sig, int dec, char *buf, size_t n)
{
	if (dec >= 0 && isfinite(v) && (v == 0 || floor(log10(fabs(v))) + dec + 1 >= 2))
		snprintf(buf, n, "%.*f", dec, v == 0 ? 0.0 : v);
	else
		report_num(r, v, sig, buf, n);
}

/* One row of values into text cells, the interval merged into one cell for reading. */
static void format_values(const struct report *r, const struct rtab *t, const int *dec, const double *val,
			  char **cells, int *nc)
{
	char buf[128], lo[40], hi[40];

	*nc = 0;
	for (int i = 0; i < t->nvals; i++) {
		if (human(r) && i == t->ci_at) {
			format_num(r, val[i], t->sig[i], dec[i], buf, sizeof(buf));
			if (!isnan(val[i + 1])) {
				format_num(r, val[i + 1], t->sig[i], dec[i], lo, sizeof(lo));
				format_num(r, val[i + 2], t->sig[i], dec[i], hi, sizeof(hi));
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%s, %s]", lo, hi);
			}
			cells[(*nc)++] = xstrdup(buf);
			i += 2;
			continue;
		}
		format_num(r, val[i], t->sig[i], dec[i], buf, sizeof(buf));
		cells[(*nc)++] = xstrdup(buf);
	}
}

static int cmp_num(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The --summary rows of one group (NULL: every row): the median, min and max of each value column. */
static void summary_rows(const struct report *r, const struct rtab *t, const int *dec, int show_group,
			 const char *group, struct table *out)
{
	static const char *const what[] = { "median", "min", "max" };
	int ncell = t->nkeys + show_group + t->nvals;
	char **row = xcalloc((size_t)ncell, sizeof(*row));
	double *x = xmalloc((t->n + 1) * sizeof(*x));

	for (int k = 0; k < 3; k++) {
		int c = 0;

		row[c++] = group ? xasprintf("%s (%s)", what[k], group) : xstrdup(what[k]);
		while (c < t->nkeys + show_group)
			row[c++] = xstrdup("");
		for (int v = 0; v < t->nvals; v++) {
			char a[40];
			size_t n = 0;

			for (size_t j = 0; j < t->n; j++)
				if ((!group || (t->group[j] && !strcmp(t->group[j], group))) &&
				    !isnan(t->val[j * (size_t)t->nvals + (size_t)v]))
					x[n++] = t->val[j * (size_t)t->nvals + (size_t)v];
			qsort(x, n, sizeof(*x), cmp_num);
			if (t->nosum[v]) {
				row[c++] = xstrdup("");
			} else {
				format_num(r, !n ? NAN : k == 0 ? stats_quantile_sorted(x, n, 0.5) : k == 1 ? x[0] :
					   x[n - 1], t->sig[v], dec[v], a, sizeof(a));
				row[c++] = xstrdup(a);
			}
			if (human(r) && v == t->ci_at)
				v += 2;    /* the interval columns are merged into the ratio's */
		}
		table_add(out, (const char *const *)row);
		for (int i = 0; i < c; i++)
			free(row[i]);
	}
	free(row);
	free(x);
}

static const struct rtab *sort_tab;

/* By summary group, then in the order the rows came (qsort is not stable, so the index decides ties). */
static int cmp_group(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const char *ga = sort_tab->group[a], *gb = sort_tab->group[b];
	int c = !ga || !gb ? (!!ga - !!gb) : strcmp(ga, gb);

	return c ? c : (a > b) - (a < b);
}

int report_print(struct report *r, const struct rtab *t, const char *caption)
{
	int show_group = 0, ncell, nh = 0, nc, ret;
	const char **head;
	char **row;
	size_t *order = xmalloc((t->n + 1) * sizeof(*order));
	int *dec = xcalloc((size_t)t->nvals + 1, sizeof(*dec));
	struct table out;
	FILE *f;

	/* The summary key is shown as a column when it is not a row key already. */
	if (r->summary_by) {
		show_group = 1;
		for (int i = 0; i < t->nkeys; i++)
			show_group &= strcmp(t->keyname[i], r->summary_by) != 0;
	}
	ncell = t->nkeys + show_group + t->nvals;
	head = xcalloc((size_t)ncell + 1, sizeof(*head));
	row = xcalloc((size_t)ncell + 1, sizeof(*row));
	for (int i = 0; i < t->nkeys; i++)
		head[nh++] = t->keyname[i];
	if (show_group)
		head[nh++] = r->summary_by;
	for (int i = 0; i < t->nvals; i++) {
		if (human(r) && i == t->ci_at) {
			head[nh++] = t->ci_head;
			i += 2;
		} else {
			head[nh++] = t->valname[i];
		}
	}
	for (size_t j = 0; j < t->n; j++)
		order[j] = j;
	for (int i = 0; i < t->nvals; i++)
		dec[i] = column_decimals(r, t, i);
	if (r->summary_by) {
		sort_tab = t;
		qsort(order, t->n, sizeof(*order), cmp_group);
	}
	table_init(&out, nh, head);
	for (size_t o = 0; o < t->n; o++) {
		size_t j = order[o];
		int k = 0;

		for (int i = 0; i < t->nkeys; i++) {
			const char *key = t->key[j * (size_t)t->nkeys + (size_t)i];

			row[k++] = xstrdup(key ? key : "-");
		}
		if (show_group)
			row[k++] = xstrdup(t->group[j] ? t->group[j] : "-");
		format_values(r, t, dec, &t->val[j * (size_t)t->nvals], row + k, &nc);
		table_add(&out, (const char *const *)row);
		for (int i = 0; i < k + nc; i++)
			free(row[i]);
	}
	if (r->summary && t->n) {
		if (!r->summary_by)
			summary_rows(r, t, dec, show_group, NULL, &out);
		for (size_t o = 0; r->summary_by && o < t->n; o++) {
			const char *g = t->group[order[o]];

			if (g && (!o || !t->group[order[o - 1]] || strcmp(g, t->group[order[o - 1]])))
				summary_rows(r, t, dec, show_group, g, &out);
		}
	}
	ret = report_out_open(r, &f);
	if (!ret) {
		if (caption && (r->fmt == TABLE_MD || r->fmt == TABLE_TEXT))
			fprintf(f, "%s\n\n", caption);
		table_print(&out, f, r->fmt);
		ret = report_out_close(r, f);
	}
	table_release(&out);
	free(head);
	free(row);
	free(order);
	free(dec);
	return ret;
}

/* ---- the plain and pivoted tables ---- */

/* A column of the pivot: the values of the column keys, typed so they sort as SQLite sorts them. */
struct pcol {
	char **text;           /* ncols, NULL for NULL */
	double *num;           /* NaN for text and NULL */
};

struct pivot {
	struct report *r;
	struct pcol *col;
	size_t ncol, alloc_col;
	/* the rows in SQL order: row keys, column index, value, count */
	char **rowkey;
	size_t nrow, alloc_rowkey;
	size_t *colidx;
	double *val, *count;
	size_t alloc_colidx, alloc_val, alloc_count;
};

static int key_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static size_t pivot_col(struct pivot *p, const struct store_row *row, int at)
{
	int nc = p->r->ncols;

	for (size_t i = 0; i < p->ncol; i++) {
		int same = 1;

		for (int k = 0; k < nc && same; k++)
			same = key_eq(p->col[i].text[k], row->text[at + k]);
		if (same)
			return i;
	}
	ALLOC_GROW(p->col, p->ncol + 1, p->alloc_col);
	p->col[p->ncol].text = xcalloc((size_t)nc + 1, sizeof(char *));
	p->col[p->ncol].num = xcalloc((size_t)nc + 1, sizeof(double));
	for (int k = 0; k < nc; k++) {
		p->col[p->ncol].text[k] = row->text[at + k] ? xstrdup(row->text[at + k]) : NULL;
		p->col[p->ncol].num[k] = row->num[at + k];
	}
	return p->ncol++;
}

static int pivot_row(const struct store_row *row, void *data)
{
	struct pivot *p = data;
	int nr = p->r->nrows, nc = p->r->ncols;

	ALLOC_GROW(p->rowkey, (p->nrow + 1) * (size_t)(nr + 1), p->alloc_rowkey);
	for (int k = 0; k < nr; k++)
		p->rowkey[p->nrow * (size_t)(nr + 1) + (size_t)k] = row->text[k] ? xstrdup(row->text[k]) : NULL;
	ALLOC_GROW(p->colidx, p->nrow + 1, p->alloc_colidx);
	ALLOC_GROW(p->val, p->nrow + 1, p->alloc_val);
	ALLOC_GROW(p->count, p->nrow + 1, p->alloc_count);
	p->colidx[p->nrow] = nc ? pivot_col(p, row, nr) : 0;
	p->val[p->nrow] = row->num[nr + nc];
	p->count[p->nrow] = row->num[nr + nc + 1];
	/* the summary group rides in the slot after the row keys */
	p->rowkey[p->nrow * (size_t)(nr + 1) + (size_t)nr] =
		p->r->summary_by && row->text[nr + nc + 2] ? xstrdup(row->text[nr + nc + 2]) : NULL;
	p->nrow++;
	return 0;
}

/* SQLite's order: NULL, then numbers by value, then text by bytes. */
static int pcol_cmp_n;
static int pcol_cmp(const void *pa, const void *pb)
{
	const struct pcol *a = pa, *b = pb;

	for (int k = 0; k < pcol_cmp_n; k++) {
		int ta = !a->text[k] ? 0 : isnan(a->num[k]) ? 2 : 1;
		int tb = !b->text[k] ? 0 : isnan(b->num[k]) ? 2 : 1;
		int c;

		if (ta != tb)
			return ta - tb;
		if (ta == 1 && a->num[k] != b->num[k])
			return a->num[k] < b->num[k] ? -1 : 1;
		if (ta == 2 && (c = strcmp(a->text[k], b->text[k])))
			return c;
	}
	return 0;
}

/* Header of a pivot column: "N=256", "N=256 K=256". */
static char *pcol_name(struct report *r, const struct pcol *c)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < r->ncols; k++)
		sb_addf(&sb, "%s%s=%s", k ? " " : "", r->cols[k], c->text[k] ? c->text[k] : "-");
	return sb_detach(&sb);
}

int report_table(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	struct pivot p = { .r = r };
	struct rtab t;
	int nr = r->nrows, nc = r->ncols, ret = -1, ng = 0;
	size_t *order = NULL, *where = NULL;
	const char **names = NULL;

	if (report_metric(r, r->metric))
		goto out;
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < nr + nc; i++) {
		if (report_key_sql(r, i < nr ? r->rows[i] : r->cols[i - nr], &sql))
			goto out;
		sb_adds(&sql, ", ");
	}
	sb_addf(&sql, "%s(", report_stat_sql(r->stat));
	report_metric_value(r, &sql);
	sb_adds(&sql, "), count(m.value)");
	if (r->summary_by) {
		sb_adds(&sql, ", ");
		if (report_key_sql(r, r->summary_by, &sql))
			goto out;
		ng = 1;
	}
	if (report_from(r, &sql, JOIN_METRIC))
		goto out;
	if (nr + nc + ng) {
		sb_adds(&sql, " GROUP BY ");
		for (int i = 0; i < nr + nc + ng; i++)
			sb_addf(&sql, "%s%d", i ? ", " : "", i < nr + nc ? i + 1 : nr + nc + 3);
		sb_adds(&sql, " ORDER BY ");
		for (int i = 0; i < nr + nc; i++)
			sb_addf(&sql, "%s%d", i ? ", " : "", i + 1);
	}
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, pivot_row, &p))
		goto out;
	if (!p.nrow || (!nr && !nc && isnan(p.val[0]))) {
		error("no ok results of sweep '%s' with metric '%s'%s", r->sweep, r->metric,
		      r->where || r->nexcluded ? " that pass the filters" : "");
		goto out;
	}

	if (!nc) {
		const char *vn[] = { "n", r->metric };

		rtab_init(&t, nr, (const char *const *)r->rows, 2, vn);
		t.sig[0] = 0;
		t.nosum[0] = 1;
		for (size_t j = 0; j < p.nrow; j++) {
			double v[2] = { p.count[j], p.val[j] };

			rtab_add(&t, (const char *const *)&p.rowkey[j * (size_t)(nr + 1)], v,
				 p.rowkey[j * (size_t)(nr + 1) + (size_t)nr]);
		}
	} else {
		/* Sort the columns, then lay each row's values out in column order. */
		double *v;

		order = xmalloc(p.ncol * sizeof(*order));
		where = xmalloc(p.ncol * sizeof(*where));
		names = xcalloc(p.ncol + 1, sizeof(*names));
		{
			struct pcol *sorted = xmalloc(p.ncol * sizeof(*sorted));

			memcpy(sorted, p.col, p.ncol * sizeof(*sorted));
			pcol_cmp_n = nc;
			qsort(sorted, p.ncol, sizeof(*sorted), pcol_cmp);
			for (size_t i = 0; i < p.ncol; i++)
				for (size_t k = 0; k < p.ncol; k++)
					if (sorted[i].text == p.col[k].text)
						where[k] = i;
			for (size_t i = 0; i < p.ncol; i++)
				names[i] = pcol_name(r, &sorted[i]);
			free(sorted);
		}
		rtab_init(&t, nr, (const char *const *)r->rows, (int)p.ncol, names);
		for (size_t i = 0; i < p.ncol; i++)
			t.dgroup[i] = 1;
		v = xmalloc(p.ncol * sizeof(*v));
		for (size_t j = 0; j < p.nrow;) {
			size_t e = j;
			char **rk = &p.rowkey[j * (size_t)(nr + 1)];

			for (size_t i = 0; i < p.ncol; i++)
				v[i] = NAN;
			for (; e < p.nrow; e++) {
				int same = 1;

				for (int k = 0; k < nr + ng && same; k++)
					same = key_eq(rk[k], p.rowkey[e * (size_t)(nr + 1) + (size_t)k]);
				if (!same)
					break;
				v[where[p.colidx[e]]] = p.val[e];
			}
			rtab_add(&t, (const char *const *)rk, v, rk[nr]);
			j = e;
		}
		free(v);
	}
	{
		char *cap = xasprintf("%s of %s%s over passes, sweep %s%s%s", r->stat, r->metric,
				      r->metric_scale != 1 ? " (derived)" : "", r->sweep,
				      r->where ? ", where " : "", r->where ? r->where : "");

		ret = report_print(r, &t, cap);
		free(cap);
	}
	rtab_release(&t);
out:
	for (size_t j = 0; j < p.nrow; j++)
		for (int k = 0; k <= nr; k++)
			free(p.rowkey[j * (size_t)(nr + 1) + (size_t)k]);
	free(p.rowkey);
	free(p.colidx);
	free(p.val);
	free(p.count);
	for (size_t i = 0; i < p.ncol; i++) {
		for (int k = 0; k < nc; k++)
			free(p.col[i].text[k]);
		free(p.col[i].text);
		free(p.col[i].num);
		free((char *)(names ? names[i] : NULL));
	}
	free(p.col);
	free(names);
	free(order);
	free(where);
	sb_release(&sql);
	return ret;
}

/* ---- the command ---- */

static const struct option report_opts[] = {
	{ "sweep", required_argument, NULL, 'S' },
	{ "rows", required_argument, NULL, 'r' },
	{ "cols", required_argument, NULL, 'c' },
	{ "metric", required_argument, NULL, 'm' },
	{ "stat", required_argument, NULL, 's' },
	{ "where", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, 'f' },
	{ "out", required_argument, NULL, 'o' },
	{ "digits", required_argument, NULL, 'D' },
	{ "compare", required_argument, NULL, 'C' },
	{ "paired-by", required_argument, NULL, 'p' },
	{ "ci", required_argument, NULL, 'i' },
	{ "boot", required_argument, NULL, 'b' },
	{ "seed", required_argument, NULL, 'e' },
	{ "limit", required_argument, NULL, 'l' },
	{ "summary", optional_argument, NULL, 'u' },
	{ "exclude-unstable", no_argument, NULL, 'x' },
	{ "threshold", required_argument, NULL, 't' },
	{ "drift", no_argument, NULL, 'd' },
	{ "score", no_argument, NULL, 'k' },
	{ "bar", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A percentage given as 95 or 0.95, as a fraction in (0, 1). */
static int parse_level(const char *opt, const char *s, double *out)
{
	double v;

	if (parse_double(s, &v) || v <= 0 || v >= 100)
		return error("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	*out = v > 1 ? v / 100 : v;
	if (*out >= 1)
		return error("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	return 0;
}

/* What cannot go together, said before the database is opened. */
static int report_check(struct report *r)
{
	int modes = !!r->compare + !!r->limit + r->drift + r->score;

	if (modes > 1)
		return error("--compare, --limit, --drift and --score are separate reports: give one");
	if (r->drift && (r->nrows || r->ncols || r->metric || r->where || r->summary || r->exclude_unstable))
		return error("--drift takes only --sweep, --threshold, --format and --out");
	if (r->ncols && (r->compare || r->limit || r->score))
		return error("--cols makes a pivot table; with --%s put the keys into --rows",
			     r->compare ? "compare" : r->limit ? "limit" : "score");
	if (!r->drift && !r->score && !r->metric)
		return error("which metric? give --metric NAME");
	if (!r->compare && (r->paired_by))
		return error("--paired-by goes with --compare");
	if (!r->score && !isnan(r->bar))
		return error("--bar goes with --score");
	if (r->summary && (r->drift || r->score))
		return error("--summary goes with a table, --limit or --compare");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report r = { 0 };
	long l;
	int opt, ret = EXIT_USAGE;

	r.stat = "median";
	r.fmt = TABLE_MD;
	r.ci = 0.95;
	r.boot = 10000;
	r.seed = 1;
	r.threshold = 0.03;
	r.bar = NAN;
	while ((opt = getopt_long(argc, argv, "h", report_opts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			r.sweep_arg = optarg;
			break;
		case 'r':
			if (r.rows || report_split("--rows", optarg, &r.rows, &r.nrows))
				goto usage;
			break;
		case 'c':
			if (r.cols || report_split("--cols", optarg, &r.cols, &r.ncols))
				goto usage;
			break;
		case 'm':
			r.metric = optarg;
			break;
		case 's':
			if (strcmp(optarg, "median") && strcmp(optarg, "mean") && strcmp(optarg, "geomean") &&
			    strcmp(optarg, "min") && strcmp(optarg, "max")) {
				error("--stat is median, mean, geomean, min or max, not '%s'", optarg);
				goto out;
			}
			r.stat = optarg;
			break;
		case 'w':
			r.where = optarg;
			break;
		case 'f':
			if (table_format_parse(optarg, &r.fmt))
				goto out;
			break;
		case 'o':
			r.out = optarg;
			break;
		case 'D':
			if (parse_long(optarg, &l) || l < 1 || l > 17) {
				error("--digits takes 1 to 17, not '%s'", optarg);
				goto out;
			}
			r.digits = (int)l;
			break;
		case 'C':
			r.compare = optarg;
			break;
		case 'p':
			r.paired_by = optarg;
			break;
		case 'i':
			if (parse_level("--ci", optarg, &r.ci))
				goto out;
			break;
		case 'b':
			if (parse_long(optarg, &l) || l < 1 || l > 10000000) {
				error("--boot takes 1 to 10000000 resamples, not '%s'", optarg);
				goto out;
			}
			r.boot = (int)l;
			break;
		case 'e':
			if (parse_long(optarg, &l)) {
				error("--seed takes an integer, not '%s'", optarg);
				goto out;
			}
			r.seed = (uint64_t)l;
			break;
		case 'l':
			r.limit = optarg;
			break;
		case 'u':
			r.summary = 1;
			r.summary_by = optarg && *optarg ? optarg : NULL;
			break;
		case 'x':
			r.exclude_unstable = 1;
			break;
		case 't':
			if (parse_double(optarg, &r.threshold) || !(r.threshold > 0) || r.threshold >= 100) {
				error("--threshold takes a percentage such as 3, not '%s'", optarg);
				goto out;
			}
			r.threshold /= 100;
			break;
		case 'd':
			r.drift = 1;
			break;
		case 'k':
			r.score = 1;
			break;
		case 'B':
			if (parse_double(optarg, &r.bar) || !(r.bar > 0)) {
				error("--bar takes a percentage such as 10, not '%s'", optarg);
				goto out;
			}
			break;
		case 'h':
			cli_usage("report");
			ret = EXIT_OK;
			goto out;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	r.db = argv[optind];
	if (report_check(&r))
		goto out;
	if (report_open(&r))
		goto out;
	if (r.exclude_unstable && report_unstable_hosts(&r)) {
		ret = EXIT_FAIL;
		goto out;
	}
	/* After the database is open, a failure is the input's (a name, an expression) unless SQL failed:
	 * both print their reason; EXIT_USAGE tells scripts nothing was wrong with the data itself. */
	if (r.drift)
		ret = report_drift(&r);
	else if (r.score)
		ret = report_score(&r);
	else if (r.compare)
		ret = report_compare(&r);
	else if (r.limit)
		ret = report_limit(&r);
	else
		ret = report_table(&r);
	ret = ret ? EXIT_USAGE : EXIT_OK;
	goto out;
usage:
	ret = cli_usage("report");
out:
	report_release(&r);
	return ret;
}
