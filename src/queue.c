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
		if (again)
			queue_push(t->gang_size > 1 ? &w->q->gangs : &w->q->cells, t);   /* after those queued */
		else
			m->stats->quarantined++;
	}
	return 0;
}

