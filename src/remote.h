/* remote.h: commands on inventory hosts over ssh, files to and from them with scp, hosts in parallel. */
#ifndef SWEEP_REMOTE_H
#define SWEEP_REMOTE_H

#include "inventory.h"
#include "util.h"

/* Each captured stream keeps its first bytes only: the rest is read and dropped. */
#define REMOTE_MAX_OUTPUT (4 << 20)
/* Seconds ssh may take to connect (less when the deadline is nearer). */
#define REMOTE_CONNECT_TIMEOUT 10

/* What one local process (ssh, scp) did. remote_out_release frees the buffers. */
struct remote_out {
	int status;            /* exit status; ssh says 255 for its own failures (unreachable, refused, key) */
	int signal;            /* the signal that ended it, 0 when it exited */
	int timed_out;         /* killed at the deadline */
	struct strbuf out, err;
};
void remote_out_release(struct remote_out *o);

/* A NULL-terminated argument vector; owns its strings. */
struct remote_argv {
	char **v;
	size_t n, alloc;
};
void remote_argv_release(struct remote_argv *a);

/*
 * The ssh command that runs command (one shell line) on h: the inventory's user, port, identity and
 * ssh_options first (ssh keeps the first value of an option), then BatchMode=yes (never a password
 * prompt), ConnectTimeout=connect_timeout and keep-alives, then "--" and the address.
 */
void remote_ssh_argv(const struct inventory_host *h, int connect_timeout, const char *command,
		     struct remote_argv *a);
/* scp from local to path on h (to_host), or from path on h to local; path is relative to the remote home
 * unless absolute. Same options as ssh. */
void remote_scp_argv(const struct inventory_host *h, int connect_timeout, const char *local, const char *path,
		     int to_host, struct remote_argv *a);

/* Append s quoted for a POSIX shell ('...', with ' as '\''). */
void remote_quote(struct strbuf *sb, const char *s);
/* h's workdir as seen from the remote home, which is where ssh and scp start: "~/x" is "x", "~" is ".". */
const char *remote_workdir(const struct inventory_host *h);
/* rel under h's workdir (rel itself when absolute). The caller frees it. */
char *remote_path(const struct inventory_host *h, const char *rel);

/*
 * Run argv (PATH searched) with spawn_run in a process group of its own, stdin from /dev/null, capturing
 * stdout and stderr into o; at deadline (now_mono() seconds) the group is killed (SIGKILL) and o->timed_out
 * set. Returns 0 when the program ran (its status in o), -1 when it could not be started (o->err: "cannot
 * run 'prog': reason"). Once it exited, what a descendant of it still writes to the pipes (an ssh
 * ControlPersist master keeps stderr) is read for half a second at most, and the descendant is left
 * running. Prints nothing, so hosts can be handled on several threads at once.
 */
int remote_spawn(char *const *argv, double deadline, struct remote_out *o);

/* Run script with sh on h (ssh h "sh -c 'script'", whatever h's login shell). 0 when ssh ran, see o. */
int remote_run(const struct inventory_host *h, const char *script, double deadline, struct remote_out *o);
/* Copy the local file local to path (see remote_scp_argv) on h, or back. 0 when the copy was made; -1
 * with the reason in o->err (or o->timed_out). */
int remote_put(const struct inventory_host *h, const char *local, const char *path, double deadline,
	       struct remote_out *o);
int remote_get(const struct inventory_host *h, const char *path, const char *local, double deadline,
	       struct remote_out *o);

/* Whether o is ssh failing to reach the host (exit 255, or no answer before the deadline). */
int remote_unreachable(const struct remote_out *o);
/* Why o failed, in one line: the last line ssh or scp printed on stderr, or the timeout. Appends to sb. */
void remote_why(const struct remote_out *o, struct strbuf *sb);

/* Call fn(i, data) for every i in 0..n-1, on up to jobs threads at once (fn must be thread-safe); returns
 * when every call has returned. */
void remote_parallel(int n, int jobs, void (*fn)(int i, void *data), void *data);

#endif
