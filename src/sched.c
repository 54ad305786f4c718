/* sched.c: the master's dynamic scheduling loop and the worker loop at the other end of it. */
#include "sched.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostinfo.h"
#include "sched_int.h"
#include "topo.h"

/* A round of results is committed this long after its first message at most: long enough that short
 * cells share a commit (a commit costs far more than storing one result), short enough that a worker's
 * prefetched cells (PREFETCH_SECONDS) never run out before its next ones are sent. */
#define COMMIT_WINDOW 0.002

static volatile sig_atomic_t interrupted;
static volatile int local_failed;   /* rank 0's own worker stopped on an error */

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Queues are allocated one by one: workers keep pointers to them while more are added. */
static struct tqueue *queue_for(struct master *m, const char *replica, int create)
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

void task_copy(struct task *dst, const struct task *src)
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

void tlist_push(struct tlist *l, const struct task *t)
{
	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	task_copy(&l->v[l->n++], t);
}

static void tlist_release(struct tlist *l)
{
	for (size_t i = l->head; i < l->n; i++)
		task_release(&l->v[i]);
	free(l->v);
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

static int load_pending(const struct task *t, void *data)
{
	struct master *m = data;
	struct tqueue *q = queue_for(m, t->replica, 0);

	/* A replica for a host or GPU that is not in this run waits for a run that has it. */
	struct task g;

	if (!q) {
		m->stats->waiting++;
		return 0;
	}
	m->stats->pending++;
	/* Only the fields the store fills: the gang ones are the master's. */
	g = (struct task){ t->cell, t->key, t->params, t->pass, t->replica, t->attempt, 0, t->isolate, 1, 0, 0,
			   NULL };
	g.gang_size = gang_size_of(m, t);
	tlist_push(g.gang_size > 1 ? &q->gangs : &q->cells, &g);
	return 0;
}

/* The replica a worker serves: "" for per: any, its host, or host/gpuN (host/cpuN without a GPU). */
static char *replica_of(const struct spec *s, const struct hello *h)
{
	switch (s->per) {
	case PER_HOST:
		return xstrdup(h->host);
	case PER_GPU:
		return h->gpu >= 0 ? xasprintf("%s/gpu%d", h->host, h->gpu)
				   : xasprintf("%s/cpu%d", h->host, h->local_rank);
	default:
		return xstrdup("");
	}
}

static int host_allowed(const struct spec *s, const char *host)
{
	if (!s->nhosts)
		return 1;
	for (int i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], host))
			return 1;
	return 0;
}

static int send_spec(struct master *m, int rank)
{
	const struct spec *s = m->o->spec;

	sb_reset(&m->out);
	sb_adds(&m->out, s->path);
	sb_add(&m->out, "", 1);
	sb_adds(&m->out, s->text);
	return comm_master_send(m->c, rank, MSG_SPEC, m->out.buf, m->out.len);
}

static int count_row(const struct store_row *row, void *data)
{
	*(uint64_t *)data = (uint64_t)row->num[0];
	return 0;
}

/* A host named in the spec's hosts: that has no worker in this run: its replicas wait for a later run. */
static int count_absent(struct master *m)
{
	const struct spec *s = m->o->spec;
	const char *bind[] = { s->name };
	uint64_t templates = 0;

	if (s->per == PER_ANY || !s->nhosts)
		return 0;
	if (store_query(m->o->store, "SELECT count(*) FROM cells WHERE sweep = ?1 AND state = 'template'",
			bind, 1, 1, count_row, &templates))
		return -1;
	for (int i = 0; i < s->nhosts; i++) {
		int present = 0;

		for (int r = 0; r < m->nw; r++)
			present |= m->w[r].hello.host && !strcmp(m->w[r].hello.host, s->hosts[i]);
		if (!present) {
			warning("host '%s' named in the spec is not in this run: its cells wait", s->hosts[i]);
			m->stats->waiting += templates;
		}
	}
	return 0;
}

/* Collect every worker's hello, then sched_assign. */
static int greet(struct master *m)
{
	double deadline = now_mono() + m->o->hello_timeout;
	int expected = 0, got = 0, peer, tag, rc;

	for (int r = m->o->local_worker ? 0 : 1; r < m->nw; r++) {
		if (send_spec(m, r))
			return -1;
		expected++;
	}
	if (!expected)
		return error("no workers: run under mpirun with more ranks, or without --no-local-worker");
	while (got < expected) {
		struct hello h;

		rc = comm_master_recv(m->c, &peer, &tag, &m->buf, deadline - now_mono());
		if (rc < 0)
			return -1;
		if (rc == 0)
			return error("only %d of %d workers said hello within %.0f s", got, expected,
				     m->o->hello_timeout);
		if (tag != MSG_HELLO || msg_get_hello(m->buf.buf, m->buf.len, &h))
			return error("unexpected message %d from rank %d while waiting for hellos", tag, peer);
		hello_release(&m->w[peer].hello);
		m->w[peer].hello = h;
		m->w[peer].rank = peer;
		got++;
	}
	return sched_assign(m);
}

int sched_assign(struct master *m)
{
	const struct spec *s = m->o->spec;

	if (store_begin(m->o->store))
		return -1;
	for (int r = 0; r < m->nw; r++) {
		struct wstate *w = &m->w[r];
		int64_t host;
		char *replica;
		int added = 0;

		if (!w->hello.host)
			continue;
		if (store_put_host(m->o->store, w->hello.facts, &host) ||
		    store_put_worker(m->o->store, m->o->run, r, host, w->hello.gpu, w->hello.gpu_uuid,
				     w->hello.binding))
			goto fail;
		if (!host_allowed(s, w->hello.host))
			continue;
		replica = replica_of(s, &w->hello);
		if (s->per != PER_ANY && !queue_for(m, replica, 0) &&
		    store_replicate(m->o->store, s->name, replica, &added)) {
			free(replica);
			goto fail;
		}
		w->q = queue_for(m, replica, 1);
		w->active = 1;
		w->depth = MIN_INFLIGHT;
		w->since_control = s->control_every;
		free(replica);
	}
	if (store_commit(m->o->store))
		return -1;
	if (count_absent(m))
		return -1;
	return store_each_pending(m->o->store, s->name, load_pending, m);
fail:
	store_rollback(m->o->store);
	return -1;
}

/*
 * Only the head of a worker's in-flight list is running (workers take tasks in order); the prefetched
 * one behind it has not started. So a cell is marked running, and its attempt counted, when it becomes
 * the head: a job that dies then charges the cells that were running, not the ones waiting behind them.
 * A gang cell is marked once, by its leader's copy.
 */
static int mark_head(struct master *m, struct wstate *w)
{
	struct task *t = fly_at(w, 0);

	if (t->control || t->gang_rank > 0)
		return 0;
	return store_mark_running(m->o->store, t->cell, &t->attempt);
}

int fly_push(struct master *m, struct wstate *w, const struct task *t)
{
	task_copy(fly_at(w, w->nfly++), t);
	if (w->nfly == 1)
		return mark_head(m, w);
	return t->control ? 0 : store_mark_sent(m->o->store, t->cell);
}

/* Give w cells up to its depth, with a control cell first and then after every control_every cells.
 * Nothing is queued behind a gang cell: its members must be free to exchange its bootstrap. */
static int refill(struct master *m, struct wstate *w)
{
	const struct spec *s = m->o->spec;
	struct tlist *l;

	if (!w->active || w->reserved || (w->nfly && fly_at(w, w->nfly - 1)->gang_size > 1))
		return 0;
	l = &w->q->cells;
	while (w->nfly < w->depth && l->head < l->n && !(l->v[l->head].isolate && w->nfly)) {
		if (s->control.n && w->since_control >= s->control_every) {
			struct strbuf params = STRBUF_INIT;
			struct task ctl = { 0, "control", NULL, 0, "", 1, 1, 0, 1, 0, 0, NULL };
			int rc;

			json_obj_write(&params, &s->control);
			ctl.params = params.buf;
			rc = fly_push(m, w, &ctl);
			sb_release(&params);
			if (rc)
				return -1;
			w->since_control = 0;
			continue;
		}
		if (fly_push(m, w, &l->v[l->head]))
			return -1;
		task_release(&l->v[l->head]);
		l->head++;
		w->since_control++;
	}
	return 0;
}

/* Gangs first (they reserve workers), then every free worker's prefetch, in the caller's transaction. */
static int schedule(struct master *m)
{
	if (gang_form(m))
		return -1;
	for (int r = 0; r < m->nw; r++)
		if (refill(m, &m->w[r]))
			return -1;
	return 0;
}

/* Send what was put in flight since the last send: after the commit that marked it running. */
static int send_tasks(struct master *m)
{
	for (int r = 0; r < m->nw; r++) {
		struct wstate *w = &m->w[r];

		if (w->nsent == w->nfly)
			continue;
		/* One message for all of this round's cells of a worker: short cells come many at a time. */
		for (int i = w->nsent; i < w->nfly; i++)
			m->batch[i - w->nsent] = fly_at(w, i);
		sb_reset(&m->out);
		msg_put_tasks(&m->out, (const struct task *const *)m->batch, w->nfly - w->nsent);
		if (comm_master_send(m->c, w->rank, MSG_TASK, m->out.buf, m->out.len))
			return -1;
		w->nsent = w->nfly;
	}
	return 0;
}

int sched_store_result(struct master *m, struct wstate *w, struct task *t, struct result *r)
{
	const struct spec *s = m->o->spec;

	if (store_put_result(m->o->store, m->o->run, r, s->max_attempts, NULL))
		return -1;
	if (r->status == RESULT_OK) {
		m->stats->ok++;
	} else {
		m->stats->failed++;
		if (t->attempt < s->max_attempts)
			tlist_push(t->gang_size > 1 ? &w->q->gangs : &w->q->cells, t);   /* after those queued */
		else
			m->stats->quarantined++;
	}
	return 0;
}

struct from {
	struct master *m;
	int peer;
};

/* One result from rank f->peer: for the oldest cell in flight there. Takes r over. */
static int handle_result(struct result *res, void *data)
{
	struct from *f = data;
	struct master *m = f->m;
	int peer = f->peer;
	const struct spec *s = m->o->spec;
	struct wstate *w = peer < m->nw ? &m->w[peer] : NULL;
	struct task t;
	struct result r = *res;
	int ret = 0;

	if (!w || !w->nsent) {
		result_release(&r);
		return error("result from rank %d, which has no cell in flight", peer);
	}
	t = *fly_at(w, 0);
	w->fhead = (w->fhead + 1) % MAX_INFLIGHT;
	w->nfly--;
	w->nsent--;
	if (w->nfly && mark_head(m, w)) {
		ret = -1;
		goto out;
	}
	if (r.cell != t.cell) {
		ret = error("rank %d returned cell %lld, expected %lld", peer, (long long)r.cell,
			    (long long)t.cell);
		goto out;
	}
	r.worker = peer;
	w->avg_wall = w->avg_wall > 0 ? 0.8 * w->avg_wall + 0.2 * r.wall : r.wall;
	w->depth = w->avg_wall > 0 ? (int)(PREFETCH_SECONDS / w->avg_wall) + 1 : MIN_INFLIGHT;
	w->depth = w->depth < MIN_INFLIGHT ? MIN_INFLIGHT : w->depth > MAX_INFLIGHT ? MAX_INFLIGHT : w->depth;
	w->done++;
	if (t.control)
		ret = store_put_control(m->o->store, m->o->run, s->name, t.params, &r, NULL);
	else if (t.gang_size > 1)
		ret = gang_result(m, w, &t, &r);
	else
		ret = sched_store_result(m, w, &t, &r);
out:
	task_release(&t);
	result_release(&r);
	return ret;
}

static void progress(struct master *m, int last)
{
	const struct sched_opts *o = m->o;
	double now = now_mono(), el = now - m->t0;
	uint64_t done = m->stats->ok + m->stats->quarantined, total = m->stats->pending;
	double rate = el > 0 ? (double)done / el : 0;
	char eta[32] = "-";
	struct strbuf hosts = STRBUF_INIT;

	if (!o->progress || (!last && now - m->last_progress < o->progress_every))
		return;
	m->last_progress = now;
	if (rate > 0 && total > done)
		snprintf(eta, sizeof(eta), "%.0fs", (double)(total - done) / rate);
	/* Per-host rate: cells done by the workers of each host, divided by the run's time so far. */
	for (int r = 0; r < m->nw; r++) {
		const char *h = m->w[r].hello.host;
		uint64_t n = 0;
		int seen = 0;

		if (!h)
			continue;
		for (int q = 0; q < r; q++)
			seen |= m->w[q].hello.host && !strcmp(m->w[q].hello.host, h);
		if (seen)
			continue;
		for (int q = r; q < m->nw; q++)
			if (m->w[q].hello.host && !strcmp(m->w[q].hello.host, h))
				n += m->w[q].done;
		sb_addf(&hosts, " %s:%.1f/s", h, el > 0 ? (double)n / el : 0);
	}
	fprintf(stderr, "%s%llu/%llu cells  %.1f cells/s  eta %s  failures %llu%s%s", o->progress == 1 ? "\r" : "",
		(unsigned long long)done, (unsigned long long)total, rate, eta,
		(unsigned long long)m->stats->failed, hosts.buf ? hosts.buf : "",
		o->progress == 1 && !last ? "\033[K" : "\n");
	sb_release(&hosts);
}

static int work_left(const struct master *m)
{
	for (int r = 0; r < m->nw; r++)
		if (m->w[r].nfly)
			return 1;
	for (size_t i = 0; i < m->nqueues; i++) {
		const struct tqueue *q = m->queues[i];
		int served = 0;

		for (int r = 0; r < m->nw; r++)
			served |= m->w[r].active && m->w[r].q == q;
		if (served && (q->cells.head < q->cells.n || q->gangs.head < q->gangs.n))
			return 1;
	}
	return 0;
}

static int handle_message(struct master *m, int peer, int tag)
{
	struct from f = { m, peer };

	if (tag == MSG_RESULT) {
		int rc = msg_results_each(m->buf.buf, m->buf.len, handle_result, &f);

		return rc == -2 ? error("malformed results from rank %d", peer) : rc;
	}
	if (tag == MSG_GANG_BLOB)
		return gang_forward_blob(m, peer, m->buf.buf, m->buf.len);
	return error("unexpected message %d from rank %d", tag, peer);
}

/*
 * The loop: wait for a message; take it and what else arrives within COMMIT_WINDOW (up to DRAIN_MAX)
 * into one transaction together with the dispatches it frees; commit; only then send those cells. So
 * every result is on disk before its worker gets another cell, and a commit covers many results when
 * cells are short.
 */
static int dispatch(struct master *m)
{
	int peer, tag, rc;
	double round_end;

	if (store_begin(m->o->store))
		return -1;
	if (schedule(m))
		goto fail;
	if (store_commit(m->o->store) || send_tasks(m))
		return -1;
	while (work_left(m) && !interrupted) {
		if (__atomic_load_n(&local_failed, __ATOMIC_SEQ_CST))
			return error("rank 0's own worker stopped on an error (above)");
		rc = comm_master_recv(m->c, &peer, &tag, &m->buf, m->o->progress ? m->o->progress_every : 1.0);
		progress(m, 0);
		if (rc <= 0) {
			if (rc < 0)
				return -1;
			continue;
		}
		round_end = now_mono() + COMMIT_WINDOW;
		if (store_begin(m->o->store))
			return -1;
		for (int n = 0; n < DRAIN_MAX; n++) {
			double left = n ? round_end - now_mono() : 0;

			if (n > 0 && (rc = comm_master_recv(m->c, &peer, &tag, &m->buf, left > 0 ? left : 0)) != 1)
				break;
			if (handle_message(m, peer, tag))
				goto fail;
		}
		if (rc < 0 || schedule(m))
			goto fail;
		if (store_commit(m->o->store) || send_tasks(m))
			return -1;
	}
	return 0;
fail:
	store_rollback(m->o->store);
	return -1;
}

static int worker_session(struct comm *c, int *next);

int sched_results_due(int last_of_batch, double wall, double waited, int count)
{
	return last_of_batch || wall >= RESULTS_SECONDS || waited >= RESULTS_SECONDS || count >= RESULTS_MAX;
}

/* Rank 0's own worker lives for one sweep: each sched_master starts its own. */
static void *local_worker_main(void *arg)
{
	int next;

	if (worker_session(arg, &next))
		__atomic_store_n(&local_failed, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

int sched_master(struct comm *c, const struct sched_opts *o, struct sched_stats *stats)
{
	struct master m = { 0 };
	pthread_t local;
	int ret = -1, started = 0;
	struct sigaction sa = { 0 }, old_int, old_term;

	memset(stats, 0, sizeof(*stats));
	m.c = c;
	m.o = o;
	m.kernel = o->spec->kernel ? kernel_find(o->spec->kernel) : NULL;
	m.stats = stats;
	m.nw = comm_size(c);
	m.w = xcalloc((size_t)m.nw, sizeof(*m.w));
	m.t0 = m.last_progress = now_mono();
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (o->local_worker) {
		if (pthread_create(&local, NULL, local_worker_main, c)) {
			error("cannot start the local worker thread");
			goto out;
		}
		started = 1;
	}
	if (greet(&m) || dispatch(&m))
		goto stop;
	progress(&m, 1);
	ret = 0;
stop:
	for (int r = o->local_worker ? 0 : 1; r < m.nw; r++)
		comm_master_send(c, r, ret == 0 && o->keep_workers ? MSG_NEXT : MSG_STOP, "", 0);
	if (started)
		pthread_join(local, NULL);
	if (interrupted)
		ret = error("interrupted by signal %d; run the same command again to resume", (int)interrupted);
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	stats->seconds = now_mono() - m.t0;
	sched_release(&m);
	return ret;
}

void sched_release(struct master *m)
{
	for (int r = 0; r < m->nw; r++) {
		for (int j = 0; j < m->w[r].nfly; j++)
			task_release(fly_at(&m->w[r], j));
		hello_release(&m->w[r].hello);
	}
	for (size_t i = 0; i < m->nqueues; i++) {
		tlist_release(&m->queues[i]->cells);
		tlist_release(&m->queues[i]->gangs);
		free(m->queues[i]->replica);
		free(m->queues[i]);
	}
	gang_release(m);
	free(m->queues);
	free(m->w);
	sb_release(&m->buf);
	sb_release(&m->out);
}

int sched_worker(struct comm *c)
{
	int next = 1, rc = 0;

	while (next && !rc)
		rc = worker_session(c, &next);
	return rc;
}

/* One sweep on the worker side: spec, hello, then tasks until STOP (*next = 0) or NEXT (*next = 1). */
static int worker_session(struct comm *c, int *next)
{
	struct strbuf buf = STRBUF_INIT, out = STRBUF_INIT;
	struct spec spec;
	struct worker w = { 0 };
	struct hello h = { 0 };
	struct json_obj facts = JSON_OBJ_INIT;
	struct gang_cache *gangs = NULL;
	struct strbuf binding = STRBUF_INIT;
	struct task *tasks = NULL;   /* the cells of the last TASK message; next_task is the next to run */
	int ntasks = 0, next_task = 0;
	double first_unsent = 0;
	int tag, rc, ngpu, ret = -1, have_spec = 0;
	double wall;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t plen;

	*next = 0;
	do
		rc = comm_worker_recv(c, &tag, &buf, 3600);
	while (rc == 0);
	if (rc < 0)
		goto out;
	if (tag == MSG_STOP) {
		ret = 0;
		goto out;
	}
	if (tag != MSG_SPEC || !(plen = strnlen(buf.buf, buf.len)) || plen == buf.len) {
		error("rank %d: expected the spec, got message %d", comm_rank(c), tag);
		goto out;
	}
	if (spec_parse(buf.buf, buf.buf + plen + 1, buf.len - plen - 1, &spec))
		goto out;
	have_spec = 1;
	w.rank = comm_rank(c);
	w.spec = &spec;
	ngpu = hostinfo_gpu_count();
	w.gpu = ngpu > 0 ? comm_local_rank(c) % ngpu : -1;
	gethostname(w.host, sizeof(w.host) - 1);
	/* Pinning pays off when each worker can have cores of its own; oversubscribed ranks (tests, small
	 * machines) are left to the OS scheduler. Rank 0 has the master too: it binds like any worker. */
	if (comm_local_size(c) > cores)
		sb_addf(&binding, "none: %d ranks on %ld cores", comm_local_size(c), cores);
	else if (topo_bind(w.gpu, comm_local_rank(c), comm_local_size(c), &binding))
		warning("rank %d runs unbound: %s", w.rank, binding.buf ? binding.buf : "");
	hostinfo_collect(&facts);
	if (w.gpu >= 0)
		hostinfo_gpu(&facts, w.gpu);
	h.rank = w.rank;
	h.local_rank = comm_local_rank(c);
	h.gpu = w.gpu;
	h.host = w.host;
	h.gpu_uuid = (char *)(json_obj_get(&facts, "gpu_uuid") ? json_obj_get(&facts, "gpu_uuid") : "");
	h.binding = binding.buf ? binding.buf : "";
	sb_reset(&out);
	json_obj_write(&out, &facts);
	h.facts = out.buf;
	sb_reset(&buf);
	msg_put_hello(&buf, &h);
	if (comm_worker_send(c, MSG_HELLO, buf.buf, buf.len))
		goto out;
	msg_results_init(&out);
	for (;;) {
		struct task t;
		struct result r;
		char err[256];

		if (next_task == ntasks) {
			/* The cells of the last message are done: wait for the next message. */
			rc = comm_worker_recv(c, &tag, &buf, 3600);
			if (rc < 0)
				goto out;
			if (rc == 0)
				continue;
			if (tag == MSG_STOP || tag == MSG_NEXT) {
				*next = tag == MSG_NEXT;
				break;
			}
			for (int i = 0; i < ntasks; i++)
				task_release(&tasks[i]);
			free(tasks);
			tasks = NULL;
			next_task = ntasks = 0;
			if (tag != MSG_TASK || msg_get_tasks(buf.buf, buf.len, &tasks, &ntasks)) {
				error("rank %d: malformed task (message %d)", w.rank, tag);
				goto out;
			}
		}
		t = tasks[next_task];
		memset(&tasks[next_task++], 0, sizeof(t));
		result_init(&r);
		w.gang_size = 1;
		if (t.gang_size > 1 && gang_prepare(c, &w, &t, &gangs, err, sizeof(err))) {
			r.cell = t.cell;
			result_fail(&r, RESULT_ERROR, "gang of %d: %s", t.gang_size, err);
		} else {
			worker_run_task(&w, &t, &r);
		}
		if (t.gang_size > 1)
			gang_done(&w, &t, r.status != RESULT_OK, &gangs);
		r.cell = t.cell;
		r.worker = w.rank;
		if (!msg_results_count(&out))
			first_unsent = now_mono();
		msg_results_add(&out, &r);
		wall = r.wall;
		result_release(&r);
		task_release(&t);
		if (sched_results_due(next_task == ntasks, wall, now_mono() - first_unsent,
				      msg_results_count(&out))) {
			if (comm_worker_send(c, MSG_RESULT, out.buf, out.len))
				goto out;
			msg_results_init(&out);
		}
	}
	ret = 0;
out:
	for (int i = 0; i < ntasks; i++)
		task_release(&tasks[i]);
	free(tasks);
	gang_cache_free(&w, &gangs);
	worker_release(&w);
	sb_release(&binding);
	if (have_spec)
		spec_release(&spec);
	json_obj_release(&facts);
	sb_release(&buf);
	sb_release(&out);
	return ret;
}
