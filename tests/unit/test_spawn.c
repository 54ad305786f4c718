/* test_spawn.c: spawn_run (exit statuses, signals, deadlines with SIGTERM then SIGKILL to the group,
 * children left holding the pipes, stdin fed, caps, callbacks, env, exec failures, the child's fds,
 * signals and process group, reaping), spawn_start/spawn_wait/spawn_kill, and the ending of whole trees
 * (tests/progs/tree.sh: children, grandchildren, orphans, a setsid() one, all ignoring SIGTERM). The test
 * binary is also the child for a few checks: run as "/proc/self/exe --MODE" it reports what it sees. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "test.h"

/* ---- the child's side ---- */

/* The open fds of this process, "0 1 2", without the one reading /proc/self/fd. */
static void child_fds(struct strbuf *sb)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fds[256], n = 0;

	while (d && (e = readdir(d)) && n < 256)
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			fds[n++] = atoi(e->d_name);
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++)   /* readdir's order is the kernel's; sort */
		for (int j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];

				fds[i] = fds[j];
				fds[j] = t;
			}
	for (int i = 0; i < n; i++)
		sb_addf(sb, "%s%d", i ? " " : "", fds[i]);
}

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			_exit(90);
		s += w;
		n -= (size_t)w;
	}
}

/* Read fd until EOF (or a line, when line is set). */
static void get(int fd, struct strbuf *sb, int line)
{
	char c;

	while (read(fd, &c, 1) == 1) {
		sb_addc(sb, c);
		if (line && c == '\n')
			break;
	}
}

static const int watched_sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2,
				    SIGALRM };

static int child_main(const char *mode)
{
	struct strbuf sb = STRBUF_INIT;
	char link[256];
	ssize_t n;

	alarm(60);   /* a child the test forgot ends anyway (SIGALRM) */
	if (!strcmp(mode, "--fds")) {          /* its fds on stdout */
		child_fds(&sb);
		put(1, sb.buf);
	} else if (!strcmp(mode, "--fds3")) {  /* its fds on fd 3 */
		child_fds(&sb);
		put(3, sb.buf);
	} else if (!strcmp(mode, "--stdin")) {  /* what its fd 0 is */
		n = readlink("/proc/self/fd/0", link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		put(1, link);
	} else if (!strcmp(mode, "--pgrp")) {
		sb_addf(&sb, "%d %d", (int)getpid(), (int)getpgrp());
		put(1, sb.buf);
	} else if (!strcmp(mode, "--sigs")) {  /* the watched signals it ignores, and blocks */
		sigset_t mask;

		sigprocmask(SIG_SETMASK, NULL, &mask);
		sb_adds(&sb, "ignored:");
		for (size_t i = 0; i < ARRAY_SIZE(watched_sigs); i++) {
			struct sigaction sa;

			sigaction(watched_sigs[i], NULL, &sa);
			if (sa.sa_handler == SIG_IGN)
				sb_addf(&sb, " %d", watched_sigs[i]);
		}
		sb_adds(&sb, " blocked:");
		for (size_t i = 0; i < ARRAY_SIZE(watched_sigs); i++)
			if (sigismember(&mask, watched_sigs[i]))
				sb_addf(&sb, " %d", watched_sigs[i]);
		put(1, sb.buf);
	} else if (!strcmp(mode, "--echo3")) {  /* answer one line on fd 3, then exit 5 at its EOF */
		get(3, &sb, 1);
		put(3, "got: ");
		put(3, sb.buf);
		sb_reset(&sb);
		get(3, &sb, 0);
		sb_release(&sb);
		return 5;
	} else if (!strcmp(mode, "--stubborn3")) {   /* ignore SIGTERM, say so on fd 3, wait for EOF */
		signal(SIGTERM, SIG_IGN);
		put(3, "ready\n");
		get(3, &sb, 0);
	} else if (!strcmp(mode, "--tree")) {   /* as an executor: tree.sh run until it ends */
		char *tree[] = { "sh", "tests/progs/tree.sh", NULL };
		struct spawn_opts o = { .argv = tree };
		struct spawn_result res;

		signal(SIGTERM, SIG_IGN);
		alarm(0);
		if (spawn_adopt_orphans() || spawn_run(&o, &res))
			return 98;
		spawn_result_release(&res);
	} else {
		return 99;
	}
	sb_release(&sb);
	return 0;
}

/* ---- helpers ---- */

/* pid's exit status once it is gone (we are its subreaper), or -1 if it is still alive after 5 s. */
static int reap(pid_t pid)
{
	int st;

	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	return -1;
}

/* No child of ours is left, zombie or running. */
static int no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

static int count_fds(void)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 1;

	child_fds(&sb);
	for (size_t i = 0; i < sb.len; i++)
		n += sb.buf[i] == ' ';
	sb_release(&sb);
	return n;
}

static const char *text(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

/* Run argv with stdout and stderr captured, all of them, nothing else set. */
static int run_simple(char **argv, struct spawn_result *res)
{
	struct spawn_opts o = {
		.argv = argv,
		.out = { .to = SPAWN_CAPTURE },
		.err = { .to = SPAWN_CAPTURE },
	};

	return spawn_run(&o, res);
}

/* ---- spawn_run ---- */

static void test_status(void)
{
	char *ok[] = { "sh", "-c", "echo out; echo err >&2", NULL };
	char *seven[] = { "sh", "-c", "exit 7", NULL };
	char *max[] = { "sh", "-c", "exit 255", NULL };
	char *usr1[] = { "sh", "-c", "kill -USR1 $$", NULL };
	char *term[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *sleep1[] = { "sleep", "1", NULL };
	struct spawn_result res;

	CHECK_INT(run_simple(ok, &res), 0, "sh runs");
	CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "exit 0: status 0x%x", res.status);
	CHECK_STR(text(&res.out), "out\n", "stdout captured");
	CHECK_STR(text(&res.err), "err\n", "stderr captured apart");
	CHECK_INT(res.timed_out, 0, "no deadline, no timeout");
	CHECK_INT(res.exec_errno, 0, "exec_errno 0 when it ran");
	spawn_result_release(&res);
	CHECK(no_children(), "the child was reaped: no zombie");

	CHECK_INT(run_simple(seven, &res), 0, "exit 7 runs");
	CHECK(WIFEXITED(res.status), "exit 7 exited");
	CHECK_INT(WEXITSTATUS(res.status), 7, "its exit status");
	spawn_result_release(&res);
	CHECK_INT(run_simple(max, &res), 0, "exit 255 runs");
	CHECK_INT(WEXITSTATUS(res.status), 255, "exit status 255");
	spawn_result_release(&res);

	/* SIGUSR1 and SIGTERM are at their default (deadly) disposition in the child. */
	CHECK_INT(run_simple(usr1, &res), 0, "a program that signals itself");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGUSR1, "killed by SIGUSR1: status 0x%x",
	      res.status);
	spawn_result_release(&res);
	CHECK_INT(run_simple(term, &res), 0, "kill -TERM $$");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGTERM, "killed by SIGTERM: status 0x%x",
	      res.status);
	spawn_result_release(&res);

	CHECK_INT(run_simple(sleep1, &res), 0, "sleep 1");
	/* The lower bound is the rule; the upper one is far above what load adds. */
	CHECK(res.wall >= 1.0 && res.wall < 30, "wall time of sleep 1: %.3f s", res.wall);
	spawn_result_release(&res);
	CHECK(no_children(), "every child reaped");
}

static void test_exec_failure(void)
{
	char *missing[] = { "/nonexistent/spawn-prog", "x", NULL };
	char *nopath[] = { "sweep-no-such-program-on-path", NULL };
	char *notexec[] = { "/etc/passwd", NULL };
	char *dir[] = { "/tmp", NULL };
	struct spawn_result res;
	int before = count_fds();

	CHECK_INT(run_simple(missing, &res), -1, "a missing program cannot start");
	CHECK_INT(res.exec_errno, ENOENT, "exec_errno ENOENT for a missing path");
	CHECK(res.out.len == 0 && res.err.len == 0 && res.status == 0 && res.wall == 0,
	      "nothing else set (out %zu, err %zu, status %d, wall %g)", res.out.len, res.err.len, res.status,
	      res.wall);
	spawn_result_release(&res);
	CHECK_INT(run_simple(nopath, &res), -1, "a name not on PATH cannot start");
	CHECK_INT(res.exec_errno, ENOENT, "ENOENT for a name not on PATH");
	spawn_result_release(&res);
	CHECK_INT(run_simple(notexec, &res), -1, "a file without x cannot start");
	CHECK_INT(res.exec_errno, EACCES, "EACCES for a file that is not executable");
	spawn_result_release(&res);
	CHECK_INT(run_simple(dir, &res), -1, "a folder cannot start");
	CHECK_INT(res.exec_errno, EACCES, "EACCES for a folder");
	spawn_result_release(&res);
	CHECK(no_children(), "a failed exec leaves no zombie");
	CHECK_INT(count_fds(), before, "and no fd of ours open");
}

static void test_timeout(void)
{
	/* The shell and its background child both ignore SIGTERM: only the SIGKILL later ends them. */
	char *stubborn[] = { "sh", "-c", "trap '' TERM; sleep 100 & echo $!; echo started >&2; wait", NULL };
	char *polite[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	char *sleeper[] = { "sleep", "100", NULL };
	struct spawn_opts o = { .out = { .to = SPAWN_CAPTURE }, .err = { .to = SPAWN_CAPTURE }, .linger = 1 };
	struct spawn_result res;
	double start, took;
	long g;
	int st;

	/* Orphaned grandchildren come to this process, so the test can see how they died. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	o.argv = stubborn;
	o.term_grace = 1.5;
	start = now_mono();
	o.deadline = start + 0.5;
	CHECK_INT(spawn_run(&o, &res), 0, "a group that ignores SIGTERM runs");
	took = now_mono() - start;
	CHECK_INT(res.timed_out, 1, "timed out");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL, "ended by SIGKILL: status 0x%x",
	      res.status);
	/* SIGTERM at 0.5 s, SIGKILL 1.5 s later: never before 2 s; far below the 100 s it would live. */
	CHECK(took >= 2.0 && took < 30, "SIGKILL after the grace: %.2f s", took);
	CHECK(res.wall >= 2.0 && res.wall < 30, "wall: up to its death: %.2f s", res.wall);
	CHECK_STR(text(&res.err), "started\n", "stderr of the killed program kept");
	g = atol(text(&res.out));
	CHECK(g > 0, "the grandchild's pid was printed: %ld", g);
	st = g > 0 ? reap((pid_t)g) : -1;
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "the grandchild that ignored SIGTERM died of SIGKILL (status 0x%x)", st);
	spawn_result_release(&res);

	o.argv = polite;
	o.term_grace = 60;
	start = now_mono();
	o.deadline = start + 0.5;
	CHECK_INT(spawn_run(&o, &res), 0, "a group that obeys SIGTERM runs");
	took = now_mono() - start;
	CHECK_INT(res.timed_out, 1, "timed out");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGTERM, "ended by SIGTERM: status 0x%x",
	      res.status);
	CHECK(took >= 0.5 && took < 30, "ends at SIGTERM, not at the 60 s grace's SIGKILL: %.2f s", took);
	g = atol(text(&res.out));
	st = g > 0 ? reap((pid_t)g) : -1;
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
	      "the whole group got SIGTERM: grandchild status 0x%x", st);
	spawn_result_release(&res);

	/* Grace 0: SIGKILL at once, even for a program that would obey SIGTERM. */
	o.argv = sleeper;
	o.term_grace = 0;
	start = now_mono();
	o.deadline = start + 0.3;
	CHECK_INT(spawn_run(&o, &res), 0, "sleep 100 runs");
	took = now_mono() - start;
	CHECK_INT(res.timed_out, 1, "timed out");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL, "grace 0: SIGKILL, status 0x%x",
	      res.status);
	CHECK(took >= 0.3 && took < 30, "at the deadline: %.2f s", took);
	spawn_result_release(&res);

	/* In our own process group the deadline's signal goes to the child alone (not to us). */
	o.same_group = 1;
	start = now_mono();
	o.deadline = start + 0.3;
	CHECK_INT(spawn_run(&o, &res), 0, "sleep 100 in our group runs");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL, "killed alone, status 0x%x",
	      res.status);
	CHECK(now_mono() - start < 30, "at the deadline: %.2f s", now_mono() - start);
	spawn_result_release(&res);

	prctl(PR_SET_CHILD_SUBREAPER, 0);
	CHECK(no_children(), "every child and grandchild reaped");
}

static void test_leftovers(void)
{
	char *leave[] = { "sh", "-c", "sleep 100 & echo $!", NULL };
	char *leave_closed[] = { "sh", "-c", "sleep 100 >/dev/null 2>&1 & echo $!", NULL };
	struct spawn_opts o = { .out = { .to = SPAWN_CAPTURE }, .err = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;
	double start, took;
	long g;
	int st;

	prctl(PR_SET_CHILD_SUBREAPER, 1);

	/* A grandchild holds stdout: read until linger after the exit, then the group is killed. */
	o.argv = leave;
	o.linger = 5;
	start = now_mono();
	CHECK_INT(spawn_run(&o, &res), 0, "a program that leaves a child holding its stdout");
	took = now_mono() - start;
	CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "it exited 0: status 0x%x", res.status);
	CHECK_INT(res.timed_out, 0, "no timeout");
	CHECK(took >= 5 && took < 30, "returns after the 5 s linger, not the child's 100 s: %.2f s", took);
	/* sh ends in milliseconds; the 5 s of linger are not its time. */
	CHECK(res.wall < 2.5, "wall is the program's own time: %.3f s", res.wall);
	g = atol(text(&res.out));
	CHECK(g > 0, "the grandchild's pid was printed: %ld", g);
	st = g > 0 ? reap((pid_t)g) : -1;
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "the left-over child was killed (status 0x%x)", st);
	spawn_result_release(&res);

	/* A grandchild that does not hold the pipes: no linger to wait, still killed. */
	o.argv = leave_closed;
	o.linger = 20;
	start = now_mono();
	CHECK_INT(spawn_run(&o, &res), 0, "a program that leaves a child with its own output");
	took = now_mono() - start;
	CHECK(took < 10, "returns once the pipes close, not after the 20 s linger: %.2f s", took);
	g = atol(text(&res.out));
	st = g > 0 ? reap((pid_t)g) : -1;
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "the left-over child was killed anyway (status 0x%x)", st);
	spawn_result_release(&res);

	/* keep_leftovers: the grandchild lives on. */
	o.argv = leave;
	o.linger = 0.3;
	o.keep_leftovers = 1;
	CHECK_INT(spawn_run(&o, &res), 0, "keep_leftovers");
	g = atol(text(&res.out));
	CHECK(g > 0 && waitpid((pid_t)g, &st, WNOHANG) == 0, "the left-over child still runs: %ld", g);
	if (g > 0) {
		kill((pid_t)g, SIGKILL);
		st = reap((pid_t)g);
		CHECK(st != -1 && WTERMSIG(st) == SIGKILL, "and is killed by the test (status 0x%x)", st);
	}
	spawn_result_release(&res);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	CHECK(no_children(), "every child and grandchild reaped");
}

static void test_stdin(void)
{
	char *cat[] = { "cat", NULL };
	char *closes[] = { "sh", "-c", "exec 0<&-; sleep 0.5; exit 3", NULL };
	struct spawn_opts o = { .argv = cat, .out = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;
	size_t n = 3 << 20;
	char *data = malloc(n);
	uint64_t x = 88172645463325252ULL;
	sigset_t mask, pending;
	double start;

	/* Bytes of every value (NULs too), more than a pipe holds: cat's output must be read while its
	 * input is written. */
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (char)x;
	}
	o.in = SPAWN_CAPTURE;
	o.in_data = data;
	o.in_len = n;
	o.deadline = now_mono() + 120;   /* cat waiting for an EOF that never comes is a failure */
	CHECK_INT(spawn_run(&o, &res), 0, "cat runs");
	CHECK_INT(res.timed_out, 0, "cat ended at the end of its stdin, no timeout");
	CHECK_INT((long long)res.out.len, (long long)n, "3 MiB through cat");
	CHECK(res.out.len == n && !memcmp(res.out.buf, data, n), "the same bytes back");
	CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "cat saw EOF and exited 0: 0x%x",
	      res.status);
	spawn_result_release(&res);

	o.in_len = 0;
	CHECK_INT(spawn_run(&o, &res), 0, "cat with empty stdin data");
	CHECK_INT((long long)res.out.len, 0, "nothing back");
	spawn_result_release(&res);

	o.in = SPAWN_NULL;
	start = now_mono();
	CHECK_INT(spawn_run(&o, &res), 0, "cat with stdin /dev/null");
	CHECK(res.out.len == 0 && now_mono() - start < 20, "EOF at once: %zu bytes, %.2f s", res.out.len,
	      now_mono() - start);
	spawn_result_release(&res);

	/* A reader that closes its stdin: EPIPE for us, never a SIGPIPE (it would kill this test), and
	 * none left pending or blocked. */
	signal(SIGPIPE, SIG_DFL);
	o.argv = closes;
	o.in = SPAWN_CAPTURE;
	o.in_len = n;
	CHECK_INT(spawn_run(&o, &res), 0, "a program that closes its stdin runs");
	CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 3, "its exit 3: 0x%x", res.status);
	sigpending(&pending);
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	CHECK(!sigismember(&pending, SIGPIPE) && !sigismember(&mask, SIGPIPE),
	      "no SIGPIPE pending, SIGPIPE not blocked after");
	spawn_result_release(&res);
	free(data);
}

struct chunks {
	struct strbuf all;
	int calls;
	const char *marker;   /* created when "first\n" has been seen */
};

static void on_chunk(void *data, const char *buf, size_t n)
{
	struct chunks *c = data;

	sb_add(&c->all, buf, n);
	c->calls++;
	if (c->marker && strstr(c->all.buf, "first\n"))
		close(open(c->marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

static void test_output(void)
{
	char *seq[] = { "seq", "1", "200000", NULL };
	char *seq_err[] = { "sh", "-c", "seq 1 200000 >&2", NULL };
	char *both[] = { "sh", "-c", "echo out; echo err >&2", NULL };
	struct spawn_opts o = { .argv = seq };
	struct spawn_result res;
	struct strbuf want = STRBUF_INIT;
	struct chunks c = { STRBUF_INIT, 0, NULL };
	char marker[] = "/tmp/test_spawn.XXXXXX", *wait_argv[4] = { "sh", "-c", NULL, NULL };
	int fd;

	for (int i = 1; i <= 200000; i++)
		sb_addf(&want, "%d\n", i);

	o.out = (struct spawn_output){ .to = SPAWN_CAPTURE, .cap = 1000 };
	CHECK_INT(spawn_run(&o, &res), 0, "seq runs");
	CHECK_INT((long long)res.out.len, 1000, "stdout capped at 1000 bytes");
	CHECK(res.out.len == 1000 && !memcmp(res.out.buf, want.buf, 1000), "the head kept");
	CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "seq ran to its end (the rest read)");
	spawn_result_release(&res);

	o.out = (struct spawn_output){ .to = SPAWN_CAPTURE };
	CHECK_INT(spawn_run(&o, &res), 0, "seq runs, uncapped");
	CHECK_INT((long long)res.out.len, (long long)want.len, "cap 0: all of it");
	CHECK(res.out.len == want.len && !memcmp(res.out.buf, want.buf, want.len), "every byte");
	spawn_result_release(&res);

	o.argv = seq_err;
	o.out = (struct spawn_output){ .to = SPAWN_CAPTURE };
	o.err = (struct spawn_output){ .to = SPAWN_CAPTURE, .cap = 1000, .tail = 1 };
	CHECK_INT(spawn_run(&o, &res), 0, "seq to stderr runs");
	CHECK_INT((long long)res.err.len, 1000, "stderr capped at 1000 bytes");
	CHECK(res.err.len == 1000 && !memcmp(res.err.buf, want.buf + want.len - 1000, 1000),
	      "the tail kept: '%.20s...'", text(&res.err));
	CHECK_INT((long long)res.out.len, 0, "stdout apart and empty");
	spawn_result_release(&res);

	o.argv = seq;
	o.err = (struct spawn_output){ .to = SPAWN_NULL };
	o.out = (struct spawn_output){ .to = SPAWN_CALL, .fn = on_chunk, .data = &c };
	CHECK_INT(spawn_run(&o, &res), 0, "seq to a callback");
	CHECK(c.all.len == want.len && !memcmp(c.all.buf, want.buf, want.len),
	      "the callback got every byte in order: %zu of %zu in %d calls", c.all.len, want.len, c.calls);
	CHECK(res.out.len == 0, "nothing captured besides");
	spawn_result_release(&res);

	/* Output as it comes: the program goes on only once the callback has seen its first line. */
	fd = mkstemp(marker);
	close(fd);
	unlink(marker);
	sb_reset(&c.all);
	c.calls = 0;
	c.marker = marker;
	wait_argv[2] = xasprintf("echo first; while [ ! -e %s ]; do sleep 0.05; done; echo second", marker);
	o.argv = wait_argv;
	o.deadline = now_mono() + 30;
	o.term_grace = 0;
	CHECK_INT(spawn_run(&o, &res), 0, "a program waiting for its reader");
	CHECK_INT(res.timed_out, 0, "the callback saw the first line while it ran");
	CHECK_STR(text(&c.all), "first\nsecond\n", "both lines, in order");
	spawn_result_release(&res);
	unlink(marker);
	free(wait_argv[2]);
	sb_release(&c.all);

	/* The zero value: /dev/null for everything. */
	{
		struct spawn_opts z = { .argv = both };

		CHECK_INT(spawn_run(&z, &res), 0, "outputs to /dev/null");
		CHECK(res.out.buf == NULL && res.err.buf == NULL, "nothing captured");
		CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "echo to /dev/null works: 0x%x",
		      res.status);
		spawn_result_release(&res);
	}
	sb_release(&want);
}

static void test_env(void)
{
	char *argv[] = { "sh", "-c", "echo \"${SPAWN_A-unset}|${SPAWN_B-unset}\"", NULL };
	char *env[] = { "SPAWN_A=1 2", "PATH=/usr/bin:/bin", NULL };
	struct spawn_opts o = { .argv = argv, .out = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;

	setenv("SPAWN_B", "ours", 1);
	CHECK_INT(spawn_run(&o, &res), 0, "env NULL");
	CHECK_STR(text(&res.out), "unset|ours\n", "env NULL: ours, inherited");
	spawn_result_release(&res);
	o.env = env;
	CHECK_INT(spawn_run(&o, &res), 0, "an env of its own");
	CHECK_STR(text(&res.out), "1 2|unset\n", "exactly the env given, nothing of ours");
	spawn_result_release(&res);
	unsetenv("SPAWN_B");
}

static void test_child_state(void)
{
	char *fds[] = { "/proc/self/exe", "--fds", NULL };
	char *pgrp[] = { "/proc/self/exe", "--pgrp", NULL };
	char *sigs[] = { "/proc/self/exe", "--sigs", NULL };
	struct spawn_opts o = { .out = { .to = SPAWN_CAPTURE }, .err = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;
	int leak[2], plain, high, before, pid, pg;
	sigset_t block, old;
	char want[64];

	/* fds of ours without close-on-exec, as MPI or a library may leave them. */
	plain = open("/dev/null", O_RDONLY);
	CHECK(pipe(leak) == 0 && plain >= 0, "fds without close-on-exec");
	high = dup2(plain, 60);
	before = count_fds();
	o.argv = fds;
	o.in = SPAWN_CAPTURE;
	o.in_data = "x";
	o.in_len = 1;
	CHECK_INT(spawn_run(&o, &res), 0, "the child lists its fds");
	CHECK_STR(text(&res.out), "0 1 2", "the child has 0-2 only (ours were 3+ without close-on-exec)");
	spawn_result_release(&res);
	CHECK_INT(count_fds(), before, "spawn_run leaves no fd of its own open here");
	close(plain);
	close(leak[0]);
	close(leak[1]);
	close(high);

	o.in = SPAWN_NULL;
	o.argv = pgrp;
	CHECK_INT(spawn_run(&o, &res), 0, "the child reports its group");
	CHECK(sscanf(text(&res.out), "%d %d", &pid, &pg) == 2 && pid == pg && pg != getpgrp(),
	      "it leads a new process group: %s (ours %d)", text(&res.out), (int)getpgrp());
	spawn_result_release(&res);
	o.same_group = 1;
	CHECK_INT(spawn_run(&o, &res), 0, "same_group");
	snprintf(want, sizeof(want), "%d", (int)getpgrp());
	CHECK(sscanf(text(&res.out), "%d %d", &pid, &pg) == 2 && pg == getpgrp(),
	      "same_group: in ours: %s (ours %s)", text(&res.out), want);
	spawn_result_release(&res);
	o.same_group = 0;

	/* What we ignore or block is not the child's: all of them at their default, nothing blocked,
	 * except SIGALRM, not one of the reset signals, whose SIG_IGN exec passes on. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGALRM, SIG_IGN);   /* for a moment: main's alarm is minutes away */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	o.argv = sigs;
	CHECK_INT(spawn_run(&o, &res), 0, "the child reports its signals");
	CHECK_STR(text(&res.out), "ignored: 14 blocked:", "only SIGALRM still ignored, nothing blocked");
	spawn_result_release(&res);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGALRM, SIG_DFL);

	/* SIGCHLD ignored: the kernel reaps the child; spawn_run still returns, the status lost. */
	{
		char *three[] = { "sh", "-c", "exit 3", NULL };
		double start = now_mono();

		signal(SIGCHLD, SIG_IGN);
		o.argv = three;
		CHECK_INT(spawn_run(&o, &res), 0, "SIGCHLD ignored: it runs");
		CHECK(now_mono() - start < 20, "and returns: %.2f s", now_mono() - start);
		CHECK_INT(res.status, 0, "the status is lost (documented)");
		spawn_result_release(&res);
		signal(SIGCHLD, SIG_DFL);
	}
}

/* Which fd 0 the child gets for each mode, and that SPAWN_INHERIT outputs are ours. Our own fd 0 is a
 * pipe meanwhile, so that /dev/null and inherited cannot look alike. */
static void test_stdio(void)
{
	char *stdin_argv[] = { "/proc/self/exe", "--stdin", NULL };
	char *both[] = { "sh", "-c", "echo to-stdout; echo to-stderr >&2", NULL };
	struct spawn_opts o = { .argv = stdin_argv, .out = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;
	char ours[256], *msg;
	int p[2], saved = dup(0), saved1, tmp, r;
	FILE *f;
	ssize_t n;

	CHECK(pipe2(p, O_CLOEXEC) == 0 && saved >= 0, "a pipe for our stdin");
	dup2(p[0], 0);
	n = readlink("/proc/self/fd/0", ours, sizeof(ours) - 1);
	ours[n > 0 ? n : 0] = '\0';
	CHECK(!strncmp(ours, "pipe:", 5), "our stdin is a pipe: %s", ours);
	CHECK_INT(spawn_run(&o, &res), 0, "SPAWN_NULL stdin");
	CHECK_STR(text(&res.out), "/dev/null", "SPAWN_NULL: /dev/null");
	spawn_result_release(&res);
	o.in = SPAWN_INHERIT;
	CHECK_INT(spawn_run(&o, &res), 0, "SPAWN_INHERIT stdin");
	CHECK_STR(text(&res.out), ours, "SPAWN_INHERIT: ours");
	spawn_result_release(&res);
	o.in = SPAWN_CAPTURE;
	o.in_data = "";
	CHECK_INT(spawn_run(&o, &res), 0, "SPAWN_CAPTURE stdin");
	CHECK(!strncmp(text(&res.out), "pipe:", 5) && strcmp(text(&res.out), ours),
	      "SPAWN_CAPTURE: a pipe of its own: %s", text(&res.out));
	spawn_result_release(&res);
	dup2(saved, 0);
	close(saved);
	close(p[0]);
	close(p[1]);

	/* Inherited stdout and stderr: ours, here a file and test_capture's file. */
	fflush(stdout);
	f = tmpfile();
	saved1 = dup(1);
	tmp = fileno(f);
	dup2(tmp, 1);
	o = (struct spawn_opts){ .argv = both, .out = { .to = SPAWN_INHERIT }, .err = { .to = SPAWN_INHERIT } };
	test_capture_start();
	r = spawn_run(&o, &res);   /* no CHECK until stdout is ours again */
	msg = test_capture_end();
	dup2(saved1, 1);
	close(saved1);
	CHECK(r == 0 && WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "inherited outputs: 0x%x",
	      res.status);
	CHECK_STR(msg, "to-stderr\n", "SPAWN_INHERIT stderr: ours");
	free(msg);
	{
		char buf[64] = "";

		n = pread(tmp, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		CHECK_STR(buf, "to-stdout\n", "SPAWN_INHERIT stdout: ours");
	}
	fclose(f);
	CHECK(res.out.buf == NULL && res.err.buf == NULL, "nothing captured");
	spawn_result_release(&res);
}

/* ---- whole trees ---- */

/* How many processes alive carry TREE_MARK=mark in their environment (a zombie has none); sig (0: none)
 * sent to each. */
static int tree_signal(const char *mark, int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), "TREE_MARK=%s", mark);
	while (d && (e = readdir(d))) {
		char path[300], buf[65536];
		ssize_t len;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0)
			buf[len] = '\0';
		for (ssize_t at = 0; at < len; at += (ssize_t)strlen(buf + at) + 1) {
			if (!strcmp(buf + at, want)) {
				if (sig)
					kill(atoi(e->d_name), sig);
				n++;
				break;
			}
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int tree_count(const char *mark)
{
	return tree_signal(mark, 0);
}

/* Until n processes carry the mark (10 s at most); whether they came. */
static int tree_wait(const char *mark, int n)
{
	for (int i = 0; i < 1000; i++) {
		if (tree_count(mark) == n)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* What a failed check left (tree.sh's processes ignore SIGTERM and sleep 1000 s), killed. */
static void tree_kill(const char *mark)
{
	for (int i = 0; i < 100 && tree_signal(mark, SIGKILL); i++)
		usleep(10000);
}

static void test_tree(void)
{
	char *tree[] = { "sh", "tests/progs/tree.sh", NULL }, *child[] = { "/proc/self/exe", "--tree", NULL };
	char *env[] = { "TREE_MARK=run", "PATH=/usr/bin:/bin", NULL };
	struct spawn_opts o = { .argv = tree, .env = env, .out = { .to = SPAWN_CAPTURE } };
	struct spawn_result res;
	double start, took;
	int st = -1;
	pid_t pid;

	/* tree.sh: itself, a child, a child and its child, an orphan, a setsid() orphan, all ignoring
	 * SIGTERM. At the deadline, SIGTERM to them all; the grace later, SIGKILL; nothing is left. */
	CHECK_INT(spawn_adopt_orphans(), 0, "this process adopts orphans");
	o.deadline = now_mono() + 1;
	o.term_grace = 0.5;
	start = now_mono();
	CHECK_INT(spawn_run(&o, &res), 0, "tree.sh until its deadline");
	took = now_mono() - start;
	CHECK_STR(text(&res.out), "ready\n", "it started its tree");
	CHECK_INT(res.timed_out, 1, "timed out");
	CHECK(WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGKILL, "SIGKILL after the grace: 0x%x",
	      res.status);
	CHECK(took >= 1.5 && took < 10, "the deadline, then the grace: %.2f s", took);
	CHECK_INT(tree_count("run"), 0, "none of its tree is left");
	CHECK(no_children(), "every orphan reaped");
	spawn_result_release(&res);
	tree_kill("run");

	/* A child that runs tree.sh (as an executor does) ended by spawn_kill: its whole tree goes first,
	 * SIGTERM and SPAWN_TREE_GRACE later SIGKILL, then the child itself. */
	setenv("TREE_MARK", "kill", 1);
	CHECK_INT(spawn_start(child, -1, &pid), 0, "a child that runs tree.sh");
	CHECK(tree_wait("kill", 7), "the child and tree.sh's six: %d", tree_count("kill"));
	start = now_mono();
	CHECK_INT(spawn_kill(pid, 0, &st), 0, "spawn_kill");
	took = now_mono() - start;
	/* Its tree.sh ended, it may have exited before its SIGKILL came. */
	CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL),
	      "the child ended: 0x%x", st);
	CHECK(took >= SPAWN_TREE_GRACE && took < SPAWN_TREE_GRACE + 5, "SIGKILL after the grace: %.2f s", took);
	CHECK_INT(tree_count("kill"), 0, "none of its tree is left");
	CHECK(no_children(), "every orphan reaped");
	tree_kill("kill");

	/* The child killed by someone else: what it left is ours (a subreaper), ended when it is reaped. */
	setenv("TREE_MARK", "dead", 1);
	CHECK_INT(spawn_start(child, -1, &pid), 0, "a child that runs tree.sh");
	CHECK(tree_wait("dead", 7), "the child and tree.sh's six: %d", tree_count("dead"));
	kill(pid, SIGKILL);
	CHECK_INT(spawn_wait(pid, now_mono() + 30, &st), 0, "spawn_wait");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "it was killed: 0x%x", st);
	CHECK_INT(tree_count("dead"), 0, "none of its tree is left");
	CHECK(no_children(), "every orphan reaped");
	tree_kill("dead");
	unsetenv("TREE_MARK");
}

/* ---- spawn_start ---- */

/* fd moved to the lowest free number >= min (close-on-exec). */
static int move_fd(int fd, int min)
{
	int to = fcntl(fd, F_DUPFD_CLOEXEC, min);

	close(fd);
	return to;
}

static void test_start(void)
{
	char *fds3[] = { "/proc/self/exe", "--fds3", NULL };
	char *echo3[] = { "/proc/self/exe", "--echo3", NULL };
	char *stubborn3[] = { "/proc/self/exe", "--stubborn3", NULL };
	char *missing[] = { "/nonexistent/spawn-prog", NULL };
	struct strbuf got = STRBUF_INIT;
	int sv[2], child_end, plain, st = -1, r;
	double start;
	pid_t pid;
	char *msg;

	/* The passed fd at 3 already (dup2 onto itself must clear close-on-exec), with a plain fd of ours
	 * above it that must not reach the child. An fd 3 this process was started with (flock(1) leaves
	 * its lock there for `flock LOCK make check`) is moved out of the way first. */
	if (fcntl(3, F_GETFD) != -1)
		move_fd(3, 40);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	sv[0] = move_fd(sv[0], 20);
	sv[1] = move_fd(sv[1], 21);
	child_end = move_fd(sv[1], 3);
	CHECK_INT(child_end, 3, "fd 3 free for the test");
	plain = open("/dev/null", O_RDONLY);
	CHECK_INT(spawn_start(fds3, child_end, &pid), 0, "spawn_start with fd 3 passed");
	close(child_end);
	get(sv[0], &got, 0);
	CHECK_STR(got.buf, "0 1 2 3", "the child sees 0-2 and the passed fd");
	CHECK_INT(spawn_wait(pid, INFINITY, &st), 0, "spawn_wait reaps it");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "it exited 0: 0x%x", st);
	close(sv[0]);

	/* The passed fd far up: it arrives as 3. */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	child_end = move_fd(sv[1], 70);
	sb_reset(&got);
	CHECK_INT(spawn_start(echo3, child_end, &pid), 0, "spawn_start with fd 70 passed");
	close(child_end);
	CHECK(send(sv[0], "ping\n", 5, MSG_NOSIGNAL) == 5, "a line to the child");
	get(sv[0], &got, 1);
	CHECK_STR(got.buf, "got: ping\n", "its answer over the socket");
	start = now_mono();
	CHECK_INT(spawn_wait(pid, start + 0.3, &st), 1, "still running at the deadline");
	CHECK(now_mono() - start >= 0.3, "spawn_wait waited for the deadline: %.2f s", now_mono() - start);
	close(sv[0]);
	CHECK_INT(spawn_wait(pid, now_mono() + 30, &st), 0, "ends at the socket's EOF");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5, "its exit 5: 0x%x", st);
	close(plain);

	/* spawn_kill: SIGTERM ignored, so SIGKILL after the grace. */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	CHECK_INT(spawn_start(stubborn3, sv[1], &pid), 0, "a child that ignores SIGTERM");
	close(sv[1]);
	sb_reset(&got);
	get(sv[0], &got, 1);   /* its SIGTERM is ignored from here on */
	CHECK_STR(got.buf, "ready\n", "it is ready");
	start = now_mono();
	CHECK_INT(spawn_kill(pid, 0.5, &st), 0, "spawn_kill");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "SIGKILL after the grace: 0x%x", st);
	CHECK(now_mono() - start >= 0.5 && now_mono() - start < 30, "not before the grace: %.2f s",
	      now_mono() - start);
	close(sv[0]);

	/* spawn_kill of a child that obeys SIGTERM: it does not wait the grace out. */
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	CHECK_INT(spawn_start(echo3, sv[1], &pid), 0, "a child that obeys SIGTERM");
	close(sv[1]);
	start = now_mono();
	CHECK_INT(spawn_kill(pid, 60, &st), 0, "spawn_kill");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "SIGTERM did it: 0x%x", st);
	CHECK(now_mono() - start < 30, "well before the 60 s grace: %.2f s", now_mono() - start);
	close(sv[0]);

	test_capture_start();
	r = spawn_start(missing, -1, &pid);
	msg = test_capture_end();
	CHECK_INT(r, -1, "spawn_start of a missing program");
	CHECK_TEXT(msg, "sweep: cannot run '/nonexistent/spawn-prog': No such file or directory\n",
		   "its message");
	free(msg);
	test_capture_start();
	r = spawn_wait(1, INFINITY, &st);
	msg = test_capture_end();
	CHECK_INT(r, -1, "spawn_wait of a process not ours");
	CHECK_TEXT(msg, "sweep: cannot wait for process 1: No child processes\n", "its message");
	free(msg);
	sb_release(&got);
	CHECK(no_children(), "every child reaped");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return child_main(argv[1]);
	/* What was checked shows even when a broken spawn kills this process (SIGPIPE, SIGALRM). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(300);   /* a hang is a failure */
	/* The checks place fds at known numbers: none may be inherited (flock(1) hands make its lock as 3). */
	for (int fd = 3; fd < 256; fd++)
		close(fd);
	test_status();
	test_exec_failure();
	test_child_state();
	test_stdio();
	test_timeout();
	test_leftovers();
	test_stdin();
	test_output();
	test_env();
	test_start();
	test_tree();
	return test_done();
}
