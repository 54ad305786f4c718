/* report_predict.c: predictions from a CSV file matched to planned cells and stored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "report.h"
#include "sha256.h"

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
	if (!l->ncols)
		sb_adds(&m, row->text[0]);     /* a file of keys matches by key */
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
			" (SELECT c2.params AS params, c2.pass AS pass, count(*) AS n FROM cells c2"
			"  JOIN results r ON r.cell = c2.id AND r.status = 'ok' WHERE c2.sweep = ?1"
			"  GROUP BY 1, 2) x"
			" ON x.params = c.params AND x.pass = c.pass WHERE c.sweep = ?1 ORDER BY c.ord, c.id",
			bind, 1, 1, pload_row, &l))
		return -1;
	if (s->ncells)
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

/* A prediction already registered: "sweep\x1fkey\x1fmetric" and where it came from. */
struct existing {
	char *id, *sha, *when, *src;
};

struct existing_list {
	struct existing *v;
	size_t n, alloc;
};

static char *pred_id(const char *sweep, const char *key, const char *metric)
{
	return xasprintf("%s\x1f%s\x1f%s", sweep, key, metric);
}

static int collect_existing(const struct store_row *row, void *data)
{
	struct existing_list *l = data;
	struct existing *e;

	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	e = &l->v[l->n++];
	e->id = pred_id(row->text[0], row->text[1] ? row->text[1] : "", row->text[2]);
	e->sha = xstrdup(row->text[3] ? row->text[3] : "");
	e->when = xstrdup(row->text[4] ? row->text[4] : "");
	e->src = xstrdup(row->text[5] ? row->text[5] : "");
	return 0;
}

static int existing_cmp(const void *a, const void *b)
{
	return strcmp(((const struct existing *)a)->id, ((const struct existing *)b)->id);
}

static void existing_release(struct existing_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].sha);
		free(l->v[i].when);
		free(l->v[i].src);
	}
	free(l->v);
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
		return error("%s:1: which cells? add a key column or parameter columns (such as M,N,K)",
			     pf->path);
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
			error("%s:%d: no cells of sweep '%s' in the database: plan it first (sweep plan SPEC "
			      "--db DB)", pf->path, line, name);
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

/* The predictions read from a file, and the cells refused because they have a result. */
struct pread {
	struct pred *v;
	size_t n, alloc;
	struct strbuf refused;     /* the first few, one line each */
	size_t nrefused;
};

/*
 * Match one row to its cells: by key, or by the parameter columns (every pass; for per-host sweeps the
 * template, which stands for its replicas). Cells are sorted by match text, so the matches are one run
 * found by binary search. 0, or -1 after error() when nothing matches.
 */
static int predict_row(struct predict_file *pf, struct psweep *s, char **f, int line, double value,
		       struct pread *pr)
{
	struct strbuf m = STRBUF_INIT;
	struct pcell probe;
	size_t lo = 0, hi = s->ncells, matched = 0;

	if (pf->c_key >= 0) {
		sb_adds(&m, f[pf->c_key]);
	} else {
		for (int i = 0; i < pf->npcols; i++) {
			char *cv = canon(f[pf->pcol_at[i]]);

			sb_addf(&m, "%s%s", i ? "\x1f" : "", cv);
			free(cv);
		}
	}
	probe.match = m.buf;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pcell_cmp(&s->cells[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->ncells && !strcmp(s->cells[i].match, m.buf); i++) {
		struct pcell *c = &s->cells[i];
		struct pred *p;

		if (pf->c_key < 0 && c->replica)
			continue;
		matched++;
		if (c->has_result && !pf->late) {
			if (pr->nrefused++ < 5)
				sb_addf(&pr->refused, "\n  %s:%d: cell %s", pf->path, line, c->key);
			continue;
		}
		ALLOC_GROW(pr->v, pr->n + 1, pr->alloc);
		p = &pr->v[pr->n++];
		p->sweep = s->name;
		p->key = xstrdup(c->key);
		p->metric = xstrdup(f[pf->c_metric]);
		p->value = value;
		p->blind = !c->has_result;
		p->line = line;
	}
	sb_release(&m);
	if (matched)
		return 0;
	if (pf->c_key >= 0)
		return error("%s:%d: no cell '%s' in sweep '%s'", pf->path, line, f[pf->c_key], s->name);
	return error("%s:%d: no cell of sweep '%s' has these parameter values", pf->path, line, s->name);
}

/* Read and check the whole file, match its rows to cells; nothing is written. -1 after error(). */
static int predict_read(struct store *st, struct predict_file *pf, const char *text, struct pread *pr,
			struct psweep **sweeps, size_t *nsweeps)
{
	size_t pos = 0;
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
		double value;
		int bad = 1;

		line++;
		if (n < 0) {
			error("%s:%d: %s", pf->path, line, err);
			goto out;
		}
		if (n == 1 && !*f[0])             /* a blank line */
			bad = 0;
		else if (n != pf->nhead)
			error("%s:%d: %d fields, the header has %d", pf->path, line, n, pf->nhead);
		else if (parse_double(f[pf->c_value], &value))
			error("%s:%d: value '%s' is not a number", pf->path, line, f[pf->c_value]);
		else if (!*f[pf->c_metric])
			error("%s:%d: empty metric", pf->path, line);
		else if ((s = get_sweep(st, pf, sweeps, nsweeps,
					pf->c_sweep >= 0 ? f[pf->c_sweep] : default_sweep, line)))
			bad = predict_row(pf, s, f, line, value, pr);
		free_fields(f, n);
		if (bad)
			goto out;
	}
	if (pr->nrefused) {
		error("%zu %s:%s%s\nnothing was registered; predictions made after a result are not blind: "
		      "register them with --late", pr->nrefused, pr->nrefused == 1 ?
		      "prediction is for a cell that already has a result" :
		      "predictions are for cells that already have a result", pr->refused.buf,
		      pr->nrefused > 5 ? "\n  ..." : "");
		goto out;
	}
	ret = 0;
out:
	free(default_sweep);
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

/* How a registration went. */
struct predict_counts {
	size_t nnew, nblind, nold;
};

/* Store the checked predictions (sorted) in one transaction, under the write lock: two registrations at
 * once cannot both pass the checks. An enum fail: FAIL_USAGE (nothing stored) for a cell that has another
 * prediction of the metric, FAIL_IO when the database fails. */
static int predict_store(struct store *st, const struct predict_file *pf, const struct pred *preds,
			 size_t npred, const char *sha, const char *now, struct predict_counts *n)
{
	struct existing_list ex = { NULL, 0, 0 };
	int ret = FAIL_IO;

	if (store_begin(st))
		return FAIL_IO;
	if (store_query(st, "SELECT sweep, key, metric, sha256, frozen_at, source FROM predictions", NULL, 0,
			1, collect_existing, &ex))
		goto out;
	if (ex.n)
		qsort(ex.v, ex.n, sizeof(*ex.v), existing_cmp);
	for (size_t i = 0; i < npred; i++) {
		const struct pred *p = &preds[i];
		struct existing want = { pred_id(p->sweep, p->key, p->metric), NULL, NULL, NULL };
		const struct existing *e = ex.n ? bsearch(&want, ex.v, ex.n, sizeof(*ex.v), existing_cmp) : NULL;
		char value[40];
		const char *bind[8] = { p->sweep, p->key, p->metric, value, p->blind ? "1" : "0", now, sha,
					pf->path };

		free(want.id);
		if (e && !strcmp(e->sha, sha)) {
			n->nold++;
			continue;
		}
		if (e) {
			ret = fail_usage("%s:%d: cell %s already has a prediction of %s (registered %s from '%s', "
					 "sha256 %.12s...): a registered prediction is never replaced; nothing was "
					 "registered", pf->path, p->line, p->key, p->metric, e->when, e->src, e->sha);
			goto out;
		}
		snprintf(value, sizeof(value), "%.17g", p->value);
		if (store_put_prediction(st, bind))
			goto out;
		n->nnew++;
		n->nblind += p->blind;
	}
	if (!store_commit(st))
		ret = FAIL_OK;
out:
	if (ret)
		store_rollback(st);
	existing_release(&ex);
	return ret;
}

/* Two rows of the file that predict the same metric of the same cell: refused, naming both lines. */
static int predict_twice(const struct predict_file *pf, const struct pred *preds, size_t npred)
{
	for (size_t i = 1; i < npred; i++)
		if (!strcmp(preds[i - 1].key, preds[i].key) && !strcmp(preds[i - 1].sweep, preds[i].sweep) &&
		    !strcmp(preds[i - 1].metric, preds[i].metric))
			return fail_usage("%s:%d and line %d predict %s of cell %s twice", pf->path, preds[i - 1].line,
					  preds[i].line, preds[i].metric, preds[i].key);
	return FAIL_OK;
}

int report_predict(const char *db, const char *path, const char *sweep_arg, int late)
{
	struct predict_file pf = { 0 };
	struct strbuf text = STRBUF_INIT;
	struct store *st = NULL;
	struct pread pr = { NULL, 0, 0, STRBUF_INIT, 0 };
	struct psweep *sweeps = NULL;
	struct predict_counts n = { 0, 0, 0 };
	size_t nsweeps = 0;
	char sha[65], now[32];
	/* what goes wrong before the database is written is the file's, or the database named */
	int ret = FAIL_USAGE;

	pf.path = path;
	pf.sweep_arg = sweep_arg;
	pf.late = late;
	if (sb_read_file(&text, pf.path))
		return FAIL_USAGE;
	if (memchr(text.buf, '\0', text.len)) {
		error("'%s' is not a CSV text file", pf.path);
		goto out;
	}
	if (sha256_hex(text.buf, text.len, sha))
		goto out;
	/* the database's kind as store_open and store_lock say it: a writer as any other (FAIL_BUSY) */
	if ((ret = store_open(db, STORE_RW, &st)) || (ret = store_lock(st, "sweep predict")))
		goto out;
	ret = FAIL_USAGE;
	if (predict_read(st, &pf, text.buf, &pr, &sweeps, &nsweeps))
		goto out;
	if (pr.n)
		qsort(pr.v, pr.n, sizeof(*pr.v), pred_cmp);
	if ((ret = predict_twice(&pf, pr.v, pr.n)))
		goto out;
	iso_time(now_wall(), now, sizeof(now));
	if (!(ret = predict_store(st, &pf, pr.v, pr.n, sha, now, &n)))
		printf("%s: %zu predictions registered (%zu blind, %zu late), %zu already registered; sha256 %s, "
		       "frozen at %s\n", pf.path, n.nnew, n.nblind, n.nnew - n.nblind, n.nold, sha, now);
out:
	for (size_t i = 0; i < pr.n; i++) {
		free(pr.v[i].key);
		free(pr.v[i].metric);
	}
	free(pr.v);
	sb_release(&pr.refused);
	for (size_t i = 0; i < nsweeps; i++)
		psweep_release(&sweeps[i]);
	free(sweeps);
	free_fields(pf.head, pf.nhead > 0 ? pf.nhead : 0);
	free(pf.pcols);
	free(pf.pcol_at);
	sb_release(&text);
	store_close(st);
	return ret;
}
