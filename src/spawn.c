/* spawn.c: the one module that starts processes: posix_spawn, stdin fed, output read, deadlines, reaping,
 * and the ending of a child's whole tree (its descendants found under /proc, orphans adopted). */
#include "spawn.h"   /* ours (src/spawn.h); <spawn.h> below is the C library's */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The children this process started and has not reaped: a child of ours that is not one of them is an
 * orphan it adopted as a subreaper (spawn_adopt_orphans). Threads start and reap children at once. */
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *spawn_kids;
static size_t spawn_nkids, spawn_kids_alloc;
static int spawn_reaper;                      /* orphans come to us: ours to end and reap */
/* spawn_abort: set from a signal handler; spawn_runs in progress, read there. */
static volatile sig_atomic_t spawn_aborted;
static int spawn_running;

/* posix_spawnp, and the child ours at once: under the lock, so that another thread's look at our children
 * (spawn_owned) never finds it started and not yet ours. posix_spawnp's return. */
static int spawn_exec(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
		      const posix_spawnattr_t *at, char *const *argv, char *const *env)
{
	int rc;

	pthread_mutex_lock(&spawn_lock);
	rc = posix_spawnp(pid, file, fa, at, argv, env);
	if (!rc) {
		ALLOC_GROW(spawn_kids, spawn_nkids + 1, spawn_kids_alloc);
		spawn_kids[spawn_nkids++] = *pid;
	}
	pthread_mutex_unlock(&spawn_lock);
	return rc;
}

/* pid was reaped: no longer ours. */
static void spawn_disown(pid_t pid)
{
	pthread_mutex_lock(&spawn_lock);
	for (size_t i = 0; i < spawn_nkids; i++)
		if (spawn_kids[i] == pid) {
			spawn_kids[i] = spawn_kids[--spawn_nkids];
			break;
		}
	pthread_mutex_unlock(&spawn_lock);
}

static int spawn_owned(pid_t pid)
{
	int found = 0;

	pthread_mutex_lock(&spawn_lock);
	for (size_t i = 0; i < spawn_nkids && !found; i++)
		found = spawn_kids[i] == pid;
	pthread_mutex_unlock(&spawn_lock);
	return found;
}

/* Whether this process has a child spawn did not start (an orphan it adopted): each thread's children
 * (/proc/self/task/TID/children; an orphan goes to any thread of its reaper). A few reads where a look at
 * every process (spawn_procs) takes milliseconds: after each run of a command it is the usual answer. 1
 * when it cannot tell (a kernel without CONFIG_PROC_CHILDREN). */
static int spawn_adopted(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = !d;

	while (d && !found && (e = readdir(d))) {
		char path[300], buf[4096], *p, *end;
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			found = 1;
			break;
		}
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* A list longer than the buffer is many children: look at them all. */
		found = len < 0 || len == (ssize_t)sizeof(buf) - 1;
		buf[len > 0 ? len : 0] = '\0';
		for (p = buf; !found && *p; p = end) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			found = !spawn_owned((pid_t)pid);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* One process as /proc/PID/stat shows it; mark: it belongs to the tree being ended. */
struct spawn_proc {
	pid_t pid, ppid, pgid;
	int zombie, mark;
};

/* Every process of the system into *v (freed by the caller); their number. One that ends while we read is
 * left out. */
static size_t spawn_procs(struct spawn_proc **v)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0, alloc = 0;

	*v = NULL;
	while (d && (e = readdir(d))) {
		char path[300], buf[512], *p, state;
		int fd, ppid, pgid;
		ssize_t len;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses. */
		if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %c %d %d", &state, &ppid, &pgid) != 3)
			continue;
		ALLOC_GROW(*v, n + 1, alloc);
		(*v)[n++] = (struct spawn_proc){ atoi(e->d_name), ppid, pgid, state == 'Z' || state == 'X', 0 };
	}
	if (d)
		closedir(d);
	return n;
}

/* Mark root's descendants (not root) and, in a subreaper, each child of ours that we did not start (an
 * orphan adopted) with its descendants. */
static void spawn_mark(struct spawn_proc *v, size_t n, pid_t root)
{
	pid_t self = getpid();
	int more = 1;

	for (size_t i = 0; i < n; i++)
		v[i].mark = v[i].pid != self && v[i].pid != root &&
			    ((root > 0 && v[i].ppid == root) ||
			     (spawn_reaper && v[i].ppid == self && !spawn_owned(v[i].pid)));
	while (more) {
		more = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n && !v[i].mark; j++)
				if (v[j].mark && v[j].pid == v[i].ppid && v[i].pid != self && v[i].pid != root)
					more = v[i].mark = 1;
	}
}

/* The pids and process groups a tree's ending sent SIGTERM already: a program that traps it (a shell's
 * cleanup) gets it once, not at every look. */
struct spawn_seen {
	pid_t *v;
	size_t n, alloc;
};

/* Whether id is in seen; added when not. */
static int spawn_seen_add(struct spawn_seen *seen, pid_t id)
{
	for (size_t i = 0; i < seen->n; i++)
		if (seen->v[i] == id)
			return 1;
	ALLOC_GROW(seen->v, seen->n + 1, seen->alloc);
	seen->v[seen->n++] = id;
	return 0;
}

/*
 * One pass over root's tree (spawn_mark): sig (0: none) to each of its processes alive and to their
 * process groups but ours and root's (SIGTERM once each, as seen records), and the zombies among our
 * adopted orphans reaped. The number alive.
 */
static size_t spawn_sweep(pid_t root, int sig, struct spawn_seen *seen)
{
	struct spawn_proc *v;
	size_t n = spawn_procs(&v), alive = 0;
	pid_t self = getpid(), group = getpgrp();

	spawn_mark(v, n, root);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].mark)
			continue;
		if (v[i].zombie) {
			/* Ours to reap when adopted; a zombie child of another waits for its parent. */
			if (v[i].ppid == self)
				waitpid(v[i].pid, NULL, WNOHANG);
			continue;
		}
		alive++;
		if (!sig)
			continue;
		/* A group's id is its leader's pid: -pgid keeps the two apart in seen. */
		if (v[i].pgid > 1 && v[i].pgid != group && v[i].pgid != root &&
		    !(sig == SIGTERM && spawn_seen_add(seen, -v[i].pgid)))
			kill(-v[i].pgid, sig);
		if (!(sig == SIGTERM && spawn_seen_add(seen, v[i].pid)))
			kill(v[i].pid, sig);
	}
	free(v);
	return alive;
}

/*
 * End root's tree (spawn_mark; root 0: our adopted orphans alone): SIGTERM to each of its processes and
 * their groups, SIGKILL to what is left grace seconds later (0: at once), and the orphans reaped. A
 * process that appears meanwhile (a fork) gets SIGTERM at the next look, every 10 ms; one that stays alive
 * past SIGKILL (a disk wait) is given up on after 5 s.
 */
static void spawn_end_tree(pid_t root, double grace)
{
	double now = now_mono(), kill_at = now + (grace > 0 ? grace : 0), give_up = kill_at + 5;
	struct spawn_seen seen = { 0 };

	while (spawn_sweep(root, now < kill_at ? SIGTERM : SIGKILL, &seen) && now < give_up) {
		usleep(10000);
		now = now_mono();
	}
	spawn_sweep(root, 0, &seen);   /* the last zombies reaped */
	free(seen.v);
}

/* Signals a child starts with at their default disposition: the ones a parent of ours may ignore
 * (nohup, a shell's trap, a sender that ignores SIGPIPE), which exec would otherwise pass on. */
static const int spawn_default_sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1,
					  SIGUSR2 };

/* Default signals, nothing blocked (the calling thread may block some), and a new process group unless
 * same_group. */
static void spawn_attr(posix_spawnattr_t *at, int same_group)
{
	short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
	sigset_t def, none;

	posix_spawnattr_init(at);
	sigemptyset(&def);
	for (size_t i = 0; i < ARRAY_SIZE(spawn_default_sigs); i++)
		sigaddset(&def, spawn_default_sigs[i]);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(at, &def);
	posix_spawnattr_setsigmask(at, &none);
	if (!same_group) {
		posix_spawnattr_setpgroup(at, 0);
		flags |= POSIX_SPAWN_SETPGROUP;
	}
	posix_spawnattr_setflags(at, flags);
}

/* This process's peak RSS (VmHWM) down to its current size: "5" to clear_refs (Linux 4.0). A program it
 * starts counts this peak in its own: reset, it is this process's size now, not the most it ever had. */
static void spawn_reset_peak(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	/* On a kernel before 4.0 the write fails and the peak stays as it was. */
	(void)!write(fd, "5", 1);
	close(fd);
}

static void spawn_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* fd (0, 1 or 2) of the child: /dev/null, ours, or the pipe's end. */
static void spawn_stdio(posix_spawn_file_actions_t *fa, int fd, enum spawn_io how, int end)
{
	if (how == SPAWN_NULL)
		posix_spawn_file_actions_addopen(fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	else if (how != SPAWN_INHERIT)
		posix_spawn_file_actions_adddup2(fa, end, fd);   /* dup2 clears close-on-exec on fd */
}

/* The state of one spawn_run: fd[0] writes the child's stdin, fd[1] and fd[2] read its stdout and
 * stderr; -1 once closed. */
struct spawn_state {
	const struct spawn_opts *o;
	struct spawn_result *res;
	int fd[3];
	size_t in_off;
};

/* Keep the last cap bytes of sb. */
static void spawn_trim(struct strbuf *sb, size_t cap)
{
	if (sb->len <= cap)
		return;
	memmove(sb->buf, sb->buf + sb->len - cap, cap);
	sb->len = cap;
	sb->buf[cap] = '\0';
}

static void spawn_take(const struct spawn_output *so, struct strbuf *sb, const char *buf, size_t n)
{
	if (so->to == SPAWN_CALL) {
		so->fn(so->data, buf, n);
	} else if (!so->cap) {
		sb_add(sb, buf, n);
	} else if (!so->tail) {
		if (sb->len < so->cap)
			sb_add(sb, buf, n < so->cap - sb->len ? n : so->cap - sb->len);
	} else {
		/* Trimmed when twice the cap, so that a long output moves each byte about once. */
		sb_add(sb, buf, n);
		if (sb->len > 2 * so->cap)
			spawn_trim(sb, so->cap);
	}
}

/* n bytes read from the child's fd i (1: stdout, 2: stderr). */
static void spawn_got(struct spawn_state *s, int i, const char *buf, size_t n)
{
	if (i == 1)
		spawn_take(&s->o->out, &s->res->out, buf, n);
	else
		spawn_take(&s->o->err, &s->res->err, buf, n);
}

static void spawn_read(struct spawn_state *s, int i)
{
	char buf[65536];
	ssize_t n = read(s->fd[i], buf, sizeof(buf));

	if (n > 0)
		spawn_got(s, i, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		spawn_close(&s->fd[i]);
}

/* Before reading stops with a pipe still open (a child of the program holds it): what the program wrote
 * before it ended is in the pipe's buffer, so read that much, at most the pipe's capacity (a child
 * writing on must not keep us here). */
static void spawn_drain(struct spawn_state *s)
{
	for (int i = 1; i < 3; i++) {
		long left = s->fd[i] >= 0 ? fcntl(s->fd[i], F_GETPIPE_SZ) : 0;
		char buf[65536];
		ssize_t n;

		if (left <= 0)
			left = 65536;
		while (s->fd[i] >= 0 && left > 0) {
			n = read(s->fd[i], buf, sizeof(buf) < (size_t)left ? sizeof(buf) : (size_t)left);
			if (n > 0) {
				spawn_got(s, i, buf, (size_t)n);
				left -= n;
			} else if (n == 0 || errno != EINTR) {
				if (n == 0)
					spawn_close(&s->fd[i]);
				break;
			}
		}
	}
}

/* write() that turns the SIGPIPE of a reader gone into EPIPE, for this thread only: SIGPIPE is blocked
 * around it, and one it raised is taken off the pending set (one pending before is left alone). A
 * process-wide SIG_IGN would race with other threads. */
static ssize_t spawn_write(int fd, const char *buf, size_t n)
{
	struct timespec zero = { 0, 0 };
	sigset_t pipe_set, old, pending;
	int was_pending, e;
	ssize_t w;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	w = write(fd, buf, n);
	if (w < 0 && errno == EPIPE && !was_pending) {
		e = errno;
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
		errno = e;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return w;
}

/* Feed stdin; it is closed once all is written or the reader is gone (EPIPE). */
static void spawn_feed(struct spawn_state *s)
{
	const struct spawn_opts *o = s->o;
	ssize_t n = 0;

	if (s->in_off < o->in_len)
		n = spawn_write(s->fd[0], o->in_data + s->in_off, o->in_len - s->in_off);
	if (n > 0)
		s->in_off += (size_t)n;
	else if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0 || s->in_off == o->in_len)
		spawn_close(&s->fd[0]);
}

/*
 * Feed and read the child until it has exited and its pipes are closed, or o->linger after its exit;
 * the deadline's SIGTERM and SIGKILL on the way. Returns with the child exited, not yet reaped (its pid
 * stays the group's id meanwhile); *exit_at: when it exited. The exit is seen with waitid(WNOWAIT), and
 * a pidfd wakes poll() the moment it happens, even while a background child keeps the pipes open: the
 * exit time is the wall time. Without a pidfd (Linux < 5.3) poll wakes every 20 ms.
 */
/* The deadline's (or spawn_abort's) signal: to the child, or to its group and every descendant. */
static void spawn_signal(const struct spawn_opts *o, pid_t pid, int sig, struct spawn_seen *seen)
{
	kill(o->same_group ? pid : -pid, sig);
	if (!o->same_group)
		spawn_sweep(pid, sig, seen);
}

static void spawn_loop(struct spawn_state *s, pid_t pid, double *exit_at)
{
	const struct spawn_opts *o = s->o;
	double grace = o->term_grace > 0 ? o->term_grace : 0, linger = o->linger > 0 ? o->linger : 0;
	double deadline = o->deadline > 0 ? o->deadline : INFINITY, now, term_at = 0, wake;
	struct spawn_seen seen = { 0 };
	int exited = 0, killed = 0, idle_us = 50, pidfd, nfd, ms, i;
	struct pollfd pfd[4];
	int which[4];
	siginfo_t si;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);   /* close-on-exec by definition */
	for (;;) {
		now = now_mono();
		if (!exited) {
			si.si_pid = 0;
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ? errno == ECHILD :
			    si.si_pid == pid) {
				/* ECHILD: SIGCHLD is ignored and the kernel reaped it; its status is lost. */
				exited = 1;
				*exit_at = now;
			}
		}
		if (exited)
			spawn_close(&s->fd[0]);   /* nobody left to read stdin */
		if (exited && s->fd[1] < 0 && s->fd[2] < 0)
			break;
		if (exited && !term_at && now - *exit_at >= linger) {
			spawn_drain(s);
			break;
		}
		if (!exited && !term_at && (now >= deadline || spawn_aborted)) {
			s->res->timed_out = now >= deadline;
			term_at = now;
			killed = grace <= 0;
			spawn_signal(o, pid, killed ? SIGKILL : SIGTERM, &seen);
		}
		if (term_at && !killed && now - term_at >= grace) {
			spawn_signal(o, pid, SIGKILL, &seen);
			killed = 1;
		}
		if (killed && exited && now - term_at >= grace + linger) {
			spawn_drain(s);
			break;
		}

		/* Sleep until the next of: output, stdin writable, the exit, the next rule's time. */
		wake = INFINITY;
		if (!exited && !term_at)
			wake = spawn_aborted ? now : deadline;
		if (term_at && !killed)
			wake = fmin(wake, term_at + grace);
		if (exited && !term_at)
			wake = fmin(wake, *exit_at + linger);
		if (exited && killed)
			wake = fmin(wake, term_at + grace + linger);
		ms = wake - now > 1.0 ? 1000 : wake > now ? (int)ceil((wake - now) * 1e3) : 0;
		if (!exited && pidfd < 0 && ms > 20)
			ms = 20;
		nfd = 0;
		for (i = 0; i < 3; i++) {
			if (s->fd[i] >= 0) {
				which[nfd] = i;
				pfd[nfd++] = (struct pollfd){ .fd = s->fd[i], .events = i ? POLLIN : POLLOUT };
			}
		}
		if (pidfd >= 0 && !exited) {
			which[nfd] = 3;
			pfd[nfd++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		}
		if (nfd == 0) {
			/* Pipes closed, exit not seen yet: usually microseconds away, and the exit time is
			 * the wall time, so poll fast at first and back off for a program that runs on. */
			usleep(idle_us < ms * 1000 ? idle_us : ms * 1000);
			idle_us = idle_us < 20000 ? 2 * idle_us : 20000;
			continue;
		}
		if (poll(pfd, (nfds_t)nfd, ms) <= 0)
			continue;
		for (i = 0; i < nfd; i++) {
			if (which[i] == 3 || !(pfd[i].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR)))
				continue;
			if (which[i] == 0)
				spawn_feed(s);
			else
				spawn_read(s, which[i]);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	free(seen.v);
}

int spawn_run(const struct spawn_opts *o, struct spawn_result *res)
{
	struct spawn_state s = { o, res, { -1, -1, -1 }, 0 };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	double start, exit_at = 0;
	struct rusage ru;
	pid_t pid;

	if (!o->argv || !o->argv[0] || o->in == SPAWN_CALL)
		BUG("spawn_run: no program, or stdin to a callback");
	memset(res, 0, sizeof(*res));
	sb_init(&res->out);
	sb_init(&res->err);
	/* Close-on-exec: a program another thread starts meanwhile must not hold our pipes open. */
	if ((o->in == SPAWN_CAPTURE && pipe2(in, O_CLOEXEC)) ||
	    (o->out.to >= SPAWN_CAPTURE && pipe2(out, O_CLOEXEC)) ||
	    (o->err.to >= SPAWN_CAPTURE && pipe2(err, O_CLOEXEC))) {
		res->exec_errno = errno;
		for (int i = 0; i < 2; i++) {
			spawn_close(&in[i]);
			spawn_close(&out[i]);
			spawn_close(&err[i]);
		}
		return -1;
	}
	if (o->reset_peak)
		spawn_reset_peak();
	posix_spawn_file_actions_init(&fa);
	spawn_stdio(&fa, 0, o->in, in[0]);
	spawn_stdio(&fa, 1, o->out.to, out[1]);
	spawn_stdio(&fa, 2, o->err.to, err[1]);
	/* Whatever else this process has open (MPI's sockets, the database), close-on-exec or not, is not
	 * the program's business. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	spawn_attr(&at, o->same_group);
	start = now_mono();
	/* glibc's posix_spawn returns exec's errno itself (its child shares our memory until exec). */
	__atomic_add_fetch(&spawn_running, 1, __ATOMIC_SEQ_CST);
	/* After the count: spawn_abort either sees this run or is seen here. */
	rc = spawn_aborted ? ECANCELED :
	     spawn_exec(&pid, o->argv[0], &fa, &at, o->argv, o->env ? o->env : environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	spawn_close(&in[0]);
	spawn_close(&out[1]);
	spawn_close(&err[1]);
	s.fd[0] = in[1];
	s.fd[1] = out[0];
	s.fd[2] = err[0];
	if (rc) {
		res->exec_errno = rc;
		for (int i = 0; i < 3; i++)
			spawn_close(&s.fd[i]);
		__atomic_sub_fetch(&spawn_running, 1, __ATOMIC_SEQ_CST);
		return -1;
	}
	for (int i = 0; i < 3; i++)
		if (s.fd[i] >= 0)
			fcntl(s.fd[i], F_SETFL, fcntl(s.fd[i], F_GETFL) | O_NONBLOCK);
	if (s.fd[0] >= 0 && !o->in_len)
		spawn_close(&s.fd[0]);
	spawn_loop(&s, pid, &exit_at);
	__atomic_sub_fetch(&spawn_running, 1, __ATOMIC_SEQ_CST);
	if (!o->same_group && !o->keep_leftovers) {
		kill(-pid, SIGKILL);
		/* The program's children are ours now (its orphans), those that left its group included. */
		if (spawn_reaper && spawn_adopted())
			spawn_end_tree(pid, 0);
	}
	for (int i = 0; i < 3; i++)
		spawn_close(&s.fd[i]);
	while (wait4(pid, &res->status, 0, &ru) < 0) {
		if (errno != EINTR) {
			res->status = 0;   /* ECHILD: SIGCHLD ignored, reaped by the kernel */
			memset(&ru, 0, sizeof(ru));
			break;
		}
	}
	spawn_disown(pid);
	res->user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	res->sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	res->rss = ru.ru_maxrss * 1024.0;
	res->wall = exit_at - start;
	if (o->out.to == SPAWN_CAPTURE && o->out.tail && o->out.cap)
		spawn_trim(&res->out, o->out.cap);
	if (o->err.to == SPAWN_CAPTURE && o->err.tail && o->err.cap)
		spawn_trim(&res->err, o->err.cap);
	return 0;
}

void spawn_result_release(struct spawn_result *res)
{
	sb_release(&res->out);
	sb_release(&res->err);
}

int spawn_start(char *const *argv, int pass_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc;

	posix_spawn_file_actions_init(&fa);
	/* First, in case pass_fd is 0; dup2 onto itself (pass_fd 3) clears close-on-exec too. */
	if (pass_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, pass_fd, SPAWN_PASSED_FD);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, pass_fd >= 0 ? SPAWN_PASSED_FD + 1 : 3);
	spawn_attr(&at, 0);
	/* Before it starts: what it leaves when it dies is ours from its first moment. */
	spawn_adopt_orphans();
	rc = spawn_exec(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc)
		return error("cannot run '%s': %s", argv[0], strerror(rc));
	return 0;
}

int spawn_wait(pid_t pid, double deadline, int *status)
{
	int st = 0, pidfd = -2, us = 1000, ms, e;
	struct pollfd p;
	double left;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break;
		left = deadline - now_mono();
		if (left <= 0)
			break;
		/* A pidfd is readable once the child has exited; without one, sleep and look again. */
		if (pidfd == -2)
			pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		ms = left > 1.0 ? 1000 : (int)ceil(left * 1e3);
		if (pidfd >= 0) {
			p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
			poll(&p, 1, ms);
		} else {
			usleep(us < ms * 1000 ? us : ms * 1000);
			us = us < 20000 ? 2 * us : 20000;
		}
	}
	e = errno;
	if (pidfd >= 0)
		close(pidfd);
	if (r < 0)
		return error("cannot wait for process %d: %s", (int)pid, strerror(e));
	if (r == 0)
		return 1;
	if (status)
		*status = st;
	spawn_disown(pid);
	/* What it started and left behind (its orphans, ours now) goes with it. */
	if (spawn_reaper && spawn_adopted())
		spawn_end_tree(0, SPAWN_TREE_GRACE);
	return 0;
}

int spawn_kill(pid_t pid, double grace, int *status)
{
	int r;

	if (grace > 0) {
		kill(pid, SIGTERM);
		r = spawn_wait(pid, now_mono() + grace, status);
		if (r <= 0)
			return r;
	}
	/* What it started first, while it lives to be their ancestor (an executor, a subreaper, keeps even
	 * the orphans of its programs): once it is gone they are ours (spawn_wait ends them) or init's. */
	spawn_end_tree(pid, SPAWN_TREE_GRACE);
	/* Not reaped yet, so pid cannot have been reused: the signal reaches our child. */
	kill(pid, SIGKILL);
	return spawn_wait(pid, INFINITY, status);
}

int spawn_adopt_orphans(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return error("cannot adopt orphans (PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
	spawn_reaper = 1;
	return 0;
}

int spawn_abort(void)
{
	spawn_aborted = 1;
	return __atomic_load_n(&spawn_running, __ATOMIC_SEQ_CST) > 0;
}
