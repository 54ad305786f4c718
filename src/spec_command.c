/* spec_command.c: a command sweep's keys: command, env and their placeholders, metrics, items. */
#include "spec_int.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* A metric regex is a line's worth of text; glibc's regcomp copies repeated parts (see regex_too_big). */
#define REGEX_MAX_LEN 1000
#define REGEX_MAX_NODES 2000
#define REGEX_MAX_NODES_TEXT "2000"
#define REGEX_MAX_NEST 100
#define REGEX_MAX_NEST_TEXT "100"
/* Each regex costs up to tens of milliseconds to compile: a cap keeps a pasted mistake quick. */
#define REGEX_MAX_METRICS 100
/* Characters of a {placeholder} name; worker_expand uses the same set. */
#define PLACEHOLDER_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define PLACEHOLDER_MAX 127

void spec_command_placeholders(struct sp *p, const char *t, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF], b[SHOW_BUF], h[HINT_BUF];

	for (const char *c = t; (c = strchr(c, '{')); c++) {
		size_t len = strspn(c + 1, PLACEHOLDER_CHARS);
		char *name;
		int known = 0;

		/* Braces around anything else (JSON in an argument, say) are text, as in worker_expand. */
		if (!len || c[1 + len] != '}')
			continue;
		name = xstrndup(c + 1, len);
		/* worker_expand keeps longer names as written. */
		if (len > PLACEHOLDER_MAX) {
			spec_node_problem(p, n, "placeholder '{%s}' is longer than %d characters",
				spec_shown(a, name), PLACEHOLDER_MAX);
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

/* The bound of an interval {n}, {n,}, {n,m} or {,m} at c, as the copies glibc makes of what it follows
 * (an overestimate by one); *end is set past it. 0 when c starts no interval (then '{' is a literal). */
static double regex_interval(const char *c, const char **end)
{
	double lo = 0, hi;
	const char *d = c + 1;

	if (!isdigit((unsigned char)*d) && *d != ',')
		return 0;
	for (; isdigit((unsigned char)*d); d++)
		lo = lo * 10 + (*d - '0');
	hi = lo;
	if (*d == ',')
		for (hi = 0, d++; isdigit((unsigned char)*d); d++)
			hi = hi * 10 + (*d - '0');
	if (*d != '}')
		return 0;
	*end = d;
	return (lo > hi ? lo : hi) + 1;
}

/* Whether the interval ending at '}' c has a minimum of 0 ({0,m}, {,m}, {0}, {0,}). */
static int regex_interval_min0(const char *c)
{
	while (*c != '{')
		c--;
	c++;
	while (*c == '0')
		c++;
	return !isdigit((unsigned char)*c);
}

/* Whether escape \c is zero-width or may match nothing: an anchor (\b \B \< \> \` \') or a backreference. */
static int regex_escape_nullable(char c)
{
	return (c && strchr("bB<>`'", c)) || isdigit((unsigned char)c);
}

/*
 * Whether glibc's regcomp would take too long or too much memory on pat; why is set to the reason.
 * It copies what a '+' or an interval applies to (a+ is a a*, a{2,4} is a a a? a?), so stacked or
 * nested copies ("c+++++", "((a{99}){99})") grow exponentially: count the nodes through the groups
 * (sum[d]: the group open at depth d so far, last[d]: its last atom, the one a postfix applies to).
 * And its epsilon closures take exponential time when '+' or an interval repeats a part that can match
 * nothing ("((a*)+)+", ":*+*+"): track that too (nul_seq[d]: the current alternative can match nothing,
 * nul_alt[d]: an earlier one can, nul_last[d]: the last atom can, nul_before[d]: nul_seq before it).
 */
static int regex_too_big(const char *pat, const char **why)
{
	double sum[REGEX_MAX_NEST + 1], last[REGEX_MAX_NEST + 1], atom, k;
	char nul_seq[REGEX_MAX_NEST + 1], nul_alt[REGEX_MAX_NEST + 1], nul_last[REGEX_MAX_NEST + 1];
	char nul_before[REGEX_MAX_NEST + 1], nul;
	int depth = 0;

	*why = "its repetitions expand past " REGEX_MAX_NODES_TEXT " nodes";
	sum[0] = last[0] = 0;
	nul_seq[0] = nul_last[0] = nul_before[0] = 1;
	nul_alt[0] = 0;
	for (const char *c = pat; *c; c++) {
		atom = 1;
		nul = 0;
		switch (*c) {
		case '\\':
			if (c[1])
				nul = regex_escape_nullable(*++c);
			break;
		case '^':
		case '$':
			nul = 1;
			break;
		case '[':
			/* A bracket expression is one node: skip to its ']' (a leading ']' is a member). */
			c += c[1] == '^';
			c += c[1] == ']';
			while (c[1] && c[1] != ']')
				c++;
			if (!c[1])
				return 0;   /* unterminated: regcomp says so */
			c++;
			break;
		case '(':
			if (depth == REGEX_MAX_NEST) {
				*why = "it nests more than " REGEX_MAX_NEST_TEXT " groups";
				return 1;
			}
			depth++;
			sum[depth] = last[depth] = 0;
			nul_seq[depth] = nul_last[depth] = nul_before[depth] = 1;
			nul_alt[depth] = 0;
			continue;
		case ')':
			if (depth) {
				atom = sum[depth] + 1;
				nul = nul_seq[depth] || nul_alt[depth];
				depth--;
			}
			break;
		case '|':
			sum[depth]++;
			last[depth] = 0;
			nul_alt[depth] |= nul_seq[depth];
			nul_seq[depth] = nul_last[depth] = nul_before[depth] = 1;
			continue;
		case '*':
		case '?':
			/* No copy, but a node around the atom, which a following '+' copies with it. */
			sum[depth]++;
			last[depth]++;
			nul_last[depth] = 1;
			nul_seq[depth] = nul_before[depth];
			goto check;
		case '+':
		case '{':
			k = *c == '+' ? 2 : regex_interval(c, &c);
			if (!k)
				break;   /* a '{' that starts no interval is a literal */
			if (nul_last[depth]) {
				*why = "'+' or '{n,m}' repeats a part that can match nothing";
				return 1;
			}
			sum[depth] += last[depth] * (k - 1) + 1;
			last[depth] = last[depth] * k + 1;
			/* {0,m} makes the part optional. */
			if (*c == '}' && regex_interval_min0(c)) {
				nul_last[depth] = 1;
				nul_seq[depth] = nul_before[depth];
			}
			goto check;
		}
		sum[depth] += atom;
		last[depth] = atom;
		nul_before[depth] = nul_seq[depth];
		nul_seq[depth] &= nul;
		nul_last[depth] = nul;
check:
		if (sum[depth] > REGEX_MAX_NODES)
			return 1;
	}
	return 0;
}

void spec_command_metrics(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	static const char *const json_name[] = { "json", NULL };
	struct spec *s = p->s;

	if (n->kind == YNODE_SCALAR) {
		const char *t = spec_node_scalar(p, n, "metrics");

		if (t && !strcmp(t, "json"))
			s->metrics = METRICS_JSON;
		else if (t && *spec_node_hint(p, h, t, json_name))
			spec_node_problem(p, n, "invalid value '%s' for 'metrics'%s", spec_shown(a, t), h);
		else if (t)
			spec_node_problem(p, n, "invalid value '%s' for 'metrics' (expected json or a "
				"mapping of name: regex)", spec_shown(a, t));
		return;
	}
	if (n->kind != YNODE_MAP) {
		spec_node_problem(p, n, "expected json or a mapping of name: regex for 'metrics', got %s",
			spec_node_kind(n));
		return;
	}
	if (!n->n) {
		spec_node_problem(p, n, "empty mapping for 'metrics'");
		return;
	}
	s->metrics = METRICS_REGEX;
	if (n->n > REGEX_MAX_METRICS) {
		spec_node_problem(p, n, "more than %d metrics", REGEX_MAX_METRICS);
		return;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *kn = ydoc_key(n, j), *vn = ydoc_value(n, j);
		const char *name = spec_node_key(p, kn), *pat, *why;
		char msg[256];
		regex_t re;
		int rc, dup = 0;

		if (!name)
			continue;
		for (int i = 0; i < s->nregex; i++)
			dup |= !strcmp(s->regex[i].name, name);
		if (dup) {
			spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(a, name));
			continue;
		}
		if (!*name) {
			spec_node_problem(p, kn, "empty metric name");
			continue;
		}
		pat = spec_node_scalar(p, vn, name);
		if (!pat)
			continue;
		if (strlen(pat) > REGEX_MAX_LEN) {
			spec_node_problem(p, vn, "regex for metric '%s' is longer than %d characters",
				spec_shown(a, name), REGEX_MAX_LEN);
			continue;
		}
		if (regex_too_big(pat, &why)) {
			spec_node_problem(p, vn, "regex for metric '%s' is too complex: %s",
				spec_shown(a, name), why);
			continue;
		}
		rc = regcomp(&re, pat, REG_EXTENDED);
		if (rc) {
			regerror(rc, &re, msg, sizeof(msg));
			spec_node_problem(p, vn, "invalid regex for metric '%s': %s", spec_shown(a, name),
				msg);
			continue;
		}
		if (re.re_nsub != 1)
			spec_node_problem(p, vn, "regex for metric '%s' must have exactly one capture group, "
				"it has %zu", spec_shown(a, name), re.re_nsub);
		regfree(&re);
		ALLOC_GROW(s->regex, (size_t)s->nregex + 1, p->regex_alloc);
		s->regex[s->nregex].name = xstrdup(name);
		s->regex[s->nregex].pattern = xstrdup(pat);
		s->nregex++;
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
