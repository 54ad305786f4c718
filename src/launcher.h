/* launcher.h: the command line that started this job, its launcher included (mpirun -np 3 --hostfile F
 * sweep run ...), read from the launcher process itself, for the resume command a run records and says. */
#ifndef SWEEP_LAUNCHER_H
#define SWEEP_LAUNCHER_H

#include <sys/types.h>
#include "util.h"

/* Whether a program name (argv[0], any folder) is a launcher of ranks: mpirun, mpiexec, orterun, prterun,
 * srun. */
int launcher_is(const char *argv0);

/* The launcher's command line as shell words into out (nothing when none was found): the nearest ancestor
 * of process pid (its parent first, up to init) that is a launcher (launcher_is), its words from
 * /proc/PID/cmdline. For rank 0 on the host mpirun runs on; a rank started by a remote daemon finds none. */
void launcher_line_of(pid_t pid, struct strbuf *out);

/* launcher_line_of(getpid()), looked up once: NULL when this process has no launcher above it. The
 * string lives as long as the process. */
const char *launcher_line(void);

/* For a closing line that says to run the same command again: ": LINE" with this process's launcher
 * line, or "" when it has none (the command the user typed is this process's own) or runs in a Slurm job
 * (resumed by resubmitting it). */
const char *launcher_resume(void);

#endif
