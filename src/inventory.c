/* inventory.c: host inventories (YAML) read into struct inventory; hostfiles; labels into hosts.facts. */
#include "inventory.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "ydoc.h"

/* libyaml's loader recurses once per level; an inventory needs four. */
#define INV_MAX_DEPTH 32
#define INV_MAX_HOSTS 10000      /* duplicate names are looked for pairwise */
#define INV_MAX_SLOTS 4096

static const char *const top_names[] = { "hosts", "defaults", NULL };
/* The ssh fields come last in both lists, in the same order: parse_ssh reads them from either. */
static const char *const host_names[] = { "name", "hostname", "address", "slots", "labels", "notes",
	"user", "port", "identity", "ssh_options", "workdir", "sweep_bin", NULL };
static const char *const default_names[] = { "slots", "labels",
	"user", "port", "identity", "ssh_options", "workdir", "sweep_bin", NULL };
enum { H_NAME, H_HOSTNAME, H_ADDRESS, H_SLOTS, H_LABELS, H_NOTES, H_SSH, NHOST = H_SSH + 6 };
enum { D_SLOTS, D_LABELS, D_SSH, NDEF = D_SSH + 6 };
enum { S_USER, S_PORT, S_IDENTITY, S_OPTIONS, S_WORKDIR, S_SWEEP_BIN };

/* The ssh fields of a host or of the defaults. */
struct inv_ssh {
	char *user, *identity, *workdir, *sweep_bin;
	int port;
	char **opts;
	int nopts;
};

/* The parse in progress. */
struct ip {
	const char *path;
	int nproblems;
	int def_slots;
	struct json_obj def_labels;
	struct inv_ssh def_ssh;
};

__attribute__((format(printf, 4, 5)))
static void problem_at(struct ip *p, int line, int col, const char *fmt, ...)
{
	char msg[512], shown[sizeof(msg) + 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Messages quote the file's text: a control character in it must not reach the terminal. */
	if (p->nproblems++ < 100)
		error("%s:%d:%d: %s", p->path, line, col, printable(shown, msg, sizeof(msg)));
}

#define problem(p, n, ...) problem_at(p, (n)->line, (n)->col, __VA_ARGS__)

/* The text of a scalar node (NUL bytes refused), or NULL after a problem. */
static const char *scalar(struct ip *p, const struct ynode *n, const char *what)
{
	if (n->kind != YNODE_SCALAR) {
		problem(p, n, "expected a scalar for '%s'", what);
		return NULL;
	}
	if (strlen(n->text) != n->len) {
		problem(p, n, "NUL byte in '%s'", what);
		return NULL;
	}
	return n->text;
}

/* Match mapping n's keys against names: vals[i] is the value node of names[i] (NULL when absent). */
static int fields(struct ip *p, const struct ynode *n, const char *where, const char *const *names,
		  const struct ynode **vals)
{
	if (n->kind != YNODE_MAP) {
		problem(p, n, "expected a mapping for %s", where);
		return -1;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *k = ydoc_key(n, j);
		const char *name = scalar(p, k, "a key"), *near;
		int i;

		if (!name)
			continue;
		for (i = 0; names[i] && strcmp(names[i], name); i++)
			;
		if (!names[i]) {
			near = closest_name(name, names);
			problem(p, k, "unknown key '%.64s' in %s%s%s%s", name, where, near ? " (did you mean '" : "",
				near ? near : "", near ? "'?)" : "");
		} else if (vals[i]) {
			problem(p, k, "duplicate key '%s' in %s", name, where);
		} else {
			vals[i] = ydoc_value(n, j);
		}
	}
	return 0;
}

/* A host name or address: letters, digits, '.', '-', '_', ':' (IPv6); no spaces. */
static int word_ok(const char *s)
{
	if (!*s || strlen(s) > 255)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(".-_:", *s))
			return 0;
	return 1;
}

/* A label name goes into a JSON path and a report key (label.NAME). */
static int label_name_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int get_slots(struct ip *p, const struct ynode *n, int *out)
{
	const char *t = scalar(p, n, "slots");
	long v;

	if (!t)
		return -1;
	if (parse_long(t, &v) || v < 1 || v > INV_MAX_SLOTS) {
		problem(p, n, "slots must be a whole number from 1 to %d, not '%.64s'", INV_MAX_SLOTS, t);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* A plain scalar written as a JSON number is one; anything else a string: 007 (a zip code, a part
 * number) and 0x1f would lose their text as numbers, and are no JSON numbers as written. */
static enum json_type scalar_type(const struct ynode *n)
{
	return n->plain && json_number_ok(n->text) ? JSON_NUM : JSON_STR;
}

static void label_set(struct json_obj *o, const char *key, const char *val, enum json_type type)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].key, key)) {
			free(o->v[i].val);
			o->v[i].val = xstrdup(val);
			o->v[i].type = type;
			return;
		}
	json_obj_add(o, key, val, type);
}

/* Add the pairs of mapping n to labels (a later value of a name replaces the earlier one). */
static void parse_labels(struct ip *p, const struct ynode *n, struct json_obj *labels)
{
	if (n->kind != YNODE_MAP) {
		problem(p, n, "expected a mapping of label: value for 'labels'");
		return;
	}
	for (int i = 0; i < n->n; i++) {
		const struct ynode *k = ydoc_key(n, i), *v = ydoc_value(n, i);
		const char *name = scalar(p, k, "a label name"), *val;

		if (!name)
			continue;
		if (!label_name_ok(name)) {
			problem(p, k, "label name '%.64s': letters, digits and '_' only, not starting with a digit",
				name);
			continue;
		}
		if (!strcmp(name, "name")) {
			problem(p, k, "the label 'name' is the host's name: set 'name' instead");
			continue;
		}
		if (!(val = scalar(p, v, name)))
			continue;
		label_set(labels, name, val, scalar_type(v));
	}
}

static void ssh_release(struct inv_ssh *x)
{
	free(x->user);
	free(x->identity);
	free(x->workdir);
	free(x->sweep_bin);
	for (int i = 0; i < x->nopts; i++)
		free(x->opts[i]);
	free(x->opts);
	memset(x, 0, sizeof(*x));
}

/* A user name for ssh: letters, digits, '.', '_', '-', not starting with '-' (ssh would take an option). */
static int user_ok(const char *s)
{
	if (!*s || *s == '-' || strlen(s) > 64)
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == strlen(s);
}

int inventory_remote_path_ok(const char *s)
{
	const char *rest = s;

	if (!*s || *s == '-' || strlen(s) > 1024)
		return 0;
	if (!strcmp(s, "~"))
		return 1;
	if (!strncmp(s, "~/", 2))
		rest = s + 2;
	return strspn(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+@,=-") ==
	       strlen(rest);
}

/* Printable text without control characters (a key file, an ssh option's value). */
static int text_ok(const char *s)
{
	if (!*s || strlen(s) > 4096)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

/* "Name=value" for ssh -o: a name of letters and digits, then a value. */
static int ssh_option_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");

	return n > 0 && isalpha((unsigned char)*s) && s[n] == '=' && s[n + 1] && text_ok(s);
}

/* Read the ssh fields (v[S_USER..S_SWEEP_BIN], NULL when absent) into x, replacing what x has. */
static void parse_ssh(struct ip *p, const struct ynode *const *v, struct inv_ssh *x)
{
	const char *t;

	if (v[S_USER] && (t = scalar(p, v[S_USER], "user"))) {
		if (user_ok(t)) {
			free(x->user);
			x->user = xstrdup(t);
		} else {
			problem(p, v[S_USER], "user '%.64s': letters, digits, '.', '_' and '-' only", t);
		}
	}
	if (v[S_PORT] && (t = scalar(p, v[S_PORT], "port"))) {
		long port;

		if (parse_long(t, &port) || port < 1 || port > 65535)
			problem(p, v[S_PORT], "port must be a whole number from 1 to 65535, not '%.64s'", t);
		else
			x->port = (int)port;
	}
	if (v[S_IDENTITY] && (t = scalar(p, v[S_IDENTITY], "identity"))) {
		if (text_ok(t) && *t != '-') {
			free(x->identity);
			x->identity = xstrdup(t);
		} else {
			problem(p, v[S_IDENTITY], "identity must name a key file");
		}
	}
	if (v[S_OPTIONS]) {
		if (v[S_OPTIONS]->kind != YNODE_SEQ) {
			problem(p, v[S_OPTIONS], "expected a list of Name=value for 'ssh_options'");
		} else {
			for (int i = 0; i < v[S_OPTIONS]->n; i++) {
				const struct ynode *o = ydoc_item(v[S_OPTIONS], i);

				if (!(t = scalar(p, o, "ssh_options")))
					continue;
				if (!ssh_option_ok(t)) {
					problem(p, o, "ssh option '%.64s': expected Name=value (as for ssh -o)", t);
					continue;
				}
				x->opts = xrealloc(x->opts, (size_t)(x->nopts + 1) * sizeof(*x->opts));
				x->opts[x->nopts++] = xstrdup(t);
			}
		}
	}
	if (v[S_WORKDIR] && (t = scalar(p, v[S_WORKDIR], "workdir"))) {
		if (inventory_remote_path_ok(t)) {
			free(x->workdir);
			x->workdir = xstrdup(t);
		} else {
			problem(p, v[S_WORKDIR], "workdir '%.64s': letters, digits and ._/+@,=- only (and a "
				"leading ~/)", t);
		}
	}
	if (v[S_SWEEP_BIN] && (t = scalar(p, v[S_SWEEP_BIN], "sweep_bin"))) {
		if (inventory_remote_path_ok(t)) {
			free(x->sweep_bin);
			x->sweep_bin = xstrdup(t);
		} else {
			problem(p, v[S_SWEEP_BIN], "sweep_bin '%.64s': letters, digits and ._/+@,=- only (and a "
				"leading ~/)", t);
		}
	}
}

/* The host's ssh fields from its own (x) and the defaults; x's strings move to h. */
static void ssh_settle(struct ip *p, struct inventory_host *h, struct inv_ssh *x)
{
	const struct inv_ssh *d = &p->def_ssh;

	h->user = x->user ? x->user : d->user ? xstrdup(d->user) : NULL;
	h->identity = x->identity ? x->identity : d->identity ? xstrdup(d->identity) : NULL;
	h->port = x->port ? x->port : d->port;
	h->workdir = x->workdir ? x->workdir : xstrdup(d->workdir ? d->workdir : "sweep");
	h->sweep_bin = x->sweep_bin ? x->sweep_bin : xstrdup(d->sweep_bin ? d->sweep_bin : "build/sweep");
	/* ssh takes the first value of an option: the host's own come first. */
	h->ssh_options = x->opts;
	h->nssh_options = x->nopts;
	for (int i = 0; i < d->nopts; i++) {
		h->ssh_options = xrealloc(h->ssh_options, (size_t)(h->nssh_options + 1) * sizeof(char *));
		h->ssh_options[h->nssh_options++] = xstrdup(d->opts[i]);
	}
	memset(x, 0, sizeof(*x));
}

static void host_release(struct inventory_host *h)
{
	free(h->name);
	free(h->hostname);
	free(h->address);
	json_obj_release(&h->labels);
	free(h->user);
	free(h->identity);
	free(h->workdir);
	free(h->sweep_bin);
	for (int i = 0; i < h->nssh_options; i++)
		free(h->ssh_options[i]);
	free(h->ssh_options);
	memset(h, 0, sizeof(*h));
}

static void parse_host(struct ip *p, const struct ynode *n, struct inventory *inv)
{
	struct inv_ssh x = { 0 };
	const struct ynode *v[NHOST + 1] = { 0 };
	struct inventory_host h = { 0 };
	const char *t;

	if (fields(p, n, "a host", host_names, v))
		return;
	h.line = n->line;
	h.col = n->col;
	if (!v[H_NAME]) {
		problem(p, n, "a host needs a 'name'");
		return;
	}
	if (!(t = scalar(p, v[H_NAME], "name")))
		return;
	if (!word_ok(t)) {
		problem(p, v[H_NAME], "name '%.64s': letters, digits, '.', '-' and '_' only", t);
		return;
	}
	h.name = xstrdup(t);
	h.slots = p->def_slots;
	for (size_t i = 0; i < p->def_labels.n; i++)
		json_obj_add(&h.labels, p->def_labels.v[i].key, p->def_labels.v[i].val, p->def_labels.v[i].type);
	if (v[H_HOSTNAME] && (t = scalar(p, v[H_HOSTNAME], "hostname"))) {
		if (word_ok(t)) {
			h.hostname = xstrdup(t);
			h.hostname_line = v[H_HOSTNAME]->line;
			h.hostname_col = v[H_HOSTNAME]->col;
		} else
			problem(p, v[H_HOSTNAME], "hostname '%.64s' is not a host name", t);
	}
	if (v[H_ADDRESS] && (t = scalar(p, v[H_ADDRESS], "address"))) {
		/* ssh and scp would take "-..." for an option. */
		if (word_ok(t) && *t != '-')
			h.address = xstrdup(t);
		else
			problem(p, v[H_ADDRESS], "address '%.64s' is not a host name or IP address", t);
	}
	if (v[H_SLOTS])
		get_slots(p, v[H_SLOTS], &h.slots);
	if (v[H_LABELS])
		parse_labels(p, v[H_LABELS], &h.labels);
	if (v[H_NOTES] && (t = scalar(p, v[H_NOTES], "notes")))
		label_set(&h.labels, "notes", t, JSON_STR);
	parse_ssh(p, v + H_SSH, &x);
	ssh_settle(p, &h, &x);
	if (!h.hostname)
		h.hostname = xstrdup(h.name);
	if (!h.address)
		h.address = xstrdup(h.hostname);
	for (int i = 0; i < inv->nhosts; i++) {
		const struct inventory_host *o = &inv->hosts[i];

		if (!strcmp(o->name, h.name))
			problem(p, v[H_NAME], "host '%s' is listed twice (first at %d:%d)", h.name, o->line, o->col);
		else if (!strcmp(o->hostname, h.hostname))
			problem(p, n, "hostname '%s' belongs to two hosts, '%s' (at %d:%d) and '%s'", h.hostname,
				o->name, o->line, o->col, h.name);
	}
	ALLOC_GROW(inv->hosts, inv->nhosts + 1, inv->alloc);
	inv->hosts[inv->nhosts++] = h;
}

static void parse_doc(struct ip *p, const struct ynode *root, struct inventory *inv)
{
	const struct ynode *v[3] = { 0 };

	if (!root) {
		problem_at(p, 1, 1, "empty inventory: expected a mapping with 'hosts:'");
		return;
	}
	if (fields(p, root, "the inventory", top_names, v))
		return;
	p->def_slots = 1;
	if (v[1]) {
		const struct ynode *d[NDEF + 1] = { 0 };

		if (!fields(p, v[1], "'defaults'", default_names, d)) {
			if (d[D_SLOTS])
				get_slots(p, d[D_SLOTS], &p->def_slots);
			if (d[D_LABELS])
				parse_labels(p, d[D_LABELS], &p->def_labels);
			parse_ssh(p, d + D_SSH, &p->def_ssh);
		}
	}
	if (!v[0]) {
		problem(p, root, "no 'hosts:' list");
		return;
	}
	if (v[0]->kind != YNODE_SEQ) {
		problem(p, v[0], "expected a list of hosts for 'hosts'");
		return;
	}
	if (v[0]->n > INV_MAX_HOSTS) {
		problem(p, v[0], "more than %d hosts", INV_MAX_HOSTS);
		return;
	}
	for (int i = 0; i < v[0]->n; i++)
		parse_host(p, ydoc_item(v[0], i), inv);
	if (!inv->nhosts && !p->nproblems)
		problem(p, v[0], "the 'hosts' list is empty");
}

int inventory_parse(const char *path, const char *text, size_t len, struct inventory *inv)
{
	struct ip p = { .path = path, .def_labels = JSON_OBJ_INIT };
	struct ydoc d;
	int rc;

	memset(inv, 0, sizeof(*inv));
	inv->path = xstrdup(path);
	rc = ydoc_parse(&d, text, len, INV_MAX_DEPTH);
	if (!rc)
		parse_doc(&p, d.root, inv);
	if (rc || d.trailing_error)
		problem_at(&p, d.err.line, d.err.col, "%s", d.err.msg);
	else if (d.second_line)
		problem_at(&p, d.second_line, d.second_col, "a second YAML document: an inventory holds one");
	ydoc_release(&d);
	json_obj_release(&p.def_labels);
	ssh_release(&p.def_ssh);
	if (p.nproblems > 100)
		error("%s: %d more problems not shown", path, p.nproblems - 100);
	if (p.nproblems) {
		inventory_release(inv);
		return -1;
	}
	return 0;
}

int inventory_load(const char *path, struct inventory *inv)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	memset(inv, 0, sizeof(*inv));
	if (sb_read_file(&sb, path))
		return -1;
	ret = inventory_parse(path, sb.buf, sb.len, inv);
	sb_release(&sb);
	return ret;
}

void inventory_release(struct inventory *inv)
{
	for (int i = 0; i < inv->nhosts; i++)
		host_release(&inv->hosts[i]);
	free(inv->hosts);
	free(inv->path);
	memset(inv, 0, sizeof(*inv));
}

int inventory_same_host(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	if (!strcmp(a, b))
		return 1;
	return (!a[la] || !b[lb]) && la == lb && !strncmp(a, b, la);
}

const struct inventory_host *inventory_find(const struct inventory *inv, const char *hostname)
{
	/* Exact matches first: "node1" must not take "node1.a" when "node1" is listed too. */
	for (int i = 0; i < inv->nhosts; i++)
		if (!strcmp(inv->hosts[i].hostname, hostname))
			return &inv->hosts[i];
	for (int i = 0; i < inv->nhosts; i++)
		if (inventory_same_host(inv->hosts[i].hostname, hostname) ||
		    inventory_same_host(inv->hosts[i].name, hostname))
			return &inv->hosts[i];
	return NULL;
}

void inventory_labels_json(const struct inventory_host *h, struct strbuf *sb)
{
	struct json_obj o = JSON_OBJ_INIT;

	json_obj_add(&o, "name", h->name, JSON_STR);
	for (size_t i = 0; i < h->labels.n; i++)
		json_obj_add(&o, h->labels.v[i].key, h->labels.v[i].val, h->labels.v[i].type);
	json_obj_write(sb, &o);
	json_obj_release(&o);
}

void inventory_hostfile(const struct inventory *inv, struct strbuf *sb)
{
	sb_addf(sb, "# Open MPI hostfile written by 'sweep hosts hostfile %s'\n", inv->path);
	for (int i = 0; i < inv->nhosts; i++)
		sb_addf(sb, "# %s\n%s slots=%d\n", inv->hosts[i].name, inv->hosts[i].address, inv->hosts[i].slots);
}

struct names {
	char **v;
	size_t n, alloc;
};

static int collect_name(const struct store_row *row, void *data)
{
	struct names *nm = data;

	ALLOC_GROW(nm->v, nm->n + 1, nm->alloc);
	nm->v[nm->n++] = xstrdup(row->text[0] ? row->text[0] : "");
	return 0;
}

int inventory_apply(const struct inventory *inv, struct store *st, int *matched, int *unmatched,
		    struct strbuf *missing)
{
	struct names nm = { 0 };
	struct strbuf labels = STRBUF_INIT;
	int nmatched = 0, ret = -1;

	/* Names first, then updates: a statement must not write the table its open query reads. */
	if (store_query(st, "SELECT DISTINCT hostname FROM hosts ORDER BY hostname", NULL, 0, 1, collect_name,
			&nm) ||
	    store_begin(st))
		goto out;
	for (size_t i = 0; i < nm.n; i++) {
		const struct inventory_host *h = inventory_find(inv, nm.v[i]);

		if (!h) {
			if (missing) {
				sb_adds(missing, missing->len ? ", '" : "'");
				sb_add_printable(missing, nm.v[i], 64);
				sb_addc(missing, '\'');
			}
			continue;
		}
		sb_reset(&labels);
		inventory_labels_json(h, &labels);
		if (store_host_labels(st, nm.v[i], labels.buf)) {
			store_rollback(st);
			goto out;
		}
		nmatched++;
	}
	if (store_commit(st))
		goto out;
	if (matched)
		*matched = nmatched;
	if (unmatched)
		*unmatched = (int)nm.n - nmatched;
	ret = 0;
out:
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	sb_release(&labels);
	return ret;
}

void inventory_keep(struct inventory *inv, char *const *want, int nwant)
{
	for (int i = 0; i < inv->nhosts; i++) {
		int keep = 1;

		for (int w = 0; w < nwant && keep; w++) {
			const char *eq = strchr(want[w], '=');
			char *name = xstrndup(want[w], (size_t)(eq - want[w]));
			const char *val = !strcmp(name, "name") ? inv->hosts[i].name
								: json_obj_get(&inv->hosts[i].labels, name);

			keep = val && !strcmp(val, eq + 1);
			free(name);
		}
		if (!keep) {
			host_release(&inv->hosts[i]);
			memmove(&inv->hosts[i], &inv->hosts[i + 1],
				(size_t)(inv->nhosts - i - 1) * sizeof(inv->hosts[0]));
			inv->nhosts--;
			i--;
		}
	}
}
