/* identity.c: the files a sweep's measurement runs and reads, found as a run finds them and hashed once each. */
#include "identity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command.h"
#include "json.h"
#include "sha256.h"

void identity_release(struct identity *id)
{
	for (size_t i = 0; i < id->n; i++) {
		free(id->f[i].name);
		free(id->f[i].path);
		free(id->f[i].hash);
	}
	free(id->f);
	free(id->folder);
	memset(id, 0, sizeof(*id));
}

static int regular(const char *path, struct stat *st)
{
	return !stat(path, st) && S_ISREG(st->st_mode);
}

char *identity_program(const char *name, const char *dir)
{
	const char *path = getenv("PATH"), *p, *end;
	struct stat st;

	if (!*name)
		return NULL;
	if (strchr(name, '/'))
		return xstrdup(name);
	/* glibc's posix_spawnp searches the caller's PATH (not the child's env), "/bin:/usr/bin" without one;
	 * an empty or relative entry means the folder the program is started in. */
	for (p = path ? path : "/bin:/usr/bin"; ; p = end + 1) {
		char *cand;

		end = strchrnul(p, ':');
		cand = end == p ? xstrdup(name) : xasprintf("%.*s/%s", (int)(end - p), p, name);
		if (dir && cand[0] != '/') {
			char *in = xasprintf("%s/%s", dir, cand);

			free(cand);
			cand = in;
		}
		if (regular(cand, &st) && !access(cand, X_OK))
			return cand;
		free(cand);
		if (!*end)
			return NULL;
	}
}

/* One program word: "" when it can be started here, else why not into why. */
static void missing_program(const char *word, const char *host, struct strbuf *why)
{
	char *path, cwd[4096];
	struct stat st;

	if (strchr(word, '{') || why->len)
		return;   /* known only once a cell fills it; one reason is enough */
	path = identity_program(word, NULL);
	if (path && regular(path, &st) && !access(path, X_OK)) {
		free(path);
		return;
	}
	free(path);
	if (strchr(word, '/'))
		sb_addf(why, "program '%s' is not an executable file in '%s' on host '%s'", word,
			getcwd(cwd, sizeof(cwd)) ? cwd : "?", host);
	else
		sb_addf(why, "program '%s' not found on host '%s' (PATH searched: %s)", word, host,
			getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
}

void identity_missing(const struct spec *s, const char *host, struct strbuf *why)
{
	if (s->ncommand)
		missing_program(s->command[0], host, why);
	if (s->nprepare)
		missing_program(s->prepare[0], host, why);
	if (s->ncleanup)
		missing_program(s->cleanup[0], host, why);
}

static struct identity_file *find(struct identity *id, const char *name)
{
	for (size_t i = 0; i < id->n; i++)
		if (!strcmp(id->f[i].name, name))
			return &id->f[i];
	return NULL;
}

/* Hash the regular file at path once under name (nothing for anything else): a file found under another
 * name (python3 and /usr/bin/python3) takes its hash. -1 after error() when it cannot be read. */
static int add(struct identity *id, const struct spec *s, const char *name, const char *path)
{
	struct identity_file *f;
	struct stat st;
	char hex[65];

	if (find(id, name) || !regular(path, &st))
		return 0;
	ALLOC_GROW(id->f, id->n + 1, id->alloc);
	f = &id->f[id->n];
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < id->n && !f->hash; i++) {
		if (!strcmp(id->f[i].path, path)) {
			f->hash = xstrdup(id->f[i].hash);
			f->big = id->f[i].big;
		}
	}
	if (!f->hash && st.st_size > IDENTITY_BIG) {
		f->hash = xasprintf("size:%lld mtime:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
				    st.st_mtim.tv_nsec);
		f->big = 1;
		fprintf(stderr, "sweep: %s: '%s' is over %lld MiB: identified by its size and modification time, "
			"not its content\n", s->name, name, (long long)(IDENTITY_BIG >> 20));
	} else if (!f->hash) {
		if (sha256_file(path, hex))
			return -1;
		f->hash = xasprintf("sha256:%s", hex);
	}
	f->name = xstrdup(name);
	f->path = xstrdup(path);
	id->n++;
	return 0;
}

/* A word once filled: the program (word 0) or a file it names. Not found is no error: the run says so. */
static void add_word(struct identity *id, const struct spec *s, const char *word, int program)
{
	char *path = program ? identity_program(word, id->folder) : xstrdup(word);

	if (path && path[0] != '/' && id->folder) {
		char *in = xasprintf("%s/%s", id->folder, path);

		free(path);
		path = in;
	}
	if (path && add(id, s, word, path))
		fprintf(stderr, "sweep: %s: '%s' is left out of the sweep's identity\n", s->name, word);
	free(path);
}

static int names(const char *word, const char *name)
{
	char *ph = xasprintf("{%s}", name);
	int r = strstr(word, ph) != NULL;

	free(ph);
	return r;
}

static int is_param(const struct spec *s, const char *name)
{
	for (int a = 0; a < s->naxes; a++)
		for (int k = 0; k < s->axes[a].nkeys; k++)
			if (!strcmp(s->axes[a].keys[k], name))
				return 1;
	return 0;
}

/* A word filled with every combination of the axes it names (and every item when it names {item}). */
static void add_template(struct identity *id, const struct spec *s, const char *word, int program)
{
	static const char *const runtime[] = { "gpu", "host", "cell" };
	int axes[64], naxes = 0, point[64] = { 0 }, uses_item = names(word, "item") && s->nitems;
	uint64_t fills = uses_item ? (uint64_t)s->nitems : 1;

	if (!strchr(word, '{')) {
		add_word(id, s, word, program);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(runtime); i++)
		if (names(word, runtime[i]) && !is_param(s, runtime[i]))
			return;
	for (int a = 0; a < s->naxes; a++)
		for (int k = 0; k < s->axes[a].nkeys; k++)
			if (names(word, s->axes[a].keys[k]) && (!naxes || axes[naxes - 1] != a) && naxes < 64) {
				axes[naxes++] = a;
				fills *= (uint64_t)s->axes[a].npoints;
			}
	if (fills > IDENTITY_MAX_FILLS) {
		fprintf(stderr, "sweep: %s: '%s' names %llu files (over %d): left out of the sweep's identity\n",
			s->name, word, (unsigned long long)fills, IDENTITY_MAX_FILLS);
		return;
	}
	for (;;) {
		struct json_obj params = JSON_OBJ_INIT;
		int i;

		for (i = 0; i < naxes; i++) {
			const struct spec_axis *ax = &s->axes[axes[i]];

			for (int k = 0; k < ax->nkeys; k++) {
				const struct spec_scalar *v = &ax->vals[(size_t)point[i] * (size_t)ax->nkeys + (size_t)k];

				json_obj_add(&params, ax->keys[k], v->text, v->is_num ? JSON_NUM : JSON_STR);
			}
		}
		for (int it = 0; it < (uses_item ? s->nitems : 1); it++) {
			char *filled = command_expand(word, &params, uses_item ? s->items[it] : NULL, -1, NULL, NULL);

			add_word(id, s, filled, program);
			free(filled);
		}
		json_obj_release(&params);
		for (i = 0; i < naxes && ++point[i] == s->axes[axes[i]].npoints; i++)
			point[i] = 0;
		if (i == naxes)
			return;
	}
}

/* Whether word is a file the metrics are read from (from: FILE): the command's output, not what it reads. */
static int output(const struct spec *s, const char *word)
{
	if (s->json_src.from == FROM_FILE && s->json_src.path && !strcmp(s->json_src.path, word))
		return 1;
	for (int i = 0; i < s->nregex; i++)
		if (s->regex[i].src.from == FROM_FILE && s->regex[i].src.path && !strcmp(s->regex[i].src.path, word))
			return 1;
	return 0;
}

static void add_argv(struct identity *id, const struct spec *s, char *const *argv, int n)
{
	for (int i = 0; i < n; i++)
		if (i == 0 || !output(s, argv[i]))
			add_template(id, s, argv[i], i == 0);
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct identity_file *)a)->name, ((const struct identity_file *)b)->name);
}

int identity_collect(const struct spec *s, struct identity *out)
{
	memset(out, 0, sizeof(*out));
	if ((s->command || s->ninputs) && !(out->folder = spec_folder(s)))
		return -1;
	for (int i = 0; i < s->ninputs; i++) {
		char *path = s->inputs[i][0] == '/' || !out->folder ? xstrdup(s->inputs[i]) :
			     xasprintf("%s/%s", out->folder, s->inputs[i]);
		struct stat st;
		int rc = regular(path, &st) ? add(out, s, s->inputs[i], path) : -1;

		free(path);
		if (rc) {
			error("%s: inputs: '%s' is not a file that can be read in '%s' (the folder commands run in: "
			      "the spec's, or its workdir:)", s->path, s->inputs[i], out->folder ? out->folder : ".");
			identity_release(out);
			return -1;
		}
	}
	add_argv(out, s, s->command, s->ncommand);
	add_argv(out, s, s->prepare, s->nprepare);
	add_argv(out, s, s->cleanup, s->ncleanup);
	if (out->n)
		qsort(out->f, out->n, sizeof(*out->f), cmp_file);
	return 0;
}

void identity_json(const struct identity *id, struct strbuf *sb)
{
	struct json_obj o = JSON_OBJ_INIT;

	for (size_t i = 0; i < id->n; i++)
		json_obj_add(&o, id->f[i].name, id->f[i].hash, JSON_STR);
	json_obj_write(sb, &o);
	json_obj_release(&o);
}

/* The pairs of a JSON object; a text that is not one (or NULL) has none. */
static void parse(const char *text, struct json_obj *o)
{
	char err[128];

	if (!text || json_parse_flat(text, o, 1, err, sizeof(err)))
		memset(o, 0, sizeof(*o));
}

static int diff_one(const struct json_obj *a, const struct json_obj *b, int forward, struct strbuf *what)
{
	int n = 0;

	for (size_t i = 0; i < a->n; i++) {
		const char *other = json_obj_get(b, a->v[i].key);

		if (other ? forward && strcmp(other, a->v[i].val) : 1) {
			if (!forward && other)
				continue;
			sb_addf(what, "%s'%s': %s -> %s", what->len ? "; " : "", a->v[i].key,
				forward ? (other ? other : "(none)") : a->v[i].val, forward ? a->v[i].val : "(none)");
			n++;
		}
	}
	return n;
}

int identity_changes(const char *old_json, const char *new_json, struct strbuf *what)
{
	struct json_obj o, n;
	int count;

	parse(old_json, &o);
	parse(new_json, &n);
	/* Files of the new identity (changed or new), then those it no longer has. */
	count = diff_one(&n, &o, 1, what) + diff_one(&o, &n, 0, what);
	json_obj_release(&o);
	json_obj_release(&n);
	return count;
}
