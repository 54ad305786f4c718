/* spawn.h: the one module that starts processes: a program run to its end (spawn_run), or a long-lived
 * child handed a socket (spawn_start); and the one that ends them, with everything they started. Command
 * cells, ssh and scp, Slurm's commands and gnuplot go through it; no other file forks, execs or includes
 * <spawn.h>. */
#ifndef SWEEP_SPAWN_H
#define SWEEP_SPAWN_H

#include <sys/types.h>
#include "util.h"

/*
 * Rules every child gets: argv[0] is searched in PATH when it has no '/' (exec'd directly, no shell);
 * the working folder is ours; only fds 0-2 are open in it (and spawn_start's passed fd as 3), whatever
 * this process has open without close-on-exec (MPI's sockets, a database); SIGPIPE, SIGINT, SIGTERM,
 * SIGQUIT, SIGHUP, SIGCHLD, SIGUSR1 and SIGUSR2 at their default disposition and no signal blocked. It
 * is started with posix_spawn (vfork-like: fine in an MPI rank or a threaded process), and reaped by
 * waitpid on its own pid only: no SIGCHLD handler, no zombie left behind.
 *
 * A tree: a child's descendants, found under /proc by their parents, and in a process that adopts orphans
 * (spawn_adopt_orphans: Linux's child subreaper) every child of ours that spawn did not start, with its
 * descendants. A subreaper keeps what a program started findable whatever it does: a grandchild whose
 * parent died, or one that left its group with setsid(), becomes our child instead of init's. Ending a tree
 * is SIGTERM to each of its processes and their process groups, SIGKILL to what is left after a grace
 * (SPAWN_TREE_GRACE where no caller gives one), and the orphans among them reaped.
 */

/* Seconds between SIGTERM and SIGKILL when a tree is ended without a grace of the caller's: a stopped run,
 * an executor killed (docs/command-cells.md states it). */
#define SPAWN_TREE_GRACE 2.0

/* Where one of the child's standard streams goes. The zero value is /dev/null. */
enum spawn_io {
	SPAWN_NULL = 0,        /* /dev/null */
	SPAWN_INHERIT,         /* this process's own fd */
	SPAWN_CAPTURE,         /* stdin: spawn_opts.in_data; stdout, stderr: a strbuf of the result, capped */
	SPAWN_CALL,            /* stdout, stderr: each chunk to fn as it is read */
};

/* How stdout or stderr is taken. */
struct spawn_output {
	enum spawn_io to;
	size_t cap;            /* CAPTURE: bytes kept (0: all); the rest is read and dropped */
	int tail;              /* CAPTURE: keep the last cap bytes instead of the first */
	void (*fn)(void *data, const char *buf, size_t n);   /* CALL: in the caller's thread, in order */
	void *data;
};

/* What spawn_run runs and how. Borrowed: nothing here is freed or kept after spawn_run returns. */
struct spawn_opts {
	char *const *argv;     /* NULL-terminated */
	char *const *env;      /* "NAME=value", NULL-terminated; NULL: this process's environment */
	enum spawn_io in;      /* NULL, INHERIT, or CAPTURE: in_len bytes of in_data written to stdin */
	const char *in_data;
	size_t in_len;
	struct spawn_output out, err;
	/* 0: the child leads a new process group, and the deadline and the leftover rule apply to the
	 * group and to its tree. 1: it stays in ours (a terminal's Ctrl-C reaches it); they apply to the
	 * child alone. */
	int same_group;
	/* now_mono() seconds (<= 0 or INFINITY: none). At it the group gets SIGTERM, then SIGKILL
	 * term_grace seconds later (0: SIGKILL at once). */
	double deadline, term_grace;
	/* Once the program exited, how long its stdout and stderr may stay open (a background child of
	 * it holding them) before spawn_run stops reading. */
	double linger;
	/* 0: what is left of the group once the program ended is killed (SIGKILL), before the program is
	 * reaped (its pid, the group's id, cannot be reused meanwhile), and in a process that adopts orphans
	 * the program's tree too (what left the group). 1: leftovers live on (an ssh ControlPersist master). */
	int keep_leftovers;
	/* 1: this process's peak RSS is reset to its current size first (/proc/self/clear_refs), so that what
	 * it did before (a large output parsed) is not counted in the program's peak (spawn_result.rss). */
	int reset_peak;
};

/* How the program ended. spawn_result_release frees out and err. */
struct spawn_result {
	int exec_errno;        /* why it could not be started (0: it ran); nothing below is set then */
	int status;            /* as waitpid gives it (WIFEXITED, WEXITSTATUS, WTERMSIG); 0 when SIGCHLD is
				* ignored, which lets the kernel reap it and lose its status */
	int timed_out;         /* the deadline came before it exited */
	double wall;           /* seconds from its start to its exit */
	/* From wait4: CPU seconds in user and system mode, and the peak resident set (bytes), of the
	 * program and the children it waited for. Linux counts in the peak that of the process that started
	 * the program (posix_spawn shares its memory until exec; see reset_peak): a program that uses more
	 * than this process has resident gets its own peak exactly, a smaller one this process's size. */
	double user, sys, rss;
	struct strbuf out, err;   /* SPAWN_CAPTURE outputs */
};

/*
 * Run o->argv, feeding stdin and reading stdout and stderr as o says, until the program has exited
 * and its pipes are closed (or o->linger after its exit); on the deadline, the kills described above.
 * Returns 0 when it ran (see res), -1 when it could not be started: res->exec_errno says why (exec's
 * errno: ENOENT for a missing program; ECANCELED after spawn_abort; or a pipe's). Prints nothing
 * (callers format "cannot run 'prog': reason"), so several threads may run programs at once. res is
 * overwritten.
 */
int spawn_run(const struct spawn_opts *o, struct spawn_result *res);
void spawn_result_release(struct spawn_result *res);

/* The fd number a child of spawn_start finds its passed fd at. */
#define SPAWN_PASSED_FD 3

/*
 * Start argv (PATH searched) as a long-lived child leading a process group of its own (a terminal's Ctrl-C
 * and a launcher's signals to our group do not reach it): stdin /dev/null, stdout and stderr ours, our
 * environment, and pass_fd (>= 0; -1: none) open as SPAWN_PASSED_FD, the only fd beside 0-2. This process
 * adopts orphans from then on (spawn_adopt_orphans), so that what the child leaves when it dies is ours
 * to end. Its pid into *pid; the caller reaps it with spawn_wait or spawn_kill. -1 after error() ("cannot
 * run 'prog': reason").
 */
int spawn_start(char *const *argv, int pass_fd, pid_t *pid);
/* Wait for child pid until deadline (now_mono() seconds; 0: do not wait; INFINITY: for ever). 0 when
 * it exited and was reaped (its waitpid status into *status, may be NULL), and the orphans it left us
 * ended (their tree, SPAWN_TREE_GRACE); 1 when it still runs at the deadline, -1 after error() (not our
 * child). */
int spawn_wait(pid_t pid, double deadline, int *status);
/* End child pid and its tree: grace > 0: SIGTERM to pid, and its tree ended once it exits within grace
 * seconds. Else (or after the grace) first its tree (SPAWN_TREE_GRACE: a child still alive keeps its
 * descendants findable), then SIGKILL to pid and the orphans it leaves ended. Reaps it (*status as for
 * spawn_wait). -1 after error(). */
int spawn_kill(pid_t pid, double grace, int *status);

/* Make this process a child subreaper (PR_SET_CHILD_SUBREAPER): orphans of its descendants become its
 * children, and spawn ends and reaps them as parts of the trees it ends (spawn_run's leftovers, spawn_wait,
 * spawn_kill). For a process whose children start programs: a worker, an executor. -1 after error(). */
int spawn_adopt_orphans(void);
/* For a process that must stop now (its parent died): every spawn_run in progress ends its program's tree
 * as at its deadline (SIGTERM, SIGKILL term_grace later, without timed_out), and later ones return -1 with
 * ECANCELED. Async-signal-safe. Returns whether a spawn_run was in progress. */
int spawn_abort(void);

#endif
