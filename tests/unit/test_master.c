/* test_master.c: the worker's rule for sending its results (link_results_due), and the master's start-up
 * (master_assign) with many per-GPU replicas on a real database. */
#include <stdlib.h>
#include <unistd.h>

#include "plan.h"
#include "link.h"
#include "master_int.h"
#include "test.h"
#include "util.h"

static void test_results_due(void)
{
	/* A short cell in the middle of the master's message: held for the next ones. */
	CHECK(!link_results_due(0, 1e-5, 0, 1), "a short cell's result waits for the next cells");
	CHECK(!link_results_due(0, 1e-5, RESULTS_SECONDS / 2, 100), "and so do a hundred of them");
	/* The ways out of holding. */
	CHECK(link_results_due(1, 1e-5, 0, 1), "the last cell of the message: the worker would wait next");
	CHECK(link_results_due(0, 1e-5, RESULTS_SECONDS, 3), "the oldest has waited RESULTS_SECONDS");
	CHECK(link_results_due(0, 1e-5, 0, RESULTS_MAX), "RESULTS_MAX results make a message");
	/* The prefetched cell behind a long one: holding the long cell's result until that one ends would
	 * leave the master nothing to send in time (2 ms cells ran 25 % slower so). */
	CHECK(link_results_due(0, 0.002, 0, 1), "a 2 ms cell's result goes at once");
	CHECK(link_results_due(0, RESULTS_SECONDS, 0, 1), "so does one of exactly RESULTS_SECONDS");
	CHECK(!link_results_due(0, RESULTS_SECONDS * 0.99, 0, 1), "just under it waits");
}

struct planned {
	struct store *st;
	const char *sweep;
	uint64_t ord;
	const char *state;
};

static int add_cell(const struct plan_cell *c, void *data)
{
	struct planned *p = data;
	int added;

	return store_add_cell(p->st, p->sweep, c->key, c->params, c->pass, "", p->ord++, p->state, &added);
}

static int count_cb(const struct store_row *row, void *data)
{
	*(long long *)data = (long long)row->num[0];
	return 0;
}

static long long count(struct store *st, const char *sql)
{
	long long n = -1;

	store_query(st, sql, NULL, 0, 1, count_cb, &n);
	return n;
}

/* A master on a real database: the spec text planned (cells in state), a run begun, nw workers. */
struct fixture {
	char dir[32], *db;
	struct spec s;
	struct store *st;
	struct master_opts o;
	struct master_stats stats;
	struct master m;
};

static void fixture_start(struct fixture *f, const char *text, const char *state, int nw)
{
	struct planned p = { 0 };

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_master.XXXXXX");
	CHECK(mkdtemp(f->dir) != NULL, "temporary folder");
	f->db = xasprintf("%s/s.db", f->dir);
	CHECK_INT(spec_parse("s.yaml", text, strlen(text), &f->s), 0, "spec parses");
	CHECK_INT(store_open(f->db, STORE_RW, &f->st), 0, "store opens");
	p.st = f->st;
	p.sweep = f->s.name;
	p.state = state;
	CHECK_INT(store_begin(f->st) || store_put_sweep(f->st, &f->s) || plan_each(&f->s, add_cell, &p) ||
		  store_commit(f->st), 0, "cells planned");
	CHECK_INT(store_run_begin(f->st, "test", f->s.name, f->s.hash, &f->o.run), 0, "run begins");
	f->o.spec = &f->s;
	f->o.store = f->st;
	f->m.o = &f->o;
	f->m.stats = &f->stats;
	f->m.kernel = kernel_find(f->s.kernel);
	f->m.nw = nw;
	f->m.w = xcalloc((size_t)nw, sizeof(*f->m.w));
}

static void fixture_end(struct fixture *f)
{
	master_release(&f->m);
	store_close(f->st);
	spec_release(&f->s);
	store_remove_files(f->db);
	free(f->db);
	rmdir(f->dir);
}

/* NW workers on NW hosts of one GPU each, for a per: gpu sweep of 2 cells: the master makes a replica
 * and a queue per worker. The queues used to live in one array that grew while workers kept pointers
 * into it: 17 or more replicas crashed the master. */
static void test_assign_replicas(int nw)
{
	struct fixture f;
	struct master *m = &f.m;
	int wrong = 0;

	fixture_start(&f, "sweep: g\nkernel: sleep\nparams: {ms: [0, 1]}\nper: gpu\n", "template", nw);
	for (int r = 0; r < nw; r++) {
		struct hello *h = &m->w[r].hello;

		m->w[r].rank = h->rank = r;
		h->gpu = 0;
		h->host = xasprintf("h%04d", r);
		h->facts = xasprintf("{\"hostname\":\"h%04d\"}", r);
		h->gpu_uuid = xstrdup("");
		h->binding = xstrdup("");
	}
	CHECK(master_assign(m) == 0, "assign with %d workers", nw);
	CHECK_INT((long long)m->nqueues, nw, "one queue per replica");
	for (size_t i = 0; i < m->nqueues; i++)
		wrong += queue_fill(m, m->queues[i]) != 0;
	for (int r = 0; r < nw; r++) {
		char want[32];

		snprintf(want, sizeof(want), "h%04d/gpu0", r);
		wrong += !m->w[r].active || !m->w[r].q || strcmp(m->w[r].q->replica, want) ||
			 m->w[r].q->cells.n - m->w[r].q->cells.head != 2;
	}
	CHECK_INT(wrong, 0, "workers whose queue is not their own replica's two cells");
	CHECK_INT((long long)f.stats.pending, 2LL * nw, "pending cells");
	CHECK_INT(count(f.st, "SELECT count(*) FROM cells WHERE state = 'planned'"), 2LL * nw, "replicas planned");
	CHECK_INT(count(f.st, "SELECT count(DISTINCT replica) FROM cells WHERE state = 'planned'"), nw,
		  "distinct replicas");
	CHECK_INT(count(f.st, "SELECT count(*) FROM workers"), nw, "workers stored");
	fixture_end(&f);
}

/* The first cells of a queue, from its head: their i parameters joined by commas. */
static void queue_head(const struct tlist *l, size_t n, struct strbuf *out)
{
	sb_reset(out);
	for (size_t k = l->head; k < l->n && k < l->head + n; k++) {
		const char *i = strstr(l->v[k].params, "\"i\":");

		sb_addf(out, "%s%ld", k > l->head ? "," : "", i ? strtol(i + 4, NULL, 10) : -1L);
	}
}

/* Take n cells off the head of a queue, as workers would. */
static void queue_take(struct tlist *l, size_t n)
{
	for (size_t k = 0; k < n && l->head < l->n; k++)
		task_release(&l->v[l->head++]);
}

/* A per: any sweep of 5000 cells in shuffled order and one worker: the master loads a window of them
 * (1024, and two prefetches of the worker), in run order, the next when the queue runs low, and a failed
 * cell to try again only after the last of them, as when every cell was loaded at once. */
static void test_windows(void)
{
	struct fixture f;
	struct master *m = &f.m;
	struct store *st;
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;
	struct tqueue *q;
	struct result r;
	struct task t;
	size_t loaded;

	fixture_start(&f, "sweep: w\nkernel: debug.fail\nparams: {mode: ok, i: {from: 0, to: 4999, step: 1}}\n"
		      "order: shuffle\n", "planned", 1);
	st = f.st;
	m->w[0].hello.host = xstrdup("h");
	m->w[0].hello.facts = xstrdup("{\"hostname\":\"h\"}");
	m->w[0].hello.gpu = -1;
	CHECK_INT(master_assign(m), 0, "assign");
	CHECK_INT((long long)f.stats.pending, 5000, "pending, from the counts");
	q = m->w[0].q;
	CHECK_INT((long long)(q->cells.n - q->cells.head), 0, "nothing loaded by assign");
	CHECK_INT(queue_fill(m, q), 0, "fill");
	loaded = q->cells.n - q->cells.head;
	CHECK_INT((long long)loaded, 1024 + 2 * MAX_INFLIGHT, "one window loaded, not the sweep");
	CHECK(!q->drained, "more in the database");
	/* Run order: ord 0, 1, 2, ... of the plan (shuffled params). */
	queue_head(&q->cells, 5, &got);
	{
		struct strbuf sql = STRBUF_INIT;

		for (int k = 0; k < 5; k++) {
			long long v = -1;

			sb_reset(&sql);
			sb_addf(&sql, "SELECT json_extract(params, '$.i') FROM cells WHERE ord = %d", k);
			store_query(st, sql.buf, NULL, 0, 1, count_cb, &v);
			sb_addf(&want, "%s%lld", k ? "," : "", v);
		}
		sb_release(&sql);
	}
	CHECK_STR(got.buf, want.buf, "the first window starts at ord 0");
	queue_take(&q->cells, 1500);
	CHECK_INT(queue_fill(m, q), 0, "fill again");
	CHECK_INT((long long)(q->cells.n - q->cells.head), 1024 + 2 * MAX_INFLIGHT, "topped up to a window");
	CHECK_INT(count(st, "SELECT count(*) FROM cells WHERE ord < 3548 AND state = 'planned'"), 3548,
		  "cells loaded are not marked");
	/* A failed cell: stored, and kept for after the last pending cell. */
	t = q->cells.v[q->cells.head];
	result_init(&r);
	r.cell = t.cell;
	r.worker = 0;
	result_fail(&r, RESULT_ERROR, "failed on purpose");
	CHECK_INT(queue_store_result(m, &m->w[0], &t, &r), 0, "a failed result stored");
	result_release(&r);
	CHECK_INT((long long)(q->later.n - q->later.head), 1, "the retry waits in later");
	queue_take(&q->cells, q->cells.n - q->cells.head);
	CHECK_INT(queue_fill(m, q), 0, "fill the rest");
	CHECK_INT((long long)(q->cells.n - q->cells.head), 5000 - 3548 + 1, "the last cells, then the retry");
	CHECK(q->drained, "drained");
	queue_take(&q->cells, 5000 - 3548 - 1);
	CHECK_INT(queue_fill(m, q), 0, "fill when drained");
	CHECK_INT((long long)(q->cells.n - q->cells.head), 2, "the last cell and the retry");
	CHECK_INT(q->cells.v[q->cells.n - 1].cell, t.cell, "the retry comes last");
	CHECK(queue_has_work(q), "work left");
	queue_take(&q->cells, 2);
	CHECK(!queue_has_work(q), "no work left");
	sb_release(&got);
	sb_release(&want);
	fixture_end(&f);
}

/* Workers that can run none of the sweep's cells (their hellos say why) take none: with one able worker
 * it gets the cells; with none, a missing program fails the assignment (the run stops before any attempt)
 * and a missing GPU does not (the cells wait). */
static void test_assign_cannot(int kind, int able)
{
	struct fixture f;
	struct master *m = &f.m;
	int active = 0;

	fixture_start(&f, "sweep: c\nkernel: sleep\nparams: {ms: [0, 1]}\n", "planned", 3);
	for (int r = 0; r < 3; r++) {
		struct hello *h = &m->w[r].hello;

		m->w[r].rank = h->rank = r;
		h->gpu = -1;
		h->host = xasprintf("h%d", r);
		h->facts = xasprintf("{\"hostname\":\"h%d\"}", r);
		h->cannot = r < 3 - able ? kind : HELLO_CAN;
		h->why = xasprintf("why %d", r);
	}
	test_capture_start();
	CHECK_INT(master_assign(m), able || kind == HELLO_NO_GPU ? 0 : -1, "assign");
	free(test_capture_end());
	for (int r = 0; r < 3; r++)
		active += m->w[r].active;
	CHECK_INT(active, able, "active workers");
	CHECK_INT(f.stats.cannot, 3 - able, "workers that cannot");
	CHECK_INT(f.stats.cannot_kind, kind, "kind");
	CHECK_STR(f.stats.cannot_why, "why 0", "the first reason");
	CHECK_INT(f.stats.none_can, !able, "none can");
	CHECK_INT((long long)f.stats.pending, able ? 2 : 0, "pending cells");
	fixture_end(&f);
}

int main(void)
{
	test_results_due();
	test_windows();
	test_assign_replicas(3);
	test_assign_replicas(17);
	test_assign_replicas(1000);
	test_assign_cannot(HELLO_NO_PROGRAM, 1);
	test_assign_cannot(HELLO_NO_PROGRAM, 0);
	test_assign_cannot(HELLO_NO_GPU, 0);
	return test_done();
}
