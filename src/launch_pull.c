/* launch_pull.c: `sweep pull`: a snapshot of each launched sweep on every host, copied back and merged. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "inventory.h"
#include "launch.h"
#include "remote.h"
#include "store.h"
#include "util.h"

/* Seconds after a host's pull time for the removal of its snapshots there: by the pull (after the copy),
 * else by the host itself. */
#define PULL_CLEANUP_GRACE 15

struct pulled {
	char *name;            /* the sweep */
	char *local;           /* its snapshot here, once copied */
};

struct pull_host {
	struct pulled *v;
	int n;
	int error;             /* 2: unreachable */
	struct strbuf msg;     /* errors and notes, one per line */
	char *hostname;        /* what the host says it is called */
};

struct pull {
	struct launch_fan f;   /* f.res is res */
	const char *dir;       /* pulled/HOST/ goes there */
	struct pull_host *res;
};

static void pull_answer(const char *key, const char *rest, void *data)
{
	struct pull_host *r = data;
	char name[256];
	const char *more;

	if (!strcmp(key, "error")) {
		r->error = 1;
		sb_add_printable(&r->msg, rest, 300);
		sb_addc(&r->msg, '\n');
		return;
	}
	if (!strcmp(key, "host")) {
		if (!r->hostname && *rest && strlen(rest) < 256 && !strpbrk(rest, " '\"\\"))
			r->hostname = xstrdup(rest);
		return;
	}
	if (!strcmp(key, "none")) {
		r->error = 1;
		sb_adds(&r->msg, "nothing launched there (no results/*.pid)\n");
		return;
	}
	if (!(more = launch_answer_name(rest, name, sizeof(name))))
		return;
	if (!strcmp(key, "snap")) {
		r->v = xrealloc(r->v, (size_t)(r->n + 1) * sizeof(*r->v));
		r->v[r->n++] = (struct pulled){ xstrdup(name), NULL };
	} else if (!strcmp(key, "nodb")) {
		sb_addf(&r->msg, "%s: no database yet\n", name);
	} else if (!strcmp(key, "snaperr")) {
		r->error = 1;
		sb_addf(&r->msg, "%s: snapshot failed: ", name);
		sb_add_printable(&r->msg, more, 300);
		sb_addc(&r->msg, '\n');
	}
}

/* Answered: sweeps to pull, or what went wrong (r->msg). */
static int pull_answered(void *data)
{
	const struct pull_host *r = data;

	return r->error || r->n || r->msg.len;
}

static void pull_host(int k, void *data)
{
	struct pull *p = data;
	const struct inventory_host *h = &p->f.inv->hosts[p->f.hosts[k]];
	struct pull_host *r = &p->res[k];
	double deadline = now_mono() + p->f.seconds;
	char *token = xasprintf("%ld-%d", (long)getpid(), k), *dir = NULL;
	struct strbuf sc = STRBUF_INIT;
	struct remote_out o;
	int dir_ok, rc;

	launch_script_begin(&sc, h, 0);
	sb_adds(&sc, "hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host; exit 0; }\n");
	sb_adds(&sc, "say host \"$(hostname 2>/dev/null || uname -n)\"\n");
	launch_script_names(&sc, p->f.only);
	sb_addf(&sc, "for n in \"$@\"; do\n"
		"  [ -f \"results/$n.db\" ] || { say nodb \"$n\"; continue; }\n"
		"  o=\"results/.$n.pull-%s.db\"; rm -f \"$o\"\n"
		/* The host removes the snapshot itself once the pull's time is over, should the pull not (cut,
		 * killed, or the host unreachable for it by then): a watcher that ends with the file. */
		"  if e=$(\"$B\" snapshot \"results/$n.db\" \"$o\" 2>&1); then\n"
		"    nohup sh -c 'i=0; while [ $i -lt $1 ] && [ -e \"$2\" ]; do sleep 1; i=$((i + 1)); done;"
		" rm -f \"$2\"' sweep-pull-watch %ld \"$o\" </dev/null >/dev/null 2>&1 &\n"
		"    say snap \"$n\"\n"
		"  else say snaperr \"$n\" \"$(printf '%%s\\n' \"$e\" | tail -n 1)\"; fi\n"
		"done\n", token, (long)ceil(p->f.seconds) + PULL_CLEANUP_GRACE);
	if ((rc = launch_ask(h, sc.buf, deadline, pull_answer, pull_answered, r, &r->msg))) {
		r->error = rc;
		sb_addc(&r->msg, '\n');
	}
	/* Its results carry the hostname it tells: the inventory's labels would miss them. */
	if (r->hostname && h->hostname_line && !inventory_same_host(r->hostname, h->hostname))
		sb_addf(&r->msg, "its hostname is '%s', but %s:%d:%d says hostname '%s': its results are not"
			" labelled (correct it, or leave it out)\n", r->hostname, p->f.inv->path, h->hostname_line,
			h->hostname_col, h->hostname);
	if (!r->n)
		goto out;
	/* Copy each snapshot beside its place here, then over it: a failed copy leaves the last one. */
	dir = xasprintf("%s/pulled/%s", p->dir, h->name);
	dir_ok = !launch_make_dirs(dir, &r->msg);
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
	launch_script_begin(&sc, h, 0);
	for (int i = 0; i < r->n; i++)
		sb_addf(&sc, "rm -f \"results/.%s.pull-%s.db\"\n", r->v[i].name, token);
	if (!remote_run(h, sc.buf, (deadline > now_mono() ? deadline : now_mono()) + PULL_CLEANUP_GRACE, &o))
		remote_out_release(&o);
out:
	sb_release(&sc);
	free(token);
	free(dir);
}

/* An output merged into, and the conflicts its merges found. */
struct pull_out {
	char *path;
	uint64_t conflicts;
};

/* Merge host k's snapshots (each on its own: one a merge refuses leaves the others in) into into (each
 * sweep's results/NAME.db when NULL), a line each; the outputs are added to *outs. */
static void pull_merge(struct pull *p, int k, const char *into, struct pull_out **outs, int *nouts)
{
	struct pull_host *r = &p->res[k];
	const char *name = p->f.inv->hosts[p->f.hosts[k]].name;

	for (const char *m = r->msg.buf ? r->msg.buf : ""; *m;) {
		size_t len = strcspn(m, "\n");

		printf("%s: %s%.*s\n", name, r->error == 2 ? "unreachable: " : "", (int)len, m);
		m += len + (m[len] == '\n');
	}
	for (int i = 0; i < r->n; i++) {
		struct store_merge_stats ms;
		/* The line counts the launched sweep's cells and results, not probes' or templates. */
		struct store_merge_opts mo = { 0, 0, r->v[i].name };
		const char *in = r->v[i].local;
		char *out;
		int j;

		if (!in)
			continue;
		out = into ? xstrdup(into) : xasprintf("results/%s.db", r->v[i].name);
		if (store_merge(out, &in, 1, &mo, &ms)) {
			printf("%s: %s: refused by the merge (see above); '%s' is as it was\n", name, r->v[i].name,
			       out);
			r->error = 1;
			free(out);
			continue;
		}
		printf("%s: %s: %" PRIu64 " cells, %" PRIu64 " results new, %" PRIu64 " already there, %" PRIu64
		       " conflicts -> %s\n", name, r->v[i].name, ms.cells, ms.results_new, ms.results_same,
		       ms.conflicts, out);
		for (j = 0; j < *nouts && strcmp((*outs)[j].path, out); j++)
			;
		if (j == *nouts) {
			*outs = xrealloc(*outs, (size_t)(*nouts + 1) * sizeof(**outs));
			(*outs)[(*nouts)++] = (struct pull_out){ out, 0 };
		} else {
			free(out);
		}
		(*outs)[j].conflicts += ms.conflicts;
	}
}

/* Whether a snapshot before host k's i-th names the same sweep. */
static int pull_seen(const struct pull *p, int k, int i)
{
	for (int k2 = 0; k2 <= k; k2++)
		for (int i2 = 0; i2 < (k2 < k ? p->res[k2].n : i); i2++)
			if (!strcmp(p->res[k2].v[i2].name, p->res[k].v[i].name))
				return 1;
	return 0;
}

/* The sweeps the hosts' snapshots hold, into names ("a, b"); how many. */
static int pull_sweeps(const struct pull *p, int nhosts, struct strbuf *names)
{
	int n = 0;

	for (int k = 0; k < nhosts; k++)
		for (int i = 0; i < p->res[k].n; i++)
			if (!pull_seen(p, k, i))
				sb_addf(names, "%s%s", n++ ? ", " : "", p->res[k].v[i].name);
	return n;
}

/* The inventory's labels into the hosts of every output, for reports by label.NAME; a host whose
 * hostname the inventory leaves out goes by the one it told. */
static void pull_label(const struct pull *p, int nhosts, const struct pull_out *outs, int nouts)
{
	struct inventory known = *p->f.inv;

	known.hosts = xcalloc((size_t)p->f.inv->nhosts + 1, sizeof(*known.hosts));
	memcpy(known.hosts, p->f.inv->hosts, (size_t)p->f.inv->nhosts * sizeof(*known.hosts));
	for (int k = 0; k < nhosts; k++)
		if (!p->f.inv->hosts[p->f.hosts[k]].hostname_line && p->res[k].hostname)
			known.hosts[p->f.hosts[k]].hostname = p->res[k].hostname;
	for (int j = 0; j < nouts; j++) {
		struct store *st;

		if (store_open(outs[j].path, STORE_RW, &st) || inventory_apply(&known, st, NULL, NULL, NULL))
			warning("the hosts of '%s' were not labelled from '%s'", outs[j].path, p->f.inv->path);
		store_close(st);
	}
	free(known.hosts);   /* its strings are inv's and p->res's */
}

int launch_pull(const struct inventory *inv, const int *hosts, int nhosts, const char *only, const char *into,
		double timeout, int jobs)
{
	struct pull p = { 0 };
	struct strbuf names = STRBUF_INIT;
	struct pull_out *outs = NULL;
	char *dir = NULL;
	int nouts = 0, bad = 0, ret = FAIL_OK;

	p.f.seconds = timeout;
	p.f.only = only;
	/* Snapshots are kept beside the output, in pulled/HOST/: the last one of each host stays there. */
	if (into) {
		const char *slash = strrchr(into, '/');

		dir = slash ? xstrndup(into, (size_t)(slash - into) + (slash == into)) : xstrdup(".");
	} else {
		dir = xstrdup("results");
	}
	p.f.inv = inv;
	p.f.hosts = hosts;
	p.dir = dir;
	p.f.res = p.res = xcalloc((size_t)nhosts, sizeof(*p.res));
	remote_parallel(nhosts, jobs, pull_host, &p);
	/* One database per sweep: --into takes one, and reports refuse a database of several. */
	if (into && !only && pull_sweeps(&p, nhosts, &names) > 1) {
		error("the hosts hold the sweeps %s: --into '%s' takes one of them (--sweep NAME), or leave --into out"
		      " for each to go to results/NAME.db; nothing was merged (the snapshots are in %s/pulled/)",
		      names.buf, into, dir);
		ret = FAIL_USAGE;
		goto out;
	}
	/* Merging is one writer at a time, here. */
	for (int k = 0; k < nhosts; k++) {
		pull_merge(&p, k, into, &outs, &nouts);
		bad += p.res[k].error != 0;
	}
	pull_label(&p, nhosts, outs, nouts);
	for (int j = 0; j < nouts; j++)
		if (outs[j].conflicts) {
			struct strbuf note = STRBUF_INIT, word = STRBUF_INIT;

			remote_quote(&word, outs[j].path);
			store_merge_conflicts_note(word.buf, outs[j].conflicts, &note);
			printf("%s: %s\n", outs[j].path, note.buf);
			sb_release(&note);
			sb_release(&word);
		}
	if (bad)
		fprintf(stderr, "sweep: %d of %d host%s not pulled\n", bad, nhosts, nhosts == 1 ? "" : "s");
	ret = bad ? FAIL_UNREACHABLE : FAIL_OK;
out:
	for (int k = 0; k < nhosts; k++) {
		for (int i = 0; i < p.res[k].n; i++) {
			free(p.res[k].v[i].name);
			free(p.res[k].v[i].local);
		}
		free(p.res[k].v);
		free(p.res[k].hostname);
		sb_release(&p.res[k].msg);
	}
	free(p.res);
	for (int j = 0; j < nouts; j++)
		free(outs[j].path);
	free(outs);
	sb_release(&names);
	free(dir);
	return ret;
}
