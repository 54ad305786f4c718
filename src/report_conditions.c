/* report_conditions.c: what each number of a report was measured under: the conditions common to all,
 * those that vary by row, a ledger of every result with its provenance; and two sets' differences. */
#include "report_conditions.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The columns of report_query_ledger after its row keys. */
enum { L_ID, L_KEY, L_PARAMS, L_VALUE, L_VERSION, L_COMMIT, L_INPUTS, L_HOST, L_GPU, L_COND, L_FACTS, L_LABELS,
       NLEDGER };

void report_conds_init(struct report_conds *c)
{
	memset(c, 0, sizeof(*c));
}

void report_conds_release(struct report_conds *c)
{
	for (size_t i = 0; i < c->n; i++)
		json_obj_release(&c->res[i]);
	free(c->res);
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	report_conds_init(c);
}

static void put(struct report_conds *c, struct json_obj *o, const char *name, const char *val,
		enum json_type type)
{
	size_t i;

	if (!val || !*val || json_obj_find(o, name))
		return;     /* an empty value is as unknown as a missing one (isolated_cpus on a host with none) */
	json_obj_add(o, name, val, type);
	for (i = 0; i < c->nnames && strcmp(c->names[i], name); i++)
		;
	if (i == c->nnames) {
		ALLOC_GROW(c->names, c->nnames + 1, c->alloc_names);
		c->names[c->nnames++] = xstrdup(name);
	}
}

/* The pairs of a JSON object of scalars as conditions, each name with prefix. Not an object: none. */
static void put_json(struct report_conds *c, struct json_obj *o, const char *prefix, const char *text)
{
	struct json_obj in;
	char err[128];

	if (!text || json_parse_flat(text, &in, 1, err, sizeof(err)))
		return;
	for (size_t i = 0; i < in.n; i++) {
		char *name;

		if (!strcmp(in.v[i].key, "hostname"))
			continue;   /* a host's facts name it: the condition host says it */
		name = xasprintf("%s%s", prefix, in.v[i].key);

		if (in.v[i].type != JSON_NULL)
			put(c, o, name, in.v[i].val, in.v[i].type);
		free(name);
	}
	json_obj_release(&in);
}

void report_conds_read(const struct report_rows *in, int nkey, struct report_conds *c)
{
	for (size_t r = 0; r < in->n; r++) {
		struct json_obj *o;

		ALLOC_GROW(c->res, c->n + 1, c->alloc);
		o = &c->res[c->n++];
		memset(o, 0, sizeof(*o));
		put(c, o, "sweep_version", report_rows_text(in, r, nkey + L_VERSION), JSON_STR);
		put(c, o, "sweep_commit", report_rows_text(in, r, nkey + L_COMMIT), JSON_STR);
		put(c, o, "host", report_rows_text(in, r, nkey + L_HOST), JSON_STR);
		put(c, o, "gpu", report_rows_text(in, r, nkey + L_GPU), JSON_NUM);
		put_json(c, o, "file ", report_rows_text(in, r, nkey + L_INPUTS));
		put_json(c, o, "", report_rows_text(in, r, nkey + L_COND));
		/* the host's facts after the worker's own (a fact both give is the worker's) and its labels */
		put_json(c, o, "", report_rows_text(in, r, nkey + L_FACTS));
		put_json(c, o, "label.", report_rows_text(in, r, nkey + L_LABELS));
	}
}

int report_conds_values(const struct report_conds *c, const char *name, size_t from, size_t to,
			struct strbuf *sb)
{
	size_t start = sb->len;
	int n = 0;

	for (size_t i = from; i < to; i++) {
		const char *v = json_obj_get(&c->res[i], name);
		int seen = 0;

		v = v ? v : "-";
		/* a value already met among [from, i) */
		for (size_t j = from; j < i && !seen; j++) {
			const char *w = json_obj_get(&c->res[j], name);

			seen = !strcmp(w ? w : "-", v);
		}
		if (seen)
			continue;
		sb_addf(sb, "%s%s", sb->len > start ? ", " : "", v);
		n++;
	}
	return n;
}

static int has_name(const struct report_conds *c, const char *name)
{
	for (size_t i = 0; i < c->nnames; i++)
		if (!strcmp(c->names[i], name))
			return 1;
	return 0;
}

static int diff_name(const struct report_conds *a, const struct report_conds *b, const char *name,
		     struct strbuf *out)
{
	struct strbuf va = STRBUF_INIT, vb = STRBUF_INIT;
	int differ;

	report_conds_values(a, name, 0, a->n, &va);
	report_conds_values(b, name, 0, b->n, &vb);
	differ = strcmp(va.buf ? va.buf : "", vb.buf ? vb.buf : "") != 0;
	if (differ)
		sb_addf(out, "%s: %s -> %s\n", name, va.len ? va.buf : "-", vb.len ? vb.buf : "-");
	sb_release(&va);
	sb_release(&vb);
	return differ;
}

int report_conds_diff(const struct report_conds *a, const struct report_conds *b, struct strbuf *out)
{
	int n = 0;

	for (size_t i = 0; i < a->nnames; i++)
		n += diff_name(a, b, a->names[i], out);
	for (size_t i = 0; i < b->nnames; i++)
		if (!has_name(a, b->names[i]))
			n += diff_name(a, b, b->names[i], out);
	return n;
}

/* ---- the report's blocks ---- */

/* Whether rows i and j of the ledger have the same row keys (the same row of the table). */
static int same_row(const struct report_rows *in, int nkey, size_t i, size_t j)
{
	for (int k = 0; k < nkey; k++) {
		const char *a = report_rows_text(in, i, k), *b = report_rows_text(in, j, k);

		if (a ? !b || strcmp(a, b) : b != NULL)
			return 0;
	}
	return 1;
}

/* A block after the report's table: appended to --out or stdout, or into to (a page's section). */
static int print_block(const struct report_plan *p, const struct report_doc *d, FILE *to)
{
	if (!to)
		return report_print(&p->out, d);
	report_print_to(&p->out, d, to);
	return FAIL_OK;
}

/* The block of the conditions every number shares: condition, value. *varying: those that vary. */
static int common_block(const struct report_plan *p, const struct report_conds *c, char ***varying, int *nvar,
			FILE *to)
{
	struct report_rows out;
	struct report_doc d = { &out, NULL, NULL, 0, -1, NULL, 1, NULL, NULL, NULL, NULL };
	struct strbuf sb = STRBUF_INIT;
	char *cap;
	int ret;

	report_rows_init(&out);
	report_rows_col(&out, "condition", RCOL_LABEL);
	report_rows_col(&out, "value", RCOL_TEXT);
	*varying = NULL;
	*nvar = 0;
	for (size_t i = 0; i < c->nnames; i++) {
		size_t row;

		sb_reset(&sb);
		if (report_conds_values(c, c->names[i], 0, c->n, &sb) > 1) {
			*varying = xrealloc(*varying, sizeof(**varying) * (size_t)(*nvar + 1));
			(*varying)[(*nvar)++] = c->names[i];
			continue;
		}
		row = report_rows_add(&out);
		report_rows_set_text(&out, row, 0, c->names[i]);
		report_rows_set_text(&out, row, 1, sb.buf);
	}
	d.caption = cap = xasprintf("measured under: conditions common to all %zu results of sweep %s in %s "
				    "(unknown ones left out)", c->n, p->c->sweep, p->c->db);
	ret = print_block(p, &d, to);
	free(cap);
	sb_release(&sb);
	report_rows_release(&out);
	return ret;
}

/* The rows of the table with the conditions that vary, the results behind each and how to read them. */
static int varying_block(const struct report_plan *p, const struct report_rows *in,
			 const struct report_conds *c, char *const *varying, int nvar, FILE *to)
{
	int nkey = p->nrows, ret;
	struct report_rows out;
	struct report_doc d = { &out, NULL, NULL, 0, -1, NULL, 1, NULL, NULL, NULL, NULL };
	struct strbuf sb = STRBUF_INIT;
	char *cap;

	report_rows_init(&out);
	for (int k = 0; k < nkey; k++)
		report_rows_col(&out, p->rows[k], RCOL_KEY);
	report_rows_col(&out, "results", RCOL_TEXT);
	for (int v = 0; v < nvar; v++)
		report_rows_col(&out, varying[v], RCOL_TEXT);
	for (size_t i = 0, j; i < in->n; i = j) {
		size_t row = report_rows_add(&out);

		for (j = i; j < in->n && same_row(in, nkey, i, j); j++)
			;
		for (int k = 0; k < nkey; k++)
			report_rows_set_text(&out, row, k, report_rows_text(in, i, k));
		sb_reset(&sb);
		for (size_t r = i; r < j; r++)
			sb_addf(&sb, "%s%s", r > i ? "," : "", report_rows_text(in, r, nkey + L_ID));
		report_rows_set_text(&out, row, nkey, sb.buf);
		for (int v = 0; v < nvar; v++) {
			sb_reset(&sb);
			report_conds_values(c, varying[v], i, j, &sb);
			report_rows_set_text(&out, row, nkey + 1 + v, sb.buf);
		}
	}
	d.caption = cap = xasprintf("each row's results (ids) and the conditions that vary; a result's value: "
				    "sweep sql %s \"SELECT value FROM metrics WHERE name = '%s' AND result = ID\"",
				    p->c->db, p->metric_base);
	ret = print_block(p, &d, to);
	free(cap);
	sb_release(&sb);
	report_rows_release(&out);
	return ret;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(struct strbuf *sb, const char *s)
{
	if (!s)
		return;
	if (!s[strcspn(s, ",\"\r\n")]) {
		sb_adds(sb, s);
		return;
	}
	sb_addc(sb, '"');
	for (; *s; s++) {
		if (*s == '"')
			sb_addc(sb, '"');
		sb_addc(sb, *s);
	}
	sb_addc(sb, '"');
}

/* One ledger line of result r: provenance, value, conditions (CSV in the names' order, or JSON). */
static void ledger_line(const struct report_plan *p, const struct report_rows *in, const struct report_conds *c,
			size_t r, int csv, struct strbuf *sb)
{
	int nkey = p->nrows;
	const char *prov[] = { p->c->db, p->c->sweep, report_rows_text(in, r, nkey + L_KEY),
			       report_rows_text(in, r, nkey + L_ID), report_rows_text(in, r, nkey + L_PARAMS),
			       p->metric, report_rows_text(in, r, nkey + L_VALUE) };
	static const char *const names[] = { "db", "sweep", "key", "result", "params", "metric", "value" };

	for (size_t i = 0; csv && i < ARRAY_SIZE(prov); i++) {
		sb_adds(sb, i ? "," : "");
		csv_field(sb, prov[i]);
	}
	for (size_t i = 0; csv && i < c->nnames; i++) {
		sb_addc(sb, ',');
		csv_field(sb, json_obj_get(&c->res[r], c->names[i]));
	}
	if (csv) {
		sb_addc(sb, '\n');
		return;
	}
	sb_addc(sb, '{');
	for (size_t i = 0; i < ARRAY_SIZE(prov); i++) {
		json_add_str(sb, names[i]);
		sb_addc(sb, ':');
		if (!prov[i])
			sb_adds(sb, "null");
		else if (i == 3 || i == 6)
			json_add_num_text(sb, prov[i]);
		else if (i == 4)
			sb_adds(sb, prov[i]);   /* params: the cell's JSON object as stored */
		else
			json_add_str(sb, prov[i]);
		sb_addc(sb, ',');
	}
	sb_adds(sb, "\"conditions\":");
	json_obj_write(sb, &c->res[r]);
	sb_adds(sb, "}\n");
}

static int ledger(const struct report_plan *p, const struct report_rows *in, const struct report_conds *c)
{
	const char *path = p->ledger, *dot = strrchr(path, '.');
	int csv = dot && !strcasecmp(dot, ".csv"), ret = FAIL_OK;
	const char *dbs[] = { p->c->db, NULL };
	struct strbuf sb = STRBUF_INIT;
	struct store_out w;

	if ((ret = report_out_check("--ledger", path, p->c->db)))
		return ret;
	if (csv) {
		sb_adds(&sb, "db,sweep,key,result,params,metric,value");
		for (size_t i = 0; i < c->nnames; i++) {
			sb_addc(&sb, ',');
			csv_field(&sb, c->names[i]);
		}
		sb_addc(&sb, '\n');
	}
	for (size_t r = 0; r < in->n; r++)
		ledger_line(p, in, c, r, csv, &sb);
	if (store_out_open(&w, "--ledger", path, dbs, 0)) {
		ret = FAIL_UNSAFE;
	} else {
		fwrite(sb.buf, 1, sb.len, w.f);
		ret = store_out_close(&w) ? FAIL_IO : FAIL_OK;
	}
	sb_release(&sb);
	return ret;
}

/* The conditions blocks (to: NULL after the report, else into a page) and the ledger (ledger: --ledger). */
static int conditions(const struct report_plan *p, int blocks, int ledger_too, FILE *to)
{
	struct report_conds c;
	struct report_rows in;
	char **varying = NULL;
	int nvar = 0, ret;

	report_conds_init(&c);
	if ((ret = report_plan_query(p, report_query_ledger, &in)))
		goto out;
	report_conds_read(&in, p->nrows, &c);
	if (blocks && !(ret = common_block(p, &c, &varying, &nvar, to)))
		ret = varying_block(p, &in, &c, varying, nvar, to);
	if (!ret && ledger_too)
		ret = ledger(p, &in, &c);
out:
	free(varying);
	report_conds_release(&c);
	report_rows_release(&in);
	return ret;
}

int report_conditions(const struct report_plan *p)
{
	return conditions(p, p->conditions, p->ledger != NULL, NULL);
}

int report_conditions_to(const struct report_plan *p, FILE *to)
{
	return conditions(p, 1, 0, to);
}

int report_conditions_page(const struct report_plan *p, char **html)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int ret;

	if (!m)
		return error("cannot make the page's conditions: %s", strerror(errno));
	/* the conditions are those of a metric's results: a drift table's numbers are control runs, a score's
	 * those of any metric predicted */
	ret = p->metric_base ? report_conditions_to(p, m) : 0;
	if (!p->metric_base)
		fprintf(m, "<p class=\"caption\">%s: 'sweep report DB --rows host --metric M --conditions' says "
			"theirs</p>\n", p->mode == REPORT_DRIFT ? "the numbers are control runs, which are no "
			"results: their conditions are their workers'" : "the numbers are of the metrics predicted");
	if (fclose(m))
		ret = ret ? ret : error("cannot make the page's conditions: %s", strerror(errno));
	*html = buf;
	return ret;
}
