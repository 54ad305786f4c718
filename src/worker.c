/* worker.c: a worker rank: the spec and its hello, then the master's cells run in order and their results
 * sent back (batched when cells are short), until STOP; gang cells open their communicator first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/kernel.h"
#include "executor.h"
#include "hostinfo.h"
#include "msg.h"
#include "topo.h"
#include "worker.h"

/* Communicators cached by gang id: the same members reuse theirs from one cell to the next. */
struct gang_cache {
	int id;
	void *comm;
	struct gang_cache *next;
};

static void gang_ctx(const struct executor *w, const struct task *t, struct kctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->gpu = w->gpu;
	ctx->gang_rank = t->gang_rank;
	ctx->gang_size = t->gang_size;
	ctx->gang_ranks = t->gang_ranks;
}

/* The leader makes the blob and sends it (empty when it failed, so that nobody waits for it); the others
 * receive it through the master. */
static int exchange_blob(struct comm *c, struct executor *w, const struct task *t, const struct kernel_ops *k,
			 struct strbuf *blob, char *err, size_t errlen)
{
	struct kctx ctx;
	char buf[GANG_BLOB_MAX];
	size_t len = sizeof(buf);
	int tag, rc;

	if (!k->gang_blob)
		return 0;
	if (t->gang_rank == 0) {
		gang_ctx(w, t, &ctx);
		rc = k->gang_blob(&ctx, buf, &len);
		if (rc || len > sizeof(buf))
			len = 0;
		if (comm_worker_send(c, MSG_GANG_BLOB, buf, len))
			return -1;
		if (!len)
			return snprintf(err, errlen, "bootstrap: %.200s", ctx.err[0] ? ctx.err : "failed"), -1;
		sb_add(blob, buf, len);
		return 0;
	}
	rc = comm_worker_recv(c, &tag, blob, w->spec->timing.timeout + 60);
	if (rc != 1 || tag != MSG_GANG_BLOB)
		return snprintf(err, errlen, "no bootstrap from the gang's leader (rank %d)", t->gang_ranks[0]), -1;
	if (!blob->len)
		return snprintf(err, errlen, "the gang's leader (rank %d) could not bootstrap", t->gang_ranks[0]), -1;
	return 0;
}

static int gang_prepare(struct comm *c, struct executor *w, const struct task *t, struct gang_cache **cache,
		 char *err, size_t errlen)
{
	const struct kernel_ops *k = w->spec->kernel ? kernel_find(w->spec->kernel) : NULL;
	struct gang_cache *e;
	struct strbuf blob = STRBUF_INIT;
	struct kctx ctx;

	if (!k || !k->gang_open)
		return snprintf(err, errlen, "kernel '%s' cannot run as a gang", w->spec->kernel), -1;
	for (e = *cache; e && e->id != t->gang_id; e = e->next)
		;
	if (!e) {
		void *comm = NULL;

		if (exchange_blob(c, w, t, k, &blob, err, errlen)) {
			sb_release(&blob);
			return -1;
		}
		gang_ctx(w, t, &ctx);
		if (k->gang_open(&ctx, blob.buf, blob.len, &comm)) {
			sb_release(&blob);
			return snprintf(err, errlen, "opening the communicator: %.200s", ctx.err), -1;
		}
		sb_release(&blob);
		e = xcalloc(1, sizeof(*e));
		e->id = t->gang_id;
		e->comm = comm;
		e->next = *cache;
		*cache = e;
	}
	w->gang_rank = t->gang_rank;
	w->gang_size = t->gang_size;
	w->gang_ranks = t->gang_ranks;
	w->gang_comm = e->comm;
	return 0;
}

static void gang_done(struct executor *w, const struct task *t, int failed, struct gang_cache **cache)
{
	const struct kernel_ops *k = kernel_find(w->spec->kernel);

	w->gang_size = 1;
	w->gang_rank = 0;
	w->gang_ranks = NULL;
	w->gang_comm = NULL;
	if (!failed)
		return;
	for (struct gang_cache **p = cache; *p; p = &(*p)->next)
		if ((*p)->id == t->gang_id) {
			struct gang_cache *e = *p;

			*p = e->next;
			if (k && k->gang_close && e->comm)
				k->gang_close(e->comm, 1);
			free(e);
			return;
		}
}

static void gang_cache_free(const struct executor *w, struct gang_cache **cache)
{
	const struct kernel_ops *k = *cache ? kernel_find(w->spec->kernel) : NULL;

	while (*cache) {
		struct gang_cache *e = *cache;

		*cache = e->next;
		if (k && k->gang_close && e->comm)
			k->gang_close(e->comm, 0);
		free(e);
	}
}

int worker_results_due(int last_of_batch, double wall, double waited, int count)
{
	return last_of_batch || wall >= RESULTS_SECONDS || waited >= RESULTS_SECONDS || count >= RESULTS_MAX;
}

int worker_run(struct comm *c)
{
	int next = 1, rc = 0;

	while (next && !rc)
		rc = worker_session(c, &next);
	return rc;
}

int worker_session(struct comm *c, int *next)
{
	struct strbuf buf = STRBUF_INIT, out = STRBUF_INIT;
	struct spec spec;
	struct executor w = { 0 };
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
			executor_run(&w, &t, &r);
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
		if (worker_results_due(next_task == ntasks, wall, now_mono() - first_unsent,
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
	executor_release(&w);
	sb_release(&binding);
	if (have_spec)
		spec_release(&spec);
	json_obj_release(&facts);
	sb_release(&buf);
	sb_release(&out);
	return ret;
}
