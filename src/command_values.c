/* command_values.c: the values a command cell's runs gave, by item and metric, combined in each run as the
 * spec says and averaged over runs, and the cell's metrics made of them (command_values.h). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"
#include "command_values.h"

/*
 * A mean that never overflows: sum is exact as far as doubles go, and what cell values have always been;
 * scaled is the same sum of values times 2^-MEAN_SCALE, which stays finite for up to 2^MEAN_SCALE values
 * of any size, and is used when sum is not (two values of 1.7e308 sum to inf, their mean does not).
 */
#define MEAN_SCALE 32
struct mean {
	double sum, scaled;
	long n;
};

static void mean_add(struct mean *m, const struct mean *v)
{
	m->sum += v->sum;
	m->scaled += v->scaled;
	m->n += v->n;
}

static void mean_add_value(struct mean *m, double v)
{
	struct mean one = { v, ldexp(v, -MEAN_SCALE), 1 };

	mean_add(m, &one);
}

static double mean_get(const struct mean *m)
{
	return isfinite(m->sum) ? m->sum / m->n : ldexp(m->scaled / m->n, MEAN_SCALE);
}

/* The values one metric got for one item (item NULL: none) over the whole cell: m, the mean of each run's
 * value; the run in progress's records (run_n of them) combined into run (run_v for sum, max, min); most,
 * the most records one run gave. In command_values_finish's table of metrics, m is the mean of the metric's
 * item means and cell the mean of its values without an item. */
struct acc {
	char *item, *metric;
	struct mean m, cell, run;
	double run_v;
	long run_n, most;
};

/* acc entries in first-seen order, with an open-addressing index so a long output with many items or
 * metrics stays linear. slots hold index + 1; 0 is an empty slot. */
struct command_values {
	enum spec_combine combine;
	int said;                  /* combine was given: its averaging goes without a note */
	struct acc *v;
	size_t n, alloc;
	size_t *slots, nslots;
	/* The entries the run in progress gave a value (indexes into v). */
	size_t *touched;
	size_t ntouched, touched_alloc;
	/* Each item's kept runs' wall times, in the order the items ran (an item's runs come together). */
	struct item_walls {
		char *item;
		double *wall;
		size_t n, alloc;
	} *walls;
	size_t nwalls, walls_alloc;
};

struct command_values *command_values_new(enum spec_combine combine, int said)
{
	struct command_values *t = xcalloc(1, sizeof(struct command_values));

	t->combine = combine;
	t->said = said;
	return t;
}

static uint64_t acc_hash(const char *item, const char *metric)
{
	uint64_t h = hash64(HASH64_INIT, item ? "i" : "c", 1);

	if (item)
		h = hash64(h, item, strlen(item) + 1);
	return hash64(h, metric, strlen(metric) + 1);
}

static int acc_same(const struct acc *a, const char *item, const char *metric)
{
	if (!a->item != !item || (item && strcmp(a->item, item)))
		return 0;
	return !strcmp(a->metric, metric);
}

static void acc_rehash(struct command_values *t)
{
	size_t i, j;

	free(t->slots);
	t->nslots = t->nslots ? 2 * t->nslots : 64;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (i = 0; i < t->n; i++) {
		j = acc_hash(t->v[i].item, t->v[i].metric) & (t->nslots - 1);
		while (t->slots[j])
			j = (j + 1) & (t->nslots - 1);
		t->slots[j] = i + 1;
	}
}

/* The entry of (item, metric), made empty at the end of the order when there is none. */
static struct acc *acc_get(struct command_values *t, const char *item, const char *metric)
{
	struct acc *a;
	size_t j;

	if (2 * (t->n + 1) > t->nslots)
		acc_rehash(t);
	j = acc_hash(item, metric) & (t->nslots - 1);
	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		a = &t->v[t->slots[j] - 1];
		if (acc_same(a, item, metric))
			return a;
	}
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	a = &t->v[t->n];
	memset(a, 0, sizeof(*a));
	a->item = item ? xstrdup(item) : NULL;
	a->metric = xstrdup(metric);
	t->slots[j] = ++t->n;
	return a;
}

int command_values_add(struct command_values *t, const char *item, const char *metric, double v)
{
	struct acc *a = acc_get(t, item, metric);

	if (!a->run_n) {
		ALLOC_GROW(t->touched, t->ntouched + 1, t->touched_alloc);
		t->touched[t->ntouched++] = (size_t)(a - t->v);
		a->run = (struct mean){ 0, 0, 0 };
		a->run_v = v;
	} else if (t->combine == COMBINE_ERROR) {
		return -1;
	} else if (t->combine == COMBINE_SUM) {
		a->run_v += v;
	} else if (t->combine == COMBINE_MAX) {
		a->run_v = fmax(a->run_v, v);
	} else if (t->combine == COMBINE_MIN) {
		a->run_v = fmin(a->run_v, v);
	}
	mean_add_value(&a->run, v);
	a->run_n++;
	return 0;
}

int command_values_run_end(struct command_values *t, char **why)
{
	int ret = 0;

	for (size_t i = 0; i < t->ntouched; i++) {
		struct acc *a = &t->v[t->touched[i]];
		double v = t->combine == COMBINE_MEAN ? mean_get(&a->run) : a->run_v;

		if (!isfinite(v) && !ret) {
			*why = xasprintf("metric '%s': the sum of %ld records%s%s in one run is past %g", a->metric,
					 a->run_n, a->item ? " of item " : "", a->item ? a->item : "", DBL_MAX);
			ret = -1;
		}
		mean_add_value(&a->m, v);
		a->most = a->run_n > a->most ? a->run_n : a->most;
		a->run_n = 0;
	}
	t->ntouched = 0;
	return ret;
}

void command_values_wall(struct command_values *t, const char *item, double seconds)
{
	struct item_walls *w = t->nwalls ? &t->walls[t->nwalls - 1] : NULL;

	if (!w || strcmp(w->item, item)) {
		ALLOC_GROW(t->walls, t->nwalls + 1, t->walls_alloc);
		w = &t->walls[t->nwalls++];
		memset(w, 0, sizeof(*w));
		w->item = xstrdup(item);
	}
	ALLOC_GROW(w->wall, w->n + 1, w->alloc);
	w->wall[w->n++] = seconds;
}

void command_values_free(struct command_values *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nwalls; i++) {
		free(t->walls[i].item);
		free(t->walls[i].wall);
	}
	free(t->walls);
	free(t->touched);
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].item);
		free(t->v[i].metric);
	}
	free(t->v);
	free(t->slots);
	free(t);
}

/*
 * result_set_metric(r, name, value) for names that are new to r, in one step each: it looks for name
 * among r's metrics, which would make a cell of 100,000 metrics quadratic. It is called on r with no
 * metric, and the pair it made is moved onto the end of r's own.
 */
static void set_new_metric(struct result *r, const char *name, double value)
{
	struct json_obj own = r->metrics;

	r->metrics = (struct json_obj)JSON_OBJ_INIT;
	result_set_metric(r, name, value);
	if (r->metrics.n) {
		ALLOC_GROW(own.v, own.n + 1, own.alloc);
		own.v[own.n++] = r->metrics.v[0];
	}
	free(r->metrics.v);
	r->metrics = own;
}

/* "2 records of item r averaged" (and of how many more items), when the default combine averaged several
 * records of one item in one run; NULL when none did or combine was said. */
static char *averaged_note(const struct command_values *t)
{
	struct command_values *seen = command_values_new(COMBINE_MEAN, 1);
	const struct acc *first = NULL;
	struct strbuf sb = STRBUF_INIT;
	long more = 0;

	for (size_t i = 0; i < t->n && !t->said; i++) {
		const struct acc *a = &t->v[i];
		struct acc *s;

		if (a->most < 2)
			continue;
		s = acc_get(seen, a->item, "");
		if (!s->most++ && first)
			more++;
		if (!first || (acc_same(first, a->item, first->metric) && a->most > first->most))
			first = a;
	}
	command_values_free(seen);
	if (!first)
		return NULL;
	sb_addf(&sb, "%ld records", first->most);
	if (first->item)
		sb_addf(&sb, " of item %s", first->item);
	sb_adds(&sb, " averaged");
	if (more)
		sb_addf(&sb, ", and of %ld more item%s", more, more == 1 ? "" : "s");
	return sb_detach(&sb);
}

void command_values_finish(const struct command_values *t, struct result *r)
{
	struct command_values *per = command_values_new(COMBINE_MEAN, 1);
	int has_seconds = 0, fresh = !r->metrics.n;

	free(r->note);
	r->note = averaged_note(t);

	/* One entry a metric, in first-seen order. */
	for (size_t i = 0; i < t->n; i++) {
		struct acc *a = &t->v[i], *pm = acc_get(per, NULL, a->metric);

		if (a->item) {
			result_add_item(r, a->item, a->metric, mean_get(&a->m));
			mean_add_value(&pm->m, mean_get(&a->m));
		} else {
			mean_add(&pm->cell, &a->m);
		}
	}
	for (size_t j = 0; j < per->n; j++) {
		const struct acc *pm = &per->v[j];
		double v = mean_get(pm->m.n ? &pm->m : &pm->cell);

		if (fresh)
			set_new_metric(r, pm->metric, v);
		else
			result_set_metric(r, pm->metric, v);
		has_seconds |= !strcmp(pm->metric, "seconds");
	}
	if (!has_seconds && r->nsamples)
		result_set_metric(r, "seconds", stats_median(r->samples, r->nsamples));
	/* Each item's wall time, as a metric of the output would be: the median of its runs. */
	for (size_t i = 0; i < t->nwalls && !has_seconds; i++)
		result_add_item(r, t->walls[i].item, "seconds", stats_median(t->walls[i].wall, t->walls[i].n));
	command_values_free(per);
}
