/* command_values.c: the values a command cell's runs gave, by item and metric, and the cell's metrics made
 * of them (command_values.h). */
#include <stdlib.h>
#include <string.h>
#include "stats.h"
#include "command_values.h"

/* The values one metric got for one item (item NULL: none) over the whole cell. */
struct acc {
	char *item, *metric;
	double sum;
	long n;
};

/* acc entries in first-seen order, with an open-addressing index so a long output with many items
 * stays linear. slots hold index + 1; 0 is an empty slot. */
struct command_values {
	struct acc *v;
	size_t n, alloc;
	size_t *slots, nslots;
};

struct command_values *command_values_new(void)
{
	return xcalloc(1, sizeof(struct command_values));
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

void command_values_add(struct command_values *t, const char *item, const char *metric, double v)
{
	struct acc *a;
	size_t j;

	if (2 * (t->n + 1) > t->nslots)
		acc_rehash(t);
	j = acc_hash(item, metric) & (t->nslots - 1);
	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		a = &t->v[t->slots[j] - 1];
		if (acc_same(a, item, metric)) {
			a->sum += v;
			a->n++;
			return;
		}
	}
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	a = &t->v[t->n];
	a->item = item ? xstrdup(item) : NULL;
	a->metric = xstrdup(metric);
	a->sum = v;
	a->n = 1;
	t->slots[j] = ++t->n;
}

void command_values_free(struct command_values *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].item);
		free(t->v[i].metric);
	}
	free(t->v);
	free(t->slots);
	free(t);
}

void command_values_finish(const struct command_values *t, struct result *r)
{
	const char **names = xcalloc(t->n + 1, sizeof(*names));
	size_t i, j, nnames = 0;
	int has_seconds = 0;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].item)
			result_add_item(r, t->v[i].item, t->v[i].metric, t->v[i].sum / t->v[i].n);
		for (j = 0; j < nnames && strcmp(names[j], t->v[i].metric); j++)
			;
		if (j == nnames)
			names[nnames++] = t->v[i].metric;
	}
	for (j = 0; j < nnames; j++) {
		double isum = 0, csum = 0;
		long in = 0, cn = 0;

		for (i = 0; i < t->n; i++) {
			if (strcmp(t->v[i].metric, names[j]))
				continue;
			if (t->v[i].item) {
				isum += t->v[i].sum / t->v[i].n;
				in++;
			} else {
				csum += t->v[i].sum;
				cn += t->v[i].n;
			}
		}
		result_set_metric(r, names[j], in ? isum / in : csum / cn);
		has_seconds |= !strcmp(names[j], "seconds");
	}
	if (!has_seconds && r->nsamples)
		result_set_metric(r, "seconds", stats_median(r->samples, r->nsamples));
	free(names);
}

