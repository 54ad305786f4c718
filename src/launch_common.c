/* launch_common.c: what launch, status --hosts, pull and stop share: remote scripts, their answers,
 * the hosts picked, option values. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "inventory.h"
#include "launch.h"
#include "remote.h"
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
int launch_ask(const struct inventory_host *h, const char *script, double deadline,
	       void (*fn)(const char *key, const char *rest, void *data), int (*answered)(void *data), void *data,
	       struct strbuf *why)
{
	struct remote_out o;
	int ret = 0;

	if (remote_run(h, script, deadline, &o) || remote_unreachable(&o)) {
		ret = remote_unreachable(&o) ? 2 : 1;
		remote_why(&o, why);
	} else {
		launch_each_answer(&o.out, fn, data);
		if (!answered(data)) {
			ret = 1;
			sb_adds(why, "no answer from the host's shell: ");
			remote_why(&o, why);
		}
	}
	remote_out_release(&o);
	return ret;
}

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

