/* plan_db.c: a spec's grid planned into a database (plan.c's cells, store.c's rows), checked against the
 * spec the sweep was planned from before. */
#include "plan_db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "identity.h"
#include "interrupt.h"
#include "plan.h"

/* ---- what changed since the sweep was planned ---- */

/* A grid's identity: its cells' keys, as a count and two sums that do not depend on the order (kept with
 * the plan: struct store_grid). */
static void sum_key(struct store_grid *g, uint64_t k)
{
	g->cells++;
	g->sum += k;
	g->mix ^= hash64(HASH64_INIT, &k, sizeof(k));
}

/* Walks of a grid stop at an interrupt: a start must not outlive Ctrl-C. */
static int sum_cell(const struct plan_cell *c, void *data)
{
	sum_key(data, c->hash);
	return interrupt_signal() ? -1 : 0;
}

struct plan_counts {
	struct store *st;
	const struct spec *s;
	uint64_t added, existing;
	unsigned shard, nshards;
	int replan;
	struct store_grid grid;   /* the figures of the whole grid, every shard's cells */
};

static int add_cell(const struct plan_cell *c, void *data)
{
	struct plan_counts *pc = data;
	int added;

	if (interrupt_signal())
		return -1;
	sum_key(&pc->grid, c->hash);
	/* Every shard's keys: a shard's plan retires nothing of the others. */
	if (pc->replan && store_plan_key(pc->st, c->key))
		return -1;
	if (pc->nshards && store_shard(pc->s->name, c->params, c->pass, pc->nshards) != pc->shard)
		return 0;
	if (store_add_cell(pc->st, pc->s->name, c->key, c->params, c->pass, c->replica, c->ord,
			   pc->s->per == PER_ANY ? "planned" : "template", &added))
		return -1;
	if (added)
		pc->added++;
	else
		pc->existing++;
	return 0;
}

static void add_change(struct strbuf *what, const char *name, const char *old, const char *new)
{
	if (!strcmp(old, new))
		return;
	sb_addf(what, "%s%s: %s -> %s", what->len ? "; " : "", name, old, new);
}

static void add_num_change(struct strbuf *what, const char *name, double old, double new)
{
	char a[32], b[32];

	snprintf(a, sizeof(a), "%g", old);
	snprintf(b, sizeof(b), "%g", new);
	add_change(what, name, a, b);
}

/* The values of parameter key in s, as "[a, b, ...]" (shortened), or "(none)". */
static void axis_text(const struct spec *s, const char *key, struct strbuf *out)
{
	sb_reset(out);
	for (int a = 0; a < s->naxes; a++)
		for (int k = 0; k < s->axes[a].nkeys; k++) {
			const struct spec_axis *ax = &s->axes[a];

			if (strcmp(ax->keys[k], key))
				continue;
			sb_addc(out, '[');
			for (int p = 0; p < ax->npoints; p++) {
				if (out->len > 60) {
					sb_addf(out, ", ... (%d values)", ax->npoints);
					break;
				}
				sb_addf(out, "%s%s", p ? ", " : "", ax->vals[(size_t)p * (size_t)ax->nkeys + (size_t)k].text);
			}
			sb_addc(out, ']');
			return;
		}
	sb_adds(out, "(none)");
}

static void join(struct strbuf *sb, char *const *a, char *const *b, int n)
{
	sb_reset(sb);
	if (!n)
		sb_adds(sb, "(none)");
	for (int i = 0; i < n; i++)
		sb_addf(sb, "%s%s%s%s", i ? " " : "", a[i], b ? "=" : "", b ? b[i] : "");
}

/* The measurement: what runs a cell and how it is timed. */
static void measurement_changes(const struct spec *o, const struct spec *s, struct strbuf *what)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	add_change(what, "kernel", o->kernel ? o->kernel : "(none)", s->kernel ? s->kernel : "(none)");
	join(&a, o->command, NULL, o->ncommand);
	join(&b, s->command, NULL, s->ncommand);
	add_change(what, "command", a.buf, b.buf);
	join(&a, o->env_keys, o->env_vals, o->nenv);
	join(&b, s->env_keys, s->env_vals, s->nenv);
	add_change(what, "env", a.buf, b.buf);
	join(&a, o->items, NULL, o->nitems);
	join(&b, s->items, NULL, s->nitems);
	add_change(what, "items", a.buf, b.buf);
	join(&a, o->prepare, NULL, o->nprepare);
	join(&b, s->prepare, NULL, s->nprepare);
	add_change(what, "prepare", a.buf, b.buf);
	join(&a, o->cleanup, NULL, o->ncleanup);
	join(&b, s->cleanup, NULL, s->ncleanup);
	add_change(what, "cleanup", a.buf, b.buf);
	sb_reset(&a);
	sb_reset(&b);
	spec_metrics_text(o, &a);
	spec_metrics_text(s, &b);
	if (strcmp(a.buf, b.buf))
		sb_addf(what, "%smetrics changed", what->len ? "; " : "");
	if (s->command) {
		add_num_change(what, "timeout", o->timeout, s->timeout);
		add_num_change(what, "runs", o->runs, s->runs);
		add_num_change(what, "runs exactly (runs: 1, min_runs: 0)", o->runs_exact, s->runs_exact);
		add_num_change(what, "warmup", o->warmup_runs, s->warmup_runs);
	}
	add_num_change(what, "timing.precision", o->timing.precision, s->timing.precision);
	add_num_change(what, "timing.min_samples", o->timing.min_samples, s->timing.min_samples);
	add_num_change(what, "timing.min_time", o->timing.min_time, s->timing.min_time);
	add_num_change(what, "timing.max_noise", o->timing.max_noise, s->timing.max_noise);
	add_num_change(what, "timing.timeout", o->timing.timeout, s->timing.timeout);
	add_num_change(what, "timing.warmup", o->timing.warmup, s->timing.warmup);
	add_num_change(what, "timing.max_warmup", o->timing.max_warmup, s->timing.max_warmup);
	add_num_change(what, "timing.l2_hot", o->timing.l2_hot, s->timing.l2_hot);
	add_num_change(what, "timing.throttle", o->timing.throttle, s->timing.throttle);
	add_num_change(what, "timing.batch", o->timing.batch, s->timing.batch);
	add_num_change(what, "timing.max_samples", o->timing.max_samples, s->timing.max_samples);
	sb_release(&a);
	sb_release(&b);
}

/* A grid's definition as text: every axis with all its values, the excludes, repeat. */
static void grid_text(const struct spec *s, struct strbuf *sb)
{
	sb_reset(sb);
	for (int a = 0; a < s->naxes; a++) {
		const struct spec_axis *ax = &s->axes[a];

		for (int k = 0; k < ax->nkeys; k++)
			sb_addf(sb, "%s%c", ax->keys[k], 0x1f);
		for (size_t v = 0; v < (size_t)ax->npoints * (size_t)ax->nkeys; v++)
			sb_addf(sb, "%c%s%c", ax->vals[v].is_num ? 'n' : 's', ax->vals[v].text, 0x1f);
		sb_addc(sb, '\n');
	}
	for (int e = 0; e < s->nexclude; e++) {
		for (int i = 0; i < s->exclude[e].n; i++)
			sb_addf(sb, "%s=%s%c", s->exclude[e].keys[i], s->exclude[e].vals[i].text, 0x1f);
		sb_addc(sb, '\n');
	}
	sb_addf(sb, "repeat %d", s->repeat);
}

/* The keys of a grid, sorted, to find whether another grid holds them all. */
struct key_set {
	uint64_t *v;
	size_t n, alloc;
	uint64_t hits;
};

static int collect_key(const struct plan_cell *c, void *data)
{
	struct key_set *k = data;

	ALLOC_GROW(k->v, k->n + 1, k->alloc);
	k->v[k->n++] = c->hash;
	return interrupt_signal() ? -1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int count_hit(const struct plan_cell *c, void *data)
{
	struct key_set *k = data;
	k->hits += bsearch(&c->hash, k->v, k->n, sizeof(*k->v), cmp_u64) != NULL;
	return interrupt_signal() ? -1 : 0;
}

/* Every cell of o's grid is one of s's (s only adds cells): 1, 0, or -1 when interrupted. */
static int grid_grew(const struct spec *o, const struct spec *s, uint64_t n_old)
{
	struct key_set k = { NULL, 0, 0, 0 };
	int ret = -1;

	if (!plan_each(o, collect_key, &k)) {
		qsort(k.v, k.n, sizeof(*k.v), cmp_u64);
		if (!plan_each(s, count_hit, &k))
			ret = k.hits == n_old;
	}
	free(k.v);
	return ret;
}

/* What the comparison of two specs found out. */
struct changes {
	struct strbuf what;      /* what changed that matters (empty: nothing) */
	int remeasure;           /* the measurement changed */
	uint64_t grew;           /* the grid only grew, by this many cells */
	int same_grid;           /* the grid is the one planned: the same cells, whatever their order */
};

/* The grid: which cells there are (values, excludes, repeat, per). A grid that only grew is no change
 * (the cells planned before are all still the spec's: the new ones are planned, c->grew of them). The
 * old grid's figures come from the plan (kept, NULL when not) or from walking it. -1: interrupted. */
static int grid_changes(const struct spec *o, const struct spec *s, const struct store_grid *kept,
			struct changes *c)
{
	static const char *const per[] = { [PER_ANY] = "any", [PER_HOST] = "host", [PER_GPU] = "gpu" };
	struct store_grid go = { 0 }, gs = { 0 };
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, name = STRBUF_INIT;
	struct strbuf *what = &c->what;
	size_t before = what->len;
	int ret = -1, grew;

	add_change(what, "per", per[o->per], per[s->per]);
	/* The same axes, values, excludes and repeat are the same cells: no need to walk them. */
	grid_text(o, &a);
	grid_text(s, &b);
	c->same_grid = !strcmp(a.buf, b.buf);
	if (c->same_grid)
		goto done;
	if (kept)
		go = *kept;
	else if (plan_each(o, sum_cell, &go))
		goto out;
	if (plan_each(s, sum_cell, &gs))
		goto out;
	c->same_grid = go.cells == gs.cells && go.sum == gs.sum && go.mix == gs.mix;
	if (c->same_grid)
		goto done;
	if (what->len == before && gs.cells > go.cells) {
		if ((grew = grid_grew(o, s, go.cells)) < 0)
			goto out;
		c->grew = grew ? gs.cells - go.cells : 0;
		if (grew)
			goto done;
	}
	for (int pass = 0; pass < 2; pass++) {
		const struct spec *x = pass ? o : s, *y = pass ? s : o;

		for (int i = 0; i < x->naxes; i++)
			for (int k = 0; k < x->axes[i].nkeys; k++) {
				const char *key = x->axes[i].keys[k];

				axis_text(x, key, &a);
				axis_text(y, key, &b);
				/* A key of both specs is said once, on the first pass. */
				if (pass && strcmp(b.buf, "(none)"))
					continue;
				sb_reset(&name);
				sb_addf(&name, "params.%s", key);
				add_change(what, name.buf, pass ? a.buf : b.buf, pass ? b.buf : a.buf);
			}
	}
	add_num_change(what, "repeat", o->repeat, s->repeat);
	if (what->len == before)
		sb_addf(what, "%sexclude changed", what->len ? "; " : "");
	sb_addf(what, " (%" PRIu64 " cells -> %" PRIu64 ")", go.cells, gs.cells);
done:
	ret = 0;
out:
	sb_release(&a);
	sb_release(&b);
	sb_release(&name);
	return ret;
}

/*
 * Compare s with the spec the database holds for its sweep (kept: the figures of its planned grid, or
 * NULL). A stored spec that no longer parses (its problems printed) counts as changed in every way; no
 * stored spec, or the same text, as no change at all. -1 after error() or when interrupted.
 */
static int plan_db_changes(const struct spec *s, struct store *st, const struct store_grid *kept,
			   struct changes *c)
{
	struct spec old;
	char *text;
	int ret;

	c->remeasure = 0;
	c->grew = 0;
	c->same_grid = 1;
	if (store_sweep_spec(st, s->name, &text))
		return -1;
	if (!text || (s->text && !strcmp(text, s->text))) {
		c->same_grid = text != NULL;
		free(text);
		return 0;
	}
	if (spec_parse("(the spec stored in the database)", text, strlen(text), &old)) {
		sb_adds(&c->what, "the stored spec does not parse any more (above)");
		c->remeasure = 1;
		c->same_grid = 0;
		free(text);
		return 0;
	}
	measurement_changes(&old, s, &c->what);
	c->remeasure = c->what.len > 0;
	ret = grid_changes(&old, s, kept, c);
	spec_release(&old);
	free(text);
	return ret;
}

int plan_db_size(const struct spec *s, uint64_t max)
{
	uint64_t cells;

	max = max ? max : PLAN_MAX_CELLS;
	if (!plan_check_size(s, max, &cells))
		return 0;
	if (cells == UINT64_MAX)
		return error("%s: sweep '%s' has more than 2^64 cells: nothing planned", s->path, s->name);
	return error("%s: sweep '%s' has %" PRIu64 " cells, over the limit of %" PRIu64 ": nothing planned "
		     "(--max-cells N raises the limit)", s->path, s->name, cells, max);
}

/* The plan's cells for this shard are all in the database: a plan of every shard, or of this one. */
static int plan_covers(const struct store_grid *kept, const struct plan_db_opts *o)
{
	char shard[24];

	snprintf(shard, sizeof(shard), "%u/%u", o->shard, o->nshards);
	return !kept->shard[0] || (o->nshards && !strcmp(kept->shard, shard));
}

/* The files of the spec (o->inputs) against those the plan recorded: a change is one of the measurement.
 * Nothing recorded (a plan of schema 6, or by sweep plan) is no change: this run records them. */
static int inputs_changes(const struct spec *s, struct store *st, const struct plan_db_opts *o,
			  struct changes *c)
{
	struct strbuf files = STRBUF_INIT;
	char *old;

	if (!o->inputs)
		return 0;
	if (store_sweep_inputs(st, s->name, &old))
		return -1;
	if (old && identity_changes(old, o->inputs, &files)) {
		sb_addf(&c->what, "%sfiles %s", c->what.len ? "; " : "", files.buf);
		c->remeasure = 1;
	}
	free(old);
	sb_release(&files);
	return 0;
}

/* The spec's row and the files it measures (kept when not compared). */
static int put_sweep(const struct spec *s, struct store *st, const struct plan_db_opts *o)
{
	return store_put_sweep(st, s) || (o->inputs && store_sweep_set_inputs(st, s->name, o->inputs)) ? -1 : 0;
}

/* Nothing to plan: the spec's text (if another, with the same measurement and cells) and the kept figures
 * under its hash. *existing: the sweep's cells that are the spec's. */
static int plan_same(const struct spec *s, struct store *st, const struct plan_db_opts *o,
		     const struct store_grid *kept, uint64_t *existing)
{
	struct store_counts c;

	if (store_begin(st))
		return -1;
	if (put_sweep(s, st, o) || store_grid_put(st, s->name, kept) || store_cell_counts(st, s->name, "", &c) ||
	    store_commit(st)) {
		store_rollback(st);
		return -1;
	}
	*existing = c.planned + c.running + c.ok + c.quarantined + c.template;
	return 0;
}

int plan_db_with(const struct spec *s, struct store *st, const struct plan_db_opts *o, uint64_t *added,
		 uint64_t *existing)
{
	struct plan_counts pc = { st, s, 0, 0, o->shard, o->nshards, o->replan, { 0 } };
	struct changes c = { STRBUF_INIT, 0, 0, 0 };
	struct store_replan_stats rs;
	struct store_grid kept;
	uint64_t cells;
	int found, ret = -1;

	if (plan_db_size(s, o->max_cells))
		return FAIL_USAGE;
	if (store_grid_get(st, s->name, &kept, &found) || plan_db_changes(s, st, found ? &kept : NULL, &c) ||
	    inputs_changes(s, st, o, &c))
		goto out;
	if (c.what.len && !o->replan) {
		error("the sweep '%s' in '%s' was planned from another spec: %s. Nothing was run. Give this spec a new "
		      "sweep name to keep both, or run with --replan to replace the plan (cells no longer in the "
		      "spec are retired, results of a changed measurement are kept as superseded and measured "
		      "again)", s->name, store_path(st), c.what.buf);
		ret = FAIL_USAGE;
		goto out;
	}
	/* The same cells, all planned before: what a run of the same spec finds, without expanding its
	 * grid (ten million cells take a minute). */
	if (!c.what.len && c.same_grid && found && plan_covers(&kept, o)) {
		*added = 0;
		ret = plan_same(s, st, o, &kept, existing);
		goto out;
	}
	/* A grid that grew may take back cells an earlier --replan retired: they are the spec's again. */
	pc.replan = c.what.len ? o->replan : c.grew > 0;
	if (o->nshards)
		snprintf(pc.grid.shard, sizeof(pc.grid.shard), "%u/%u", o->shard, o->nshards);
	plan_check_size(s, UINT64_MAX, &cells);
	if (store_begin_plan(st, cells / (o->nshards ? o->nshards : 1)))
		goto out;
	if (put_sweep(s, st, o) || plan_each(s, add_cell, &pc) || store_grid_put(st, s->name, &pc.grid) ||
	    (pc.replan && store_replan(st, s->name, s->per != PER_ANY, s->max_attempts, c.remeasure, &rs))) {
		store_rollback(st);
		goto out;
	}
	if (store_commit(st))
		goto out;
	if (c.grew && !c.what.len)
		fprintf(stderr, "sweep: %s: the spec's grid grew by %" PRIu64 " cells: planned; %" PRIu64 " retired "
			"cells (and replicas) are the spec's again\n", s->name, c.grew, rs.back);
	else if (pc.replan)
		fprintf(stderr, "sweep: %s: replanned (%s): %" PRIu64 " cells retired, %" PRIu64 " back in the spec, "
			"%" PRIu64 " new; %" PRIu64 " results superseded, %" PRIu64 " cells to measure again\n",
			s->name, c.what.buf, rs.retired, rs.back, pc.added, rs.superseded, rs.remeasured);
	*added = pc.added;
	*existing = pc.existing;
	ret = 0;
out:
	sb_release(&c.what);
	return ret;
}

int plan_db(const struct spec *s, struct store *st, unsigned shard, unsigned nshards, uint64_t *added,
	    uint64_t *existing)
{
	struct plan_db_opts o = { shard, nshards, 0, PLAN_MAX_CELLS, NULL };

	return plan_db_with(s, st, &o, added, existing);
}
