/* exitcode.h: the exit codes of sweep, a contract with scripts: the commands (src/builtin/) return them,
 * and the code that reads another sweep's exit status (on a launched host, in a Slurm job) reads them. */
#ifndef SWEEP_EXITCODE_H
#define SWEEP_EXITCODE_H

enum {
	EXIT_OK = 0,           /* everything asked for was done (every cell ok) */
	EXIT_FAIL = 1,         /* an error: the message says what */
	EXIT_USAGE = 2,        /* bad input: command line, spec, file; nothing was written */
	EXIT_CELLS = 3,        /* ran, but some cells failed, were quarantined or wait for absent hosts */
	EXIT_INTERRUPTED = 4   /* stopped by SIGINT, SIGTERM or SIGUSR1: nothing charged, nothing half written;
				* the same command resumes (not 130: a shell says that of a process the signal killed) */
};

#endif
