/* launch_stop.c: `sweep stop`: launched runs interrupted with SIGTERM, waited for a bounded time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "inventory.h"
#include "launch.h"
#include "remote.h"
#include "util.h"

struct stop_host {
	struct strbuf lines;   /* "NAME: what" per sweep, one a line */
	struct strbuf idle;    /* the same for sweeps not running: shown when nothing else is */
	int error;             /* 2: unreachable; 1: could not be read, or a run still there */
	int nstopped;
	double wait;
};

static void stop_answer(const char *key, const char *rest, void *data)
{
	struct stop_host *r = data;
	char name[256];
	const char *more;

	if (!strcmp(key, "error")) {
		r->error = 1;
		sb_add_printable(&r->lines, rest, 300);
		sb_addc(&r->lines, '\n');
		return;
	}
	if (!strcmp(key, "none")) {
		sb_adds(&r->lines, "nothing launched there\n");
		return;
	}
	if (!(more = launch_answer_name(rest, name, sizeof(name))))
		return;
	sb_addf(!strcmp(key, "idle") ? &r->idle : &r->lines, "%s: ", name);
	if (!strcmp(key, "stopped")) {
		r->nstopped++;
		sb_adds(&r->lines, "stopped");
		if (*more) {
			sb_adds(&r->lines, " (exit ");
			sb_add_printable(&r->lines, more, 20);
			sb_adds(&r->lines, ")");
		}
		sb_addf(&r->lines, "; 'sweep launch' again resumes it\n");
	} else if (!strcmp(key, "idle")) {
		sb_adds(&r->idle, "not running\n");
	} else if (!strcmp(key, "still")) {
		r->error = 1;
		sb_addf(&r->lines, "still running %g s after SIGTERM, pid ", r->wait);
		sb_add_printable(&r->lines, more, 20);
		sb_addc(&r->lines, '\n');
	}
}

static int stop_answered(void *data)
{
	const struct stop_host *r = data;

	return r->lines.len || r->idle.len;
}

static void stop_host(int k, void *data)
{
	const struct launch_fan *s = data;
	const struct inventory_host *h = &s->inv->hosts[s->hosts[k]];
	struct stop_host *r = (struct stop_host *)s->res + k;
	struct strbuf sc = STRBUF_INIT;
	long tenths = (long)(s->seconds * 10);
	int rc;

	r->wait = s->seconds;

	launch_script_begin(&sc, h, 0);
	launch_script_names(&sc, s->only);
	/* All signalled first, then waited for together: the bound is one wait, not one a sweep. The run's
	 * shell leads its process group (setsid); without setsid the shell alone is signalled. The
	 * .stopped file tells status that the exit was asked for (launch removes it). */
	sb_addf(&sc, "sig=\nfor n in \"$@\"; do\n"
		"  P=\"results/$n.pid\"\n"
		"  if [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\"; then\n"
		"    p=$(cat \"$P\"); date +%%s >\"results/$n.stopped\"; sig=\"$sig /$n/\"\n"
		"    kill -TERM \"-$p\" 2>/dev/null || kill -TERM \"$p\" 2>/dev/null\n"
		"  fi\n"
		"done\n"
		"i=0\n"
		"while [ $i -lt %ld ]; do\n"
		"  left=0\n"
		"  for n in \"$@\"; do\n"
		"    P=\"results/$n.pid\"; [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\" && left=1\n"
		"  done\n"
		"  [ $left = 0 ] && break\n"
		"  sleep 0.1; i=$((i + 1))\n"
		"done\n"
		"for n in \"$@\"; do\n"
		"  P=\"results/$n.pid\"\n"
		"  if [ -s \"$P\" ] && alive \"$(cat \"$P\")\" \"$P\"; then say still \"$n\" \"$(cat \"$P\")\"\n"
		"  elif case $sig in *\" /$n/\"*) true ;; *) false ;; esac; then"
		" say stopped \"$n\" \"$(cat \"results/$n.exit\" 2>/dev/null)\"\n"
		"  else say idle \"$n\"; fi\n"
		"done\n", tenths);
	/* The wait happens there: ssh gets it and half a minute more. */
	if ((rc = launch_ask(h, sc.buf, now_mono() + s->seconds + 30, stop_answer, stop_answered, r, &r->lines))) {
		r->error = rc;
		sb_addc(&r->lines, '\n');
	}
	sb_release(&sc);
}

int launch_stop(const struct inventory *inv, const int *hosts, int nhosts, const char *only, double wait,
		int jobs)
{
	struct stop_host *res = xcalloc((size_t)nhosts, sizeof(*res));
	struct launch_fan s = { inv, hosts, only, wait, res };
	int bad = 0;

	remote_parallel(nhosts, jobs, stop_host, &s);
	for (int k = 0; k < nhosts; k++) {
		struct stop_host *r = &res[k];
		const char *name = inv->hosts[hosts[k]].name;

		if (!r->lines.len) {
			struct strbuf t = r->lines;

			r->lines = r->idle;
			r->idle = t;
		}
		for (const char *m = r->lines.buf ? r->lines.buf : ""; *m;) {
			size_t len = strcspn(m, "\n");

			printf("%s: %s%.*s\n", name, r->error == 2 ? "unreachable: " : "", (int)len, m);
			m += len + (m[len] == '\n');
		}
		bad += r->error != 0;
		sb_release(&r->lines);
		sb_release(&r->idle);
	}
	free(res);
	if (bad)
		fprintf(stderr, "sweep: %d of %d host%s not stopped\n", bad, nhosts, nhosts == 1 ? "" : "s");
	return bad ? FAIL_UNREACHABLE : FAIL_OK;
}
