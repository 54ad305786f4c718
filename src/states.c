/* states.c: a sweep's cells by state as they are, those that wait for hosts that never ran included. */
#include "states.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ydoc.h"

/* The spec's hosts: (a sequence of names at the top of the stored spec), as NUL-separated names in out. A
 * spec that cannot be read names none: status and reports then say what the counts say. */
static void spec_hosts(const char *text, struct strbuf *out)
{
	struct ydoc d = { 0 };
	const struct ynode *root;

	if (!ydoc_parse(&d, text, strlen(text), 64) && (root = d.root) && root->kind == YNODE_MAP) {
		for (int i = 0; i < root->n; i++) {
			const struct ynode *k = ydoc_key(root, i), *v = ydoc_value(root, i);

			if (k->kind != YNODE_SCALAR || strcmp(k->text, "hosts") || v->kind != YNODE_SEQ)
				continue;
			for (int j = 0; j < v->n; j++)
				if (ydoc_item(v, j)->kind == YNODE_SCALAR && *ydoc_item(v, j)->text)
					sb_add(out, ydoc_item(v, j)->text, strlen(ydoc_item(v, j)->text) + 1);
		}
	}
	ydoc_release(&d);
}

struct scan {
	struct states *s;
	const struct strbuf *hosts;
	unsigned char *seen;           /* by host named: a replica of that host has cells */
};

/* Each replica's counts into the states; a replica is its host's ("host", or "host/gpuN"). */
static int scan_replica(const char *replica, const struct store_counts *c, void *data)
{
	struct scan *sc = data;
	size_t i = 0, len;

	sc->s->ok += c->ok;
	sc->s->planned += c->planned;
	sc->s->running += c->running;
	sc->s->quarantined += c->quarantined;
	if (!*replica)
		sc->s->per_host = c->template;
	for (const char *h = sc->hosts->buf; h && h < sc->hosts->buf + sc->hosts->len; h += len + 1, i++) {
		len = strlen(h);
		if (*replica && !strncmp(replica, h, len) && (!replica[len] || replica[len] == '/') &&
		    c->planned + c->running + c->ok + c->quarantined + c->template + c->retired)
			sc->seen[i] = 1;
	}
	return 0;
}

int states_of(struct store *st, const char *sweep, struct states *s)
{
	struct strbuf hosts = STRBUF_INIT;
	struct scan sc = { s, &hosts, NULL };
	char *text = NULL;
	size_t i = 0, len;
	int ret;

	if (store_sweep_spec(st, sweep, &text))
		return -1;
	if (text)
		spec_hosts(text, &hosts);
	sc.seen = xcalloc(hosts.len + 1, 1);
	ret = store_each_replica(st, sweep, scan_replica, &sc);
	/* templates are planned only for a per: host or per: gpu sweep: a host named with none of its own
	 * replicas has them all to run */
	for (const char *h = hosts.buf; !ret && s->per_host && h && h < hosts.buf + hosts.len; h += len + 1, i++) {
		len = strlen(h);
		if (sc.seen[i])
			continue;
		sb_addf(&s->hosts, "%s%s", s->nabsent++ ? ", " : "", h);
		s->absent += s->per_host;
	}
	free(sc.seen);
	free(text);
	sb_release(&hosts);
	return ret;
}

void states_release(struct states *s)
{
	sb_release(&s->hosts);
}

uint64_t states_cells(const struct states *s)
{
	return s->ok + s->planned + s->running + s->quarantined + s->absent;
}

void states_absent_words(const struct states *s, struct strbuf *sb)
{
	if (!s->absent)
		return;
	sb_addf(sb, "%" PRIu64 " cells wait for %s that never ran: ", s->absent, s->nabsent == 1 ? "a host" : "hosts");
	sb_add_printable(sb, s->hosts.buf, 200);
	sb_addf(sb, " (%" PRIu64 " %s)", s->per_host, s->nabsent == 1 ? "cells" : "each");
}

void states_words(const struct states *s, const char *sweep, struct strbuf *sb)
{
	const uint64_t n[] = { s->planned, s->running, s->quarantined };
	static const char *const word[] = { "planned", "running", "quarantined" };
	const char *sep = "; the others: ";

	if (s->ok == states_cells(s))
		return;
	sb_addf(sb, "%" PRIu64 " of %" PRIu64 " cells measured", s->ok, states_cells(s));
	if (sweep) {
		sb_adds(sb, " in sweep ");
		sb_add_printable(sb, sweep, 120);
	}
	for (size_t i = 0; i < ARRAY_SIZE(n); i++) {
		if (!n[i])
			continue;
		sb_addf(sb, "%s%" PRIu64 " %s", sep, n[i], word[i]);
		sep = ", ";
	}
	if (s->absent) {
		sb_adds(sb, sep);
		states_absent_words(s, sb);
	}
}
