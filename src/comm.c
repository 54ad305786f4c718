/* comm.c: MPI (the only file that calls it) and the in-process queue of rank 0's own worker. */
#include "comm.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* One message waiting in the in-process queue. */
struct qmsg {
	struct qmsg *next;
	int tag;
	size_t len;
	char data[];
};

struct queue {
	struct qmsg *head, *tail;
};

/* A send of the master's still in progress: its buffer lives until MPI is done with it. */
struct pending {
	MPI_Request req;
	void *buf;
};

struct comm {
	int mpi, rank, size, local_rank, local_size;
	struct pending *pend;      /* the master's sends in progress */
	size_t npend, alloc_pend;
	pthread_mutex_t lock;
	pthread_cond_t to_master_cv, to_worker_cv;
	struct queue to_master, to_worker;
	int to_worker_efd;     /* rank 0: an eventfd written with each message to its own worker */
	int backoff_us;        /* the master's current wait between polls when idle */
};

static int launched_by_mpirun(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

static int mpi_fail(int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, msg, &len);
	return error("%s: %s", what, msg);
}

int comm_init(int *argc, char ***argv, struct comm **out)
{
	struct comm *c = xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->to_master_cv, NULL);
	pthread_cond_init(&c->to_worker_cv, NULL);
	/* Rank 0's own worker waits on its executor's socket and on this queue at once: poll() sees both. */
	c->to_worker_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->size = c->local_size = 1;
	if (launched_by_mpirun()) {
		int provided, rc;
		MPI_Comm node;

		rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
		if (rc != MPI_SUCCESS) {
			free(c);
			return error("MPI_Init_thread failed (code %d)", rc);
		}
		if (provided < MPI_THREAD_FUNNELED) {
			MPI_Finalize();
			free(c);
			return error("this MPI does not support MPI_THREAD_FUNNELED");
		}
		/* Errors come back as codes so that the master can say what to run to resume. */
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		c->mpi = 1;
		MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &c->size);
		MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
		MPI_Comm_rank(node, &c->local_rank);
		MPI_Comm_size(node, &c->local_size);
		MPI_Comm_free(&node);
	}
	*out = c;
	return 0;
}

static void queue_free(struct queue *q)
{
	while (q->head) {
		struct qmsg *m = q->head;

		q->head = m->next;
		free(m);
	}
}

/* Free the master's sends that have completed; with wait, wait for all of them. */
static void reap(struct comm *c, int wait)
{
	size_t k = 0;

	for (size_t i = 0; i < c->npend; i++) {
		int done = 0;

		if (wait)
			MPI_Wait(&c->pend[i].req, MPI_STATUS_IGNORE), done = 1;
		else
			MPI_Test(&c->pend[i].req, &done, MPI_STATUS_IGNORE);
		if (done)
			free(c->pend[i].buf);
		else
			c->pend[k++] = c->pend[i];
	}
	c->npend = k;
}

void comm_finish(struct comm *c)
{
	if (!c)
		return;
	if (c->mpi) {
		reap(c, 1);
		MPI_Finalize();
	}
	free(c->pend);
	queue_free(&c->to_master);
	queue_free(&c->to_worker);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->to_master_cv);
	pthread_cond_destroy(&c->to_worker_cv);
	if (c->to_worker_efd >= 0)
		close(c->to_worker_efd);
	free(c);
}

void comm_abort(struct comm *c, int code)
{
	if (c && c->mpi)
		MPI_Abort(MPI_COMM_WORLD, code);
	exit(code);
}

/* The parent and the name of process pid, from /proc: 0, or -1 when it is gone (a zombie too). */
static int proc_parent(pid_t pid, pid_t *parent, char *name, size_t n)
{
	char path[64], buf[512], *open, *close, state;
	FILE *f;
	size_t len;
	long pp;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* "pid (name) state ppid ...": the name may hold spaces and parentheses, so the last ')' ends it. */
	if (!(open = strchr(buf, '(')) || !(close = strrchr(buf, ')')) ||
	    sscanf(close + 1, " %c %ld", &state, &pp) != 2 || state == 'Z')
		return -1;
	snprintf(name, n, "%.*s", (int)(close - open - 1), open + 1);
	*parent = (pid_t)pp;
	return 0;
}

/* The nearest ancestor of this process that is mpirun (or, with daemons, an Open MPI daemon too), or 0. */
static pid_t find_mpirun(int daemons)
{
	static const char *const names[] = { "mpirun", "mpiexec", "orterun", "orted" };
	pid_t pid = getppid(), up;
	char name[64];

	for (int depth = 0; pid > 1 && depth < 16 && !proc_parent(pid, &up, name, sizeof(name)); depth++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(*names) - !daemons; i++)
			if (!strcmp(name, names[i]))
				return pid;
		pid = up;
	}
	return 0;
}

int comm_is_launcher(const struct comm *c, int pid)
{
	return c && c->mpi && pid > 1 && find_mpirun(1) == (pid_t)pid;
}

/* Whether a process other than me has parent as its parent. */
static int other_children(pid_t parent, pid_t me)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d))) {
		pid_t pid = (pid_t)atol(e->d_name), up;
		char name[64];

		found = pid > 0 && pid != me && !proc_parent(pid, &up, name, sizeof(name)) && up == parent;
	}
	if (d)
		closedir(d);
	return found;
}

static void pause_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };

	nanosleep(&ts, NULL);
}

void comm_end_cut(struct comm *c, int code, double wait)
{
	pid_t mpirun = c && c->mpi ? find_mpirun(0) : 0;
	long maxfd = sysconf(_SC_OPEN_MAX);
	double end;

	if (mpirun > 0) {
		pid_t helper = fork();

		if (helper == 0) {
			/* A session of its own: the signals mpirun sends this rank's process group miss it. It
			 * holds none of this rank's files, so that Open MPI sees the rank's output end with it. */
			setsid();
			if (close_range(0, ~0U, 0))
				for (long fd = 0; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++)
					close((int)fd);
			kill(mpirun, SIGTERM);
			for (int i = 0; i < 30 && !kill(mpirun, 0); i++)
				pause_for(0.1);
			if (!kill(mpirun, 0))
				kill(mpirun, SIGTERM);
			_exit(0);
		}
		if (helper > 0) {
			/* mpirun ends this rank (SIGTERM, then SIGKILL); it exits by itself if not. */
			end = now_mono() + 10;
			while (now_mono() < end)
				pause_for(0.1);
			_exit(code);
		}
	}
	end = now_mono() + wait;
	while (c && c->mpi && now_mono() < end)
		pause_for(0.1);
	comm_abort(c, code);
}

void comm_orphan_exit(struct comm *c, int code)
{
	pid_t parent = getppid(), up;
	char name[64];

	fflush(NULL);
	if (c && c->mpi && !proc_parent(parent, &up, name, sizeof(name)) && !strcmp(name, "orted")) {
		double end = now_mono() + 5;

		while (other_children(parent, getpid()) && now_mono() < end)
			pause_for(0.1);
		kill(parent, SIGTERM);
	}
	_exit(code);
}

int comm_rank(const struct comm *c) { return c->rank; }
int comm_size(const struct comm *c) { return c->size; }
int comm_is_mpi(const struct comm *c) { return c->mpi; }
int comm_local_rank(const struct comm *c) { return c->local_rank; }
int comm_local_size(const struct comm *c) { return c->local_size; }

static void queue_put(struct comm *c, struct queue *q, pthread_cond_t *cv, int tag, const void *buf,
		      size_t len)
{
	struct qmsg *m = xmalloc(sizeof(*m) + len);

	m->next = NULL;
	m->tag = tag;
	m->len = len;
	memcpy(m->data, buf, len);
	pthread_mutex_lock(&c->lock);
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	pthread_cond_signal(cv);
	pthread_mutex_unlock(&c->lock);
}

/* Take the head of q, waiting on cv up to wait seconds (0: do not wait). 1 with a message, else 0. */
static int queue_take(struct comm *c, struct queue *q, pthread_cond_t *cv, double wait, int *tag,
		      struct strbuf *buf)
{
	struct qmsg *m;

	pthread_mutex_lock(&c->lock);
	if (!q->head && wait > 0) {
		struct timespec ts;
		double t;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + wait;
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
		while (!q->head)
			if (pthread_cond_timedwait(cv, &c->lock, &ts))
				break;
	}
	m = q->head;
	if (m) {
		q->head = m->next;
		if (!q->head)
			q->tail = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (!m)
		return 0;
	*tag = m->tag;
	sb_reset(buf);
	sb_add(buf, m->data, m->len);
	free(m);
	return 1;
}

/* A message from MPI source src (MPI_ANY_SOURCE) if one is waiting: 1, else 0; -1 on error. */
static int mpi_poll(int src, int *peer, int *tag, struct strbuf *buf)
{
	MPI_Status st;
	int flag = 0, count = 0, rc;

	rc = MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Iprobe");
	if (!flag)
		return 0;
	MPI_Get_count(&st, MPI_BYTE, &count);
	sb_reset(buf);
	sb_add(buf, "", 0);
	if (count > 0) {
		ALLOC_GROW(buf->buf, (size_t)count + 1, buf->alloc);
	}
	rc = MPI_Recv(buf->buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (rc != MPI_SUCCESS)
		return mpi_fail(rc, "MPI_Recv");
	buf->len = (size_t)count;
	buf->buf[count] = '\0';
	*peer = st.MPI_SOURCE;
	*tag = st.MPI_TAG;
	return 1;
}

static int mpi_send(int peer, int tag, const void *buf, size_t len)
{
	int rc;

	if (len > (size_t)0x7fffffff)
		return error("message of %zu bytes is too large", len);
	rc = MPI_Send(buf, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
	return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Send");
}

/* Polls with a yield in between before the waiter starts sleeping: few, since ranks usually share cores
 * with workers that need them. */
#define SPINS 8

/* One step of the waiters' backoff: 0 after a yield (poll again at once), 1 once the spins are used up,
 * with c->backoff_us grown (20 us doubling to 1 ms) for the sleep that comes next. */
static int backoff_step(struct comm *c, int *spins)
{
	if (++*spins < SPINS) {
		sched_yield();
		return 0;
	}
	c->backoff_us = c->backoff_us ? c->backoff_us * 2 : 20;
	if (c->backoff_us > 1000)
		c->backoff_us = 1000;
	return 1;
}

/*
 * Wait for a message from MPI and/or the local queue. MPI has no way to wait on both, so poll: a few
 * spins, then sleeps that double from 20 us to 1 ms, reset whenever a message arrives. Busy ranks (a
 * master committing results) never reach the sleeps; idle ones cost little CPU.
 */
static int poll_both(struct comm *c, int mpi_src, struct queue *q, pthread_cond_t *cv, int *peer, int *tag,
		     struct strbuf *buf, double timeout)
{
	double deadline = now_mono() + timeout;
	int spins = 0, rc;

	for (;;) {
		if (c->mpi) {
			rc = mpi_poll(mpi_src, peer, tag, buf);
			if (rc) {
				c->backoff_us = 0;
				return rc;
			}
		}
		if (q) {
			double wait = c->mpi ? 0 : deadline - now_mono();

			if (queue_take(c, q, cv, wait > 0 ? wait : 0, tag, buf)) {
				*peer = 0;
				c->backoff_us = 0;
				return 1;
			}
		}
		if (now_mono() >= deadline)
			return 0;
		if (!backoff_step(c, &spins))
			continue;
		if (q && c->mpi) {
			/* Sleep on the queue's condition so that the local worker can wake us. */
			if (queue_take(c, q, cv, c->backoff_us * 1e-6, tag, buf)) {
				*peer = 0;
				c->backoff_us = 0;
				return 1;
			}
		} else {
			struct timespec ts = { 0, c->backoff_us * 1000L };

			nanosleep(&ts, NULL);
		}
	}
}

/*
 * The master never blocks in a send: a worker may itself be blocked sending results (large messages go
 * by rendezvous), and two blocking sends towards each other deadlock. So the master's sends are
 * MPI_Isend of a copy, freed once complete.
 */
int comm_master_send(struct comm *c, int peer, int tag, const void *buf, size_t len)
{
	struct pending *p;
	int rc;

	if (peer == 0) {
		uint64_t one = 1;

		queue_put(c, &c->to_worker, &c->to_worker_cv, tag, buf, len);
		if (c->to_worker_efd >= 0 && write(c->to_worker_efd, &one, sizeof(one)) < 0) {
			/* the counter is at its maximum: the waiter sees it readable anyway */
		}
		return 0;
	}
	if (len > (size_t)0x7fffffff)
		return error("message of %zu bytes is too large", len);
	reap(c, 0);
	ALLOC_GROW(c->pend, c->npend + 1, c->alloc_pend);
	p = &c->pend[c->npend];
	p->buf = xmalloc(len ? len : 1);
	memcpy(p->buf, buf, len);
	rc = MPI_Isend(p->buf, (int)len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &p->req);
	if (rc != MPI_SUCCESS) {
		free(p->buf);
		return mpi_fail(rc, "MPI_Isend");
	}
	c->npend++;
	return 0;
}

int comm_master_recv(struct comm *c, int *peer, int *tag, struct strbuf *buf, double timeout)
{
	if (c->npend)
		reap(c, 0);
	return poll_both(c, MPI_ANY_SOURCE, &c->to_master, &c->to_master_cv, peer, tag, buf, timeout);
}

int comm_worker_send(struct comm *c, int tag, const void *buf, size_t len)
{
	if (c->rank == 0) {
		queue_put(c, &c->to_master, &c->to_master_cv, tag, buf, len);
		return 0;
	}
	return mpi_send(0, tag, buf, len);
}

int comm_worker_recv(struct comm *c, int *tag, struct strbuf *buf, double timeout)
{
	int peer;

	if (c->rank == 0)
		return queue_take(c, &c->to_worker, &c->to_worker_cv, timeout, tag, buf);
	return poll_both(c, 0, NULL, NULL, &peer, tag, buf, timeout);
}

/* poll() for fd readable up to ms milliseconds (0: just look). */
static int fd_ready(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, ms) > 0;
}

int comm_worker_wait(struct comm *c, int fd, int *tag, struct strbuf *buf, double timeout)
{
	double deadline = now_mono() + timeout;
	int spins = 0, peer, rc;
	struct timespec ts = { 0, 0 };
	struct pollfd mine = { fd, POLLIN, 0 };

	if (c->rank == 0) {
		/* The queue, then a poll of both the eventfd its sender writes and fd: exact, no busy wait. */
		for (;;) {
			struct pollfd p[2] = { { c->to_worker_efd, POLLIN, 0 }, { fd, POLLIN, 0 } };
			double left = deadline - now_mono();
			uint64_t n;

			if (queue_take(c, &c->to_worker, &c->to_worker_cv, 0, tag, buf))
				return 1;
			if (fd_ready(fd, 0))
				return 2;
			if (left <= 0)
				return 0;
			if (poll(p, 2, (int)fmin(left * 1000 + 1, 1000)) < 0 && errno != EINTR)
				return error("poll: %s", strerror(errno));
			if (p[0].revents && read(c->to_worker_efd, &n, sizeof(n)) < 0) {
				/* nothing to read: another wake-up took it */
			}
		}
	}
	/* MPI has no way to wait on a socket: a few spins, then waits on fd that double from 20 us to 1 ms
	 * (the same backoff as poll_both), so that a message from MPI waits at most that long. */
	for (;;) {
		rc = mpi_poll(0, &peer, tag, buf);
		if (rc) {
			c->backoff_us = 0;
			return rc;
		}
		if (fd_ready(fd, 0)) {
			c->backoff_us = 0;
			return 2;
		}
		if (now_mono() >= deadline)
			return 0;
		if (!backoff_step(c, &spins))
			continue;
		/* The sleep itself waits on fd: the executor's ring wakes it at once, only MPI waits. */
		ts.tv_nsec = c->backoff_us * 1000L;
		if (ppoll(&mine, 1, &ts, NULL) > 0) {
			c->backoff_us = 0;
			return 2;
		}
	}
}
