/* launcher.c: the launcher's command line (mpirun's, srun's), read from /proc by walking up the parents. */
#include "launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An ancestor this many levels up at most: mpirun is rank 0's parent, or a shell or two above it. */
#define LAUNCHER_DEPTH 16
/* A command line longer than this is cut (a hostfile of hundreds of names given on it). */
#define LAUNCHER_MAX 8192

int launcher_is(const char *argv0)
{
	static const char *const names[] = { "mpirun", "mpiexec", "orterun", "prterun", "srun", NULL };
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	for (int i = 0; names[i]; i++)
		if (!strcmp(base, names[i]))
			return 1;
	return 0;
}

/* The parent of pid, from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold ')' and spaces). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *close;
	FILE *f;
	size_t n;
	long ppid = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(close = strrchr(buf, ')')) || sscanf(close + 1, " %*c %ld", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/* The words of /proc/PID/cmdline, NUL-separated, into cmd (cut at LAUNCHER_MAX); 0, or -1 when it cannot be
 * read (the process is gone, or not ours to read): no message, the walk goes on. */
static int cmdline_of(pid_t pid, struct strbuf *cmd)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	sb_reset(cmd);
	if (!(f = fopen(path, "r")))
		return -1;
	sb_grow(cmd, LAUNCHER_MAX);
	n = fread(cmd->buf, 1, LAUNCHER_MAX, f);
	fclose(f);
	cmd->len = n;
	cmd->buf[n] = '\0';
	return n ? 0 : -1;
}

void launcher_line_of(pid_t pid, struct strbuf *out)
{
	struct strbuf cmd = STRBUF_INIT;

	for (int depth = 0; depth < LAUNCHER_DEPTH && (pid = parent_of(pid)) > 1; depth++) {
		if (cmdline_of(pid, &cmd) || !launcher_is(cmd.buf))
			continue;
		for (size_t at = 0; at < cmd.len; at += strlen(cmd.buf + at) + 1) {
			if (at)
				sb_addc(out, ' ');
			sb_add_word(out, cmd.buf + at);
		}
		break;
	}
	sb_release(&cmd);
}

static struct strbuf line = STRBUF_INIT;
static int looked;

const char *launcher_line(void)
{
	if (!looked) {
		looked = 1;
		launcher_line_of(getpid(), &line);
	}
	return line.len ? line.buf : NULL;
}

const char *launcher_resume(void)
{
	static char *said;

	/* a Slurm job is resumed by its resubmission (sweep status prints it), not by its mpirun line, which
	 * runs only inside the job's allocation */
	if (!said)
		said = launcher_line() && !getenv("SLURM_JOB_ID") ? xasprintf(": %s", launcher_line()) : "";
	return said;
}
