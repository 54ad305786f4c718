/* launch.h: sweeps on rented hosts over ssh: `sweep launch`, `status --hosts`, `pull` (launch*.c). */
#ifndef SWEEP_LAUNCH_H
#define SWEEP_LAUNCH_H

#include "inventory.h"
#include "spec.h"
#include "util.h"

/*
 * What a launch leaves on a host, under its workdir: results/NAME.db (the run's database), .log (its
 * output, appended to by every launch), .pid (the pid of the shell that runs it: the leader of its own
 * session), .exit (its exit status, once it ended), .start and .end (when it started and ended, in
 * seconds since 1970 by the host's clock), .host (the host's hostname, as launch learnt it) and .stopped
 * (`sweep stop` signalled it; removed by the next launch). The .pid files are how status and pull find the
 * sweeps launched there. Scripts run there with sh and answer in lines "sweep-remote: KEY REST".
 */
#define LAUNCH_TIMEOUT 120      /* seconds per host: launch (with --sync: copies) and status */
#define PULL_TIMEOUT 900        /* seconds per host for pull: a snapshot and its copy may be large */
#define LAUNCH_JOBS 16          /* hosts handled at once */
#define LAUNCH_BUILD_TIMEOUT 1800   /* seconds per host for a build (launch --build, or --sync's fallback) */
#define LAUNCH_MIN_FREE "1G"    /* launch refuses a host with less free space for results/ */
#define REMOTE_TAG "sweep-remote: "

/* 1 when s may name a sweep's files (it came from a host, or names files there): a spec's characters,
 * not starting with '.' or '-'. */
int launch_name_ok(const char *s);
/* Start a script for h: the shell functions alive, hasbin and say, W (the workdir) and B (sweep_bin), and
 * cd "$W" (made first when mkdir), answering "error no folder" when that fails. */
void launch_script_begin(struct strbuf *sb, const struct inventory_host *h, int mkdir);
/* Set the script's "$@" to the sweeps launched there (their .pid files; "none" is answered when there is
 * none), or to only when it is not NULL. */
void launch_script_names(struct strbuf *sb, const char *only);
/* Call fn(key, rest) for every answer line in out (valid during the call only). */
void launch_each_answer(const struct strbuf *out, void (*fn)(const char *key, const char *rest, void *data),
			void *data);
/* What a fan-out over hosts (status --hosts, stop, pull) hands each host's call (remote_parallel): the
 * inventory, the hosts' indices in it, the sweep asked about (NULL: every one launched there), each
 * host's seconds, and the caller's results, one slot a host. */
struct launch_fan {
	const struct inventory *inv;
	const int *hosts;
	const char *only;
	double seconds;
	void *res;
};

/*
 * One host's part of a fan-out (launch, status --hosts, stop, pull): run script on h until deadline and
 * hand each answer line to fn(key, rest, data); then answered(data) says whether the host said what it
 * was asked. 0 when it did; else the reason appended to why (no newline): 2 when the host is
 * unreachable, 1 when the script did not run or said nothing ("no answer from the host's shell: ...").
 * Prints nothing: hosts are handled on threads.
 */
int launch_ask(const struct inventory_host *h, const char *script, double deadline,
	       void (*fn)(const char *key, const char *rest, void *data), int (*answered)(void *data), void *data,
	       struct strbuf *why);
/* mkdir -p; -1 with the reason appended to why (nothing printed: hosts are handled on threads). */
int launch_make_dirs(const char *path, struct strbuf *why);
/* The indices of the hosts to work on: all of inv, or those named in names ("a,b"); *idx is the caller's
 * to free. -1 after error() when a name is not a host. */
int launch_pick_hosts(const struct inventory *inv, const char *names, int **idx, int *n);
/* --timeout SECONDS: 0, or -1 after error(). */
/* An answer line's REST that starts with a sweep name: the name into name (n bytes), and what follows the
 * space after it ("" when nothing does); NULL when the name is too long or not a safe sweep name. */
const char *launch_answer_name(const char *rest, char *name, size_t n);
int launch_parse_timeout(const char *s, double *out);
/* --jobs N: hosts handled at once, 1 to 1024; -1 after error() otherwise. */
int launch_parse_jobs(const char *s, int *out);

/* What `sweep launch` is asked beyond the hosts and the spec. */
struct launch_opts {
	int sync;              /* copy this binary, the spec and its command's files first */
	int build;             /* copy the spec and its files, and build sweep there from this binary's commit */
	const char *make_args; /* more arguments of make there ("CUDA=0 CUDA_ARCH=..."), checked; or NULL */
	double timeout;        /* seconds per host */
	long min_free_kib;     /* refuse a host with less free space for results/ */
	int lock_clocks;       /* sweep run --lock-clocks on each host (the spec's clocks:, consented to) */
	int jobs;              /* hosts at once */
};

/* The source of this binary's commit, to be built on hosts: exe is CHECKOUT/build/sweep. */
struct launch_source {
	struct strbuf commit;  /* its hash */
	char *archive;         /* a .tar.gz of the commit (git archive, prefix COMMIT/) in /tmp */
};
/* Find the checkout of exe and archive its HEAD; a warning names changes not committed. -1 (after
 * error(), unless quiet) when exe is not in a git checkout. launch_source_release removes the archive. */
int launch_source(const char *exe, int quiet, struct launch_source *src);
void launch_source_release(struct launch_source *src);
/* The set of make variables of make_args ("NAME=VALUE ...", or NULL): the last value of each name, by
 * name, into out (reset first; "" for none). */
void launch_make_set(const char *make_args, struct strbuf *out);
/* What a host's build is kept under: the commit, and "-" and a hash of the make variables' set when there
 * are some, into key (reset first). */
void launch_build_key(const struct launch_source *src, const char *make_args, struct strbuf *key);
/* Copy src to h, build it there with make_args under WORKDIR/.sweep-build/KEY (launch_build_key: make
 * deps-run, then make build/sweep; output in results/build-KEY.log; once a commit and set of variables,
 * *reused = 1 when it was built before) and put the binary at bin (under the workdir). 0, or -1 with the
 * reason (and the end of the build's output) appended to msg. Prints nothing. */
int launch_build(const struct inventory_host *h, const struct launch_source *src, const char *bin,
		 const char *make_args, double deadline, int *reused, struct strbuf *msg);
/* A --make argument: NAME=VALUE, NAME of letters, digits and '_', VALUE without spaces, quotes or '$'
 * (it goes into a shell line there). -1 after error() otherwise. */
int launch_make_arg_ok(const char *s);

/* Where the spec at path goes under a host's workdir: its own relative path when it has one, else
 * sweeps/BASENAME; NULL when neither is a safe remote path. The caller frees it. */
char *launch_spec_place(const char *path);

/*
 * `sweep launch`: start `sweep run` of s (read from spec_path, placed at spec_rel under each workdir) on
 * hosts[0..nhosts) of inv, detached, and print a line per host (started, already running, or the error).
 * Returns FAIL_UNREACHABLE (exitcode.h) when some hosts were not reached or not started, FAIL_IO after
 * error() before any host was touched.
 */
int launch_run(const struct inventory *inv, const int *hosts, int nhosts, const struct spec *s,
	       const char *spec_path, const char *spec_rel, const struct launch_opts *o);

/*
 * `sweep pull`: a snapshot of each sweep launched on hosts[0..nhosts) of inv (only the sweep named only,
 * when not NULL), copied back into pulled/HOST/ beside into (results/ when NULL) and merged into into
 * (default results/NAME.db), the inventory's labels applied; a line per host and sweep, and what the
 * conflicts in an output are. Returns FAIL_UNREACHABLE (exitcode.h) when some hosts were not pulled, FAIL_USAGE
 * after error() when into is given without only and the hosts hold several sweeps (one database per
 * sweep: nothing is merged).
 */
int launch_pull(const struct inventory *inv, const int *hosts, int nhosts, const char *only, const char *into,
		double timeout, int jobs);

/*
 * `sweep status --hosts`: the state of every sweep launched on hosts[0..nhosts) of inv (only the sweep
 * named only, when not NULL), read over ssh within timeout seconds a host, jobs hosts at once, as one
 * table on stdout, then a line for each host that could not be read. Returns FAIL_UNREACHABLE
 * (exitcode.h) when some could not.
 */
int launch_status_hosts(const struct inventory *inv, const int *hosts, int nhosts, const char *only,
			double timeout, int jobs);

/*
 * `sweep stop`: SIGTERM to the process group of every sweep launched and running on hosts[0..nhosts) of
 * inv (only the sweep named only, when not NULL), then wait up to wait seconds for them to end; a line
 * per host and sweep (stopped with its exit status, not running, still running, or the error). Returns
 * FAIL_UNREACHABLE (exitcode.h) when some hosts were unreachable or still ran a signalled sweep.
 */
int launch_stop(const struct inventory *inv, const int *hosts, int nhosts, const char *only, double wait,
		int jobs);

#endif
