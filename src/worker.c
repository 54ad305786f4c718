/* worker.c: a worker rank: the spec and its hello, then the master's cells, run in order by an executor
 * process this rank supervises: a cell that crashes, hangs or breaks the GPU costs its attempt, and the
 * rank starts a fresh executor and goes on. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command.h"
#include "clocks.h"
#include "executor.h"
#include "link.h"
#include "msg.h"
#include "spawn.h"
#include "worker.h"

/* How long an executor may take from its start to its hello (CUDA and NCCL initialise in it). */
#define WORKER_HELLO_SECONDS 120
/* Past a cell's own limits (its timeout, the executor's watchdog margin, a command's SIGTERM grace), how
 * long the worker still waits before it takes the executor for hung and kills it. */
#define WORKER_KILL_MARGIN 10.0

struct sup {
	struct comm *c;
	int rank;
	struct strbuf spec_text;   /* path, NUL, text: as the master sent it */
	struct spec spec;
	pid_t pid;                 /* the executor, or 0 */
	int fd;                    /* the link to it */
	int data;                  /* the read end of its data pipe (non-blocking) */
	struct strbuf pipe;        /* bytes read from it, not yet a whole record */
	/* Cells sent to the executor and not answered, in order: fly[fhead] runs, since head_start; the
	 * nfly cells from there are live (a pop moves fhead, an append compacts when it must grow). */
	struct task *fly;
	int fhead, nfly, alloc;
	double head_start;
	struct strbuf buf, out;
	struct strbuf results;     /* results for the master not yet sent (msg_results_*), since first_unsent */
	double first_unsent;
	double sent_at;            /* when the master was last sent anything: the next beat is due from it */
	struct msg_silence silence;   /* the master's, since the hello */
	int restarts;
	struct clocks_held clocks; /* the GPU clocks this worker locked (clocks.h), put back at its end */
};

/* Everything for the master goes through here: the time of the last message decides the next beat. */
static int to_master(struct sup *s, int tag, const void *buf, size_t len)
{
	s->sent_at = now_mono();
	return comm_worker_send(s->c, tag, buf, len);
}

/* A sign of life, when the worker has said nothing for MSG_BEAT_SECONDS (msg.h): the master takes a
 * worker it does not hear from for long for lost. */
static int beat(struct sup *s)
{
	return now_mono() - s->sent_at >= MSG_BEAT_SECONDS ? to_master(s, MSG_BEAT, "", 0) : 0;
}

/* Whether the master has been silent for long while this worker listened (msg_silence_over): the job is
 * gone. Never on rank 0, whose own worker shares the master's process. */
static int orphaned(struct sup *s)
{
	return msg_silence_over(&s->silence, now_mono()) && s->rank != 0;
}

/* The longest cell t may take before its executor is taken for hung. */
static double cell_limit(const struct spec *s, const struct task *t)
{
	double limit;

	if (s->command) {
		limit = command_limit(s);
		if (!isfinite(limit))
			limit = 1e9;
	} else {
		limit = s->timing.timeout + EXECUTOR_CANCEL_MARGIN;
		if (t->gang_size > 1)
			limit += s->timing.timeout + 60;   /* waiting for the leader's bootstrap */
	}
	return limit + WORKER_KILL_MARGIN;
}

/* How an executor that is gone ended, for the cell it was running. */
static void exit_cause(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		const char *name = sigabbrev_np(sig);

		snprintf(buf, n, "signal %d%s%s%s", sig, name ? " (SIG" : "", name ? name : "", name ? ")" : "");
	} else if (WIFEXITED(status)) {
		snprintf(buf, n, "exit %d", WEXITSTATUS(status));
	} else {
		snprintf(buf, n, "ended (status 0x%x)", status);
	}
}

/* End the executor (QUIT, or SIGKILL when it does not leave at once) and reap it; its status, if asked. */
static void executor_stop(struct sup *s, int kill_now, int *status)
{
	int st = 0;

	if (!s->pid)
		return;
	if (!kill_now && !link_send(s->fd, LINK_QUIT, "", 0) && spawn_wait(s->pid, now_mono() + 5, &st) == 0)
		;
	else
		spawn_kill(s->pid, 0, &st);
	close(s->fd);
	close(s->data);
	s->pid = 0;
	s->fd = s->data = -1;
	sb_reset(&s->pipe);
	if (status)
		*status = st;
}

/* The executor has ended (its link closed): reap it, but keep its data pipe to read what it wrote. */
static void executor_stop_keep_pipe(struct sup *s, int *status)
{
	int st = 0;

	if (spawn_wait(s->pid, now_mono() + 5, &st) != 0)
		spawn_kill(s->pid, 0, &st);
	close(s->fd);
	s->pid = 0;
	s->fd = -1;
	*status = st;
}

/* The executor's hello into hello, awaited WORKER_HELLO_SECONDS at most with the beats going on: 1, or 0
 * when none came (it did not start, or sent something else). */
static int executor_hello(struct sup *s, struct strbuf *hello)
{
	double end = now_mono() + WORKER_HELLO_SECONDS;
	int tag = 0, rc;

	do {
		if (beat(s))
			return 0;
		rc = link_recv(s->fd, &tag, hello, fmax(0, fmin(MSG_BEAT_SECONDS, end - now_mono())));
	} while (rc == 0 && now_mono() < end);
	return rc == 1 && tag == LINK_HELLO;
}

/* Start an executor and hand it the spec; its hello into hello (the caller sends it to the master or, on
 * a restart, drops it). -1 after error(). */
static int executor_start(struct sup *s, struct strbuf *hello)
{
	char *argv[] = { "/proc/self/exe", "__executor", NULL, NULL };
	char fdnum[16];
	struct exec_init x = { 0 };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t plen = strlen(s->spec_text.buf);
	int sv[2], pp[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return error("rank %d: socketpair: %m", s->rank);
	if (pipe2(pp, O_CLOEXEC)) {
		close(sv[0]);
		close(sv[1]);
		return error("rank %d: pipe: %m", s->rank);
	}
	/* Room for many short cells' records between two rings (the default is 64 KiB). */
	fcntl(pp[1], F_SETPIPE_SZ, 1 << 20);
	fcntl(pp[0], F_SETFL, O_NONBLOCK);
	snprintf(fdnum, sizeof(fdnum), "%d", SPAWN_PASSED_FD);
	argv[2] = fdnum;
	rc = spawn_start(argv, sv[1], &s->pid);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		close(pp[0]);
		close(pp[1]);
		s->pid = 0;
		return -1;
	}
	s->fd = sv[0];
	s->data = pp[0];
	x.rank = s->rank;
	x.local_rank = comm_local_rank(s->c);
	x.local_size = comm_local_size(s->c);
	/* Pinning pays off when each rank can have cores of its own; oversubscribed ranks (tests, small
	 * machines) are left to the OS scheduler. */
	x.bind = comm_local_size(s->c) <= cores;
	x.spec_path = s->spec_text.buf;
	x.spec_text = s->spec_text.buf + plen + 1;
	sb_reset(&s->out);
	msg_put_init(&s->out, &x);
	rc = link_send(s->fd, LINK_INIT, s->out.buf, s->out.len) || link_send_fd(s->fd, pp[1]);
	close(pp[1]);
	if (rc || !executor_hello(s, hello)) {
		int st = 0;
		char why[64];

		executor_stop(s, 1, &st);
		exit_cause(st, why, sizeof(why));
		return error("rank %d: its executor did not start (%s)", s->rank, why);
	}
	return 0;
}

/* Send the cells from fly[from] on to the executor (after a restart: all of them). */
static int send_fly(struct sup *s, int from)
{
	const struct task **v = xcalloc((size_t)(s->nfly - from), sizeof(*v));
	int rc;

	for (int i = from; i < s->nfly; i++)
		v[i - from] = &s->fly[s->fhead + i];
	sb_reset(&s->out);
	msg_put_tasks(&s->out, (const struct task *const *)v, s->nfly - from);
	free(v);
	rc = link_send(s->fd, LINK_TASKS, s->out.buf, s->out.len);
	return rc;
}

static void fly_pop(struct sup *s)
{
	task_release(&s->fly[s->fhead]);
	s->fhead = --s->nfly ? s->fhead + 1 : 0;
	s->head_start = now_mono();
}

/* Send the results held for the master: when the executor has no cell left, when the oldest has waited
 * long enough, or when the last was a long cell (link_results_due). */
static int flush_results(struct sup *s, int force, double wall)
{
	int n = msg_results_count(&s->results);

	if (!n || !(force || link_results_due(!s->nfly, wall, now_mono() - s->first_unsent, n)))
		return 0;
	if (to_master(s, MSG_RESULT, s->results.buf, s->results.len))
		return -1;
	msg_results_init(&s->results);
	return 0;
}

/* A result for the oldest cell in flight (taken over): held for the master, the cell popped. */
static int hold_result(struct sup *s, struct result *r)
{
	int failed_gang;
	double wall = r->wall;

	if (!s->nfly || r->cell != s->fly[s->fhead].cell) {
		error("rank %d: its executor returned cell %lld, not the one it runs", s->rank, (long long)r->cell);
		result_release(r);
		return -1;
	}
	failed_gang = s->fly[s->fhead].gang_size > 1 && r->status != RESULT_OK;
	if (!msg_results_count(&s->results))
		s->first_unsent = now_mono();
	msg_results_add(&s->results, r);
	result_release(r);
	fly_pop(s);
	return flush_results(s, failed_gang, wall) ? -1 : failed_gang;
}

/* Take every whole record the data pipe holds now (to its end, when the executor is gone), each for
 * the oldest cell in flight. 0, 1 when a gang cell failed (its members start afresh), -1. */
static int drain(struct sup *s)
{
	char chunk[65536];
	size_t off = 0;
	int ret = 0;

	for (;;) {
		ssize_t n = read(s->data, chunk, sizeof(chunk));

		if (n > 0) {
			sb_add(&s->pipe, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;   /* EAGAIN: nothing more now; 0: the executor is gone */
	}
	/* The records from off on; what is left is moved to the front once (a move per record would copy
	 * a full pipe's bytes for each of its short cells). */
	for (size_t rec; (rec = msg_record_len(s->pipe.buf + off, s->pipe.len - off)); off += rec) {
		const char *p = s->pipe.buf + off;
		int64_t cell;
		enum result_status st;
		double started, wall;

		if (msg_record_peek(p, rec, &cell, &st, &started, &wall) || !s->nfly ||
		    cell != s->fly[s->fhead].cell)
			return error("rank %d: its executor returned a result that is not the running cell's", s->rank);
		if (!msg_results_count(&s->results))
			s->first_unsent = now_mono();
		msg_results_add_record(&s->results, p, rec);
		ret |= s->fly[s->fhead].gang_size > 1 && st != RESULT_OK;
		fly_pop(s);
		/* The next cell started when this one ended, maybe well before the worker read it. */
		if (started > 0 && wall >= 0)
			s->head_start = fmin(s->head_start, now_mono() - (now_wall() - (started + wall)));
	}
	memmove(s->pipe.buf, s->pipe.buf + off, s->pipe.len - off);
	s->pipe.len -= off;
	return ret;
}

/* A fresh executor for the cells in flight: a broken one was stopped. -1 after error(). */
static int executor_restart(struct sup *s)
{
	struct strbuf hello = STRBUF_INIT;
	int rc;

	s->restarts++;
	rc = executor_start(s, &hello);
	sb_release(&hello);
	if (rc)
		return -1;
	s->head_start = now_mono();
	return s->nfly ? send_fly(s, 0) : 0;
}

/* The executor is gone or hung (and stopped): the cell it ran fails with why (its attempt was counted)
 * and a fresh executor takes the cells behind it. Gang members lose their communicators with it. */
static int executor_lost(struct sup *s, enum result_status st, const char *why)
{
	struct result r;

	if (s->nfly) {
		result_init(&r);
		r.cell = s->fly[s->fhead].cell;
		r.worker = s->rank;
		r.started = now_wall() - (now_mono() - s->head_start);
		r.wall = now_mono() - s->head_start;
		result_fail(&r, st, "%s", why);
		if (hold_result(s, &r) < 0 || flush_results(s, 1, 0))
			return -1;
	}
	return executor_restart(s);
}

/* The executor is gone (its link broke): what it finished is in the pipe, so only the cell it was running
 * is lost; an executor that ended on a broken GPU context wrote that cell's result too. */
static int executor_died(struct sup *s)
{
	int st = 0, gang;
	char why[96];

	executor_stop_keep_pipe(s, &st);
	gang = drain(s);
	close(s->data);
	s->data = -1;
	sb_reset(&s->pipe);
	if (gang < 0 || flush_results(s, 1, 0))
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == EXECUTOR_EXIT_BROKEN)
		return executor_restart(s);
	exit_cause(st, why, sizeof(why));
	return executor_lost(s, RESULT_ERROR, why);
}

/* What the executor said, or that it is gone. */
static int from_executor(struct sup *s)
{
	int tag, rc = link_recv(s->fd, &tag, &s->buf, 0);

	if (rc < 0)
		return executor_died(s);
	if (rc == 0)
		return 0;
	if (tag == LINK_BLOB)
		return to_master(s, MSG_GANG_BLOB, s->buf.buf, s->buf.len);
	if (tag != LINK_DUE)
		return error("rank %d: unexpected message %d from its executor", s->rank, tag);
	rc = drain(s);
	if (rc < 0 || flush_results(s, 1, 0))
		return -1;
	if (rc > 0) {
		executor_stop(s, 1, NULL);
		return executor_restart(s);
	}
	return 0;
}

/* A message from the master while cells run: more cells, a bootstrap blob, or the end. *end set on STOP
 * (0) or NEXT (1). */
static int from_master(struct sup *s, int tag, int *end)
{
	struct task *tasks = NULL;
	int n = 0, was_idle = !s->nfly;

	if (tag == MSG_STOP || tag == MSG_NEXT) {
		*end = tag == MSG_NEXT;
		return flush_results(s, 1, 0);
	}
	if (tag == MSG_GANG_BLOB)
		return link_send(s->fd, LINK_BLOB, s->buf.buf, s->buf.len) ? executor_died(s) : 0;
	if (tag == MSG_BEAT)
		return 0;
	if (tag == MSG_PING)
		return to_master(s, MSG_BEAT, "", 0);
	if (tag != MSG_TASK || msg_get_tasks(s->buf.buf, s->buf.len, &tasks, &n))
		return error("rank %d: malformed task (message %d)", s->rank, tag);
	if (s->fhead + s->nfly + n > (int)s->alloc && s->fhead) {
		memmove(s->fly, s->fly + s->fhead, (size_t)s->nfly * sizeof(*s->fly));
		s->fhead = 0;
	}
	ALLOC_GROW(s->fly, (size_t)(s->fhead + s->nfly + n), s->alloc);
	memcpy(s->fly + s->fhead + s->nfly, tasks, (size_t)n * sizeof(*tasks));
	s->nfly += n;
	free(tasks);
	if (was_idle)
		s->head_start = now_mono();
	/* The master's bytes as they came: the executor decodes the same encoding. A dead executor's end is
	 * handled here (it sent nothing more); the new one gets every cell in flight. */
	if (link_send(s->fd, LINK_TASKS, s->buf.buf, s->buf.len))
		return executor_died(s);
	return 0;
}

int worker_session(struct comm *c, int *next)
{
	struct sup s = { .c = c, .rank = comm_rank(c), .fd = -1, .data = -1 };
	struct strbuf hello = STRBUF_INIT;
	int tag, rc, ret = -1, have_spec = 0, end = -1;
	size_t plen;

	*next = 0;
	do
		rc = comm_worker_recv(c, &tag, &s.buf, 3600);
	while (rc == 0 || (rc == 1 && tag == MSG_BEAT));
	if (rc < 0)
		goto out;
	if (tag == MSG_STOP) {
		ret = 0;
		goto out;
	}
	if (tag != MSG_SPEC || !(plen = strnlen(s.buf.buf, s.buf.len)) || plen == s.buf.len) {
		error("rank %d: expected the spec, got message %d", s.rank, tag);
		goto out;
	}
	sb_add(&s.spec_text, s.buf.buf, s.buf.len);
	if (spec_parse(s.buf.buf, s.buf.buf + plen + 1, s.buf.len - plen - 1, &s.spec))
		goto out;
	have_spec = 1;
	s.sent_at = now_mono();
	if (executor_start(&s, &hello) || clocks_worker_start(&s.spec, &hello, &s.clocks) ||
	    to_master(&s, MSG_HELLO, hello.buf, hello.len))
		goto out;
	msg_results_init(&s.results);
	msg_silence_start(&s.silence, now_mono());
	while (end < 0) {
		double wait;

		if (beat(&s))
			goto out;
		if (orphaned(&s)) {
			char host[256] = "?";

			gethostname(host, sizeof(host) - 1);
			error("rank %d on '%s': the master (rank 0) sent nothing for %.0f s: the job is gone (its host "
			      "down or cut off); this rank ends its executor and exits", s.rank, host,
			      now_mono() - s.silence.heard);
			ret = 1;
			goto out;
		}
		wait = s.sent_at + MSG_BEAT_SECONDS - now_mono();
		if (s.nfly) {
			double limit = s.head_start + cell_limit(&s.spec, &s.fly[s.fhead]) - now_mono();

			if (limit <= 0) {
				int64_t head = s.fly[s.fhead].cell;
				char why[96];

				/* Short cells finished before it may wait in the pipe, not yet rung for. */
				if (drain(&s) < 0 || flush_results(&s, 1, 0))
					goto out;
				if (!s.nfly || s.fly[s.fhead].cell != head)
					continue;
				snprintf(why, sizeof(why), "hung: no result within %.0f s; its executor was killed",
					 cell_limit(&s.spec, &s.fly[s.fhead]));
				executor_stop(&s, 1, NULL);
				if (executor_lost(&s, RESULT_TIMEOUT, why))
					goto out;
				continue;
			}
			wait = fmin(wait, limit);
		}
		rc = comm_worker_wait(c, s.fd, &tag, &s.buf, wait);
		if (rc == 1)
			msg_silence_heard(&s.silence, now_mono());
		if (rc < 0 || (rc == 1 && from_master(&s, tag, &end)) || (rc == 2 && from_executor(&s)))
			goto out;
	}
	*next = end;
	ret = 0;
out:
	executor_stop(&s, s.nfly > 0 || ret > 0, NULL);
	clocks_restore(&s.clocks);   /* every way out of a session passes here: its end, an error, a lost master */
	for (int i = 0; i < s.nfly; i++)
		task_release(&s.fly[s.fhead + i]);
	free(s.fly);
	if (have_spec)
		spec_release(&s.spec);
	sb_release(&s.spec_text);
	sb_release(&s.buf);
	sb_release(&s.out);
	sb_release(&s.results);
	sb_release(&s.pipe);
	sb_release(&hello);
	return ret;
}

int worker_run(struct comm *c)
{
	int next = 1, rc = 0;

	while (next && !rc)
		rc = worker_session(c, &next);
	return rc;
}
