/* report_rows.c: the rows a report passes from stage to stage (typed cells, marks, the summary group), the
 * rows of a statement, and the notes a stage leaves. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_query.h"

void report_rows_init(struct report_rows *r)
{
	memset(r, 0, sizeof(*r));
	r->group = -1;
}

void report_rows_release(struct report_rows *r)
{
	for (size_t i = 0; i < r->n * (size_t)r->ncol; i++)
		free(r->text[i]);
	for (int c = 0; c < r->ncol; c++)
		free(r->col[c].name);
	free(r->col);
	free(r->text);
	free(r->num);
	free(r->mark);
	free(r->ci_head);
	report_rows_init(r);
}

int report_rows_col(struct report_rows *r, const char *name, enum report_col_kind kind)
{
	struct report_col *c;

	if (r->n)
		BUG("report_rows_col: a column after the first row");
	r->col = xrealloc(r->col, (size_t)(r->ncol + 1) * sizeof(*r->col));
	c = &r->col[r->ncol];
	memset(c, 0, sizeof(*c));
	c->name = xstrdup(name);
	c->kind = kind;
	c->sig = 4;
	return r->ncol++;
}

size_t report_rows_add(struct report_rows *r)
{
	size_t at = r->n * (size_t)r->ncol, nc = (size_t)r->ncol;

	ALLOC_GROW(r->text, at + nc + 1, r->alloc_text);
	ALLOC_GROW(r->num, at + nc + 1, r->alloc_num);
	ALLOC_GROW(r->mark, at + nc + 1, r->alloc_mark);
	for (size_t i = 0; i < nc; i++) {
		r->text[at + i] = NULL;
		r->num[at + i] = NAN;
		r->mark[at + i] = 0;
	}
	return r->n++;
}

void report_rows_drop(struct report_rows *r, int n)
{
	size_t nc = (size_t)r->ncol, keep = nc - (size_t)n;

	if (n < 0 || n > r->ncol)
		BUG("report_rows_drop: %d of %d columns", n, r->ncol);
	for (size_t j = 0; j < r->n; j++) {
		for (size_t c = keep; c < nc; c++)
			free(r->text[j * nc + c]);
		for (size_t c = 0; c < keep; c++) {
			r->text[j * keep + c] = r->text[j * nc + c];
			r->num[j * keep + c] = r->num[j * nc + c];
			r->mark[j * keep + c] = r->mark[j * nc + c];
		}
	}
	for (size_t c = keep; c < nc; c++)
		free(r->col[c].name);
	r->ncol = (int)keep;
}

static size_t cell(const struct report_rows *r, size_t row, int col)
{
	if (row >= r->n || col < 0 || col >= r->ncol)
		BUG("report rows: no cell %zu, %d in %zu x %d", row, col, r->n, r->ncol);
	return row * (size_t)r->ncol + (size_t)col;
}

void report_rows_set_text(struct report_rows *r, size_t row, int col, const char *s)
{
	size_t at = cell(r, row, col);

	free(r->text[at]);
	r->text[at] = s ? xstrdup(s) : NULL;
}

void report_rows_set_num(struct report_rows *r, size_t row, int col, double v)
{
	r->num[cell(r, row, col)] = v;
}

void report_rows_mark(struct report_rows *r, size_t row, int col, enum report_mark kind)
{
	r->mark[cell(r, row, col)] |= (unsigned char)kind;
}

int report_rows_group(struct report_rows *r, const char *by)
{
	r->group = -1;
	for (int c = 0; c < r->ncol && r->group < 0; c++)
		if (r->col[c].kind == RCOL_KEY && !strcmp(r->col[c].name, by))
			r->group = c;
	if (r->group < 0)
		r->group = report_rows_col(r, by, RCOL_LABEL);
	return r->group;
}

/* A stable merge sort of row indexes by their group's text, unknown first. */
static int group_before(const struct report_rows *r, size_t a, size_t b)
{
	const char *ga = report_rows_text(r, a, r->group), *gb = report_rows_text(r, b, r->group);

	if (!ga || !gb)
		return !ga && gb;
	return strcmp(ga, gb) < 0;
}

static void sort_range(const struct report_rows *r, size_t *v, size_t *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	sort_range(r, v, tmp, h);
	sort_range(r, v + h, tmp, n - h);
	while (i < h || j < n)
		tmp[k++] = j == n || (i < h && !group_before(r, v[j], v[i])) ? v[i++] : v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

void report_rows_sort_group(struct report_rows *r)
{
	size_t nc = (size_t)r->ncol, *order, *tmp;
	char **text;
	double *num;
	unsigned char *mark;

	if (r->group < 0 || r->n < 2)
		return;
	order = xmalloc(r->n * sizeof(*order));
	tmp = xmalloc(r->n * sizeof(*tmp));
	for (size_t i = 0; i < r->n; i++)
		order[i] = i;
	sort_range(r, order, tmp, r->n);
	text = xmalloc(r->n * nc * sizeof(*text));
	num = xmalloc(r->n * nc * sizeof(*num));
	mark = xmalloc(r->n * nc);
	for (size_t i = 0; i < r->n; i++) {
		memcpy(text + i * nc, r->text + order[i] * nc, nc * sizeof(*text));
		memcpy(num + i * nc, r->num + order[i] * nc, nc * sizeof(*num));
		memcpy(mark + i * nc, r->mark + order[i] * nc, nc);
	}
	memcpy(r->text, text, r->n * nc * sizeof(*text));
	memcpy(r->num, num, r->n * nc * sizeof(*num));
	memcpy(r->mark, mark, r->n * nc);
	free(text);
	free(num);
	free(mark);
	free(order);
	free(tmp);
}

void report_rows_set_series(struct report_rows *r, size_t row, int col, const double *v, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	for (size_t i = 0; i < n; i++)
		sb_addf(&sb, "%s%.17g", i ? " " : "", v[i]);
	report_rows_set_text(r, row, col, sb.buf);
	sb_release(&sb);
}

double *report_rows_series(const struct report_rows *r, size_t row, int col, size_t *n)
{
	const char *s = report_rows_text(r, row, col);
	double *v = xmalloc((s ? strlen(s) / 2 + 2 : 1) * sizeof(*v));
	char *end;

	*n = 0;
	while (s && *s) {
		v[(*n)++] = strtod(s, &end);
		if (end == s)
			BUG("report_rows_series: '%s' is not a series", s);
		s = end;
	}
	return v;
}

char *report_rows_quote(const char *s)
{
	size_t n = strlen(s);

	if (!n || s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\t' || s[n - 1] == '\t')
		return xasprintf("\"%s\"", s);
	return xstrdup(s);
}

static int fetch_row(const struct store_row *row, void *data)
{
	struct report_rows *r = data;
	size_t at;

	if (!r->ncol)
		for (int c = 0; c < row->ncol; c++)
			report_rows_col(r, row->names[c] ? row->names[c] : "", RCOL_TEXT);
	at = report_rows_add(r);
	for (int c = 0; c < r->ncol; c++) {
		report_rows_set_text(r, at, c, row->text[c]);
		report_rows_set_num(r, at, c, row->num[c]);
	}
	return 0;
}

int report_rows_fetch(const struct report_ctx *c, const struct report_query *q, struct report_rows *r)
{
	report_rows_init(r);
	r->orders = c->orders;
	r->norders = c->norders;
	if (q->final.len ? store_query_split(c->st, q->sql.buf, q->final.buf, (const char *const *)q->binds,
					     (int)q->nbind, (int)q->slice_at, fetch_row, r) :
			   store_query(c->st, q->sql.buf, (const char *const *)q->binds, (int)q->nbind, 1, fetch_row, r))
		return FAIL_IO;
	return FAIL_OK;
}

static void notes_addv(struct report_notes *nt, int warn, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	sb_vaddf(&sb, fmt, ap);
	ALLOC_GROW(nt->v, nt->n + 1, nt->alloc);
	ALLOC_GROW(nt->warn, nt->n + 1, nt->alloc_warn);
	nt->warn[nt->n] = (unsigned char)warn;
	nt->v[nt->n++] = sb_detach(&sb);
}

void report_notes_add(struct report_notes *nt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	notes_addv(nt, 0, fmt, ap);
	va_end(ap);
}

void report_notes_warn(struct report_notes *nt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	notes_addv(nt, 1, fmt, ap);
	va_end(ap);
}

void report_notes_caveat(struct report_notes *nt, const char *why)
{
	for (size_t i = 0; i < nt->ncaveat; i++)
		if (!strcmp(nt->caveat[i], why))
			return;
	nt->caveat = xrealloc(nt->caveat, (nt->ncaveat + 1) * sizeof(*nt->caveat));
	nt->caveat[nt->ncaveat++] = xstrdup(why);
}

char *report_notes_caveats(const struct report_notes *nt)
{
	struct strbuf sb = STRBUF_INIT;

	if (!nt->ncaveat)
		return NULL;
	for (size_t i = 0; i < nt->ncaveat; i++)
		sb_addf(&sb, "%s%s", i ? "; " : "", nt->caveat[i]);
	return sb_detach(&sb);
}

void report_notes_print(const struct report_notes *nt)
{
	for (size_t i = 0; i < nt->n; i++) {
		if (nt->warn[i])
			warning("%s", nt->v[i]);
		else
			report_note("%s", nt->v[i]);
	}
}

void report_notes_release(struct report_notes *nt)
{
	for (size_t i = 0; i < nt->n; i++)
		free(nt->v[i]);
	for (size_t i = 0; i < nt->ncaveat; i++)
		free(nt->caveat[i]);
	free(nt->v);
	free(nt->warn);
	free(nt->caveat);
	memset(nt, 0, sizeof(*nt));
}

void report_note(const char *fmt, ...)
{
	va_list ap;

	fputs("note: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int report_rows_same_keys(const struct report_rows *x, size_t a, const struct report_rows *y, size_t b, int nkey)
{
	for (int k = 0; k < nkey; k++) {
		const char *s = report_rows_text(x, a, k), *t = report_rows_text(y, b, k);

		if ((!s || !t) ? s != t : strcmp(s, t) != 0)
			return 0;
	}
	return 1;
}

char *report_rows_name(const struct report_rows *r, size_t j, const char *const *keys, int nkey)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < nkey; k++) {
		const char *v = report_rows_text(r, j, k);

		sb_addf(&sb, "%s%s=%s", k ? " " : "", keys[k], v ? v : "-");
	}
	if (!nkey)
		sb_adds(&sb, "all");
	return sb_detach(&sb);
}
