/* spec_command.c: a command sweep's keys: command, prepare, cleanup, env and their placeholders, items, runs. */
#include "spec_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

size_t spec_placeholder_len(const char *t)
{
	size_t len = strspn(t + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");

	return len && t[1 + len] == '}' ? len : 0;
}

void spec_command_placeholders(struct sp *p, const char *t, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF], b[SHOW_BUF], h[HINT_BUF];

	for (const char *c = t; (c = strchr(c, '{')); c++) {
		size_t len = spec_placeholder_len(c);
		char *name;
		int known = 0;

		if (c[1] == '{') {
			c++;   /* {{ is a literal brace (command_expand) */
			continue;
		}
		if (!len)
			continue;
		name = xstrndup(c + 1, len);
		if (len > SPEC_PLACEHOLDER_MAX) {
			spec_node_problem(p, n, "placeholder '{%s}' is longer than %d characters",
				spec_shown(a, name), SPEC_PLACEHOLDER_MAX);
			free(name);
			continue;
		}
		for (int i = 0; p->phnames[i] && !known; i++)
			known = !strcmp(p->phnames[i], name);
		if (!strcmp(name, "item"))
			*uses_item = 1;
		if (!known && *spec_node_hint(p, h, name, p->phnames))
			spec_node_problem(p, n, "unknown placeholder '{%s}' (did you mean '{%s}'?)",
				spec_shown(a, name), spec_shown(b, closest_name(name, p->phnames)));
		else if (!known)
			spec_node_problem(p, n, "unknown placeholder '{%s}'", spec_shown(a, name));
		free(name);
	}
}

void spec_command_parse(struct sp *p, const struct ynode *n)
{
	struct spec *s = p->s;

	s->command_line = n->line;
	s->command_col = n->col;
	s->command = spec_node_strings(p, n, "command", &s->ncommand);
}

char **spec_command_argv(struct sp *p, const struct ynode *n, const char *what, int *count, int *uses_item)
{
	char **argv = spec_node_strings(p, n, what, count);

	for (int i = 0; argv && i < *count; i++)
		spec_command_placeholders(p, argv[i], ydoc_item(n, i), uses_item);
	return argv;
}

static int env_name_ok(const char *t)
{
	if (!*t || isdigit((unsigned char)*t))
		return 0;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && *t != '_')
			return 0;
	return 1;
}

void spec_command_env(struct sp *p, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF];
	struct spec *s = p->s;

	if (n->kind != YNODE_MAP) {
		spec_node_problem(p, n, "expected a mapping for 'env', got %s", spec_node_kind(n));
		return;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *kn = ydoc_key(n, j);
		const char *key = spec_node_key(p, kn), *val;
		int dup = 0;

		if (!key)
			continue;
		if (!env_name_ok(key)) {
			spec_node_problem(p, kn, "invalid environment variable name '%s'",
				spec_shown(a, key));
			continue;
		}
		for (int i = 0; i < s->nenv; i++)
			dup |= !strcmp(s->env_keys[i], key);
		if (dup) {
			spec_node_problem(p, kn, "duplicate key '%s'", key);
			continue;
		}
		val = spec_node_scalar(p, ydoc_value(n, j), key);
		if (!val)
			continue;
		spec_command_placeholders(p, val, ydoc_value(n, j), uses_item);
		ALLOC_GROW(s->env_keys, (size_t)s->nenv + 1, p->env_alloc);
		s->env_vals = xrealloc(s->env_vals, p->env_alloc * sizeof(*s->env_vals));
		s->env_keys[s->nenv] = xstrdup(key);
		s->env_vals[s->nenv] = xstrdup(val);
		s->nenv++;
	}
}

void spec_command_items(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];
	struct spec *s = p->s;
	char **sorted;

	if (n->kind == YNODE_SCALAR) {
		const char *t = spec_node_scalar(p, n, "items");
		long count;

		if (!t)
			return;
		if (parse_long(t, &count)) {
			spec_node_problem(p, n, "expected a count or a list for 'items', got '%s'",
				spec_shown(a, t));
			return;
		}
		if (count < 1) {
			spec_node_problem(p, n, "'items' must be at least 1, got %ld", count);
			return;
		}
		if (spec_node_reserve(p, n, (size_t)count))
			return;
		s->nitems = (int)count;
		s->items = xcalloc((size_t)count, sizeof(*s->items));
		for (long i = 0; i < count; i++)
			s->items[i] = xasprintf("%ld", i);
		return;
	}
	s->items = spec_node_strings(p, n, "items", &s->nitems);
	if (!s->items)
		return;
	/* Items name rows of per-item results: two with one name would be one row. */
	sorted = xmalloc((size_t)s->nitems * sizeof(*sorted));
	memcpy(sorted, s->items, (size_t)s->nitems * sizeof(*sorted));
	qsort(sorted, (size_t)s->nitems, sizeof(*sorted), spec_cmp_strp);
	for (int i = 1; i < s->nitems; i++)
		if (!strcmp(sorted[i - 1], sorted[i]) && (i < 2 || strcmp(sorted[i - 2], sorted[i])))
			spec_node_problem(p, n, "duplicate item '%s'", spec_shown(a, sorted[i]));
	free(sorted);
}
