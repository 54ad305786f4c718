/* launch.c: `sweep launch`: runs started over ssh on rented hosts, detached. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exitcode.h"
#include "inventory.h"
#include "launch.h"
#include "remote.h"
#include "spec.h"
#include "store.h"
#include "util.h"

/* ---- sweep launch ---- */

/* A file --sync copies: local path, and where it goes under the workdir. */
struct sync_file {
	char *local, *rel;
	int is_bin;            /* the sweep binary: its place is each host's sweep_bin */
};

struct launch {
	const struct inventory *inv;
	const int *hosts;
	const char *name, *spec_rel;
	struct sync_file *files;
	int nfiles, sync, build;
	const struct launch_source *src;   /* NULL: nothing to build from */
	const char *make_args;
	long min_free_kib;
	int lock_clocks;       /* sweep run --lock-clocks there */
	double timeout;
	/* Per host (index into hosts): */
	int *state;            /* L_STARTED, L_RUNNING, L_ERROR */
	struct strbuf *msg;
	struct strbuf *note;   /* how the binary got there, when built */
	char **hostname;       /* what each host said it is called (NULL: not heard) */
};

enum { L_ERROR, L_STARTED, L_RUNNING };

/* Host k's state, and its message "WHAT, pid PID" with the pid as the host answered it. */
static void launch_state(struct launch *l, int k, int state, const char *what, const char *pid)
{
	l->state[k] = state;
	sb_addf(&l->msg[k], "%s, pid ", what);
	sb_add_printable(&l->msg[k], pid, 20);
}

/* The binary as the host runs it: a bare name is looked up in PATH, unless --sync put it in the workdir. */
static char *bin_run(const struct inventory_host *h, int sync)
{
	if (!sync || strchr(h->sweep_bin, '/'))
		return xstrdup(h->sweep_bin);
	return xasprintf("./%s", h->sweep_bin);
}

static const char *file_rel(const struct sync_file *f, const char *bin)
{
	return f->is_bin ? bin : f->rel;
}

struct answer {
	char *key, *rest;      /* the first answer that decides (running, started, exited, error, ready) */
	char *host;            /* "host": the hostname there */
	struct strbuf log;     /* "log" lines: the end of the run's log */
};

static void collect_answer(const char *key, const char *rest, void *data)
{
	struct answer *a = data;

	if (!strcmp(key, "log")) {
		if (a->log.len < 2000) {
			sb_adds(&a->log, "\n    ");
			sb_add_printable(&a->log, rest, 300);
		}
		return;
	}
	if (!strcmp(key, "host")) {
		if (!a->host) {
			struct strbuf sb = STRBUF_INIT;

			sb_add_printable(&sb, rest, 255);
			a->host = sb_detach(&sb);
		}
		return;
	}
	if (a->key)
		return;
	a->key = xstrdup(key);
	a->rest = xstrdup(rest);
}

static void answer_release(struct answer *a)
{
	free(a->host);
	free(a->key);
	free(a->rest);
	sb_release(&a->log);
}

static int answered(void *data)
{
	return ((struct answer *)data)->key != NULL;
}

/* The first answer of a script's output; an error when ssh failed or the script said nothing known. */
static int run_script(const struct inventory_host *h, const char *script, double deadline, struct answer *a,
		      struct strbuf *msg)
{
	struct strbuf why = STRBUF_INIT;
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = launch_ask(h, script, deadline, collect_answer, answered, a, &why)))
		sb_addf(msg, "%s%s", rc == 2 ? "unreachable: " : "", why.buf);
	sb_release(&why);
	return rc ? -1 : 0;
}

/* The host's hostname into hn, told as "host"; when the inventory gives one, a host whose hostname is
 * another is refused ("badhost"): its results would not be labelled as that host's. Same rule as
 * inventory_same_host: equal, or equal up to the first dot when one of them has none. */
static void script_hostname(struct strbuf *sb, const struct inventory_host *h)
{
	sb_adds(sb, "hn=$(hostname 2>/dev/null || uname -n); say host \"$hn\"\n");
	if (!h->hostname_line)
		return;
	sb_adds(sb, "E=");
	remote_quote(sb, h->hostname);
	sb_adds(sb, "\nsame() { [ \"$1\" = \"$2\" ] && return 0; a=${1%%.*}; b=${2%%.*};"
		" [ \"$a\" = \"$b\" ] && { [ \"$a\" = \"$1\" ] || [ \"$b\" = \"$2\" ]; }; }\n"
		"same \"$hn\" \"$E\" || { say badhost \"$hn\"; exit 0; }\n");
}

/* A host whose hostname is not the inventory's: the message names both and where the file says it. */
static void bad_hostname(struct launch *l, const struct inventory_host *h, const char *seen, int k)
{
	sb_adds(&l->msg[k], "its hostname is '");
	sb_add_printable(&l->msg[k], seen, 255);
	sb_addf(&l->msg[k], "', but %s:%d:%d says hostname '%s' (correct it, or leave it out for launch to"
		" learn it)", l->inv->path, h->hostname_line, h->hostname_col, h->hostname);
}

/* With --sync: make the folders, see whether the sweep runs already, copy each file beside its place. */
static int launch_sync(struct launch *l, const struct inventory_host *h, const char *bin, const char *part,
		       double deadline, int k)
{
	struct strbuf sc = STRBUF_INIT;
	struct answer a = { 0 };
	int ret = -1;

	launch_script_begin(&sc, h, 1);
	script_hostname(&sc, h);
	for (int i = 0; i < l->nfiles; i++) {
		char *dir = xstrdup(file_rel(&l->files[i], bin)), *slash = strrchr(dir, '/');

		if (slash && slash != dir) {
			*slash = '\0';
			sb_adds(&sc, "mkdir -p ");
			remote_quote(&sc, dir);
			sb_adds(&sc, " || { say error cannot make folders in \"$W\"; exit 0; }\n");
		}
		free(dir);
	}
	sb_addf(&sc, "P=results/%s.pid\n", l->name);
	sb_adds(&sc, "if [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\"; then\n"
		"  say running $(cat \"$P\"); exit 0\nfi\nsay ready\n");
	if (run_script(h, sc.buf, deadline, &a, &l->msg[k]))
		goto out;
	if (!strcmp(a.key, "badhost")) {
		bad_hostname(l, h, a.rest, k);
	} else if (!strcmp(a.key, "running")) {
		launch_state(l, k, L_RUNNING, "already running", a.rest);
		ret = 1;
	} else if (strcmp(a.key, "ready")) {
		sb_add_printable(&l->msg[k], a.rest, 300);
	} else {
		ret = 0;
		for (int i = 0; i < l->nfiles && !ret; i++) {
			struct remote_out o;
			char *rel = xasprintf("%s%s", file_rel(&l->files[i], bin), part);
			char *path = remote_path(h, rel);

			if (remote_put(h, l->files[i].local, path, deadline, &o)) {
				sb_addf(&l->msg[k], "cannot copy '%s': ", l->files[i].local);
				remote_why(&o, &l->msg[k]);
				ret = -1;
			}
			remote_out_release(&o);
			free(path);
			free(rel);
		}
	}
out:
	answer_release(&a);
	sb_release(&sc);
	return ret;
}

/* Build sweep on host k (launch --build, or a copied binary that cannot run there). */
static int build_host(struct launch *l, const struct inventory_host *h, const char *bin, int k,
		      const char *because)
{
	if (!l->src) {
		sb_addf(&l->msg[k], "the copied binary cannot run there (%s), and this binary's source is not"
			" a git checkout to build it from", because);
		return -1;
	}
	struct strbuf set = STRBUF_INIT;
	int reused;

	if (launch_build(h, l->src, bin, l->make_args, now_mono() + LAUNCH_BUILD_TIMEOUT, &reused, &l->msg[k]))
		return -1;
	launch_make_set(l->make_args, &set);
	sb_addf(&l->note[k], "%s %.12s%s%s%s there", reused ? "reused the build of" : "built", l->src->commit.buf,
		set.len ? " (" : "", set.buf, set.len ? ")" : "");
	sb_release(&set);
	if (because)
		sb_addf(&l->note[k], ": the copied binary cannot run (%s)", because);
	return 0;
}

/* The copies of --sync or --build into place under part's names; with --sync and no build yet, first
 * whether the copied binary runs there (else the answer "cannot" says why). */
static void script_copies(struct strbuf *sc, const struct launch *l, const char *bin, const char *part,
			  int built)
{
	if (l->sync && !built) {
		/* Whether the copy runs there (its loader finds every library): else it is built there. */
		sb_adds(sc, "C=");
		remote_quote(sc, bin);
		sb_addf(sc, "%s\n", part);
		sb_adds(sc, "case $C in /*) ;; *) C=./$C ;; esac\n"
			"if ! e=$(\"$C\" --version 2>&1); then\n"
			"  m=$(ldd \"$C\" 2>/dev/null | grep 'not found' | tr -s ' \\t\\n' ' ' |"
			" sed 's/^ //; s/ $//')\n"
			"  say cannot \"${m:-$(printf '%s\\n' \"$e\" | tail -n 1)}\"; exit 0\nfi\n");
	}
	for (int i = 0; (l->sync || l->build) && i < l->nfiles; i++) {
		const char *rel = file_rel(&l->files[i], bin);

		if (l->files[i].is_bin && built) {
			/* The copy that could not run goes; the binary built is in place. */
			sb_adds(sc, "rm -f ");
			remote_quote(sc, rel);
			sb_addf(sc, "%s\n", part);
			continue;
		}

		sb_adds(sc, "mv -f ");
		remote_quote(sc, rel);
		sb_adds(sc, part);
		sb_adds(sc, " ");
		remote_quote(sc, rel);
		sb_adds(sc, " || { say error cannot move the copies into place in \"$W\"; exit 0; }\n");
	}
}

/* The start of the run there, detached, in its own session; the answer says how it went. */
static void script_start(struct strbuf *sc, const struct launch *l, const struct inventory_host *h,
			 const char *bin)
{
	const char *n = l->name;

	sb_adds(sc, "B=");
	remote_quote(sc, bin);
	sb_adds(sc, "; S=");
	remote_quote(sc, l->spec_rel);
	sb_addf(sc, "; N=%s; P=results/%s.pid; L=results/%s.log; X=results/%s.exit; K=%s\n", n, n, n, n,
		l->lock_clocks ? "--lock-clocks" : "");
	script_hostname(sc, h);
	sb_addf(sc,
		"mkdir -p results || { say error cannot make \"$W/results\"; exit 0; }\n"
		"if [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\"; then say running $(cat \"$P\"); exit 0; fi\n"
		"hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host"
		" \"(sweep launch --sync copies this one)\"; exit 0; }\n"
		"[ -f \"$S\" ] || { say error no spec \"'$S'\" in \"$W\" on the host"
		" \"(sweep launch --sync copies it)\"; exit 0; }\n"
		"a=$(df -Pk results 2>/dev/null | awk 'NR == 2 { print $4 }')\n"
		"case $a in ''|*[!0-9]*) ;; *) [ \"$a\" -ge %ld ] || { say error disk full: $a KiB free for"
		" \"$W/results\", under %ld KiB; exit 0; } ;; esac\n"
		/* The sweep's first launch here starts its time: a relaunch (after a stop, a reboot, or once
		 * finished) goes on from it; a database gone is a sweep begun again. */
		"rm -f \"$X\" \"results/$N.end\" \"results/$N.stopped\"\n"
		"[ -s \"results/$N.start\" ] && [ -f \"results/$N.db\" ] || date +%%s >\"results/$N.start\"\n"
		"printf '%%s\\n' \"$hn\" >\"results/$N.host\"\n"
		/* One rank per slot (GPU) of the host, as under one mpirun across hosts; Open MPI wants to be
		 * told that root may run it, and rented containers often log in as root. */
		"SWEEP_LAUNCH_MPI=\n"
		"if [ %d -gt 1 ]; then\n"
		"  command -v mpirun >/dev/null 2>&1 || { say error slots: %d needs mpirun on the host; exit 0; }\n"
		"  SWEEP_LAUNCH_MPI=\"mpirun -np %d --bind-to none\"\n"
		"  [ \"$(id -u)\" != 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
		"fi\n"
		"export SWEEP_LAUNCH_MPI\n"
		"echo \"--- sweep launch $(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ):"
		" ${SWEEP_LAUNCH_MPI:+$SWEEP_LAUNCH_MPI }$B run $S --db results/$N.db${K:+ $K}\" >>\"$L\"\n"
		"SS=; command -v setsid >/dev/null 2>&1 && SS=setsid\n"
		/* Its own session (setsid), no terminal, no input: the run outlives this ssh session. The
		 * shell writes its own pid, so the pid file is right whether setsid forks or not. */
		/* SIGTERM (sweep stop) reaches the whole group; the shell's trap lets it outlive the run
		 * to write the exit status (a trapped signal is not inherited: the run gets the default). */
		"nohup $SS sh -c 'echo $$ >\"$1\"; trap : TERM; $SWEEP_LAUNCH_MPI \"$2\" run \"$3\" --db \"$4\""
		" --progress=30 $6; c=$?; date +%%s >\"${5%%.exit}.end\"; echo $c >\"$5\"'"
		" sweep-launch \"$P\" \"$B\" \"$S\" \"results/$N.db\" \"$X\" \"$K\" </dev/null >>\"$L\" 2>&1 &\n"
		"i=0; while [ $i -lt 50 ] && [ ! -s \"$P\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"[ -s \"$P\" ] || { say error the run did not start;"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; }\n"
		/* A run that fails at once (a library missing there, a spec it refuses) is an error now. */
		"i=0; while [ $i -lt 10 ] && [ ! -s \"$X\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"if [ -s \"$X\" ]; then say exited $(cat \"$X\") $(cat \"$P\");"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; fi\n"
		"say started $(cat \"$P\")\n", l->min_free_kib, l->min_free_kib, h->slots, h->slots, h->slots);
}

/* The host's answer to the start into its state and line. */
static void take_answer(struct launch *l, const struct inventory_host *h, int k, struct answer *a)
{
	const char *n = l->name;

	if (a->host && !l->hostname[k])
		l->hostname[k] = xstrdup(a->host);
	if (!strcmp(a->key, "badhost")) {
		bad_hostname(l, h, a->rest, k);
	} else if (!strcmp(a->key, "running")) {
		launch_state(l, k, L_RUNNING, "already running", a->rest);
	} else if (!strcmp(a->key, "started")) {
		launch_state(l, k, L_STARTED, "started", a->rest);
		sb_adds(&l->msg[k], " on ");
		sb_adds(&l->msg[k], a->host ? a->host : "?");
		sb_addf(&l->msg[k], " (%s%slog %s/results/%s.log)", l->note[k].len ? l->note[k].buf : "",
			l->note[k].len ? "; " : "", remote_workdir(h), n);
	} else if (!strcmp(a->key, "exited")) {
		long code = -1;
		char *sp = strchr(a->rest, ' ');

		if (sp)
			*sp = '\0';
		parse_long(a->rest, &code);
		if (code == 0 || code == EXIT_CELLS) {
			/* Finished within the second: nothing was left to run, or it ran quickly. */
			l->state[k] = L_STARTED;
			sb_addf(&l->msg[k], "started and already finished (exit %ld; %s%slog %s/results/%s.log)", code,
				l->note[k].len ? l->note[k].buf : "", l->note[k].len ? "; " : "", remote_workdir(h), n);
		} else {
			sb_addf(&l->msg[k], "sweep run exited %ld at once; the end of %s/results/%s.log:%s", code,
				remote_workdir(h), n, a->log.buf ? a->log.buf : "");
		}
	} else {
		sb_add_printable(&l->msg[k], a->rest, 300);
		if (a->log.len)
			sb_addf(&l->msg[k], "; the end of its log:%s", a->log.buf);
	}
}

static void launch_host(int k, void *data)
{
	struct launch *l = data;
	const struct inventory_host *h = &l->inv->hosts[l->hosts[k]];
	double deadline = now_mono() + l->timeout;
	char *bin = bin_run(h, l->sync || l->build), *part = xasprintf(".sweep-part-%ld", (long)getpid());
	struct strbuf sc = STRBUF_INIT;
	struct answer a = { 0 };
	int built = 0;

	l->state[k] = L_ERROR;
	if ((l->sync || l->build) && launch_sync(l, h, bin, part, deadline, k))
		goto out;
	if (l->build) {
		if (build_host(l, h, bin, k, NULL))
			goto out;
		built = 1;
		deadline = now_mono() + l->timeout;   /* the build had its own */
	}
again:
	launch_script_begin(&sc, h, 0);
	script_copies(&sc, l, bin, part, built);
	script_start(&sc, l, h, bin);
	if (run_script(h, sc.buf, deadline, &a, &l->msg[k]))
		goto out;
	if (!strcmp(a.key, "cannot") && !built) {
		if (build_host(l, h, bin, k, a.rest))
			goto out;
		built = 1;
		deadline = now_mono() + l->timeout;
		answer_release(&a);
		sb_reset(&sc);
		goto again;
	}
	take_answer(l, h, k, &a);
out:
	answer_release(&a);
	sb_release(&sc);
	free(bin);
	free(part);
}

char *launch_spec_place(const char *path)
{
	const char *base = strrchr(path, '/');
	char *rel;

	if (path[0] != '/' && strncmp(path, "../", 3) && !strstr(path, "/../") && strcmp(path, "..")) {
		rel = xstrdup(path[0] == '.' && path[1] == '/' ? path + 2 : path);
		if (inventory_remote_path_ok(rel) && rel[0] != '~')
			return rel;
		free(rel);
	}
	rel = xasprintf("sweeps/%s", base ? base + 1 : path);
	if (inventory_remote_path_ok(rel))
		return rel;
	free(rel);
	return NULL;
}

/* The files of the spec's command that are files here (a script, a program of the checkout), by their
 * relative paths: --sync copies them to the same place on each host. */
static void add_command_files(const struct spec *s, const char *spec_rel, struct sync_file **files, int *n)
{
	for (int i = 0; i < s->ncommand; i++) {
		const char *a = s->command[i];
		struct stat st;
		int dup = 0;

		if (strchr(a, '{') || a[0] == '/' || !strncmp(a, "../", 3) || strstr(a, "/../") ||
		    !inventory_remote_path_ok(a) || a[0] == '~' || stat(a, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(a, "./", 2))
			a += 2;
		dup = !strcmp(a, spec_rel);
		for (int j = 0; j < *n && !dup; j++)
			dup = !(*files)[j].is_bin && !strcmp((*files)[j].rel, a);
		if (dup)
			continue;
		*files = xrealloc(*files, (size_t)(*n + 1) * sizeof(**files));
		(*files)[*n] = (struct sync_file){ xstrdup(s->command[i]), xstrdup(a), 0 };
		(*n)++;
	}
}

int launch_run(const struct inventory *inv, const int *hosts, int nhosts, const struct spec *s,
	       const char *spec_path, const char *spec_rel, const struct launch_opts *o)
{
	struct launch l = { 0 };
	int failed = 0, ret = -1;

	struct launch_source src;
	int have_src = 0;

	l.sync = o->sync;
	l.build = o->build;
	l.make_args = o->make_args;
	l.timeout = o->timeout;
	l.min_free_kib = o->min_free_kib;
	l.lock_clocks = o->lock_clocks;
	if (l.sync || l.build) {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* /proc/self is scp's own once scp runs: the binary's path is read here. */
		if (len <= 0) {
			error("cannot find this sweep binary to copy: %s", strerror(errno));
			goto out;
		}
		self[len] = '\0';
		/* --build needs the source; --sync only where its copy cannot run, so quietly. */
		have_src = !launch_source(self, !l.build, &src);
		if (l.build && !have_src)
			goto out;
		l.src = have_src ? &src : NULL;
		l.files = xcalloc(2, sizeof(*l.files));
		if (!l.build)
			l.files[l.nfiles++] = (struct sync_file){ xstrdup(self), NULL, 1 };
		l.files[l.nfiles++] = (struct sync_file){ xstrdup(spec_path), xstrdup(spec_rel), 0 };
		add_command_files(s, spec_rel, &l.files, &l.nfiles);
	}
	l.inv = inv;
	l.hosts = hosts;
	l.name = s->name;
	l.spec_rel = spec_rel;
	l.state = xcalloc((size_t)nhosts, sizeof(int));
	l.msg = xcalloc((size_t)nhosts, sizeof(struct strbuf));
	l.note = xcalloc((size_t)nhosts, sizeof(struct strbuf));
	for (int k = 0; k < nhosts; k++) {
		sb_init(&l.msg[k]);
		sb_init(&l.note[k]);
	}
	l.hostname = xcalloc((size_t)nhosts, sizeof(char *));
	remote_parallel(nhosts, o->jobs, launch_host, &l);
	for (int k = 0; k < nhosts; k++) {
		printf("%s: %s%s\n", inv->hosts[hosts[k]].name, l.state[k] == L_ERROR ? "error: " : "", l.msg[k].buf);
		failed += l.state[k] == L_ERROR;
	}
	/* Results are told apart by the hostname that measured them: two hosts of one name would merge
	 * into one column, labelled as the first. */
	for (int k = 0; k < nhosts; k++)
		for (int j = 0; j < k; j++)
			if (l.hostname[j] && l.hostname[k] && !strcmp(l.hostname[j], l.hostname[k]))
				warning("'%s' and '%s' both say their hostname is '%s': their results cannot be told"
					" apart (give each container a hostname of its own)", inv->hosts[hosts[j]].name,
					inv->hosts[hosts[k]].name, l.hostname[k]);
	if (failed)
		fprintf(stderr, "sweep: %d of %d host%s not started\n", failed, nhosts, nhosts == 1 ? "" : "s");
	ret = failed ? FAIL_UNREACHABLE : FAIL_OK;
	for (int k = 0; k < nhosts; k++) {
		sb_release(&l.msg[k]);
		sb_release(&l.note[k]);
	}
	free(l.msg);
	free(l.note);
	for (int k = 0; k < nhosts; k++)
		free(l.hostname[k]);
	free(l.hostname);
	free(l.state);
out:
	for (int i = 0; i < l.nfiles; i++) {
		free(l.files[i].local);
		free(l.files[i].rel);
	}
	free(l.files);
	if (have_src)
		launch_source_release(&src);
	return ret;
}
