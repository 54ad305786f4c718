/* report_predict.c: `sweep predict` registers predictions before the run; `sweep report --score` scores them. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "report.h"

int report_csv_record(const char *text, size_t *pos, char ***fields, char *err, size_t errlen)
{
	const char *p = text + *pos;
	struct strbuf f = STRBUF_INIT;
	int n = 0;

	*fields = NULL;
	if (!*p)
		return 0;
	for (;;) {
		sb_reset(&f);
		if (*p == '"') {
			for (p++;; p++) {
				if (!*p) {
					snprintf(err, errlen, "a quoted field does not end");
					sb_release(&f);
					for (int i = 0; i < n; i++)
						free((*fields)[i]);
					free(*fields);
					*fields = NULL;
					return -1;
				}
				if (*p == '"' && p[1] == '"')
					p++;
				else if (*p == '"')
					break;
				sb_addc(&f, *p);
			}
			p++;
			/* anything between the closing quote and the separator is kept, as most readers do */
		}
		while (*p && *p != ',' && *p != '\n' && !(*p == '\r' && p[1] == '\n'))
			sb_addc(&f, *p++);
		*fields = xrealloc(*fields, (size_t)(n + 1) * sizeof(**fields));
		(*fields)[n++] = xstrdup(f.buf ? f.buf : "");
		if (*p == ',') {
			p++;
			continue;
		}
		p += *p == '\r' ? 2 : *p == '\n' ? 1 : 0;
		break;
	}
	sb_release(&f);
	*pos = (size_t)(p - text);
	return n;
}

static void free_fields(char **f, int n)
{
	for (int i = 0; i < n; i++)
		free(f[i]);
	free(f);
}

/* The same text for equal values: numbers through their double ("1e3" and "1000" match), text as is. */
static char *canon(const char *s)
{
	double v;

	if (!parse_double(s, &v))
		return xasprintf("#%.17g", v);
	return xasprintf("'%s", s);
}

/* ---- sweep predict ---- */

struct pcell {
	char *key, *match;     /* match: canon values of the file's parameter columns, joined by \x1f */
	int has_result;
	int replica;           /* a per-host or per-gpu copy: matched by key only */
};

struct psweep {
	char *name;
	char **params;         /* parameter names */
	size_t nparams;
	struct pcell *cells;
	size_t ncells, alloc;
	int loaded;
};

struct pload {
	struct psweep *s;
	char **cols;           /* the file's parameter columns */
	int ncols;
	char *err;
};

static int pload_row(const struct store_row *row, void *data)
{
	struct pload *l = data;
	struct psweep *s = l->s;
	struct json_obj o = JSON_OBJ_INIT;
	struct strbuf m = STRBUF_INIT;
	char err[128];
	struct pcell *c;

	if (json_parse_flat(row->text[1], &o, 1, err, sizeof(err)))
		return error("cell '%s' has bad params: %s", row->text[0], err);
	for (size_t i = 0; i < o.n; i++) {
		size_t k;

		for (k = 0; k < s->nparams && strcmp(s->params[k], o.v[i].key); k++)
			;
		if (k == s->nparams) {
			s->params = xrealloc(s->params, (s->nparams + 1) * sizeof(*s->params));
			s->params[s->nparams++] = xstrdup(o.v[i].key);
		}
	}
	for (int i = 0; i < l->ncols; i++) {
		const char *v = json_obj_get(&o, l->cols[i]);
		char *cv = v ? canon(v) : xstrdup("");

		sb_addf(&m, "%s%s", i ? "\x1f" : "", cv);
		free(cv);
	}
	ALLOC_GROW(s->cells, s->ncells + 1, s->alloc);
	c = &s->cells[s->ncells++];
	c->key = xstrdup(row->text[0]);
	c->match = sb_detach(&m);
	c->has_result = row->num[2] > 0;
	c->replica = row->text[3] && *row->text[3];
	json_obj_release(&o);
	return 0;
}

static int pcell_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pcell *)a)->match, ((const struct pcell *)b)->match);
}

/* The cells of a sweep, with whether each (or a replica of it, or another cell with its parameters and
 * pass) has an ok result, sorted by the file's parameter values. */
static int psweep_load(struct store *st, struct psweep *s, char **cols, int ncols)
{
	struct pload l = { s, cols, ncols, NULL };
	const char *bind[] = { s->name };

	if (store_query(st, "SELECT c.key, c.params, coalesce(x.n, 0), c.replica FROM cells c LEFT JOIN"
			" (SELECT c2.params AS params, c2.pass AS pass, count(*) AS n FROM cells c2 JOIN results r"
			"  ON r.cell = c2.id AND r.status = 'ok' WHERE c2.sweep = ?1 GROUP BY 1, 2) x"
			" ON x.params = c.params AND x.pass = c.pass WHERE c.sweep = ?1 ORDER BY c.ord, c.id",
			bind, 1, 1, pload_row, &l))
		return -1;
	qsort(s->cells, s->ncells, sizeof(*s->cells), pcell_cmp);
	s->loaded = 1;
	return 0;
}

static void psweep_release(struct psweep *s)
{
	for (size_t i = 0; i < s->ncells; i++) {
		free(s->cells[i].key);
		free(s->cells[i].match);
	}
	free(s->cells);
	for (size_t i = 0; i < s->nparams; i++)
		free(s->params[i]);
	free(s->params);
	free(s->name);
}

/* One prediction to store. */
struct pred {
	const char *sweep;
	char *key, *metric;
	double value;
	int blind;
	int line;
};

struct existing {
	struct strbuf sb;      /* "sweep\x1fkey\x1fmetric\x1fsha\n" per prediction already registered */
};

static int collect_existing(const struct store_row *row, void *data)
{
	struct existing *e = data;

	sb_addf(&e->sb, "\n%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", row->text[0], row->text[1], row->text[2],
		row->text[3] ? row->text[3] : "", row->text[4] ? row->text[4] : "",
		row->text[5] ? row->text[5] : "");
	return 0;
}

/* The registration of an earlier file for (sweep, key, metric): its sha256, time and source (buffers of
 * n bytes each); 0 if there is none. */
static int find_existing(const struct existing *e, const struct pred *p, char *sha, char *when, char *src,
			 size_t n)
{
	char *needle = xasprintf("\n%s\x1f%s\x1f%s\x1f", p->sweep, p->key, p->metric);
	const char *at = strstr(e->sb.buf ? e->sb.buf : "", needle);

	if (at) {
		const char *f = at + strlen(needle), *g = strchr(f, '\x1f'), *h = strchr(g + 1, '\x1f');
		const char *end = strchr(h + 1, '\n');

		snprintf(sha, n, "%.*s", (int)(g - f), f);
		snprintf(when, n, "%.*s", (int)(h - g - 1), g + 1);
		snprintf(src, n, "%.*s", (int)(end ? end - h - 1 : (long)strlen(h + 1)), h + 1);
	}
	free(needle);
	return at != NULL;
}

struct predict_file {
	const char *path, *sweep_arg;
	int late;
	char **head;
	int nhead, c_sweep, c_key, c_metric, c_value;
	char **pcols;          /* parameter columns */
	int *pcol_at;
	int npcols;
};

static int header(struct predict_file *pf)
{
	pf->c_sweep = pf->c_key = pf->c_metric = pf->c_value = -1;
	pf->pcols = xcalloc((size_t)pf->nhead + 1, sizeof(*pf->pcols));
	pf->pcol_at = xcalloc((size_t)pf->nhead + 1, sizeof(*pf->pcol_at));
	for (int i = 0; i < pf->nhead; i++) {
		const char *h = pf->head[i];
		int *slot = !strcmp(h, "sweep") ? &pf->c_sweep : !strcmp(h, "key") ? &pf->c_key :
			    !strcmp(h, "metric") ? &pf->c_metric : !strcmp(h, "value") ? &pf->c_value : NULL;

		if (!*h)
			return error("%s:1: column %d has no name", pf->path, i + 1);
		for (int k = 0; k < i; k++)
			if (!strcmp(pf->head[k], h))
				return error("%s:1: column '%s' appears twice", pf->path, h);
		if (slot) {
			*slot = i;
		} else {
			pf->pcols[pf->npcols] = pf->head[i];
			pf->pcol_at[pf->npcols++] = i;
		}
	}
	if (pf->c_metric < 0 || pf->c_value < 0)
		return error("%s:1: the header needs the columns metric and value (with key, or parameter "
			     "columns such as M,N,K; and sweep when the database holds several)", pf->path);
	if (pf->c_key >= 0 && pf->npcols)
		return error("%s:1: give either a key column or parameter columns (%s), not both", pf->path,
			     pf->pcols[0]);
	if (pf->c_key < 0 && !pf->npcols)
		return error("%s:1: which cells? add a key column or parameter columns (such as M,N,K)", pf->path);
	return 0;
}

static int only_sweep(const struct store_row *row, void *data)
{
	char **name = data;

	if (*name) {
		free(*name);
		*name = NULL;
		return 1;      /* several */
	}
	*name = xstrdup(row->text[0]);
	return 0;
}

static struct psweep *get_sweep(struct store *st, struct predict_file *pf, struct psweep **v, size_t *n,
				const char *name, int line)
{
	struct psweep *s = NULL;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].name, name))
			s = &(*v)[i];
	if (!s) {
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		s = &(*v)[(*n)++];
		memset(s, 0, sizeof(*s));
		s->name = xstrdup(name);
		if (psweep_load(st, s, pf->pcols, pf->npcols))
			return NULL;
		if (!s->ncells) {
			error("%s:%d: no cells of sweep '%s' in the database: plan it first (sweep plan SPEC --db DB)",
			      pf->path, line, name);
			return NULL;
		}
		for (int i = 0; i < pf->npcols; i++) {
			size_t k;

			for (k = 0; k < s->nparams && strcmp(s->params[k], pf->pcols[i]); k++)
				;
			if (k == s->nparams) {
				const char *near;

				s->params = xrealloc(s->params, (s->nparams + 1) * sizeof(*s->params));
				s->params[s->nparams] = NULL;
				near = closest_name(pf->pcols[i], (const char *const *)s->params);
				error("%s:1: column '%s' is not a parameter of sweep '%s'%s%s%s", pf->path,
				      pf->pcols[i], name, near ? " (did you mean '" : "", near ? near : "",
				      near ? "'?)" : "");
				return NULL;
			}
		}
	}
	return s;
}

static const struct option predict_opts[] = {
	{ "late", no_argument, NULL, 'l' },
	{ "sweep", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Read and check the whole file, match its rows to cells; nothing is written. -1 after error(). */
static int predict_read(struct store *st, struct predict_file *pf, const char *text, struct pred **preds,
			size_t *npred, struct psweep **sweeps, size_t *nsweeps)
{
	struct strbuf refused = STRBUF_INIT;
	size_t pos = 0, alloc = 0, nrefused = 0;
	char err[128], *default_sweep = NULL, **f;
	int n, line = 1, ret = -1;

	if ((pf->nhead = report_csv_record(text, &pos, &pf->head, err, sizeof(err))) <= 0)
		return error("%s:1: %s", pf->path, pf->nhead < 0 ? err : "empty file");
	if (header(pf))
		return -1;
	if (pf->c_sweep < 0) {
		if (pf->sweep_arg) {
			default_sweep = xstrdup(pf->sweep_arg);
		} else if (store_query(st, "SELECT name FROM sweeps ORDER BY name", NULL, 0, 1, only_sweep,
				       &default_sweep) || !default_sweep) {
			error("%s:1: add a sweep column or --sweep NAME: the database holds %s", pf->path,
			      default_sweep ? "several sweeps" : "no sweep (plan one first)");
			goto out;
		}
	}
	while ((n = report_csv_record(text, &pos, &f, err, sizeof(err))) != 0) {
		struct psweep *s;
		const char *sweep;
		double value;

		line++;
		if (n < 0) {
			error("%s:%d: %s", pf->path, line, err);
			goto out;
		}
		if (n == 1 && !*f[0]) {           /* a blank line */
			free_fields(f, n);
			continue;
		}
		if (n != pf->nhead) {
			error("%s:%d: %d fields, the header has %d", pf->path, line, n, pf->nhead);
			free_fields(f, n);
			goto out;
		}
		sweep = pf->c_sweep >= 0 ? f[pf->c_sweep] : default_sweep;
		if (parse_double(f[pf->c_value], &value)) {
			error("%s:%d: value '%s' is not a number", pf->path, line, f[pf->c_value]);
			free_fields(f, n);
			goto out;
		}
		if (!*f[pf->c_metric]) {
			error("%s:%d: empty metric", pf->path, line);
			free_fields(f, n);
			goto out;
		}
		if (!(s = get_sweep(st, pf, sweeps, nsweeps, sweep, line))) {
			free_fields(f, n);
			goto out;
		}
		{
			struct strbuf m = STRBUF_INIT;
			size_t lo = 0, hi = s->ncells, matched = 0;

			if (pf->c_key < 0) {
				struct pcell probe;

				for (int i = 0; i < pf->npcols; i++) {
					char *cv = canon(f[pf->pcol_at[i]]);

					sb_addf(&m, "%s%s", i ? "\x1f" : "", cv);
					free(cv);
				}
				probe.match = m.buf;
				/* first cell whose values match, then every following one (passes, replicas) */
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;

					if (pcell_cmp(&s->cells[mid], &probe) < 0)
						lo = mid + 1;
					else
						hi = mid;
				}
				hi = s->ncells;
			}
			for (size_t i = lo; i < hi; i++) {
				struct pcell *c = &s->cells[i];
				struct pred *p;

				if (pf->c_key >= 0 ? strcmp(c->key, f[pf->c_key]) : strcmp(c->match, m.buf))
					continue;
				if (pf->c_key < 0 && c->replica)
					continue;     /* the template cell stands for its replicas */
				matched++;
				if (c->has_result && !pf->late) {
					if (nrefused++ < 5)
						sb_addf(&refused, "\n  %s:%d: cell %s", pf->path, line, c->key);
					continue;
				}
				ALLOC_GROW(*preds, *npred + 1, alloc);
				p = &(*preds)[(*npred)++];
				p->sweep = s->name;
				p->key = xstrdup(c->key);
				p->metric = xstrdup(f[pf->c_metric]);
				p->value = value;
				p->blind = !c->has_result;
				p->line = line;
			}
			if (!matched) {
				if (pf->c_key >= 0)
					error("%s:%d: no cell '%s' in sweep '%s'", pf->path, line, f[pf->c_key], sweep);
				else
					error("%s:%d: no cell of sweep '%s' has these parameter values", pf->path, line,
					      sweep);
				sb_release(&m);
				free_fields(f, n);
				goto out;
			}
			sb_release(&m);
		}
		free_fields(f, n);
	}
	if (nrefused) {
		error("%zu %s:%s%s\n"
		      "nothing was registered; predictions made after a result are not blind: register them "
		      "with --late", nrefused, nrefused == 1 ? "prediction is for a cell that already has a result" :
		      "predictions are for cells that already have a result", refused.buf,
		      nrefused > 5 ? "\n  ..." : "");
		goto out;
	}
	ret = 0;
out:
	free(default_sweep);
	sb_release(&refused);
	return ret;
}

static int pred_cmp(const void *a, const void *b)
{
	const struct pred *x = a, *y = b;
	int c = strcmp(x->sweep, y->sweep);

	if (!c)
		c = strcmp(x->key, y->key);
	if (!c)
		c = strcmp(x->metric, y->metric);
	return c ? c : x->line - y->line;
}

int cmd_predict(int argc, char **argv)
{
	struct predict_file pf = { 0 };
	struct strbuf text = STRBUF_INIT;
	struct existing ex = { STRBUF_INIT };
	struct store *st = NULL;
	struct pred *preds = NULL;
	struct psweep *sweeps = NULL;
	size_t npred = 0, nsweeps = 0, nblind = 0, nold = 0, nnew = 0;
	char sha[65], now[32];
	const char *db;
	int opt, ret = EXIT_USAGE;

	while ((opt = getopt_long(argc, argv, "h", predict_opts, NULL)) != -1) {
		if (opt == 'l')
			pf.late = 1;
		else if (opt == 'S')
			pf.sweep_arg = optarg;
		else
			return opt == 'h' ? (cli_usage("predict"), EXIT_OK) : cli_usage("predict");
	}
	if (optind != argc - 2)
		return cli_usage("predict");
	db = argv[optind];
	pf.path = argv[optind + 1];
	/* a prediction needs planned cells: never create a database here */
	if (access(db, F_OK)) {
		error("cannot open '%s': %m (plan the sweep first: sweep plan SPEC --db %s)", db, db);
		return EXIT_USAGE;
	}
	if (sb_read_file(&text, pf.path))
		return EXIT_USAGE;
	if (memchr(text.buf, '\0', text.len)) {
		error("'%s' is not a CSV text file", pf.path);
		goto out;
	}
	report_sha256(text.buf, text.len, sha);
	if (store_open(db, STORE_RW, &st))
		goto out;
	if (predict_read(st, &pf, text.buf, &preds, &npred, &sweeps, &nsweeps))
		goto out;
	qsort(preds, npred, sizeof(*preds), pred_cmp);
	for (size_t i = 1; i < npred; i++)
		if (!strcmp(preds[i - 1].key, preds[i].key) && !strcmp(preds[i - 1].metric, preds[i].metric) &&
		    !strcmp(preds[i - 1].sweep, preds[i].sweep)) {
			error("%s:%d and line %d predict %s of cell %s twice", pf.path, preds[i - 1].line,
			      preds[i].line, preds[i].metric, preds[i].key);
			goto out;
		}
	iso_time(now_wall(), now, sizeof(now));
	if (store_begin(st)) {
		ret = EXIT_FAIL;
		goto out;
	}
	/* Read under the write lock: two registrations at once cannot both pass the checks. */
	if (store_query(st, "SELECT sweep, key, metric, sha256, frozen_at, source FROM predictions", NULL, 0, 1,
			collect_existing, &ex))
		goto fail;
	for (size_t i = 0; i < npred; i++) {
		struct pred *p = &preds[i];
		char osha[256], when[256], src[256], value[40];
		const char *bind[8];

		if (find_existing(&ex, p, osha, when, src, sizeof(osha))) {
			if (!strcmp(osha, sha)) {
				nold++;
				continue;
			}
			error("%s:%d: cell %s already has a prediction of %s (registered %s from '%s', sha256 "
			      "%.12s...): a registered prediction is never replaced; nothing was registered",
			      pf.path, p->line, p->key, p->metric, when, src, osha);
			store_rollback(st);
			goto out;
		}
		snprintf(value, sizeof(value), "%.17g", p->value);
		bind[0] = p->sweep;
		bind[1] = p->key;
		bind[2] = p->metric;
		bind[3] = value;
		bind[4] = p->blind ? "1" : "0";
		bind[5] = now;
		bind[6] = sha;
		bind[7] = pf.path;
		if (store_query(st, "INSERT INTO predictions(sweep, key, metric, value, blind, frozen_at, sha256,"
				" source) VALUES(?1, ?2, ?3, CAST(?4 AS REAL), CAST(?5 AS INTEGER), ?6, ?7, ?8)",
				bind, 8, 0, NULL, NULL))
			goto fail;
		nnew++;
		nblind += p->blind;
	}
	if (store_commit(st))
		goto fail;
	printf("%s: %zu predictions registered (%zu blind, %zu late), %zu already registered; sha256 %s, "
	       "frozen at %s\n", pf.path, nnew, nblind, nnew - nblind, nold, sha, now);
	ret = EXIT_OK;
	goto out;
fail:
	store_rollback(st);
	ret = EXIT_FAIL;
out:
	for (size_t i = 0; i < npred; i++) {
		free(preds[i].key);
		free(preds[i].metric);
	}
	free(preds);
	for (size_t i = 0; i < nsweeps; i++)
		psweep_release(&sweeps[i]);
	free(sweeps);
	free_fields(pf.head, pf.nhead > 0 ? pf.nhead : 0);
	free(pf.pcols);
	free(pf.pcol_at);
	sb_release(&ex.sb);
	sb_release(&text);
	store_close(st);
	return ret;
}

/* ---- sweep report --score ---- */

struct score_rows {
	const struct report *r;
	struct table *t;
	int nkey;
	double bar;
	int groups, met, pending;
};

static int score_row(const struct store_row *row, void *data)
{
	struct score_rows *s = data;
	const double *v = &row->num[s->nkey + 2];  /* n, mean(err^2), mean(err), not measured yet */
	char n[24], rms[40], mean[40];
	const char **cells = xcalloc((size_t)s->nkey + 8, sizeof(*cells));
	int c = 0;

	s->pending += (int)v[3];
	if (v[0] > 0) {
		double r = sqrt(v[1]);
		int ok = r <= s->bar;

		for (int k = 0; k < s->nkey + 1; k++)
			cells[c++] = row->text[k];
		cells[c++] = row->num[s->nkey + 1] == 1 ? "blind" : "late";
		snprintf(n, sizeof(n), "%.0f", v[0]);
		report_num(s->r, r, 3, rms, sizeof(rms));
		report_num(s->r, v[2], 3, mean, sizeof(mean));
		cells[c++] = n;
		cells[c++] = rms;
		cells[c++] = mean;
		if (!isnan(s->bar)) {
			cells[c++] = ok ? "met" : "missed";
			s->groups++;
			s->met += ok;
		}
		table_add(s->t, cells);
	}
	free(cells);
	return 0;
}

int report_score(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	struct table t;
	struct score_rows s = { r, &t, r->nrows, r->bar, 0, 0, 0 };
	const char **head = xcalloc((size_t)r->nrows + 8, sizeof(*head));
	int nh = 0, ret = -1;
	FILE *f;

	report_binds_reset(r);
	/* Each prediction is scored against every ok result of its cell's parameters and pass (the cell
	 * itself, or the per-host replicas of a template cell). error = 100 (measured - predicted) / predicted. */
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind, count(err), avg(err * err), avg(err), count(*) - count(err) FROM (SELECT ");
	for (int i = 0; i < r->nrows; i++) {
		if (report_key_sql(r, r->rows[i], &sql))
			goto out;
		sb_addf(&sql, " AS k%d, ", i);
	}
	sb_adds(&sql, "p.metric AS metric, p.blind AS blind, 100.0 * (m.value - p.value) / p.value AS err"
		" FROM predictions p JOIN cells c0 ON c0.key = p.key"
		" JOIN cells c ON c.sweep = c0.sweep AND c.params = c0.params AND c.pass = c0.pass"
		"  AND c.state != 'template'"
		" LEFT JOIN results r ON r.cell = c.id AND r.status = 'ok'"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host"
		" LEFT JOIN metrics m ON m.result = r.id AND m.name = p.metric"
		" WHERE p.sweep = ");
	report_bind(r, &sql, r->sweep);
	if (r->metric) {
		sb_adds(&sql, " AND p.metric = ");
		report_bind(r, &sql, r->metric);
	}
	if (r->where) {
		sb_adds(&sql, " AND (");
		if (report_expr_sql(r, "--where", r->where, 0, &sql))
			goto out;
		sb_addc(&sql, ')');
	}
	for (size_t i = 0; i < r->nexcluded; i++) {
		sb_adds(&sql, " AND coalesce(h.hostname, '') != ");
		report_bind(r, &sql, r->excluded[i]);
	}
	sb_adds(&sql, ") GROUP BY ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind ORDER BY ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind DESC");
	for (int i = 0; i < r->nrows; i++)
		head[nh++] = r->rows[i];
	head[nh++] = "metric";
	head[nh++] = "predictions";
	head[nh++] = "n";
	head[nh++] = "rms_err_%";
	head[nh++] = "mean_err_%";
	if (!isnan(r->bar))
		head[nh++] = "bar";
	table_init(&t, nh, head);
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, score_row, &s))
		goto out_t;
	if (!t.nrows) {
		error("no predictions of sweep '%s'%s%s have a measured result%s", r->sweep, r->metric ? " for " : "",
		      r->metric ? r->metric : "", s.pending ? " yet" : " (register them with 'sweep predict')");
		goto out_t;
	}
	if (!report_out_open(r, &f)) {
		if (r->fmt == TABLE_MD || r->fmt == TABLE_TEXT) {
			fprintf(f, "predictions of sweep %s: error = 100 (measured - predicted) / predicted", r->sweep);
			if (!isnan(r->bar))
				fprintf(f, "; bar: rms error <= %g%%", r->bar);
			fprintf(f, "\n\n");
		}
		table_print(&t, f, r->fmt);
		ret = report_out_close(r, f);
	}
	if (s.pending)
		report_note("%d predicted results are not measured yet", s.pending);
	if (!ret && !isnan(r->bar))
		report_note("bar %g%%: met by %d of %d groups", r->bar, s.met, s.groups);
out_t:
	table_release(&t);
out:
	free(head);
	sb_release(&sql);
	return ret;
}
