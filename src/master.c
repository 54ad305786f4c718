/* master.c: the master's loop: hellos, replicas, dispatch with prefetch, the commit window, progress. */
#include "master.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "master_int.h"
#include "worker.h"

/* A round of results is committed this long after its first message at most: long enough that short
 * cells share a commit (a commit costs far more than storing one result), short enough that a worker's
 * prefetched cells (PREFETCH_SECONDS) never run out before its next ones are sent. */
#define COMMIT_WINDOW 0.002
/* A master that has not looked for messages for this long was busy (a long commit): what the workers sent
 * meanwhile waits unread, so their silence counts only from when it listens again. */
#define LISTEN_GAP 1.0

static volatile int local_failed;   /* rank 0's own worker stopped on an error */

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

/* The planned cells of a replica that a queue serves: the run's to do (others wait: run.c's closing lines). */
static int count_pending(const char *replica, const struct store_counts *c, void *data)
{
	struct master *m = data;

	if (queue_get(m, replica, 0))
		m->stats->pending += c->planned;
	return 0;
}

/* A host named in the spec's hosts: that has no worker in this run: its replicas wait for a later run
 * (the closing line counts them). */
static void warn_absent(struct master *m)
{
	const struct spec *s = m->o->spec;

	for (int i = 0; s->per != PER_ANY && i < s->nhosts; i++) {
		int present = 0;

		for (int r = 0; r < m->nw; r++)
			present |= m->w[r].hello.host && !strcmp(m->w[r].hello.host, s->hosts[i]);
		if (!present)
			warning("host '%s' named in the spec is not in this run: its cells wait", s->hosts[i]);
	}
}

/* MSG_BEAT to every worker rank every MSG_BEAT_SECONDS: one that hears nothing from the master for
 * MSG_ORPHAN_SECONDS ends itself (msg.h). Rank 0's own worker shares the master's process. */
static int beat_workers(struct master *m)
{
	double now = now_mono();

	if (now < m->beat_at)
		return 0;
	m->beat_at = now + MSG_BEAT_SECONDS;
	for (int r = 1; r < m->nw; r++)
		if (comm_master_send(m->c, r, MSG_BEAT, "", 0))
			return -1;
	return 0;
}

/* Collect every worker's hello, then master_assign. */
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
		double left = deadline - now_mono();

		/* An interrupt is looked at every 0.1 s here too: a start must not outlive Ctrl-C. */
		if (interrupt_signal() || beat_workers(m))
			return -1;
		/* Nor rank 0's own worker's failure to start (its clocks not locked, clocks.h): no hello comes. */
		if (__atomic_load_n(&local_failed, __ATOMIC_SEQ_CST))
			return error("rank 0's own worker stopped on an error (above)");
		rc = comm_master_recv(m->c, &peer, &tag, &m->buf, left < 0.1 ? left : 0.1);
		if (rc < 0)
			return -1;
		if (rc == 0 && left > 0.1)
			continue;
		if (rc == 0)
			return error("only %d of %d workers said hello within %.0f s", got, expected,
				     m->o->hello_timeout);
		if (tag == MSG_BEAT)
			continue;
		if (tag != MSG_HELLO || msg_get_hello(m->buf.buf, m->buf.len, &h))
			return error("unexpected message %d from rank %d while waiting for hellos", tag, peer);
		hello_release(&m->w[peer].hello);
		m->w[peer].hello = h;
		m->w[peer].rank = peer;
		got++;
	}
	return master_assign(m);
}

/* Rank r can run none of the sweep's cells (its hello says why): it gets no queue, and the run says so. */
static void cannot(struct master *m, int r)
{
	const struct hello *h = &m->w[r].hello;

	if (!m->stats->cannot++) {
		m->stats->cannot_kind = h->cannot;
		snprintf(m->stats->cannot_why, sizeof(m->stats->cannot_why), "%s", h->why);
	}
	warning("rank %d takes no cell: %s", r, h->why);
}

int master_assign(struct master *m)
{
	const struct spec *s = m->o->spec;
	int able = 0;

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
				     w->hello.binding, w->hello.conditions))
			goto fail;
		if (w->hello.cannot) {
			cannot(m, r);
			continue;
		}
		if (!host_allowed(s, w->hello.host))
			continue;
		able++;
		replica = replica_of(s, &w->hello);
		if (s->per != PER_ANY && !queue_get(m, replica, 0) &&
		    store_replicate(m->o->store, s->name, replica, &added)) {
			free(replica);
			goto fail;
		}
		w->q = queue_get(m, replica, 1);
		w->active = 1;
		w->depth = MIN_INFLIGHT;
		w->since_control = s->control_every;
		free(replica);
	}
	if (store_commit(m->o->store))
		return -1;
	if (!able && m->stats->cannot) {
		m->stats->none_can = 1;
		if (m->stats->cannot_kind == HELLO_NO_PROGRAM)   /* every attempt would fail the same way */
			return error("no worker of this run can run sweep '%s': %s", s->name, m->stats->cannot_why);
	}
	warn_absent(m);
	return store_each_replica(m->o->store, s->name, count_pending, m);
fail:
	store_rollback(m->o->store);
	return -1;
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
			struct task ctl = { 0, "control", NULL, 0, "", 1, 0, 1, 0, 0, NULL };
			int rc;

			json_obj_write(&params, &s->control);
			ctl.params = params.buf;
			rc = queue_fly(m, w, &ctl);
			sb_release(&params);
			if (rc)
				return -1;
			w->since_control = 0;
			continue;
		}
		if (queue_fly(m, w, &l->v[l->head]))
			return -1;
		task_release(&l->v[l->head]);
		l->head++;
		w->since_control++;
	}
	return 0;
}

/* The queues' next windows, gangs (they reserve workers), then every free worker's prefetch, in the
 * caller's transaction. */
static int schedule(struct master *m)
{
	for (int r = 0; r < m->nw; r++)
		if (m->w[r].active && queue_fill(m, m->w[r].q))
			return -1;
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

/* One result from rank peer: for the oldest cell in flight there. Takes res over. */
static int handle_result(struct master *m, int peer, struct result *res)
{
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
	if (w->nfly && queue_mark_head(m, w)) {
		ret = -1;
		goto out;
	}
	if (r.cell != t.cell) {
		ret = error("rank %d returned cell %lld, expected %lld", peer, (long long)r.cell,
			    (long long)t.cell);
		goto out;
	}
	/* A signal that interrupts the run reaches the executors too (one terminal, one process group,
	 * mpirun passing it on): a cell that failed then is no attempt of its; master_stopped hands it
	 * back with the others in flight (its row is still running). */
	if (interrupt_signal() && r.status != RESULT_OK)
		goto out;
	r.worker = peer;
	if (r.status != RESULT_OK)
		gang_forget(m, peer);
	w->avg_wall = w->avg_wall > 0 ? 0.8 * w->avg_wall + 0.2 * r.wall : r.wall;
	w->depth = w->avg_wall > 0 ? (int)(PREFETCH_SECONDS / w->avg_wall) + 1 : MIN_INFLIGHT;
	w->depth = w->depth < MIN_INFLIGHT ? MIN_INFLIGHT : w->depth > MAX_INFLIGHT ? MAX_INFLIGHT : w->depth;
	w->done++;
	if (t.control)
		ret = store_put_control(m->o->store, m->o->run, s->name, t.params, &r, NULL);
	else if (t.gang_size > 1)
		ret = gang_result(m, w, &t, &r);
	else
		ret = queue_store_result(m, w, &t, &r);
out:
	task_release(&t);
	result_release(&r);
	return ret;
}

/* The cell running longest (its parameters, its rank, for how long) into sb; nothing when none runs. */
static void progress_longest(const struct master *m, double now, struct strbuf *sb)
{
	const struct wstate *l = NULL;
	char shown[64];

	for (int r = 0; r < m->nw; r++)
		if (m->w[r].nfly && (!l || m->w[r].since < l->since))
			l = &m->w[r];
	if (!l)
		return;
	snprintf(shown, sizeof(shown), "%s", fly_at((struct wstate *)l, 0)->params);
	sb_addf(sb, "  longest %s on rank %d for %.0fs", shown, l->rank, now - l->since);
}

/*
 * Done of total, the rate and what it leaves (eta), failed attempts, each host's rate and the cell running
 * longest: rewritten in place on a terminal (progress 1), else a line every progress_every seconds.
 */
static void progress(struct master *m, int last)
{
	const struct master_opts *o = m->o;
	double now = now_mono(), el = now - m->t0;
	uint64_t done = m->stats->ok + m->stats->quarantined, total = m->stats->pending;
	double rate = el > 0 ? (double)done / el : 0;
	char eta[32] = "-";
	struct strbuf line = STRBUF_INIT;

	if (!o->progress || (!last && now - m->last_progress < o->progress_every))
		return;
	m->last_progress = now;
	if (rate > 0 && total > done)
		snprintf(eta, sizeof(eta), "%.0fs", (double)(total - done) / rate);
	sb_addf(&line, "%llu/%llu cells  %.1f cells/s  eta %s  failures %llu", (unsigned long long)done,
		(unsigned long long)total, rate, eta, (unsigned long long)m->stats->failed);
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
		sb_addf(&line, " %s:%.1f/s", h, el > 0 ? (double)n / el : 0);
	}
	if (!last)
		progress_longest(m, now, &line);
	fprintf(stderr, "%s%s%s", o->progress == 1 ? "\r" : "", line.buf,
		o->progress == 1 && !last ? "\033[K" : "\n");
	sb_release(&line);
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
		if (served && queue_has_work(q))
			return 1;
	}
	return 0;
}

static int handle_message(struct master *m, int peer, int tag)
{
	if (tag == MSG_RESULT) {
		struct result *r;
		int n, rc = 0;

		if (msg_results_get(m->buf.buf, m->buf.len, &r, &n))
			return error("malformed results from rank %d", peer);
		/* each result handled (taken over) until one fails; the rest released */
		for (int i = 0; i < n; i++) {
			if (!rc)
				rc = handle_result(m, peer, &r[i]);
			else
				result_release(&r[i]);
		}
		free(r);
		return rc;
	}
	if (tag == MSG_GANG_BLOB)
		return gang_forward_blob(m, peer, m->buf.buf, m->buf.len);
	if (tag == MSG_BEAT)
		return 0;
	return error("unexpected message %d from rank %d", tag, peer);
}

/* comm_master_recv into m->buf, noting who was heard from and whether the master has been listening. */
static int master_recv(struct master *m, int *peer, int *tag, double timeout)
{
	int rc;

	if (now_mono() - m->last_recv > LISTEN_GAP)
		m->listening = now_mono();
	rc = comm_master_recv(m->c, peer, tag, &m->buf, timeout);
	m->last_recv = now_mono();
	if (rc == 1 && *peer >= 0 && *peer < m->nw)
		m->w[*peer].heard = m->last_recv;
	return rc;
}

/* The worker heard from least recently into stats->silent_*, when it has missed a few beats now (else
 * silent_for is 0). */
static void note_silent(struct master *m)
{
	const struct wstate *q = NULL;
	double now = now_mono();

	m->stats->silent_for = 0;
	if (!m->listening)
		return;   /* the loop has not started: nobody was waited for */
	for (int r = 0; r < m->nw; r++)
		if (m->w[r].hello.host && (!q || m->w[r].heard < q->heard))
			q = &m->w[r];
	if (!q || now - q->heard < 3 * MSG_BEAT_SECONDS || now - m->listening < 3 * MSG_BEAT_SECONDS)
		return;
	m->stats->silent_rank = q->rank;
	m->stats->silent_for = now - q->heard;
	snprintf(m->stats->silent_host, sizeof(m->stats->silent_host), "%s", q->hello.host);
}

/* -1 when a worker has said nothing for MSG_LOST_SECONDS while the master listened: it is lost. */
static int check_alive(struct master *m)
{
	note_silent(m);
	if (m->stats->silent_for < MSG_LOST_SECONDS)
		return 0;
	m->stats->lost = 1;
	return -1;
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

	m->dispatched = 1;
	if (store_begin(m->o->store))
		return -1;
	if (schedule(m))
		goto fail;
	if (store_commit(m->o->store) || send_tasks(m))
		return -1;
	m->listening = m->last_recv = now_mono();
	for (int r = 0; r < m->nw; r++)
		m->w[r].heard = m->listening;
	while (work_left(m) && !interrupt_signal()) {
		if (__atomic_load_n(&local_failed, __ATOMIC_SEQ_CST))
			return error("rank 0's own worker stopped on an error (above)");
		if (beat_workers(m))
			return -1;
		/* At most 0.1 s between looks at interrupted: a job being killed may have a second. */
		rc = master_recv(m, &peer, &tag,
				 m->o->progress && m->o->progress_every < 0.1 ? m->o->progress_every : 0.1);
		progress(m, 0);
		/* A database moved under the run is noticed within 0.2 s, not at the next commit (store_watch). */
		if (rc < 0 || check_alive(m) || store_watch(m->o->store))
			return -1;
		if (rc == 0)
			continue;
		round_end = now_mono() + COMMIT_WINDOW;
		if (store_begin(m->o->store))
			return -1;
		for (int n = 0; n < DRAIN_MAX; n++) {
			double left = n ? round_end - now_mono() : 0;

			if (n > 0 && (rc = master_recv(m, &peer, &tag, left > 0 ? left : 0)) != 1)
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

/* Rank 0's own worker lives for one sweep: each master_run starts its own. */
static void *local_worker_main(void *arg)
{
	int next;

	if (worker_session(arg, &next))
		__atomic_store_n(&local_failed, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The round in progress rolled back, then the cells in flight back to planned with no attempt charged and
 * the run recorded, in one transaction. */
static int hand_back(struct master *m)
{
	struct store *st = m->o->store;

	store_interruptible(st, 0);
	store_rollback(st);
	if (store_begin(st))
		return -1;
	/* Before dispatch nothing of this run is in flight (recovery saw to older runs): nothing to read. */
	if ((m->dispatched && store_unfly(st, m->o->spec->name, &m->stats->handed_back)) ||
	    store_run_end(st, m->o->run, m->stats->interrupted ? "interrupted" : "failed") || store_commit(st)) {
		store_rollback(st);
		return -1;
	}
	return 0;
}

/* How long the ranks have to answer a MSG_PING after mpirun's SIGTERM: mpirun sends SIGKILL 1 s after it. */
#define PING_WAIT 0.3

/* After a SIGTERM from mpirun: the first worker rank that does not answer a MSG_PING within PING_WAIT has
 * ended (killed, or exited), which is why mpirun ends the job; into stats->ended_*. */
static void find_ended(struct master *m)
{
	unsigned char *answered = xcalloc((size_t)m->nw, 1);
	int peer, tag, left = 0;
	double end;

	for (int r = 1; r < m->nw; r++) {
		answered[r] = !m->w[r].hello.host || comm_master_send(m->c, r, MSG_PING, "", 0);
		left += !answered[r];
	}
	end = now_mono() + PING_WAIT;
	while (left && now_mono() < end)
		if (comm_master_recv(m->c, &peer, &tag, &m->buf, end - now_mono()) == 1 && peer > 0 && peer < m->nw &&
		    !answered[peer])
			answered[peer] = 1, left--;
	for (int r = 1; r < m->nw && !m->stats->ended_rank; r++) {
		if (answered[r])
			continue;
		m->stats->ended_rank = r;
		snprintf(m->stats->ended_host, sizeof(m->stats->ended_host), "%s", m->w[r].hello.host);
	}
	free(answered);
}

/*
 * The run stops early, whatever stopped it (an interrupt, a lost worker, a fault of the store such as a
 * full disk, a worker's protocol error): one way for all. The attempt of a cell counts what the cell did;
 * a fault of the run is none of its doing.
 */
static void master_stopped(struct master *m)
{
	m->stats->interrupted = interrupt_signal();
	/* mpirun passes SIGINT, SIGTERM and SIGHUP on as SIGTERM, and sends it too when a rank ended. */
	m->stats->by_mpirun = m->stats->interrupted == SIGTERM && comm_is_launcher(m->c, interrupt_sender());
	if (m->stats->by_mpirun)
		find_ended(m);
	if (m->stats->ended_rank)
		m->stats->interrupted = 0;
	if (!m->stats->lost)
		note_silent(m);
	/* A full disk would fail the hand-back too: the room the writer kept for it goes back first (said
	 * when that fails; the hand-back may fit all the same). */
	store_free_reserve(m->o->store);
	m->stats->handback_failed = hand_back(m) != 0;
}

int master_run(struct comm *c, const struct master_opts *o, struct master_stats *stats)
{
	struct master m = { 0 };
	pthread_t local;
	int ret = -1, started = 0;

	memset(stats, 0, sizeof(*stats));
	interrupt_catch();
	m.c = c;
	m.o = o;
	m.kernel = o->spec->kernel ? kernel_find(o->spec->kernel) : NULL;
	m.stats = stats;
	m.nw = comm_size(c);
	m.w = xcalloc((size_t)m.nw, sizeof(*m.w));
	m.t0 = m.last_progress = now_mono();
	if (o->local_worker) {
		if (pthread_create(&local, NULL, local_worker_main, c)) {
			error("cannot start the local worker thread");
			goto out;
		}
		started = 1;
	}
	/* The start (hellos, replicas, counts) stops at an interrupt; dispatch looks at it between rounds. */
	if (greet(&m))
		goto stop;
	store_interruptible(o->store, 0);
	if (store_dispatching(o->store, 1) || dispatch(&m))
		goto stop;
	progress(&m, 1);
	/* On again for what the caller writes after the run (a failed run's connection is closed). */
	ret = store_dispatching(o->store, 0);
stop:
	if (interrupt_signal())
		ret = -1;
	if (ret)
		master_stopped(&m);
	for (int r = o->local_worker ? 0 : 1; r < m.nw; r++)
		comm_master_send(c, r, ret == 0 && o->keep_workers ? MSG_NEXT : MSG_STOP, "", 0);
	if (started)
		pthread_join(local, NULL);
	if (interrupt_signal())
		ret = -1;
out:
	interrupt_release();
	stats->seconds = now_mono() - m.t0;
	master_release(&m);
	return ret;
}

void master_release(struct master *m)
{
	for (int r = 0; r < m->nw; r++) {
		for (int j = 0; j < m->w[r].nfly; j++)
			task_release(fly_at(&m->w[r], j));
		hello_release(&m->w[r].hello);
	}
	for (size_t i = 0; i < m->nqueues; i++) {
		queue_list_release(&m->queues[i]->cells);
		queue_list_release(&m->queues[i]->gangs);
		queue_list_release(&m->queues[i]->later);
		free(m->queues[i]->replica);
		free(m->queues[i]);
	}
	gang_release(m);
	free(m->queues);
	free(m->w);
	sb_release(&m->buf);
	sb_release(&m->out);
}
