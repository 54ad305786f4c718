/* report_compare.c: `sweep compare BASE NEW`: one sweep's results in two databases (or the superseded and
 * the ok results of one), cell by cell: the two contexts, the unit pairs are made of, the metric's
 * direction, the conditions that differ, then report_verdict.c's pairing and report_print's table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_conditions.h"
#include "report_plan.h"
#include "report_print.h"
#include "report_query.h"
#include "spec.h"

/* One side of the comparison: its context and plan. */
struct side {
	struct report_ctx c;
	struct report_plan p;
	const char *name;          /* "base" or "new", for messages */
};

static int first_text(const struct store_row *row, void *data)
{
	char **out = data;

	if (!*out && row->text[0])
		*out = xstrdup(row->text[0]);
	return 0;
}

/* The first column of sql's first row on side s, or NULL (owned); ?1 is the sweep and, when nbind is 2,
 * ?2 the status of the results the side reads. */
static int side_text(const struct side *s, const char *sql, int nbind, char **out)
{
	const char *bind[] = { s->c.sweep, s->p.superseded ? "superseded" : "ok" };

	*out = NULL;
	return store_query(s->c.st, sql, bind, nbind, 1, first_text, out) ? FAIL_IO : FAIL_OK;
}

/* What the results of a side were measured under (report_conditions.h), from its plan's ledger query. */
static int side_conds(const struct side *s, struct report_conds *c)
{
	struct report_rows in;
	int ret = report_plan_query(&s->p, report_query_ledger, &in);

	if (!ret)
		report_conds_read(&in, s->p.nrows, c);
	report_rows_release(&in);
	return ret;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct known values of name over every result of c, sorted, joined by ", " ("-" when none is
 * known). Read from the results themselves: a value may hold a comma (isolated cpus "2,3"). */
static char *known_values(const struct report_conds *c, const char *name)
{
	struct strbuf out = STRBUF_INIT;
	const char **v = xcalloc(c->n + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		const char *x = json_obj_get(&c->res[i], name);

		if (x)
			v[n++] = x;
	}
	qsort(v, n, sizeof(*v), cmp_text);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(v[i], v[i - 1]))
			sb_addf(&out, "%s%s", out.len ? ", " : "", v[i]);
	sb_adds(&out, n ? "" : "-");
	free(v);
	return sb_detach(&out);
}

/*
 * The conditions the two sides differ in (report_conditions.h's sets), a note each: the settings a result
 * was measured under, not the state that moves from run to run (the load, the clocks of the moment).
 */
static int compare_conditions(const struct side *base, const struct side *nw, struct report_notes *nt)
{
	static const char *const state[] = { "loadavg", "sm_clock_mhz", "mem_clock_mhz" };
	struct report_conds c[2];
	const struct report_conds *names[2] = { &c[0], &c[1] };
	int ret;

	report_conds_init(&c[0]);
	report_conds_init(&c[1]);
	if ((ret = side_conds(base, &c[0])) || (ret = side_conds(nw, &c[1])))
		goto out;
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < names[k]->nnames; i++) {
			const char *name = names[k]->names[i];
			int skip = 0;
			char *a, *b, *shown;

			for (size_t j = 0; j < ARRAY_SIZE(state); j++)
				skip |= !strcmp(name, state[j]);
			for (size_t j = 0; k && j < c[0].nnames; j++)
				skip |= !strcmp(name, c[0].names[j]);   /* said from base's names */
			if (skip)
				continue;
			a = known_values(&c[0], name);
			b = known_values(&c[1], name);
			shown = xstrdup(name);
			for (char *u = shown; *u; u++)
				*u = *u == '_' ? ' ' : *u;
			if (strcmp(a, b))
				report_notes_add(nt, "conditions differ: %s: base %s, new %s", shown, a, b);
			free(shown);
			free(a);
			free(b);
		}
	}
out:
	report_conds_release(&c[0]);
	report_conds_release(&c[1]);
	return ret;
}

/* Which way the metric improves: --better, else the spec's better: or unit (a command's metric, as the
 * context read it), else what sweep knows of the metrics it stores itself. */
static int metric_better(const struct side *s)
{
	int better = s->p.better;

	if (!better)
		better = report_ctx_better(&s->c, s->p.metric_base);
	return better ? better : report_expr_metric_better(s->p.metric_base);
}

static int open_side(struct side *s, const struct report_opts *o, const char *db, int superseded)
{
	int ret = report_ctx_open(&s->c, db, o->sweep);

	report_plan_init(&s->p, o, &s->c);
	s->p.superseded = superseded;
	return ret ? ret : report_plan_metric(&s->p);
}

static void close_side(struct side *s)
{
	report_plan_release(&s->p);
	report_ctx_release(&s->c);
}

/* The keys cells are paired by: every parameter, the host, and the GPU of a per: gpu sweep; with --pair-by
 * params the parameters alone. The two sides must have the same parameters. Owned list of *n. */
static int pair_keys(const struct side *base, const struct side *nw, char ***keys, int *n)
{
	char *per = NULL;
	int ret;

	if (base->c.nparams != nw->c.nparams)
		goto differ;
	for (size_t i = 0; i < nw->c.nparams; i++)
		if (strcmp(base->c.params[i], nw->c.params[i]))
			goto differ;
	if ((ret = side_text(nw, "SELECT per FROM sweeps WHERE name = ?1", 1, &per)))
		return ret;
	*keys = xcalloc(nw->c.nparams + 3, sizeof(**keys));
	*n = 0;
	for (size_t i = 0; nw->c.spec_order[i]; i++)
		(*keys)[(*n)++] = xstrdup(nw->c.spec_order[i]);
	if (!nw->p.pair_params) {
		(*keys)[(*n)++] = xstrdup("host");
		if (per && !strcmp(per, "gpu"))
			(*keys)[(*n)++] = xstrdup("gpu");
	}
	free(per);
	return FAIL_OK;
differ: {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		report_ctx_join(&a, base->c.params, base->c.nparams);
		report_ctx_join(&b, nw->c.params, nw->c.nparams);
		ret = fail_usage("the sweeps have other parameters (base: %s; new: %s): nothing to pair cells by",
				 a.buf, b.buf);
		sb_release(&a);
		sb_release(&b);
		return ret;
	}
}

static const char *const unit_name[] = { [UNIT_ITEM] = "items", [UNIT_PASS] = "passes",
					 [UNIT_SAMPLE] = "samples" };

/* Whether rows hold more than one unit of some cell (nkey keys; a row per unit and replicate, the unit
 * after the keys): something to resample. */
static int several_units(const struct report_rows *r, int nkey)
{
	for (size_t j = 1; j < r->n; j++) {
		const char *u0 = report_rows_text(r, j - 1, nkey), *u1 = report_rows_text(r, j, nkey);

		if (report_rows_same_keys(r, j - 1, r, j, nkey) && strcmp(u0 ? u0 : "", u1 ? u1 : ""))
			return 1;
	}
	return 0;
}

/* Both sides' rows over unit (released first). */
static int fetch_unit(struct side *const *s, const char *const *keys, int nkey, enum report_unit unit,
		      struct report_rows *const *r)
{
	int ret = FAIL_OK;

	for (int i = 0; i < 2 && !ret; i++) {
		struct report_query q = REPORT_QUERY_INIT;

		report_rows_release(r[i]);
		if (!(ret = report_query_baseline(&s[i]->p, unit, keys, nkey, &q))) {
			report_query_trim(&q);
			ret = report_rows_fetch(&s[i]->c, &q, r[i]);
		}
		report_query_release(&q);
	}
	return ret;
}

/*
 * Both sides' rows, over the first unit that gives both sides' cells several: items (where both sides
 * have them), else passes, else the samples of a time (the metric seconds or one derived from it). The
 * passes when none does: one value a cell, a ratio without an interval.
 */
static int side_rows(struct side *base, struct side *nw, const char *const *keys, int nkey,
		     struct report_rows *b, struct report_rows *n, enum report_unit *unit)
{
	struct side *const s[] = { base, nw };
	struct report_rows *const r[] = { b, n };
	int last = strcmp(nw->p.metric_base, "seconds") ? UNIT_PASS : UNIT_SAMPLE, ret;

	report_rows_init(b);
	report_rows_init(n);
	for (int u = UNIT_ITEM; u <= last; u++) {
		*unit = (enum report_unit)u;
		if ((ret = fetch_unit(s, keys, nkey, *unit, r)) || (several_units(b, nkey) && several_units(n, nkey)))
			return ret;
	}
	*unit = UNIT_PASS;
	return last == UNIT_PASS ? FAIL_OK : fetch_unit(s, keys, nkey, *unit, r);
}

/* The table's title: what is compared, over which units, how, and the direction. */
static char *caption(const struct side *base, const struct side *nw, enum report_unit unit, int better)
{
	static const char *const by[] = { [UNIT_ITEM] = "item", [UNIT_PASS] = "pass",
					  [UNIT_SAMPLE] = "sample index" };
	const struct report_plan *p = &nw->p;

	return xasprintf("%s of sweep %s, %s over %s%s%s: cells paired by parameters%s, units by %s "
			 "(ratio of means, %g%% paired percentile bootstrap over %s, %d resamples, seed %llu%s); %s, "
			 "verdict past %g%%", p->metric, nw->c.sweep, p->c->db,
			 base->p.superseded ? "its superseded results" : p->out.base_db, p->where ? ", where " : "",
			 p->where ? p->where : "", p->pair_params ? "" : " and host", by[unit], p->boot.ci * 100,
			 unit_name[unit], p->boot.resamples, (unsigned long long)p->boot.seed,
			 unit == UNIT_PASS ? "" : ", plus the variation between passes",
			 better == BETTER_LOWER ? "lower is better" : better == BETTER_HIGHER ? "higher is better" :
			 "direction unknown", p->threshold * 100);
}

/* The distinct values of key column k over r's rows, sorted, joined by ", " (the first 5, then a count).
 * Owned. */
static char *key_values(const struct report_rows *r, int k)
{
	struct strbuf sb = STRBUF_INIT;
	const char **v = xcalloc(r->n + 1, sizeof(*v));
	size_t n = 0, shown = 0;

	for (size_t j = 0; j < r->n; j++)
		v[j] = report_rows_text(r, j, k) ? report_rows_text(r, j, k) : "-";
	qsort(v, r->n, sizeof(*v), cmp_text);
	for (size_t j = 0; j < r->n; j++)
		if (!j || strcmp(v[j], v[j - 1]))
			n++;
	for (size_t j = 0; j < r->n && shown < 5; j++)
		if (!j || strcmp(v[j], v[j - 1]))
			sb_addf(&sb, "%s%s", shown++ ? ", " : "", v[j]);
	if (n > shown)
		sb_addf(&sb, " and %zu more", n - shown);
	free(v);
	return sb_detach(&sb);
}

/* No cell of one side has a partner on the other: an error naming the keys whose values differ and the
 * option that pairs them, never an empty table that passes a gate. FAIL_USAGE after error(). */
static int none_paired(const struct report_rows *b, const struct report_rows *n, const char *const *keys,
		       int nkey)
{
	struct strbuf sb = STRBUF_INIT;
	int by_host = 0, ret;

	for (int k = 0; k < nkey; k++) {
		char *vb = key_values(b, k), *vn = key_values(n, k);

		if (strcmp(vb, vn)) {
			sb_addf(&sb, "%s%s (base: %s; new: %s)", sb.len ? ", " : "", keys[k], vb, vn);
			by_host |= !strcmp(keys[k], "host") || !strcmp(keys[k], "gpu");
		}
		free(vb);
		free(vn);
	}
	if (!sb.len)
		sb_adds(&sb, "the combinations of their values");
	ret = fail_usage("no cell of one side pairs with one of the other: they differ in %s; %s", sb.buf, by_host ?
			 "--pair-by params pairs cells by their parameters alone (the hosts' difference is said "
			 "among the conditions)" : "--where EXPR narrows both sides to the values they share");
	sb_release(&sb);
	return ret;
}

/* The line under the title that counts the cells left unpaired ("" when none). Owned. */
static char *unpaired_line(const struct report_baseline_counts *c)
{
	if (!c->only_base && !c->only_new)
		return xstrdup("");
	return xasprintf("; %zu %s only in base and %zu only in new left out (named on stderr)", c->only_base,
			 c->only_base == 1 ? "cell" : "cells", c->only_new);
}

/* Pair, print, and judge: FAIL_WORSE when some row is slower than --fail-above. */
static int compare_print(struct side *base, struct side *nw, const char *const *keys, int nkey)
{
	const struct report_plan *p = &nw->p;
	int better = metric_better(nw), ret;
	struct report_baseline bl = { keys, nkey, p->metric, p->boot.ci, p->boot.resamples, p->boot.seed, better,
				      p->threshold, p->fail_above };
	struct report_baseline_counts counts;
	struct report_notes nt = { 0 };
	struct report_rows b, n, out;
	struct report_doc d = { &out, NULL, NULL, 1, -1, NULL, 0, NULL, NULL, NULL, NULL };
	enum report_unit unit;
	char *cap, *left, *full, *caveat;

	if ((ret = side_rows(base, nw, keys, nkey, &b, &n, &unit)))
		goto out;
	if (!b.n || !n.n) {
		ret = fail_usage("no ok results of sweep '%s' with metric '%s' in %s%s", nw->c.sweep, p->metric,
				 !b.n ? (base->p.superseded ? "the superseded results of " : "") : "",
				 !b.n ? p->out.base_db : p->c->db);
		goto out;
	}
	if ((ret = compare_conditions(base, nw, &nt)))
		goto out;
	report_baseline(&b, &n, &bl, &out, &counts, &nt);
	if (!out.n) {
		report_notes_print(&nt);
		report_rows_release(&out);
		ret = none_paired(&b, &n, keys, nkey);
		goto out;
	}
	if (better == BETTER_UNKNOWN)
		report_notes_add(&nt, "no verdict: which way is '%s' better? give --better lower|higher, or "
				 "'better: lower|higher' (or a unit) to the metric in the spec", p->metric);
	report_notes_print(&nt);
	cap = caption(base, nw, unit, better);
	left = unpaired_line(&counts);
	d.caption = full = xasprintf("%s%s", cap, left);
	d.caveat = caveat = report_notes_caveats(&nt);
	ret = report_print(&nw->p.out, &d);
	free(caveat);
	free(full);
	free(left);
	free(cap);
	if (!ret && (counts.only_base || counts.only_new))
		report_note("%zu cells only in base, %zu only in new (listed above), left out of the table",
			    counts.only_base, counts.only_new);
	if (!ret && counts.worse) {
		report_note("%zu %s slower by more than --fail-above %g%%", counts.worse,
			    counts.worse == 1 ? "row is" : "rows are", p->fail_above * 100);
		ret = FAIL_WORSE;
	}
	report_rows_release(&out);
out:
	report_notes_release(&nt);
	report_rows_release(&b);
	report_rows_release(&n);
	return ret;
}

int report_compare(const struct report_opts *o)
{
	struct side base = { .name = "base" }, nw = { .name = "new" };
	char **keys = NULL;
	int nkey = 0, ret;

	if (!(ret = open_side(&base, o, o->superseded ? o->db : o->base_db, o->superseded)) &&
	    !(ret = open_side(&nw, o, o->db, 0)) && !(ret = pair_keys(&base, &nw, &keys, &nkey)))
		ret = compare_print(&base, &nw, (const char *const *)keys, nkey);
	for (int i = 0; i < nkey; i++)
		free(keys[i]);
	free(keys);
	close_side(&nw);
	close_side(&base);
	return ret;
}
