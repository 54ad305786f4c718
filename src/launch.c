/* launch.c: runs started over ssh on rented hosts, detached, and the helpers launch.h shares. */
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

/* Shell functions every remote script starts with. A pid file names a live run when that process is
 * there and (where /proc tells) its command line holds the pid file's path: a pid reused by another
 * program after a reboot does not count. */
static const char script_prelude[] =
	"alive() { kill -0 \"$1\" 2>/dev/null || return 1; [ -r \"/proc/$1/cmdline\" ] || return 0;"
	" tr '\\000' '\\n' <\"/proc/$1/cmdline\" | grep -qxF \"$2\"; }\n"
	"hasbin() { case $1 in */*) [ -x \"$1\" ] ;; *) command -v \"$1\" >/dev/null 2>&1 ;; esac; }\n"
	"say() { printf '%s\\n' \"" REMOTE_TAG "$*\"; }\n";

/* A sweep name that came from a host: it names local files, so it is checked like a spec's. */
int launch_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 200 && s[0] != '.' && s[0] != '-' &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* The script's start: its folder (made with mkdir), the variables W and B, and the functions. */
void launch_script_begin(struct strbuf *sb, const struct inventory_host *h, int mkdir)
{
	sb_adds(sb, script_prelude);
	sb_adds(sb, "W=");
	remote_quote(sb, remote_workdir(h));
	sb_adds(sb, "; B=");
	remote_quote(sb, h->sweep_bin);
	sb_adds(sb, "\n");
	if (mkdir)
		sb_adds(sb, "mkdir -p \"$W\" 2>/dev/null\n");
	sb_adds(sb, "cd \"$W\" 2>/dev/null || { say error no folder \"$W\" on the host; exit 0; }\n");
}

/* Set "$@" to the sweeps launched here (their .pid files), or to only when given. */
void launch_script_names(struct strbuf *sb, const char *only)
{
	if (only) {
		sb_adds(sb, "set -- ");
		remote_quote(sb, only);
		sb_adds(sb, "\n");
	} else {
		sb_adds(sb, "set --\nfor p in results/*.pid; do [ -f \"$p\" ] || continue; n=${p#results/};"
			" set -- \"$@\" \"${n%.pid}\"; done\n"
			"[ $# -gt 0 ] || say none\n");
	}
}

/* Call fn(key, rest) for every line of out that starts with the tag ("sweep-remote: KEY REST"). */
void launch_each_answer(const struct strbuf *out, void (*fn)(const char *key, const char *rest, void *data),
			void *data)
{
	const char *p = out->buf ? out->buf : "";

	while (*p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > strlen(REMOTE_TAG) && !strncmp(p, REMOTE_TAG, strlen(REMOTE_TAG))) {
			char *line = xstrndup(p + strlen(REMOTE_TAG), len - strlen(REMOTE_TAG));
			char *sp = strchr(line, ' ');

			if (sp)
				*sp++ = '\0';
			fn(line, sp ? sp : "", data);
			free(line);
		}
		p += len + (end ? 1 : 0);
	}
}

/* mkdir -p; on failure -1, with the reason in why (no message printed: hosts run on threads). */
int launch_make_dirs(const char *path, struct strbuf *why)
{
	char *p = xstrdup(path);
	int ret = 0;

	for (char *s = p + 1; ; s++) {
		char c = *s;

		if (c != '/' && c)
			continue;
		*s = '\0';
		if (mkdir(p, 0777) && errno != EEXIST) {
			sb_addf(why, "cannot create '%s': %s", p, strerror(errno));
			ret = -1;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

/* The hosts to work on: all, or those named in names ("a,b"). idx gets their indices; -1 after error(). */
int launch_pick_hosts(const struct inventory *inv, const char *names, int **idx, int *n)
{
	*idx = xcalloc((size_t)inv->nhosts + 1, sizeof(int));
	*n = 0;
	if (!names) {
		for (int i = 0; i < inv->nhosts; i++)
			(*idx)[(*n)++] = i;
		return 0;
	}
	for (int i = 0; i < inv->nhosts; i++) {
		const char *p = names;

		while (*p) {
			size_t len = strcspn(p, ",");

			if (len == strlen(inv->hosts[i].name) && !strncmp(p, inv->hosts[i].name, len)) {
				(*idx)[(*n)++] = i;
				break;
			}
			p += len + (p[len] == ',');
		}
	}
	/* Every name given must be a host. */
	for (const char *p = names; *p;) {
		size_t len = strcspn(p, ",");
		int found = 0;

		for (int i = 0; i < inv->nhosts && !found; i++)
			found = len == strlen(inv->hosts[i].name) && !strncmp(p, inv->hosts[i].name, len);
		if (!found) {
			free(*idx);
			*idx = NULL;
			return error("no host '%.*s' in '%s'", (int)len, p, inv->path);
		}
		p += len + (p[len] == ',');
	}
	if (!*n) {
		free(*idx);
		*idx = NULL;
		return error("--hosts names no host");
	}
	return 0;
}

int launch_parse_timeout(const char *s, double *out)
{
	if (parse_double(s, out) || !(*out > 0) || *out > 86400)
		return error("--timeout takes seconds (more than 0), not '%s'", s);
	return 0;
}

const char *launch_answer_name(const char *rest, char *name, size_t n)
{
	const char *sp = strchr(rest, ' ');
	size_t len = sp ? (size_t)(sp - rest) : strlen(rest);

	if (len >= n)
		return NULL;
	memcpy(name, rest, len);
	name[len] = '\0';
	if (!launch_name_ok(name))
		return NULL;
	return sp ? sp + 1 : "";
}

int launch_parse_jobs(const char *s, int *out)
{
	long v;

	if (parse_long(s, &v) || v < 1 || v > 1024)
		return error("--jobs takes a number from 1 to 1024, not '%s'", s);
	*out = (int)v;
	return 0;
}

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
	int nfiles, sync;
	long min_free_kib;
	double timeout;
	/* Per host (index into hosts): */
	int *state;            /* L_STARTED, L_RUNNING, L_ERROR */
	struct strbuf *msg;
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
	if (a->key)
		return;
	a->key = xstrdup(key);
	a->rest = xstrdup(rest);
}

static void answer_release(struct answer *a)
{
	free(a->key);
	free(a->rest);
	sb_release(&a->log);
}

/* The first answer of a script's output; an error when ssh failed or the script said nothing known. */
static int run_script(const struct inventory_host *h, const char *script, double deadline, struct answer *a,
		      struct strbuf *msg)
{
	struct remote_out o;
	int ret = -1;

	memset(a, 0, sizeof(*a));
	if (remote_run(h, script, deadline, &o)) {
		remote_why(&o, msg);
		goto out;
	}
	if (remote_unreachable(&o)) {
		sb_adds(msg, "unreachable: ");
		remote_why(&o, msg);
		goto out;
	}
	launch_each_answer(&o.out, collect_answer, a);
	if (!a->key) {
		sb_adds(msg, "no answer from the host's shell: ");
		remote_why(&o, msg);
		goto out;
	}
	ret = 0;
out:
	remote_out_release(&o);
	return ret;
}

/* With --sync: make the folders, see whether the sweep runs already, copy each file beside its place. */
static int launch_sync(struct launch *l, const struct inventory_host *h, const char *bin, const char *part,
		       double deadline, int k)
{
	struct strbuf sc = STRBUF_INIT;
	struct answer a = { 0 };
	int ret = -1;

	launch_script_begin(&sc, h, 1);
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
	if (!strcmp(a.key, "running")) {
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

static void launch_host(int k, void *data)
{
	struct launch *l = data;
	const struct inventory_host *h = &l->inv->hosts[l->hosts[k]];
	double deadline = now_mono() + l->timeout;
	char *bin = bin_run(h, l->sync), *part = xasprintf(".sweep-part-%ld", (long)getpid());
	struct strbuf sc = STRBUF_INIT;
	struct answer a = { 0 };
	const char *n = l->name;

	l->state[k] = L_ERROR;
	if (l->sync && launch_sync(l, h, bin, part, deadline, k))
		goto out;
	launch_script_begin(&sc, h, 0);
	for (int i = 0; l->sync && i < l->nfiles; i++) {
		const char *rel = file_rel(&l->files[i], bin);

		sb_adds(&sc, "mv -f ");
		remote_quote(&sc, rel);
		sb_adds(&sc, part);
		sb_adds(&sc, " ");
		remote_quote(&sc, rel);
		sb_adds(&sc, " || { say error cannot move the copies into place in \"$W\"; exit 0; }\n");
	}
	sb_adds(&sc, "B=");
	remote_quote(&sc, bin);
	sb_adds(&sc, "; S=");
	remote_quote(&sc, l->spec_rel);
	sb_addf(&sc, "; N=%s; P=results/%s.pid; L=results/%s.log; X=results/%s.exit\n", n, n, n, n);
	sb_addf(&sc,
		"mkdir -p results || { say error cannot make \"$W/results\"; exit 0; }\n"
		"if [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\"; then say running $(cat \"$P\"); exit 0; fi\n"
		"hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host"
		" \"(sweep launch --sync copies this one)\"; exit 0; }\n"
		"[ -f \"$S\" ] || { say error no spec \"'$S'\" in \"$W\" on the host"
		" \"(sweep launch --sync copies it)\"; exit 0; }\n"
		"a=$(df -Pk results 2>/dev/null | awk 'NR == 2 { print $4 }')\n"
		"case $a in ''|*[!0-9]*) ;; *) [ \"$a\" -ge %ld ] || { say error disk full: $a KiB free for"
		" \"$W/results\", under %ld KiB; exit 0; } ;; esac\n"
		"rm -f \"$X\"\n"
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
		" ${SWEEP_LAUNCH_MPI:+$SWEEP_LAUNCH_MPI }$B run $S --db results/$N.db\" >>\"$L\"\n"
		"SS=; command -v setsid >/dev/null 2>&1 && SS=setsid\n"
		/* Its own session (setsid), no terminal, no input: the run outlives this ssh session. The
		 * shell writes its own pid, so the pid file is right whether setsid forks or not. */
		"nohup $SS sh -c 'echo $$ >\"$1\"; $SWEEP_LAUNCH_MPI \"$2\" run \"$3\" --db \"$4\" --progress=30;"
		" echo $? >\"$5\"'"
		" sweep-launch \"$P\" \"$B\" \"$S\" \"results/$N.db\" \"$X\" </dev/null >>\"$L\" 2>&1 &\n"
		"i=0; while [ $i -lt 50 ] && [ ! -s \"$P\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"[ -s \"$P\" ] || { say error the run did not start;"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; }\n"
		/* A run that fails at once (a library missing there, a spec it refuses) is an error now. */
		"i=0; while [ $i -lt 10 ] && [ ! -s \"$X\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"if [ -s \"$X\" ]; then say exited $(cat \"$X\") $(cat \"$P\");"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; fi\n"
		"say started $(cat \"$P\")\n", l->min_free_kib, l->min_free_kib, h->slots, h->slots, h->slots);
	if (run_script(h, sc.buf, deadline, &a, &l->msg[k]))
		goto out;
	if (!strcmp(a.key, "running")) {
		launch_state(l, k, L_RUNNING, "already running", a.rest);
	} else if (!strcmp(a.key, "started")) {
		launch_state(l, k, L_STARTED, "started", a.rest);
		sb_addf(&l->msg[k], " (log %s/results/%s.log)", remote_workdir(h), n);
	} else if (!strcmp(a.key, "exited")) {
		long code = -1;
		char *sp = strchr(a.rest, ' ');

		if (sp)
			*sp = '\0';
		parse_long(a.rest, &code);
		if (code == 0 || code == EXIT_CELLS) {
			/* Finished within the second: nothing was left to run, or it ran quickly. */
			l->state[k] = L_STARTED;
			sb_addf(&l->msg[k], "started and already finished (exit %ld; log %s/results/%s.log)", code,
				remote_workdir(h), n);
		} else {
			sb_addf(&l->msg[k], "sweep run exited %ld at once; the end of %s/results/%s.log:%s", code,
				remote_workdir(h), n, a.log.buf ? a.log.buf : "");
		}
	} else {
		sb_add_printable(&l->msg[k], a.rest, 300);
		if (a.log.len)
			sb_addf(&l->msg[k], "; the end of its log:%s", a.log.buf);
	}
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

	l.sync = o->sync;
	l.timeout = o->timeout;
	l.min_free_kib = o->min_free_kib;
	if (l.sync) {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* /proc/self is scp's own once scp runs: the binary's path is read here. */
		if (len <= 0) {
			error("cannot find this sweep binary to copy: %s", strerror(errno));
			goto out;
		}
		self[len] = '\0';
		l.files = xcalloc(2, sizeof(*l.files));
		l.files[0] = (struct sync_file){ xstrdup(self), NULL, 1 };
		l.files[1] = (struct sync_file){ xstrdup(spec_path), xstrdup(spec_rel), 0 };
		l.nfiles = 2;
		add_command_files(s, spec_rel, &l.files, &l.nfiles);
	}
	l.inv = inv;
	l.hosts = hosts;
	l.name = s->name;
	l.spec_rel = spec_rel;
	l.state = xcalloc((size_t)nhosts, sizeof(int));
	l.msg = xcalloc((size_t)nhosts, sizeof(struct strbuf));
	for (int k = 0; k < nhosts; k++)
		sb_init(&l.msg[k]);
	remote_parallel(nhosts, o->jobs, launch_host, &l);
	for (int k = 0; k < nhosts; k++) {
		printf("%s: %s%s\n", inv->hosts[hosts[k]].name, l.state[k] == L_ERROR ? "error: " : "", l.msg[k].buf);
		failed += l.state[k] == L_ERROR;
	}
	if (failed)
		fprintf(stderr, "sweep: %d of %d host%s not started\n", failed, nhosts, nhosts == 1 ? "" : "s");
	ret = failed;
	for (int k = 0; k < nhosts; k++)
		sb_release(&l.msg[k]);
	free(l.msg);
	free(l.state);
out:
	for (int i = 0; i < l.nfiles; i++) {
		free(l.files[i].local);
		free(l.files[i].rel);
	}
	free(l.files);
	return ret;
}
