/* launch.c: rented hosts over ssh: `sweep launch`, `sweep status --hosts`, `sweep pull`, `sweep snapshot`. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inventory.h"
#include "json.h"
#include "remote.h"
#include "spec.h"
#include "store.h"
#include "table.h"
#include "util.h"

/*
 * What a launch leaves on a host, under its workdir: results/NAME.db (the run's database), .log (its
 * output, appended to by every launch), .pid (the pid of the shell that runs it: the leader of its own
 * session) and .exit (its exit status, once it ended). The .pid files are how status and pull find the
 * sweeps launched there.
 */
#define LAUNCH_TIMEOUT 120      /* seconds per host: launch (with --sync: copies) and status */
#define PULL_TIMEOUT 900        /* seconds per host for pull: a snapshot and its copy may be large */
#define LAUNCH_JOBS 16          /* hosts handled at once */
#define LAUNCH_MIN_FREE "1G"    /* launch refuses a host with less free space for results/ */
#define REMOTE_TAG "sweep-remote: "

/* Shell functions every remote script starts with. A pid file names a live run when that process is
 * there and (where /proc tells) its command line holds the pid file's path: a pid reused by another
 * program after a reboot does not count. */
static const char script_prelude[] =
	"alive() { kill -0 \"$1\" 2>/dev/null || return 1; [ -r \"/proc/$1/cmdline\" ] || return 0;"
	" tr '\\000' '\\n' <\"/proc/$1/cmdline\" | grep -qxF \"$2\"; }\n"
	"hasbin() { case $1 in */*) [ -x \"$1\" ] ;; *) command -v \"$1\" >/dev/null 2>&1 ;; esac; }\n"
	"say() { printf '%s\\n' \"" REMOTE_TAG "$*\"; }\n";

/* A sweep name that came from a host: it names local files, so it is checked like a spec's. */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 200 && s[0] != '.' && s[0] != '-' &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* Printable text from another machine, for the terminal: control characters become '?'. */
static void add_shown(struct strbuf *sb, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		sb_addc(sb, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

/* The script's start: its folder (made with mkdir), the variables W and B, and the functions. */
static void script_begin(struct strbuf *sb, const struct inventory_host *h, int mkdir)
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
static void script_names(struct strbuf *sb, const char *only)
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
static void each_answer(const struct strbuf *out, void (*fn)(const char *key, const char *rest, void *data),
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
static int make_dirs(const char *path, struct strbuf *why)
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
static int pick_hosts(const struct inventory *inv, const char *names, int **idx, int *n)
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

static int parse_timeout(const char *s, double *out)
{
	if (parse_double(s, out) || !(*out > 0) || *out > 86400)
		return error("--timeout takes seconds (more than 0), not '%s'", s);
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
			add_shown(&a->log, rest, 300);
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
	each_answer(&o.out, collect_answer, a);
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

	script_begin(&sc, h, 1);
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
		l->state[k] = L_RUNNING;
		sb_adds(&l->msg[k], "already running, pid ");
		add_shown(&l->msg[k], a.rest, 20);
		ret = 1;
	} else if (strcmp(a.key, "ready")) {
		add_shown(&l->msg[k], a.rest, 300);
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
	script_begin(&sc, h, 0);
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
		"echo \"--- sweep launch $(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ): $B run $S --db results/$N.db\""
		" >>\"$L\"\n"
		"SS=; command -v setsid >/dev/null 2>&1 && SS=setsid\n"
		/* Its own session (setsid), no terminal, no input: the run outlives this ssh session. The
		 * shell writes its own pid, so the pid file is right whether setsid forks or not. */
		"nohup $SS sh -c 'echo $$ >\"$1\"; \"$2\" run \"$3\" --db \"$4\" --progress=30; echo $? >\"$5\"'"
		" sweep-launch \"$P\" \"$B\" \"$S\" \"results/$N.db\" \"$X\" </dev/null >>\"$L\" 2>&1 &\n"
		"i=0; while [ $i -lt 50 ] && [ ! -s \"$P\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"[ -s \"$P\" ] || { say error the run did not start;"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; }\n"
		/* A run that fails at once (a library missing there, a spec it refuses) is an error now. */
		"i=0; while [ $i -lt 10 ] && [ ! -s \"$X\" ]; do sleep 0.1; i=$((i + 1)); done\n"
		"if [ -s \"$X\" ]; then say exited $(cat \"$X\") $(cat \"$P\");"
		" tail -n 3 \"$L\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; fi\n"
		"say started $(cat \"$P\")\n", l->min_free_kib, l->min_free_kib);
	if (run_script(h, sc.buf, deadline, &a, &l->msg[k]))
		goto out;
	if (!strcmp(a.key, "running")) {
		l->state[k] = L_RUNNING;
		sb_adds(&l->msg[k], "already running, pid ");
		add_shown(&l->msg[k], a.rest, 20);
	} else if (!strcmp(a.key, "started")) {
		l->state[k] = L_STARTED;
		sb_adds(&l->msg[k], "started, pid ");
		add_shown(&l->msg[k], a.rest, 20);
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
		add_shown(&l->msg[k], a.rest, 300);
		if (a.log.len)
			sb_addf(&l->msg[k], "; the end of its log:%s", a.log.buf);
	}
out:
	answer_release(&a);
	sb_release(&sc);
	free(bin);
	free(part);
}

/* Where the spec goes under the workdir: its own relative path when it has one, else sweeps/BASENAME. */
static char *spec_place(const char *path)
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

int cmd_launch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sync", no_argument, NULL, 's' }, { "hosts", required_argument, NULL, 'H' },
		{ "timeout", required_argument, NULL, 't' }, { "min-free", required_argument, NULL, 'm' },
		{ "jobs", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 },
	};
	struct launch l = { 0 };
	struct inventory inv = { 0 };
	struct spec s;
	const char *names = NULL, *min_free = LAUNCH_MIN_FREE;
	char *spec_rel = NULL;
	int *hosts = NULL, nhosts = 0, opt, ret = EXIT_USAGE, loaded = 0, jobs = LAUNCH_JOBS, failed = 0;
	double bytes;

	l.timeout = LAUNCH_TIMEOUT;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		long v;

		switch (opt) {
		case 's':
			l.sync = 1;
			break;
		case 'H':
			names = optarg;
			break;
		case 't':
			if (parse_timeout(optarg, &l.timeout))
				return EXIT_USAGE;
			break;
		case 'm':
			min_free = optarg;
			break;
		case 'j':
			if (parse_long(optarg, &v) || v < 1 || v > 1024)
				return error("--jobs takes a number from 1 to 1024, not '%s'", optarg), EXIT_USAGE;
			jobs = (int)v;
			break;
		default:
			return cli_usage("launch");
		}
	}
	if (optind != argc - 2)
		return cli_usage("launch");
	if (parse_bytes(min_free, &bytes) || bytes < 0 || bytes > 1e18)
		return error("--min-free takes a size (e.g. 10G), not '%s'", min_free), EXIT_USAGE;
	l.min_free_kib = (long)ceil(bytes / 1024);
	if (inventory_load(argv[optind], &inv))
		return EXIT_USAGE;
	if (pick_hosts(&inv, names, &hosts, &nhosts))
		goto out;
	if (spec_load(argv[optind + 1], &s))
		goto out;
	loaded = 1;
	if (!name_ok(s.name)) {
		error("sweep name '%s': its files on the hosts would be hidden or taken for options", s.name);
		goto out;
	}
	if (!(spec_rel = spec_place(argv[optind + 1]))) {
		error("'%s': no place for it on the hosts (use a name of letters, digits and ._+@,=-)",
		      argv[optind + 1]);
		goto out;
	}
	if (l.sync) {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* /proc/self is scp's own once scp runs: the binary's path is read here. */
		if (len <= 0) {
			error("cannot find this sweep binary to copy: %s", strerror(errno));
			ret = EXIT_FAIL;
			goto out;
		}
		self[len] = '\0';
		l.files = xcalloc(2, sizeof(*l.files));
		l.files[0] = (struct sync_file){ xstrdup(self), NULL, 1 };
		l.files[1] = (struct sync_file){ xstrdup(argv[optind + 1]), xstrdup(spec_rel), 0 };
		l.nfiles = 2;
		add_command_files(&s, spec_rel, &l.files, &l.nfiles);
	}
	l.inv = &inv;
	l.hosts = hosts;
	l.name = s.name;
	l.spec_rel = spec_rel;
	l.state = xcalloc((size_t)nhosts, sizeof(int));
	l.msg = xcalloc((size_t)nhosts, sizeof(struct strbuf));
	for (int k = 0; k < nhosts; k++)
		sb_init(&l.msg[k]);
	remote_parallel(nhosts, jobs, launch_host, &l);
	for (int k = 0; k < nhosts; k++) {
		printf("%s: %s%s\n", inv.hosts[hosts[k]].name, l.state[k] == L_ERROR ? "error: " : "", l.msg[k].buf);
		failed += l.state[k] == L_ERROR;
	}
	if (failed)
		fprintf(stderr, "sweep: %d of %d host%s not started\n", failed, nhosts, nhosts == 1 ? "" : "s");
	ret = failed ? EXIT_CELLS : EXIT_OK;
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
	free(spec_rel);
	free(hosts);
	if (loaded)
		spec_release(&s);
	inventory_release(&inv);
	return ret;
}

/* ---- sweep status DB --json: the line status --hosts reads over ssh ---- */

static int json_row(const struct store_row *row, void *data)
{
	struct strbuf *sb = data;
	/* Columns: name, then type: 'n' number or null, 's' string or null. */
	static const char *const names[] = { "sweeps", "cells", "ok", "planned", "running", "quarantined",
		"failed", "last", "run", "run_status", "run_started", "run_finished", "run_ok", "elapsed", "now" };
	static const char types[] = "snnnnnnsnsssnns";
	double rate = NAN, eta = NAN;

	sb_addc(sb, '{');
	for (int i = 0; i < row->ncol && i < (int)ARRAY_SIZE(names); i++) {
		sb_addf(sb, "%s\"%s\":", i ? "," : "", names[i]);
		if (!row->text[i])
			sb_adds(sb, "null");
		else if (types[i] == 's')
			json_add_str(sb, row->text[i]);
		else
			json_add_num(sb, row->num[i]);
	}
	/* Cells per second over the latest run, and the time the cells left need at that rate. */
	if (row->text[12] && row->text[13] && row->num[13] > 0)
		rate = row->num[12] / row->num[13];
	if (rate > 0 && row->text[9] && !strcmp(row->text[9], "running"))
		eta = (row->num[3] + row->num[4]) / rate;
	sb_adds(sb, ",\"rate\":");
	json_add_num(sb, rate);
	sb_adds(sb, ",\"eta\":");
	json_add_num(sb, eta);
	sb_addc(sb, '}');
	return 0;
}

static int status_json(const char *db)
{
	struct strbuf sb = STRBUF_INIT;
	struct store *st;
	int ret = EXIT_FAIL;

	if (store_open(db, STORE_RO, &st))
		return EXIT_USAGE;
	if (!store_query(st,
			 "SELECT (SELECT group_concat(name, ',') FROM sweeps),"
			 " c.cells, c.ok, c.planned, c.running, c.quarantined,"
			 " (SELECT count(*) FROM results WHERE status != 'ok'),"
			 " (SELECT max(started) FROM results),"
			 " r.id, r.status, r.started, r.finished,"
			 " (SELECT count(*) FROM results x WHERE x.run = r.id AND x.status = 'ok'),"
			 " (julianday(coalesce(r.finished, 'now')) - julianday(r.started)) * 86400,"
			 " strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
			 " FROM (SELECT count(*) FILTER (WHERE state != 'template') AS cells,"
			 "  count(*) FILTER (WHERE state = 'ok') AS ok,"
			 "  count(*) FILTER (WHERE state = 'planned') AS planned,"
			 "  count(*) FILTER (WHERE state = 'running') AS running,"
			 "  count(*) FILTER (WHERE state = 'quarantined') AS quarantined FROM cells) c"
			 " LEFT JOIN (SELECT * FROM runs ORDER BY id DESC LIMIT 1) r ON 1",
			 NULL, 0, 1, json_row, &sb)) {
		printf("%s\n", sb.buf ? sb.buf : "{}");
		ret = EXIT_OK;
	}
	sb_release(&sb);
	store_close(st);
	return ret;
}

/* ---- sweep status --hosts ---- */

/* One sweep of one host as the table shows it. */
struct status_row {
	char *name, *state;
	struct json_obj info;  /* the host's `sweep status --json` line; empty when none */
};

struct status_host {
	struct status_row *rows;
	int nrows;
	int error;             /* the host could not be read: why in msg */
	int none;              /* nothing launched there */
	struct strbuf msg;
};

struct status {
	const struct inventory *inv;
	const int *hosts;
	const char *only;
	double timeout;
	struct status_host *res;
};

static void status_answer(const char *key, const char *rest, void *data)
{
	struct status_host *r = data;
	char name[256];
	const char *sp = strchr(rest, ' ');
	size_t len = sp ? (size_t)(sp - rest) : strlen(rest);

	if (!strcmp(key, "error")) {
		if (!r->error) {
			r->error = 1;
			add_shown(&r->msg, rest, 300);
		}
		return;
	}
	if (!strcmp(key, "none")) {
		r->none = 1;
		return;
	}
	if (len >= sizeof(name))
		return;
	memcpy(name, rest, len);
	name[len] = '\0';
	if (!name_ok(name))
		return;
	if (!strcmp(key, "state")) {
		r->rows = xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof(*r->rows));
		r->rows[r->nrows] = (struct status_row){ xstrdup(name), NULL, JSON_OBJ_INIT };
		{
			struct strbuf st = STRBUF_INIT;

			add_shown(&st, sp ? sp + 1 : "-", 40);
			r->rows[r->nrows].state = sb_detach(&st);
		}
		r->nrows++;
	} else if (!strcmp(key, "json") && sp && r->nrows && !strcmp(r->rows[r->nrows - 1].name, name)) {
		char err[128];
		struct status_row *row = &r->rows[r->nrows - 1];

		json_obj_release(&row->info);
		if (json_parse_flat(sp + 1, &row->info, 1, err, sizeof(err)))
			memset(&row->info, 0, sizeof(row->info));
	}
}

static void status_host(int k, void *data)
{
	struct status *s = data;
	const struct inventory_host *h = &s->inv->hosts[s->hosts[k]];
	struct status_host *r = &s->res[k];
	struct strbuf sc = STRBUF_INIT;
	struct remote_out o;

	script_begin(&sc, h, 0);
	sb_adds(&sc, "hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host; exit 0; }\n");
	script_names(&sc, s->only);
	sb_adds(&sc, "for n in \"$@\"; do\n"
		"  st=stopped\n"
		"  if [ -s \"results/$n.exit\" ]; then st=\"exit $(cat \"results/$n.exit\")\"\n"
		"  elif [ -s \"results/$n.pid\" ] && alive \"$(cat \"results/$n.pid\")\" \"results/$n.pid\"; then"
		" st=running\n"
		"  elif [ ! -f \"results/$n.pid\" ]; then st=not-launched; fi\n"
		"  say state \"$n\" \"$st\"\n"
		"  [ -f \"results/$n.db\" ] &&"
		" say json \"$n\" \"$(\"$B\" status \"results/$n.db\" --json 2>/dev/null | head -n 1)\"\n"
		"done\n");
	if (remote_run(h, sc.buf, now_mono() + s->timeout, &o)) {
		r->error = 1;
		remote_why(&o, &r->msg);
	} else if (remote_unreachable(&o)) {
		r->error = 2;
		remote_why(&o, &r->msg);
	} else {
		each_answer(&o.out, status_answer, r);
		if (!r->error && !r->none && !r->nrows) {
			r->error = 1;
			sb_adds(&r->msg, "no answer from the host's shell: ");
			remote_why(&o, &r->msg);
		}
	}
	remote_out_release(&o);
	sb_release(&sc);
}

/* Seconds as "45s", "12m", "3h05m", "2d04h". */
static void add_duration(struct strbuf *sb, double s)
{
	long v = (long)llround(s);

	if (v < 60)
		sb_addf(sb, "%lds", v);
	else if (v < 3600)
		sb_addf(sb, "%ldm%02lds", v / 60, v % 60);
	else if (v < 86400)
		sb_addf(sb, "%ldh%02ldm", v / 3600, v % 3600 / 60);
	else
		sb_addf(sb, "%ldd%02ldh", v / 86400, v % 86400 / 3600);
}

static double info_num(const struct json_obj *o, const char *key)
{
	const struct json_pair *p = json_obj_find(o, key);
	double v;

	if (!p || p->type != JSON_NUM || parse_double(p->val, &v))
		return NAN;
	return v;
}

static const char *info_str(const struct json_obj *o, const char *key)
{
	const struct json_pair *p = json_obj_find(o, key);

	return p && p->type == JSON_STR ? p->val : NULL;
}

/* Seconds from ISO time a to ISO time b (both "YYYY-MM-DDTHH:MM:SS..."), NaN when unreadable. */
static double iso_diff(const char *a, const char *b)
{
	struct tm ta = { 0 }, tb = { 0 };

	if (!a || !b || sscanf(a, "%d-%d-%dT%d:%d:%d", &ta.tm_year, &ta.tm_mon, &ta.tm_mday, &ta.tm_hour,
			       &ta.tm_min, &ta.tm_sec) != 6 ||
	    sscanf(b, "%d-%d-%dT%d:%d:%d", &tb.tm_year, &tb.tm_mon, &tb.tm_mday, &tb.tm_hour, &tb.tm_min,
		   &tb.tm_sec) != 6)
		return NAN;
	ta.tm_year -= 1900;
	tb.tm_year -= 1900;
	ta.tm_mon--;
	tb.tm_mon--;
	return difftime(timegm(&tb), timegm(&ta));
}

/* The table row of one sweep on one host. */
static void status_table_row(struct table *t, const char *host, const struct status_row *r)
{
	struct strbuf c[8];
	const char *cells[9];
	const struct json_obj *in = &r->info;
	double total = info_num(in, "cells"), ok = info_num(in, "ok"), rate = info_num(in, "rate");
	double eta = info_num(in, "eta"), failed = info_num(in, "failed"), quar = info_num(in, "quarantined");
	double age = iso_diff(info_str(in, "last"), info_str(in, "now"));
	const char *last = info_str(in, "last");
	long code = -1;
	int exited = !strncmp(r->state, "exit ", 5) && !parse_long(r->state + 5, &code);

	for (int i = 0; i < 8; i++)
		sb_init(&c[i]);
	add_shown(&c[0], r->name, 64);
	/* The state: from the pid and exit files, which know whether the process is there. */
	if (!strcmp(r->state, "running"))
		sb_adds(&c[1], "running");
	else if (exited)
		sb_adds(&c[1], code == 0 ? "finished" : code == EXIT_CELLS ? "finished, incomplete" : "failed");
	else if (!strcmp(r->state, "stopped"))
		sb_adds(&c[1], "stopped");
	else
		sb_adds(&c[1], r->state);
	if (exited && code != 0 && code != EXIT_CELLS)
		sb_addf(&c[1], " (exit %ld)", code);
	if (!isnan(total) && !isnan(ok))
		sb_addf(&c[2], "%.0f/%.0f", ok, total);
	else
		sb_adds(&c[2], "-");
	if (rate > 0)
		sb_addf(&c[3], rate >= 10 ? "%.0f/s" : rate >= 0.1 ? "%.2f/s" : "%.1f/min", rate >= 0.1 ? rate :
			rate * 60);
	else
		sb_adds(&c[3], "-");
	if (!isnan(eta) && !strcmp(r->state, "running"))
		add_duration(&c[4], eta);
	else
		sb_adds(&c[4], "-");
	sb_addf(&c[5], "%.0f", isnan(failed) ? 0 : failed);
	if (quar > 0)
		sb_addf(&c[5], " (%.0f quarantined)", quar);
	if (last) {
		/* To the second, and how long ago by the host's clock (no skew with ours). */
		add_shown(&c[6], last, 19);
		if (!isnan(age) && age >= 0) {
			sb_adds(&c[6], " (");
			add_duration(&c[6], age);
			sb_adds(&c[6], " ago)");
		}
	} else {
		sb_adds(&c[6], "-");
	}
	cells[0] = host;
	for (int i = 0; i < 7; i++)
		cells[i + 1] = c[i].buf;
	table_add(t, cells);
	for (int i = 0; i < 8; i++)
		sb_release(&c[i]);
}

static int status_hosts(const char *path, const char *names, const char *only, double timeout, int jobs)
{
	static const char *const head[] = { "host", "sweep", "state", "done", "rate", "eta", "failed",
		"last result" };
	struct inventory inv;
	struct status s = { 0 };
	struct table t;
	int *hosts = NULL, nhosts, bad = 0, ret = EXIT_USAGE;

	if (inventory_load(path, &inv))
		return EXIT_USAGE;
	if (pick_hosts(&inv, names, &hosts, &nhosts))
		goto out;
	s.inv = &inv;
	s.hosts = hosts;
	s.only = only;
	s.timeout = timeout;
	s.res = xcalloc((size_t)nhosts, sizeof(*s.res));
	remote_parallel(nhosts, jobs, status_host, &s);
	table_init(&t, 8, head);
	for (int k = 0; k < nhosts; k++) {
		const struct status_host *r = &s.res[k];
		const char *name = inv.hosts[hosts[k]].name;

		if (r->error || r->none) {
			const char *cells[8] = { name, "-", r->error == 2 ? "unreachable" : r->error ? "error" :
						 "nothing launched", "-", "-", "-", "-", "-" };

			table_add(&t, cells);
			bad += r->error != 0;
			continue;
		}
		for (int i = 0; i < r->nrows; i++)
			status_table_row(&t, name, &r->rows[i]);
	}
	table_print(&t, stdout, TABLE_TEXT);
	table_release(&t);
	for (int k = 0; k < nhosts; k++) {
		struct status_host *r = &s.res[k];

		if (r->error)
			printf("%s: %s%s\n", inv.hosts[hosts[k]].name, r->error == 2 ? "unreachable: " : "", r->msg.buf);
		for (int i = 0; i < r->nrows; i++) {
			free(r->rows[i].name);
			free(r->rows[i].state);
			json_obj_release(&r->rows[i].info);
		}
		free(r->rows);
		sb_release(&r->msg);
	}
	free(s.res);
	ret = bad ? EXIT_CELLS : EXIT_OK;
out:
	free(hosts);
	inventory_release(&inv);
	return ret;
}

int cmd_status_remote(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hosts", required_argument, NULL, 'H' }, { "json", no_argument, NULL, 'J' },
		{ "sweep", required_argument, NULL, 'S' }, { "timeout", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' }, { NULL, 0, NULL, 0 },
	};
	const char *inv = NULL, *only = NULL, *names = NULL;
	double timeout = LAUNCH_TIMEOUT;
	int opt, json = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'H':
			inv = optarg;
			break;
		case 'J':
			json = 1;
			break;
		case 'S':
			if (!name_ok(optarg))
				return error("--sweep takes a sweep name, not '%s'", optarg), EXIT_USAGE;
			only = optarg;
			break;
		case 'o':
			names = optarg;
			break;
		case 't':
			if (parse_timeout(optarg, &timeout))
				return EXIT_USAGE;
			break;
		default:
			return cli_usage("status");
		}
	}
	if (json && !inv && optind == argc - 1)
		return status_json(argv[optind]);
	if (inv && !json && optind == argc)
		return status_hosts(inv, names, only, timeout, LAUNCH_JOBS);
	return cli_usage("status");
}

/* ---- sweep pull ---- */

struct pulled {
	char *name;            /* the sweep */
	char *local;           /* its snapshot here, once copied */
};

struct pull_host {
	struct pulled *v;
	int n;
	int error;             /* 2: unreachable */
	struct strbuf msg;     /* errors and notes, one per line */
};

struct pull {
	const struct inventory *inv;
	const int *hosts;
	const char *only, *dir;
	double timeout;
	struct pull_host *res;
};

static void pull_answer(const char *key, const char *rest, void *data)
{
	struct pull_host *r = data;
	char name[256];
	const char *sp = strchr(rest, ' ');
	size_t len = sp ? (size_t)(sp - rest) : strlen(rest);

	if (!strcmp(key, "error")) {
		r->error = 1;
		add_shown(&r->msg, rest, 300);
		sb_addc(&r->msg, '\n');
		return;
	}
	if (!strcmp(key, "none")) {
		r->error = 1;
		sb_adds(&r->msg, "nothing launched there (no results/*.pid)\n");
		return;
	}
	if (len >= sizeof(name))
		return;
	memcpy(name, rest, len);
	name[len] = '\0';
	if (!name_ok(name))
		return;
	if (!strcmp(key, "snap")) {
		r->v = xrealloc(r->v, (size_t)(r->n + 1) * sizeof(*r->v));
		r->v[r->n++] = (struct pulled){ xstrdup(name), NULL };
	} else if (!strcmp(key, "nodb")) {
		sb_addf(&r->msg, "%s: no database yet\n", name);
	} else if (!strcmp(key, "snaperr")) {
		r->error = 1;
		sb_addf(&r->msg, "%s: snapshot failed: ", name);
		add_shown(&r->msg, sp ? sp + 1 : "", 300);
		sb_addc(&r->msg, '\n');
	}
}

static void pull_host(int k, void *data)
{
	struct pull *p = data;
	const struct inventory_host *h = &p->inv->hosts[p->hosts[k]];
	struct pull_host *r = &p->res[k];
	double deadline = now_mono() + p->timeout;
	char *token = xasprintf("%ld-%d", (long)getpid(), k), *dir = NULL;
	struct strbuf sc = STRBUF_INIT;
	struct remote_out o;
	int dir_ok;

	script_begin(&sc, h, 0);
	sb_adds(&sc, "hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host; exit 0; }\n");
	script_names(&sc, p->only);
	sb_addf(&sc, "for n in \"$@\"; do\n"
		"  [ -f \"results/$n.db\" ] || { say nodb \"$n\"; continue; }\n"
		"  o=\"results/.$n.pull-%s.db\"; rm -f \"$o\"\n"
		"  if e=$(\"$B\" snapshot \"results/$n.db\" \"$o\" 2>&1); then say snap \"$n\";"
		" else say snaperr \"$n\" \"$(printf '%%s\\n' \"$e\" | tail -n 1)\"; fi\n"
		"done\n", token);
	if (remote_run(h, sc.buf, deadline, &o) || remote_unreachable(&o)) {
		r->error = remote_unreachable(&o) ? 2 : 1;
		remote_why(&o, &r->msg);
		sb_addc(&r->msg, '\n');
		remote_out_release(&o);
		goto out;
	}
	each_answer(&o.out, pull_answer, r);
	if (!r->error && !r->n && !r->msg.len) {
		r->error = 1;
		sb_adds(&r->msg, "no answer from the host's shell: ");
		remote_why(&o, &r->msg);
		sb_addc(&r->msg, '\n');
	}
	remote_out_release(&o);
	if (!r->n)
		goto out;
	/* Copy each snapshot beside its place here, then over it: a failed copy leaves the last one. */
	dir = xasprintf("%s/pulled/%s", p->dir, h->name);
	dir_ok = !make_dirs(dir, &r->msg);
	if (!dir_ok) {
		r->error = 1;
		sb_addc(&r->msg, '\n');
	}
	for (int i = 0; i < r->n && dir_ok; i++) {
		char *rel = xasprintf("results/.%s.pull-%s.db", r->v[i].name, token);
		char *path = remote_path(h, rel), *local = xasprintf("%s/%s.db", dir, r->v[i].name);
		char *part = xasprintf("%s.part", local);
		struct remote_out c;

		unlink(part);
		if (remote_get(h, path, part, deadline, &c)) {
			r->error = remote_unreachable(&c) ? 2 : 1;
			sb_addf(&r->msg, "%s: cannot copy the snapshot back: ", r->v[i].name);
			remote_why(&c, &r->msg);
			sb_addc(&r->msg, '\n');
			unlink(part);
		} else if (rename(part, local)) {
			r->error = 1;
			sb_addf(&r->msg, "%s: cannot rename '%s': %s\n", r->v[i].name, part, strerror(errno));
		} else {
			r->v[i].local = local;
			local = NULL;
		}
		remote_out_release(&c);
		free(rel);
		free(path);
		free(local);
		free(part);
	}
	/* The snapshots on the host go, copied or not (bounded: a few seconds past the deadline at most). */
	sb_reset(&sc);
	script_begin(&sc, h, 0);
	for (int i = 0; i < r->n; i++)
		sb_addf(&sc, "rm -f \"results/.%s.pull-%s.db\"\n", r->v[i].name, token);
	if (!remote_run(h, sc.buf, (deadline > now_mono() ? deadline : now_mono()) + 15, &o))
		remote_out_release(&o);
out:
	sb_release(&sc);
	free(token);
	free(dir);
}

int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "into", required_argument, NULL, 'i' }, { "sweep", required_argument, NULL, 'S' },
		{ "hosts", required_argument, NULL, 'H' }, { "timeout", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 },
	};
	struct inventory inv;
	struct pull p = { 0 };
	const char *into = NULL, *names = NULL;
	char *dir = NULL;
	char **merged = NULL;
	int *hosts = NULL, nhosts, nmerged = 0, opt, jobs = LAUNCH_JOBS, bad = 0, ret = EXIT_USAGE;

	p.timeout = PULL_TIMEOUT;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		long v;

		switch (opt) {
		case 'i':
			into = optarg;
			break;
		case 'S':
			if (!name_ok(optarg))
				return error("--sweep takes a sweep name, not '%s'", optarg), EXIT_USAGE;
			p.only = optarg;
			break;
		case 'H':
			names = optarg;
			break;
		case 't':
			if (parse_timeout(optarg, &p.timeout))
				return EXIT_USAGE;
			break;
		case 'j':
			if (parse_long(optarg, &v) || v < 1 || v > 1024)
				return error("--jobs takes a number from 1 to 1024, not '%s'", optarg), EXIT_USAGE;
			jobs = (int)v;
			break;
		default:
			return cli_usage("pull");
		}
	}
	if (optind != argc - 1)
		return cli_usage("pull");
	if (inventory_load(argv[optind], &inv))
		return EXIT_USAGE;
	if (pick_hosts(&inv, names, &hosts, &nhosts))
		goto out;
	/* Snapshots are kept beside the output, in pulled/HOST/: the last one of each host stays there. */
	if (into) {
		const char *slash = strrchr(into, '/');

		dir = slash ? xstrndup(into, (size_t)(slash - into) + (slash == into)) : xstrdup(".");
	} else {
		dir = xstrdup("results");
	}
	p.inv = &inv;
	p.hosts = hosts;
	p.dir = dir;
	p.res = xcalloc((size_t)nhosts, sizeof(*p.res));
	remote_parallel(nhosts, jobs, pull_host, &p);
	/* Merging is one writer at a time, here: each snapshot on its own, so that one a merge refuses
	 * leaves the others in. */
	for (int k = 0; k < nhosts; k++) {
		struct pull_host *r = &p.res[k];
		const char *name = inv.hosts[hosts[k]].name;

		for (const char *m = r->msg.buf ? r->msg.buf : ""; *m;) {
			size_t len = strcspn(m, "\n");

			printf("%s: %s%.*s\n", name, r->error == 2 ? "unreachable: " : "", (int)len, m);
			m += len + (m[len] == '\n');
		}
		for (int i = 0; i < r->n; i++) {
			struct store_merge_stats ms;
			const char *in = r->v[i].local;
			char *out = into ? xstrdup(into) : xasprintf("results/%s.db", r->v[i].name);
			int seen = 0;

			if (!in) {
				free(out);
				continue;
			}
			if (store_merge(out, &in, 1, NULL, &ms)) {
				printf("%s: %s: refused by the merge (see above); '%s' is as it was\n", name,
				       r->v[i].name, out);
				r->error = 1;
				free(out);
				continue;
			}
			printf("%s: %s: %" PRIu64 " cells, %" PRIu64 " results new, %" PRIu64 " already there, %"
			       PRIu64 " conflicts -> %s\n", name, r->v[i].name, ms.cells, ms.results_new,
			       ms.results_same, ms.conflicts, out);
			for (int j = 0; j < nmerged && !seen; j++)
				seen = !strcmp(merged[j], out);
			if (!seen) {
				merged = xrealloc(merged, (size_t)(nmerged + 1) * sizeof(*merged));
				merged[nmerged++] = out;
			} else {
				free(out);
			}
		}
		bad += r->error != 0;
	}
	/* The inventory's labels into the hosts of every output, for reports by label.NAME. */
	for (int j = 0; j < nmerged; j++) {
		struct store *st;

		if (store_open(merged[j], STORE_RW, &st) || inventory_apply(&inv, st, NULL, NULL))
			warning("the hosts of '%s' were not labelled from '%s'", merged[j], inv.path);
		store_close(st);
	}
	if (bad)
		fprintf(stderr, "sweep: %d of %d host%s not pulled\n", bad, nhosts, nhosts == 1 ? "" : "s");
	ret = bad ? EXIT_CELLS : EXIT_OK;
	for (int k = 0; k < nhosts; k++) {
		for (int i = 0; i < p.res[k].n; i++) {
			free(p.res[k].v[i].name);
			free(p.res[k].v[i].local);
		}
		free(p.res[k].v);
		sb_release(&p.res[k].msg);
	}
	free(p.res);
out:
	for (int j = 0; j < nmerged; j++)
		free(merged[j]);
	free(merged);
	free(dir);
	free(hosts);
	inventory_release(&inv);
	return ret;
}

/* ---- sweep snapshot ---- */

int cmd_snapshot(int argc, char **argv)
{
	if (argc != 3)
		return cli_usage("snapshot");
	if (store_snapshot(argv[1], argv[2]))
		return EXIT_FAIL;
	printf("%s: snapshot written to %s\n", argv[1], argv[2]);
	return EXIT_OK;
}
