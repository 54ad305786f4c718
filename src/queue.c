/* queue.c: the master's cells: the pending queues of each group of workers, each worker's cells in
 * flight, and storing a result (retry or quarantine). master.c and gang.c build on it. */
#include <stdlib.h>
#include <string.h>

#include "master_int.h"

/* Queues are allocated one by one: workers keep pointers to them while more are added. */
struct tqueue *queue_get(struct master *m, const char *replica, int create)
{
	struct tqueue *q;

	for (size_t i = 0; i < m->nqueues; i++)
		if (!strcmp(m->queues[i]->replica, replica))
			return m->queues[i];
	if (!create)
		return NULL;
	ALLOC_GROW(m->queues, m->nqueues + 1, m->alloc_queues);
	q = xcalloc(1, sizeof(*q));
	q->replica = xstrdup(replica);
	q->next = (struct store_cursor)STORE_CURSOR_INIT;
	m->queues[m->nqueues++] = q;
	return q;
}

void queue_task_copy(struct task *dst, const struct task *src)
{
	*dst = *src;
	dst->key = xstrdup(src->key);
	dst->params = xstrdup(src->params);
	dst->replica = xstrdup(src->replica);
	if (src->gang_ranks) {
		dst->gang_ranks = xcalloc((size_t)src->gang_size, sizeof(int));
		memcpy(dst->gang_ranks, src->gang_ranks, (size_t)src->gang_size * sizeof(int));
	}
}

void queue_push(struct tlist *l, const struct task *t)
{
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	queue_task_copy(&l->v[l->n++], t);
}

void queue_list_release(struct tlist *l)
{
	for (size_t i = l->head; i < l->n; i++)
		task_release(&l->v[i]);
	free(l->v);
}

static size_t queue_left(const struct tlist *l)
{
	return l->n - l->head;
}

/* Take a list's consumed head out: the memory a window used is used again by the next. */
static void queue_compact(struct tlist *l)
{
	if (!l->head)
		return;
	memmove(l->v, l->v + l->head, queue_left(l) * sizeof(*l->v));
	l->n -= l->head;
	l->head = 0;
}

/* Workers a cell needs: its gang size, read from its parameters only for kernels that have gangs. */
static int gang_size_of(const struct master *m, const struct task *t)
{
	struct json_obj p = JSON_OBJ_INIT;
	char err[64];
	int n = 1;

	if (!m->kernel || !m->kernel->gang_open)
		return 1;
	if (!json_parse_flat(t->params, &p, 0, err, sizeof(err)))
		n = kernel_gang_size(m->kernel, &p);
	json_obj_release(&p);
	return n;
}

struct load {
	struct master *m;
	struct tqueue *q;
};

static int load_cell(const struct task *t, void *data)
{
	struct load *l = data;
	/* Only the fields the store fills: the gang ones are the master's. */
	struct task g = { t->cell, t->key, t->params, t->pass, t->replica, 0, t->isolate, 1, 0, 0, NULL };

	g.gang_size = gang_size_of(l->m, t);
	queue_push(g.gang_size > 1 ? &l->q->gangs : &l->q->cells, &g);
	return 0;
}

int queue_fill(struct master *m, struct tqueue *q)
{
	struct load l = { m, q };
	size_t want = 1024;

	for (int r = 0; r < m->nw; r++)
		want += m->w[r].active && m->w[r].q == q ? 2 * MAX_INFLIGHT : 0;
	/* Gang cells are kept too, but a run of them does not load the whole sweep. */
	while (!q->drained && queue_left(&q->cells) < want / 2 && queue_left(&q->gangs) < want) {
		int ask = (int)(want - queue_left(&q->cells)), got;

		queue_compact(&q->cells);
		queue_compact(&q->gangs);
		if (store_pending(m->o->store, m->o->spec->name, q->replica, &q->next, ask, load_cell, &l, &got))
			return -1;
		q->drained = got < ask;
	}
	if (q->drained)
		for (; q->later.head < q->later.n; q->later.head++) {
			struct task *t = &q->later.v[q->later.head];

			queue_push(t->gang_size > 1 ? &q->gangs : &q->cells, t);
			task_release(t);
		}
	return 0;
}

int queue_has_work(const struct tqueue *q)
{
	return queue_left(&q->cells) || queue_left(&q->gangs) || queue_left(&q->later) || !q->drained;
}

/*
 * Only the head of a worker's in-flight list is running (workers take tasks in order); the prefetched
 * one behind it has not started. So a cell is marked running, and its attempt counted, when it becomes
 * the head: a job that dies then charges the cells that were running, not the ones waiting behind them.
 * A gang cell is marked once, by its leader's copy.
 */
int queue_mark_head(struct master *m, struct wstate *w)
{
	struct task *t = fly_at(w, 0);

	w->since = now_mono();
	if (t->control || t->gang_rank > 0)
		return 0;
	return store_mark_running(m->o->store, t->cell);
}

int queue_fly(struct master *m, struct wstate *w, const struct task *t)
{
	queue_task_copy(fly_at(w, w->nfly++), t);
	if (w->nfly == 1)
		return queue_mark_head(m, w);
	return t->control ? 0 : store_mark_sent(m->o->store, t->cell);
}

int queue_store_result(struct master *m, struct wstate *w, struct task *t, struct result *r)
{
	int again;

	/* The store counts the attempts and says whether the cell has one left. */
	if (store_put_result(m->o->store, m->o->run, r, m->o->spec->max_attempts, NULL, &again))
		return -1;
	if (r->status == RESULT_OK) {
		m->stats->ok++;
	} else {
		m->stats->failed++;
		if (again && !w->q->drained)
			queue_push(&w->q->later, t);
		else if (again)
			queue_push(t->gang_size > 1 ? &w->q->gangs : &w->q->cells, t);   /* after those queued */
		else
			m->stats->quarantined++;
	}
	return 0;
}

