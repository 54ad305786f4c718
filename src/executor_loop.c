/* executor_loop.c: the executor process: a worker's cells run here, one at a time, so that a cell that
 * crashes, hangs or breaks the GPU context takes this process with it and not the MPI rank. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../kernels/kernel.h"
#include "clocks.h"
#include "executor.h"
#include "hostinfo.h"
#include "identity.h"
#include "link.h"
#include "measure.h"
#include "msg.h"
#include "spawn.h"
#include "topo.h"

/* Communicators cached by gang id: the same members reuse theirs from one cell to the next. */
struct gang_cache {
	int id;
	void *comm;
	struct gang_cache *next;
};

struct loop {
	int fd;                /* the link to the worker */
	int data;              /* the data pipe's write end (non-blocking): one record per result */
	int unrung;            /* records written since the last LINK_DUE */
	double first_unrung;
	struct executor ex;
	struct spec spec;
	struct gang_cache *gangs;
	struct strbuf buf, out;
};

static void gang_ctx(const struct executor *ex, const struct task *t, struct kctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->gpu = ex->gpu;
	ctx->gang_rank = t->gang_rank;
	ctx->gang_size = t->gang_size;
	ctx->gang_ranks = t->gang_ranks;
}

/* The leader makes the blob and sends it to its worker (empty when it failed, so that nobody waits for
 * it); the others receive it from theirs, which had it from the master. */
static int exchange_blob(struct loop *l, const struct task *t, const struct kernel_ops *k, struct strbuf *blob,
			 char *err, size_t errlen)
{
	struct kctx ctx;
	char buf[GANG_BLOB_MAX];
	size_t len = sizeof(buf);
	int tag, rc;

	if (!k->gang_blob)
		return 0;
	if (t->gang_rank == 0) {
		gang_ctx(&l->ex, t, &ctx);
		rc = k->gang_blob(&ctx, buf, &len);
		if (rc || len > sizeof(buf))
			len = 0;
		if (link_send(l->fd, LINK_BLOB, buf, len))
			return snprintf(err, errlen, "the worker is gone"), -1;
		if (!len)
			return snprintf(err, errlen, "bootstrap: %.200s", ctx.err[0] ? ctx.err : "failed"), -1;
		sb_add(blob, buf, len);
		return 0;
	}
	rc = link_recv(l->fd, &tag, blob, l->spec.timing.timeout + 60);
	if (rc != 1 || tag != LINK_BLOB)
		return snprintf(err, errlen, "no bootstrap from the gang's leader (rank %d)", t->gang_ranks[0]), -1;
	if (!blob->len)
		return snprintf(err, errlen, "the gang's leader (rank %d) could not bootstrap", t->gang_ranks[0]), -1;
	return 0;
}

/* Before running gang task t: the communicator for its members (opened on first use). Sets the executor's
 * gang fields. -1 with the reason in err. */
static int gang_prepare(struct loop *l, const struct task *t, char *err, size_t errlen)
{
	const struct kernel_ops *k = l->spec.kernel ? kernel_find(l->spec.kernel) : NULL;
	struct gang_cache *e;
	struct strbuf blob = STRBUF_INIT;
	struct kctx ctx;

	if (!k || !k->gang_open)
		return snprintf(err, errlen, "kernel '%s' cannot run as a gang", l->spec.kernel), -1;
	for (e = l->gangs; e && e->id != t->gang_id; e = e->next)
		;
	if (!e) {
		void *comm = NULL;

		if (exchange_blob(l, t, k, &blob, err, errlen)) {
			sb_release(&blob);
			return -1;
		}
		gang_ctx(&l->ex, t, &ctx);
		if (k->gang_open(&ctx, blob.buf, blob.len, &comm)) {
			sb_release(&blob);
			return snprintf(err, errlen, "opening the communicator: %.200s", ctx.err), -1;
		}
		sb_release(&blob);
		e = xcalloc(1, sizeof(*e));
		e->id = t->gang_id;
		e->comm = comm;
		e->next = l->gangs;
		l->gangs = e;
	}
	l->ex.gang_rank = t->gang_rank;
	l->ex.gang_size = t->gang_size;
	l->ex.gang_ranks = t->gang_ranks;
	l->ex.gang_comm = e->comm;
	return 0;
}

/* After running it: a failed cell closes (aborts) the communicator, which may be broken. */
static void gang_done(struct loop *l, const struct task *t, int failed)
{
	const struct kernel_ops *k = kernel_find(l->spec.kernel);

	l->ex.gang_size = 1;
	l->ex.gang_rank = 0;
	l->ex.gang_ranks = NULL;
	l->ex.gang_comm = NULL;
	if (!failed)
		return;
	for (struct gang_cache **p = &l->gangs; *p; p = &(*p)->next)
		if ((*p)->id == t->gang_id) {
			struct gang_cache *e = *p;

			*p = e->next;
			if (k && k->gang_close && e->comm)
				k->gang_close(e->comm, 1);
			free(e);
			return;
		}
}

static void gang_cache_free(struct loop *l)
{
	const struct kernel_ops *k = l->gangs ? kernel_find(l->spec.kernel) : NULL;

	while (l->gangs) {
		struct gang_cache *e = l->gangs;

		l->gangs = e->next;
		if (k && k->gang_close && e->comm)
			k->gang_close(e->comm, 0);
		free(e);
	}
}

/*
 * Whether this worker can run the sweep's cells (enum hello_cannot, the reason into why): a GPU kernel
 * needs a GPU; a command runs in the spec's folder (or its workdir:), entered here, where its relative
 * paths mean what they mean to the spec's author whatever folder the run started from, and its programs
 * must be there. A worker that cannot takes no cell, so that a cell costs no attempt for it.
 */
static int able(struct loop *l, const struct kernel_ops *k, struct strbuf *why)
{
	char *dir;

	if (k && k->place == KERNEL_CUDA && l->ex.gpu < 0) {
		sb_addf(why, "kernel '%s' runs on a GPU and host '%s' has none", k->name, l->ex.host);
		return HELLO_NO_GPU;
	}
	if (!l->spec.command)
		return HELLO_CAN;
	if (!(dir = spec_folder(&l->spec)) || chdir(dir))
		sb_addf(why, "the folder its commands run in (the spec's, or its workdir:) is not on host '%s'", l->ex.host);
	else
		identity_missing(&l->spec, l->ex.host, why);
	free(dir);
	return why->len ? HELLO_NO_PROGRAM : HELLO_CAN;
}

/* INIT: the spec, the GPU this worker drives, the pinning, the facts; answered by the hello. */
static int init(struct loop *l, int *have_spec)
{
	struct exec_init x;
	struct json_obj facts = JSON_OBJ_INIT, cond = JSON_OBJ_INIT;
	struct strbuf binding = STRBUF_INIT, fj = STRBUF_INIT, cj = STRBUF_INIT, why = STRBUF_INIT;
	struct hello h = { 0 };
	const struct kernel_ops *k;
	char clock_gpu[64];
	int tag, ngpu, ret = -1;

	if (link_recv(l->fd, &tag, &l->buf, -1) != 1 || tag != LINK_INIT ||
	    msg_get_init(l->buf.buf, l->buf.len, &x))
		return error("executor: no INIT from the worker");
	if ((l->data = link_recv_fd(l->fd, 60)) < 0 || fcntl(l->data, F_SETFL, O_NONBLOCK)) {
		exec_init_release(&x);
		return error("executor: no data pipe from the worker");
	}
	if (spec_parse(x.spec_path, x.spec_text, strlen(x.spec_text), &l->spec))
		goto out;
	*have_spec = 1;
	l->ex.rank = x.rank;
	l->ex.spec = &l->spec;
	ngpu = hostinfo_gpu_count();
	l->ex.gpu = ngpu > 0 ? x.local_rank % ngpu : -1;
	gethostname(l->ex.host, sizeof(l->ex.host) - 1);
	/* Pinning pays off when each worker can have cores of its own; oversubscribed ranks (tests, small
	 * machines) are left to the OS scheduler. The worker rank itself mostly waits on this process. */
	if (!x.bind)
		sb_addf(&binding, "none: %d ranks on %ld cores", x.local_size, sysconf(_SC_NPROCESSORS_ONLN));
	else if (topo_bind(l->ex.gpu, x.local_rank, x.local_size, &binding))
		warning("rank %d runs unbound: %s", l->ex.rank, binding.buf ? binding.buf : "");
	hostinfo_collect(&facts);
	if (l->ex.gpu >= 0)
		hostinfo_gpu(&facts, l->ex.gpu);
	k = l->spec.kernel ? kernel_find(l->spec.kernel) : NULL;
	h.cannot = able(l, k, &why);
	h.why = why.buf ? why.buf : "";
	/* Once bound (the context's host memory near its cores), what the kernel costs a process once. */
	if (k && !h.cannot)
		measure_open(k, l->ex.gpu);
	h.rank = l->ex.rank;
	h.local_rank = x.local_rank;
	h.gpu = l->ex.gpu;
	h.host = l->ex.host;
	h.gpu_uuid = (char *)(json_obj_get(&facts, "gpu_uuid") ? json_obj_get(&facts, "gpu_uuid") : "");
	/* The GPU its worker locks the clocks of (clocks_worker_start finds the same one), to read them. */
	if (spec_clocks_asked(&l->spec) &&
	    clocks_device(h.gpu_uuid, x.local_rank, &l->ex.clock_dev, clock_gpu, sizeof(clock_gpu)))
		l->ex.clock_dev = NULL;
	h.binding = binding.buf ? binding.buf : "";
	hostinfo_conditions(&facts, &cond);
	json_obj_write(&fj, &facts);
	h.facts = fj.buf;
	json_obj_write(&cj, &cond);
	h.conditions = cj.buf;
	sb_reset(&l->out);
	msg_put_hello(&l->out, &h);
	ret = link_send(l->fd, LINK_HELLO, l->out.buf, l->out.len);
out:
	exec_init_release(&x);
	json_obj_release(&facts);
	json_obj_release(&cond);
	sb_release(&binding);
	sb_release(&fj);
	sb_release(&cj);
	sb_release(&why);
	return ret;
}

/* Ring the worker: the records written so far are for the master. */
static int ring(struct loop *l)
{
	l->unrung = 0;
	return link_send(l->fd, LINK_DUE, "", 0);
}

/* r's record into the data pipe at once (a crash in a later cell loses nothing), and a ring when the
 * master should have the results now (link_results_due: a long cell's at once, short ones together).
 * A full pipe rings first, so that the worker empties it: also when r's is the only record in it, since
 * one record can be larger than the pipe (a command's 100,000 items), and the worker reads it in parts. */
static int put_result(struct loop *l, const struct result *r, int last, int must_ring)
{
	size_t off = 0;

	sb_reset(&l->out);
	msg_record_put(&l->out, r);
	while (off < l->out.len) {
		ssize_t n = write(l->data, l->out.buf + off, l->out.len - off);

		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno == EAGAIN) {
			struct pollfd p = { l->data, POLLOUT, 0 };

			if (ring(l))
				return -1;
			poll(&p, 1, 1000);
		} else if (!(n < 0 && errno == EINTR)) {
			return -1;
		}
	}
	if (!l->unrung++)
		l->first_unrung = now_mono();
	if (must_ring || link_results_due(last, r->wall, now_mono() - l->first_unrung, l->unrung))
		return ring(l);
	return 0;
}

/*
 * One TASKS message: its cells in order, each result into the data pipe as it is made. After a failed
 * cell whose GPU context is left broken (a sticky CUDA error), the process ends with
 * EXECUTOR_EXIT_BROKEN once the worker was rung: its worker starts a fresh one for the cells after it.
 * Returns 0, 1 when the process must end so, or -1 when the link broke.
 */
static int run_tasks(struct loop *l, struct task *tasks, int n)
{
	const struct kernel_ops *k = l->spec.kernel ? kernel_find(l->spec.kernel) : NULL;
	int broken = 0, gpu_cells = k && k->place == KERNEL_CUDA;

	for (int i = 0; i < n; i++) {
		struct task *t = &tasks[i];
		struct result r;
		char err[256];
		int rc;

		result_init(&r);
		l->ex.gang_size = 1;
		if (t->gang_size > 1 && gang_prepare(l, t, err, sizeof(err))) {
			r.cell = t->cell;
			result_fail(&r, RESULT_ERROR, "gang of %d: %s", t->gang_size, err);
		} else {
			executor_run(&l->ex, t, &r);
		}
		if (t->gang_size > 1)
			gang_done(l, t, r.status != RESULT_OK);
		if (r.status != RESULT_OK && gpu_cells && hostinfo_gpu_broken(err, sizeof(err))) {
			char *e = xasprintf("%s; %s", r.error ? r.error : result_status_name[r.status], err);

			free(r.error);
			r.error = e;
			broken = 1;
		}
		r.cell = t->cell;
		r.worker = l->ex.rank;
		rc = put_result(l, &r, i == n - 1, broken);
		result_release(&r);
		if (rc)
			return -1;
		if (broken)
			return 1;
	}
	return 0;
}

/* The worker is gone (SIGHUP, the parent-death signal of a command spec's executor): the command in
 * progress ends with its tree (spawn_abort: SIGTERM, SIGKILL after the command's grace), then this process
 * finds the worker's pipe and link closed and leaves; with none in progress, nothing is left to end. */
static void on_orphaned(int sig)
{
	(void)sig;
	if (!spawn_abort())
		_exit(1);
}

/* Once the spec says what this process runs: a command's programs must not outlive the worker, so its
 * death no longer kills this process at once (SIGKILL would leave them to init) but ends them first.
 * Whatever they leave behind (a setsid() daemon, a grandchild whose parent died) stays ours to end. */
static int orphan_rules(const struct spec *s, pid_t parent)
{
	struct sigaction sa;

	if (!s->command)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_orphaned;   /* no SA_RESTART: the wait for the program wakes at once */
	sigaction(SIGHUP, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGHUP);
	if (getppid() != parent)   /* gone before the change */
		return -1;
	return spawn_adopt_orphans();
}

int executor_loop(int fd)
{
	struct loop l = { .fd = fd, .data = -1, .buf = STRBUF_INIT, .out = STRBUF_INIT };
	int have_spec = 0, ret = 1, tag;
	pid_t parent;

	/* This process lives for its worker: when the rank dies (killed by mpirun, say), so does it, ending
	 * a command's programs first (orphan_rules). A terminal's Ctrl-C, and mpirun's signals to a rank's
	 * group, go to the ranks; this process is in a group of its own and waits for QUIT. Slurm (and
	 * pkill) signal every process of a job at once: the interrupt is the master's to act on (the cell
	 * in flight handed back uncharged), so this process does not die of it first, failing its cell; its
	 * worker ends it with its programs (QUIT, or spawn_kill). Programs it starts get the defaults back
	 * (spawn.c). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	parent = getppid();
	if (parent == 1)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	if (init(&l, &have_spec) || orphan_rules(&l.spec, parent))
		goto out;
	for (;;) {
		struct task *tasks = NULL;
		int n = 0, rc;

		if (link_recv(fd, &tag, &l.buf, -1) != 1)
			goto out;
		if (tag == LINK_QUIT)
			break;
		if (tag != LINK_TASKS || msg_get_tasks(l.buf.buf, l.buf.len, &tasks, &n)) {
			error("executor of rank %d: unexpected message %d", l.ex.rank, tag);
			goto out;
		}
		rc = run_tasks(&l, tasks, n);
		for (int i = 0; i < n; i++)
			task_release(&tasks[i]);
		free(tasks);
		if (rc) {
			ret = rc > 0 ? EXECUTOR_EXIT_BROKEN : 1;
			goto out;
		}
	}
	ret = 0;
out:
	gang_cache_free(&l);
	executor_release(&l.ex);
	if (have_spec)
		spec_release(&l.spec);
	sb_release(&l.buf);
	sb_release(&l.out);
	if (l.data >= 0)
		close(l.data);
	return ret;
}
