/* exitcode.h: the exit codes of sweep, a contract with scripts, and the kinds of failure the domain returns:
 * the commands (src/builtin/) turn a kind into its code with exitcode_of(), the one mapping, and the code
 * that reads another sweep's exit status (on a launched host, in a Slurm job) reads the codes. */
#ifndef SWEEP_EXITCODE_H
#define SWEEP_EXITCODE_H

#include "util.h"

enum {
	EXIT_OK = 0,           /* everything asked for was done (every cell ok) */
	EXIT_FAIL = 1,         /* an error: the message says what */
	EXIT_USAGE = 2,        /* bad input: command line, spec, file; nothing was written */
	EXIT_CELLS = 3,        /* ran, but some cells failed, were quarantined or wait for absent hosts */
	EXIT_WORSE = 4,        /* the numbers missed a bar the user set: compare --fail-above, report --score
				* --bar (the report itself was printed) */
	EXIT_INTERRUPTED = 5,  /* stopped by SIGINT, SIGTERM or SIGUSR1: nothing charged, nothing half written;
				* the same command resumes (not 130: a shell says that of a process the signal killed) */
	EXIT_UNREACHABLE = 6   /* launch, stop, pull, status --hosts: some host was not reached, or did not do
				* what was asked there (started, stopped, pulled, read); the others were done */
};

/*
 * What went wrong, as the domain knows it. A function that can fail in more than one way returns one of
 * these (FAIL_OK for success) after error() said why, and its callers pass the kind up unchanged; only the
 * command turns it into an exit code, through exitcode_of(), so the same failure gives the same code in
 * every command. As SQLite's result codes, a kind means one thing: a number never means two.
 *
 * FAIL_IO is -1, what error() returns: a function that only says error() fails as FAIL_IO, the kind that
 * blames neither the user nor another process. A failure the user must fix is said with fail_usage().
 */
enum fail {
	FAIL_OK = 0,
	FAIL_IO = -1,          /* SQL, a file or a program sweep runs failed (the disk, permissions, a damaged
				* database, gnuplot): the message says what. Exit 1 */
	FAIL_USAGE = -2,       /* the user must change something: an option, a name, an expression, a spec, a
				* file they wrote or named (that does not exist), a filter that leaves nothing.
				* Nothing was written. Exit 2 */
	FAIL_BUSY = -3,        /* another sweep writes the database now (its writer lock, held by a live
				* process): the same command succeeds once it ends. Every writer (run, plan, retry,
				* merge, predict, submit, hosts label) says it so. Exit 1 */
	FAIL_UNSAFE = -4,      /* refused to overwrite what is not the command's to overwrite (a report's or
				* merge's output that is an SQLite file, the database being read, an input).
				* Nothing was written. Exit 1 */
	FAIL_CELLS = -5,       /* it ran, but some cells failed, were quarantined or wait for absent hosts (cells
				* only: a host not reached is FAIL_UNREACHABLE). Exit 3 */
	FAIL_WORSE = -6,       /* the report was made, and some row missed the bar the user set (slower than
				* --fail-above, a --score group over --bar). Exit 4 */
	FAIL_INTERRUPTED = -7, /* SIGINT, SIGTERM or SIGUSR1 stopped it: nothing charged, nothing half written;
				* the same command resumes. Exit 5 */
	/* The database named is not one sweep can use; the user named the wrong file, so exit 2 as
	 * FAIL_USAGE, whichever command read it (store_open says which). */
	FAIL_MISSING = -8,     /* no such file (or a folder on its path is missing). Exit 2 */
	FAIL_NOT_SWEEP = -9,   /* a file that is not a sweep database: a text file, another program's SQLite
				* database, a schema newer than this sweep knows or older than a reader reads.
				* Exit 2 */
	FAIL_CORRUPT = -10,    /* SQLite says the database is damaged (SQLITE_CORRUPT): sweep's file, not the
				* user's choice, so exit 1 as FAIL_IO */
	FAIL_UNREACHABLE = -11 /* launch, stop, pull, status --hosts: some host was not reached over ssh or did
				* not do what was asked there; each such host has its line. Exit 6 */
};

/* error(...) for a failure the user must fix: prints "sweep: <msg>", gives FAIL_USAGE. */
#define fail_usage(...) (error(__VA_ARGS__), FAIL_USAGE)

/* The exit code of a kind of failure: the one place where kinds become codes. */
static inline int exitcode_of(int fail)
{
	switch (fail) {
	case FAIL_OK:
		return EXIT_OK;
	case FAIL_IO:
	case FAIL_BUSY:
	case FAIL_UNSAFE:
		return EXIT_FAIL;
	case FAIL_CORRUPT:
		return EXIT_FAIL;
	case FAIL_USAGE:
	case FAIL_MISSING:
	case FAIL_NOT_SWEEP:
		return EXIT_USAGE;
	case FAIL_CELLS:
		return EXIT_CELLS;
	case FAIL_WORSE:
		return EXIT_WORSE;
	case FAIL_INTERRUPTED:
		return EXIT_INTERRUPTED;
	case FAIL_UNREACHABLE:
		return EXIT_UNREACHABLE;
	}
	BUG("exitcode_of: no kind of failure %d", fail);
}

#endif
