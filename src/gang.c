/* gang.c: cells that run on several workers at once (collectives): forming gangs, combining results. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "master_int.h"
#include "stats.h"

static int eligible(const struct master *m, const struct wstate *w, const struct tqueue *q)
{
	return w->active && w->q == q;
}

static int same_host(const struct wstate *a, const struct wstate *b)
{
	return !strcmp(a->hello.host, b->hello.host);
}

/* Order of preference among candidates: idle first, then those with the least in flight. */
static const struct master *sort_master;

static int by_load(const void *a, const void *b)
{
	const struct wstate *x = &sort_master->w[*(const int *)a], *y = &sort_master->w[*(const int *)b];

	return x->nfly != y->nfly ? x->nfly - y->nfly : x->rank - y->rank;
}

/*
 * Choose need members for a gang of queue q: on one host (gang: host) or anywhere (gang: any), preferring
 * the host with the most workers idle or already reserved, so that a gang in formation keeps its host.
 * Returns how many were chosen (need), or 0 when no host of this run has need eligible workers: *most
 * is then the largest number there is.
 */
static int pick(const struct master *m, const struct tqueue *q, int need, int *chosen, int *most)
{
	int *cand = xcalloc((size_t)m->nw, sizeof(int)), n, best = -1, best_score = -1;

	*most = 0;
	for (int r = 0; r < m->nw; r++) {
		const struct wstate *w = &m->w[r];
		int count = 0, score = 0;

		if (!eligible(m, w, q))
			continue;
		for (int o = 0; o < m->nw; o++) {
			const struct wstate *x = &m->w[o];

			if (eligible(m, x, q) && (m->o->spec->gang == GANG_ANY || same_host(w, x))) {
				count++;
				score += (x->nfly == 0) + x->reserved;
			}
		}
		if (count > *most)
			*most = count;
		if (count >= need && score > best_score) {
			best = r;
			best_score = score;
		}
	}
	n = 0;
	if (best >= 0) {
		for (int o = 0; o < m->nw; o++)
			if (eligible(m, &m->w[o], q) &&
			    (m->o->spec->gang == GANG_ANY || same_host(&m->w[best], &m->w[o])))
				cand[n++] = o;
		sort_master = m;
		qsort(cand, (size_t)n, sizeof(int), by_load);
		memcpy(chosen, cand, (size_t)need * sizeof(int));
		/* Gang ranks in world-rank order, so that the same workers make the same set. */
		sort_master = NULL;
		for (int i = 1; i < need; i++)
			for (int j = i; j > 0 && chosen[j - 1] > chosen[j]; j--) {
				int t = chosen[j];

				chosen[j] = chosen[j - 1];
				chosen[j - 1] = t;
			}
	}
	free(cand);
	return best >= 0 ? need : 0;
}

/* The id of this set of members: the same workers keep their communicators from one cell to the next. */
static int set_id(struct master *m, const int *ranks, int n)
{
	struct gang_set *s;

	for (size_t i = 0; i < m->nsets; i++)
		if (m->sets[i].size == n && !memcmp(m->sets[i].ranks, ranks, (size_t)n * sizeof(int)))
			return m->sets[i].id;
	ALLOC_GROW(m->sets, m->nsets + 1, m->alloc_sets);
	s = &m->sets[m->nsets++];
	s->size = n;
	s->id = ++m->next_gang_id;
	s->ranks = xcalloc((size_t)n, sizeof(int));
	memcpy(s->ranks, ranks, (size_t)n * sizeof(int));
	return s->id;
}

void gang_forget(struct master *m, int rank)
{
	for (size_t i = 0; i < m->nsets;) {
		int has = 0;

		for (int j = 0; j < m->sets[i].size; j++)
			has |= m->sets[i].ranks[j] == rank;
		if (has) {
			free(m->sets[i].ranks);
			m->sets[i] = m->sets[--m->nsets];
		} else {
			i++;
		}
	}
}

static int dispatch_gang(struct master *m, const struct task *g, const int *chosen)
{
	struct task t = *g;

	t.gang_id = set_id(m, chosen, g->gang_size);
	t.gang_ranks = (int *)chosen;
	for (int i = 0; i < g->gang_size; i++) {
		struct wstate *w = &m->w[chosen[i]];

		t.gang_rank = i;
		w->reserved = 0;
		if (queue_fly(m, w, &t))
			return -1;
	}
	return 0;
}

int gang_form(struct master *m)
{
	for (size_t i = 0; i < m->nqueues; i++) {
		struct tqueue *q = m->queues[i];
		struct tlist *l = &q->gangs;

		while (l->head < l->n) {
			struct task *g = &l->v[l->head];
			int *chosen = xcalloc((size_t)g->gang_size, sizeof(int)), most, ready = 1;

			if (!pick(m, q, g->gang_size, chosen, &most)) {
				/* No host of this run has that many workers: the cell waits for a run that has. */
				warning("cell %s needs %d workers%s; this run has at most %d: it waits for a larger run",
					g->key, g->gang_size, m->o->spec->gang == GANG_ANY ? "" : " on one host", most);
				m->stats->pending--;
				task_release(g);
				l->head++;
				free(chosen);
				continue;
			}
			/* Hold the chosen workers (and only them) until all are idle. */
			for (int r = 0; r < m->nw; r++)
				if (m->w[r].q == q)
					m->w[r].reserved = 0;
			for (int k = 0; k < g->gang_size; k++) {
				m->w[chosen[k]].reserved = 1;
				ready &= m->w[chosen[k]].nfly == 0;
			}
			if (!ready) {
				free(chosen);
				break;
			}
			if (dispatch_gang(m, g, chosen)) {
				free(chosen);
				return -1;
			}
			task_release(g);
			l->head++;
			free(chosen);
		}
	}
	return 0;
}

static struct gang_acc *find_acc(struct master *m, const struct task *t)
{
	struct gang_acc *a;

	for (size_t i = 0; i < m->naccs; i++)
		if (m->accs[i].t.cell == t->cell)
			return &m->accs[i];
	ALLOC_GROW(m->accs, m->naccs + 1, m->alloc_accs);
	a = &m->accs[m->naccs++];
	memset(a, 0, sizeof(*a));
	queue_task_copy(&a->t, t);
	a->t.gang_rank = 0;
	a->r = xcalloc((size_t)t->gang_size, sizeof(*a->r));
	a->got = xcalloc((size_t)t->gang_size, sizeof(int));
	return a;
}

static void acc_release(struct master *m, struct gang_acc *a)
{
	for (int i = 0; i < a->t.gang_size; i++)
		if (a->got[i])
			result_release(&a->r[i]);
	free(a->r);
	free(a->got);
	task_release(&a->t);
	*a = m->accs[--m->naccs];
}

/*
 * The cell's parameters as derive() reads them: every declared parameter present and sizes as numbers, as
 * the worker hands them to the kernel. A cell's params hold only the spec's axes: without the defaults, a
 * sweep that left bytes at its default got 0 GB/s of bus bandwidth. -1 when the text does not parse.
 */
static int gang_params(const struct kernel_ops *k, const char *text, struct json_obj *out)
{
	char err[64];

	if (json_parse_flat(text ? text : "{}", out, 0, err, sizeof(err)))
		return -1;
	for (const struct param_def *d = k->params; d && d->name; d++) {
		struct strbuf sb = STRBUF_INIT;
		double v;

		if (json_obj_find(out, d->name) || !d->def)
			continue;
		if (d->type == PARAM_BYTES && !parse_bytes(d->def, &v)) {
			json_add_num(&sb, v);
			json_obj_add(out, d->name, sb.buf, JSON_NUM);
			sb_release(&sb);
		} else {
			json_obj_add(out, d->name, d->def, d->type == PARAM_STR ? JSON_STR : JSON_NUM);
		}
	}
	return 0;
}

void gang_combine(const struct kernel_ops *k, const struct task *t, const struct result *members,
		  const struct spec_timing *timing, struct result *c)
{
	int size = t->gang_size, n = members[0].nsamples;
	struct json_obj params = JSON_OBJ_INIT;
	double v, worst_errors = NAN, lead_sec;   /* NaN: no member counted errors (no check to count) */
	const char *lead;

	result_init(c);
	c->cell = t->cell;
	c->worker = t->gang_ranks[0];
	c->started = members[0].started;
	for (int i = 0; i < size; i++) {
		const struct result *r = &members[i];

		if (r->nsamples < n)
			n = r->nsamples;
		if (r->started < c->started)
			c->started = r->started;
		if (r->wall > c->wall)
			c->wall = r->wall;
		if (r->throttled > c->throttled)
			c->throttled = r->throttled;
		if (json_obj_get(&r->metrics, "errors") && !parse_double(json_obj_get(&r->metrics, "errors"), &v) &&
		    (isnan(worst_errors) || v > worst_errors))
			worst_errors = v;
		if (r->status != RESULT_OK) {
			/* Every member's reason: the one that hung and the ones left waiting for it. */
			char *e = xasprintf("%s%sgang rank %d (rank %d): %s", c->error ? c->error : "",
					    c->error ? "; " : "", i, t->gang_ranks[i],
					    r->error ? r->error : result_status_name[r->status]);

			free(c->error);
			c->error = e;
			if (c->status == RESULT_OK)
				c->status = r->status;
		}
	}
	if (c->status != RESULT_OK)
		return;
	for (int s = 0; s < n; s++) {
		double x = 0, clk = 0;

		for (int i = 0; i < size; i++) {
			if (members[i].samples[s] > x)
				x = members[i].samples[s];
			if (members[i].clocks[s] > 0 && (clk == 0 || members[i].clocks[s] < clk))
				clk = members[i].clocks[s];
		}
		result_add_sample(c, x, clk);
	}
	c->stop = members[0].stop;
	c->launches = members[0].launches;
	c->warmup = members[0].warmup;
	result_summarize(c, spec_noise_target(timing), timing->precision);
	lead = json_obj_get(&members[0].metrics, "seconds");
	if (!lead || parse_double(lead, &lead_sec) || !(lead_sec > 0))
		lead_sec = NAN;
	for (size_t i = 0; i < members[0].metrics.n; i++) {
		const struct json_pair *p = &members[0].metrics.v[i];

		if (p->type != JSON_NUM || parse_double(p->val, &v))
			continue;
		/* The leader's rates are its work over its own median: over the cell's median instead, or
		 * gbs would disagree with seconds and algbw_gbs (NaN, left out, when that cannot be done). */
		if (!strcmp(p->key, "gflops") || !strcmp(p->key, "gbs"))
			v = v * lead_sec / c->sum.median;
		result_set_metric(c, p->key, v);
	}
	result_set_metric(c, "seconds", c->sum.median);
	if (!isnan(worst_errors))
		result_set_metric(c, "errors", worst_errors);
	if (k && k->derive && !gang_params(k, t->params, &params)) {
		struct json_obj extra = JSON_OBJ_INIT;

		k->derive(&params, size, c->sum.median, &extra);
		for (size_t i = 0; i < extra.n; i++)
			if (!parse_double(extra.v[i].val, &v))
				result_set_metric(c, extra.v[i].key, v);
		json_obj_release(&extra);
	}
	json_obj_release(&params);
}

int gang_result(struct master *m, struct wstate *w, struct task *t, struct result *r)
{
	struct gang_acc *a = find_acc(m, t);
	struct result c;
	int ret;

	if (t->gang_rank < 0 || t->gang_rank >= a->t.gang_size || a->got[t->gang_rank])
		return error("rank %d: unexpected result for gang cell %s", w->rank, t->key);
	a->r[t->gang_rank] = *r;
	result_init(r);
	a->got[t->gang_rank] = 1;
	if (++a->ngot < a->t.gang_size)
		return 0;
	gang_combine(m->kernel, &a->t, a->r, &m->o->spec->timing, &c);
	ret = queue_store_result(m, &m->w[a->t.gang_ranks[0]], &a->t, &c);
	result_release(&c);
	acc_release(m, a);
	return ret;
}

int gang_forward_blob(struct master *m, int peer, const char *buf, size_t len)
{
	const struct task *t = peer < m->nw && m->w[peer].nfly ? fly_at(&m->w[peer], 0) : NULL;

	if (!t || t->gang_size < 2 || t->gang_rank != 0)
		return error("rank %d sent a gang bootstrap but leads no gang", peer);
	for (int i = 1; i < t->gang_size; i++)
		if (comm_master_send(m->c, t->gang_ranks[i], MSG_GANG_BLOB, buf, len))
			return -1;
	return 0;
}

void gang_release(struct master *m)
{
	while (m->naccs)
		acc_release(m, &m->accs[m->naccs - 1]);
	free(m->accs);
	for (size_t i = 0; i < m->nsets; i++)
		free(m->sets[i].ranks);
	free(m->sets);
}
