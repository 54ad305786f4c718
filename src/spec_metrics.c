/* spec_metrics.c: a command sweep's metrics: JSON lines, JSON documents read by path, or regexes; where each
 * is read (from), what several matches mean (match) and the unit a value is converted into. */
#include "spec_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rx.h"
#include "unit.h"

/* A metric regex is a line's worth of text. PCRE2 runs it under match limits (rx.h), so a pattern that
 * backtracks badly fails the cell at its first attempt instead of running for hours. */
#define REGEX_MAX_LEN 1000
/* Each regex costs a little to compile: a cap keeps a pasted mistake quick. */
#define REGEX_MAX_METRICS 100

/*
 * Where pat is GNU ERE (what metric regexes were read as before PCRE2) that PCRE2 would read otherwise,
 * without an error: the word anchors \< and \>, the buffer anchors \` and \', and {,m} (GNU's {0,m},
 * literal text to PCRE2 10.42). NULL when there is none, else what to write instead.
 */
static const char *regex_ere_only(const char *pat)
{
	int bracket = 0;

	for (const char *c = pat; *c; c++) {
		if (bracket) {
			if (*c == '[' && c[1] == ':' && strchr(c + 2, ']'))
				c = strchr(c + 2, ']');   /* [:digit:] */
			else if (*c == ']')
				bracket = 0;
			continue;
		}
		if (*c == '\\' && c[1]) {
			if (strchr("<>", c[1]))
				return "'\\<' and '\\>' (GNU word anchors) are literal characters in PCRE2: write \\b";
			if (strchr("`'", c[1]))
				return "'\\`' and '\\'' (GNU buffer anchors) are not PCRE2: write ^ or $";
			c++;
		} else if (*c == '[') {
			bracket = 1;
			c += c[1] == '^';
			c += c[1] == ']';   /* a leading ']' is a member */
		} else if (*c == '{' && c[1] == ',' && isdigit((unsigned char)c[2]) && c > pat) {
			return "'{,m}' is literal text in PCRE2: write {0,m}";
		}
	}
	return NULL;
}

static const char *const match_names[] = { "one", "first", "last", "each", NULL };
static const char *const regex_fields[] = { "regex", "from", "match", "unit", "better", "unit_base", "scale",
					     NULL };
static const char *const json_fields[] = { "path", "unit", "unit_path", "better", "unit_base", "scale", NULL };
enum { R_REGEX, R_FROM, R_MATCH, R_UNIT, R_BETTER, R_BASE, R_SCALE, NREGEX_FIELDS };
enum { J_PATH, J_UNIT, J_UNIT_PATH, J_BETTER, J_BASE, J_SCALE, NJSON_FIELDS };
/* better: which way a metric improves (spec.h's BETTER_*), for sweep compare's verdict */
static const char *const better_names[] = { "lower", "higher", NULL };

/* better: lower|higher into *better (BETTER_LOWER or _HIGHER); -1 after a problem. */
static int parse_better(struct sp *p, const struct ynode *n, int *better)
{
	int i = spec_node_enum(p, n, "better", better_names);

	if (i < 0)
		return -1;
	*better = i ? BETTER_HIGHER : BETTER_LOWER;
	return 0;
}

/* from: stdout, stderr, or the path of a file the command writes (placeholders allowed). */
static void parse_source(struct sp *p, const struct ynode *n, struct spec_source *src, int *uses_item)
{
	const char *t = spec_node_scalar(p, n, "from");

	if (!t)
		return;
	free(src->path);
	src->path = NULL;
	if (!strcmp(t, "stdout")) {
		src->from = FROM_STDOUT;
	} else if (!strcmp(t, "stderr")) {
		src->from = FROM_STDERR;
	} else if (!*t) {
		spec_node_problem(p, n, "empty 'from' (stdout, stderr or the path of a file the command writes)");
	} else {
		src->from = FROM_FILE;
		src->path = xstrdup(t);
		spec_command_placeholders(p, t, n, uses_item);
	}
}

static void source_copy(struct spec_source *to, const struct spec_source *from)
{
	to->from = from->from;
	to->path = from->path ? xstrdup(from->path) : NULL;
}

/* A declared unit, or NULL after a problem. */
static char *parse_unit(struct sp *p, const struct ynode *n)
{
	const char *t = spec_node_scalar(p, n, "unit");
	char a[SHOW_BUF], err[96];

	if (!t)
		return NULL;
	if (unit_check(t, err, sizeof(err))) {
		spec_node_problem(p, n, "invalid unit '%s': %s", spec_shown(a, t), err);
		return NULL;
	}
	return xstrdup(t);
}

/*
 * unit_base: 1000 or 1024 into *base (1024, else 0), and scale: UNIT into *scale: the unit a value printed
 * without one has (openssl speed -mr's bytes per second). A scale needs a unit to convert into: without
 * unit:, the scale is the unit. -1 after a problem.
 */
static int parse_unit_how(struct sp *p, const struct ynode *bn, const struct ynode *sn, char **unit, int *base,
			  char **scale)
{
	const char *t;
	char a[SHOW_BUF], err[96];

	if (bn) {
		if (!(t = spec_node_scalar(p, bn, "unit_base")))
			return -1;
		if (strcmp(t, "1000") && strcmp(t, "1024")) {
			spec_node_problem(p, bn, "unit_base is 1000 or 1024, not '%s'", spec_shown(a, t));
			return -1;
		}
		*base = !strcmp(t, "1024") ? 1024 : 0;
	}
	if (sn) {
		if (!(*scale = parse_unit(p, sn)))
			return -1;
		if (!*unit)
			*unit = xstrdup(*scale);
		else if (unit_convert(1, *scale, *unit, &(double){ 0 }, err, sizeof(err))) {
			spec_node_problem(p, sn, "scale '%s' does not convert into unit '%s': %s", spec_shown(a, *scale),
					  *unit, err);
			return -1;
		}
	}
	return 0;
}

/* A path read at node n (many: [*] allowed), or NULL after a problem. */
static const char *parse_path(struct sp *p, const struct ynode *n, const char *what, int many)
{
	const char *t = spec_node_scalar(p, n, what);
	char a[SHOW_BUF], err[160];
	int uses_item = 0;

	if (!t)
		return NULL;
	if (json_path_check(t, many, err, sizeof(err))) {
		spec_node_problem(p, n, "invalid path '%s' for '%s': %s", spec_shown(a, t), what, err);
		return NULL;
	}
	spec_command_placeholders(p, t, n, &uses_item);
	return t;
}

/* The pattern for metric name: checked for length and syntax (PCRE2's), its capture groups counted into
 * *groups. */
static int check_regex(struct sp *p, const struct ynode *vn, const char *name, const char *pat, int *groups)
{
	char a[SHOW_BUF], msg[256];
	const char *why;
	struct rx *re;

	if (strlen(pat) > REGEX_MAX_LEN) {
		spec_node_problem(p, vn, "regex for metric '%s' is longer than %d characters", spec_shown(a, name),
			REGEX_MAX_LEN);
		return -1;
	}
	if ((why = regex_ere_only(pat))) {
		spec_node_problem(p, vn, "regex for metric '%s': %s", spec_shown(a, name), why);
		return -1;
	}
	if (!(re = rx_compile(pat, groups, msg, sizeof(msg)))) {
		spec_node_problem(p, vn, "invalid regex for metric '%s': %s", spec_shown(a, name), msg);
		return -1;
	}
	rx_free(re);
	return 0;
}

/* name: REGEX, or name: {regex, from, match, unit}; from defaults to the metrics' own. */
static void parse_regex_metric(struct sp *p, const char *name, const struct ynode *vn,
			       const struct spec_source *from, int *uses_item)
{
	const struct ynode *v[NREGEX_FIELDS + 1] = { 0 }, *k[NREGEX_FIELDS + 1] = { 0 };
	struct spec_regex re = { .match = MATCH_ONE };
	char a[SHOW_BUF];
	const char *pat;
	int m, bad = 0;

	if (vn->kind == YNODE_MAP) {
		if (spec_node_fields(p, vn, "a regex metric", regex_fields, v, k))
			return;
		if (!v[R_REGEX]) {
			spec_node_problem(p, vn, "metric '%s' has no 'regex'", spec_shown(a, name));
			return;
		}
	} else {
		v[R_REGEX] = vn;
	}
	if (!(pat = spec_node_scalar(p, v[R_REGEX], name)) || check_regex(p, v[R_REGEX], name, pat, &re.groups))
		return;
	if (v[R_MATCH] && (m = spec_node_enum(p, v[R_MATCH], "match", match_names)) < 0)
		return;   /* the groups it needs are unknown */
	if (v[R_MATCH])
		re.match = (enum spec_matches)m;
	if (re.match == MATCH_EACH && re.groups != 1 && re.groups != 2) {
		spec_node_problem(p, v[R_REGEX], "regex for metric '%s' must have one or two capture groups with "
			"match: each (the item, then the value), it has %d", spec_shown(a, name), re.groups);
		bad = 1;
	} else if (re.match != MATCH_EACH && re.groups != 1) {
		spec_node_problem(p, v[R_REGEX], "regex for metric '%s' must have exactly one capture group, it "
			"has %d", spec_shown(a, name), re.groups);
		bad = 1;
	}
	if (v[R_UNIT] && !(re.unit = parse_unit(p, v[R_UNIT])))
		bad = 1;
	else if (parse_unit_how(p, v[R_BASE], v[R_SCALE], &re.unit, &re.unit_base, &re.scale))
		bad = 1;
	if (v[R_BETTER] && parse_better(p, v[R_BETTER], &re.better))
		bad = 1;
	source_copy(&re.src, from);
	if (v[R_FROM])
		parse_source(p, v[R_FROM], &re.src, uses_item);
	if (bad) {
		free(re.unit);
		free(re.scale);
		free(re.src.path);
		return;
	}
	re.name = xstrdup(name);
	re.pattern = xstrdup(pat);
	ALLOC_GROW(p->s->regex, (size_t)p->s->nregex + 1, p->regex_alloc);
	p->s->regex[p->s->nregex++] = re;
}

/* name: PATH, or name: {path, unit, unit_path}. */
static void parse_json_metric(struct sp *p, const char *name, const struct ynode *vn)
{
	const struct ynode *v[NJSON_FIELDS + 1] = { 0 }, *k[NJSON_FIELDS + 1] = { 0 };
	struct spec_jmetric jm = { 0 };
	char a[SHOW_BUF];
	const char *path, *up = NULL;

	if (vn->kind == YNODE_MAP) {
		if (spec_node_fields(p, vn, "a json metric", json_fields, v, k))
			return;
		if (!v[J_PATH]) {
			spec_node_problem(p, vn, "metric '%s' has no 'path'", spec_shown(a, name));
			return;
		}
	} else {
		v[J_PATH] = vn;
	}
	if (!(path = parse_path(p, v[J_PATH], name, 0)))
		return;
	if (v[J_UNIT_PATH] && !v[J_UNIT]) {
		spec_node_problem(p, k[J_UNIT_PATH], "'unit_path' needs 'unit', the unit the value is converted "
			"into");
		return;
	}
	if (v[J_UNIT_PATH] && !(up = parse_path(p, v[J_UNIT_PATH], "unit_path", 0)))
		return;
	if (v[J_UNIT] && !(jm.unit = parse_unit(p, v[J_UNIT])))
		return;
	if (parse_unit_how(p, v[J_BASE], v[J_SCALE], &jm.unit, &jm.unit_base, &jm.scale) ||
	    (v[J_BETTER] && parse_better(p, v[J_BETTER], &jm.better))) {
		free(jm.unit);
		free(jm.scale);
		return;
	}
	jm.name = xstrdup(name);
	jm.path = xstrdup(path);
	jm.unit_path = up ? xstrdup(up) : NULL;
	ALLOC_GROW(p->s->jmetrics, (size_t)p->s->njmetrics + 1, p->jmetric_alloc);
	p->s->jmetrics[p->s->njmetrics++] = jm;
}

/* A metric's name: not empty, not given twice. */
static int metric_name_ok(struct sp *p, const struct ynode *kn, const char *name)
{
	const struct spec *s = p->s;
	char a[SHOW_BUF];
	int dup = 0;

	for (int i = 0; i < s->nregex; i++)
		dup |= !strcmp(s->regex[i].name, name);
	for (int i = 0; i < s->njmetrics; i++)
		dup |= !strcmp(s->jmetrics[i].name, name);
	if (dup)
		spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(a, name));
	else if (!*name)
		spec_node_problem(p, kn, "empty metric name");
	return !dup && *name;
}

/* Whether mapping n has key (a regex metric among json ones is {regex: ...}). */
static int has_key(const struct ynode *n, const char *key)
{
	for (int j = 0; n->kind == YNODE_MAP && j < n->n; j++)
		if (ydoc_key(n, j)->kind == YNODE_SCALAR && !strcmp(ydoc_key(n, j)->text, key))
			return 1;
	return 0;
}

static const char *const dup_names[] = { "error", "last", "first", NULL };
static const char *const combine_names[] = { "mean", "sum", "max", "min", "error", NULL };

/* The reader's keys of the mapping form; every other key is a metric. */
static int reader_key(const char *key)
{
	return !strcmp(key, "from") || !strcmp(key, "json") || !strcmp(key, "item") ||
	       !strcmp(key, "duplicate_keys") || !strcmp(key, "combine");
}

/* combine: how several records of one item and metric in one run make its value. */
static void parse_combine(struct sp *p, const struct ynode *n)
{
	int e = spec_node_enum(p, n, "combine", combine_names);

	if (e >= 0) {
		p->s->combine = (enum spec_combine)e;
		p->s->combine_said = 1;
	}
}

/* The mapping form: from, json, item, duplicate_keys and combine are the reader's keys; every other key is
 * a metric: a regex, or with json: a path, unless it is {regex: ...} (both read the same run's output).
 * json: lines with no metric is the JSON lines reader (metrics: json) with a combine: of its own. */
static void parse_map(struct sp *p, const struct ynode *n, int *uses_item)
{
	const struct ynode *from = NULL, *json = NULL, *item = NULL, *dups = NULL, *combine = NULL;
	struct spec *s = p->s;
	struct spec_source src = { FROM_STDOUT, NULL };
	int nmetrics = 0, e;

	for (int j = 0; j < n->n; j++) {
		const char *key = spec_node_key(p, ydoc_key(n, j));
		const struct ynode **slot = NULL;

		if (!key)
			continue;
		if (!strcmp(key, "from"))
			slot = &from;
		else if (!strcmp(key, "json"))
			slot = &json;
		else if (!strcmp(key, "item"))
			slot = &item;
		else if (!strcmp(key, "duplicate_keys"))
			slot = &dups;
		else if (!strcmp(key, "combine"))
			slot = &combine;
		else
			nmetrics++;
		if (slot && *slot)
			spec_node_problem(p, ydoc_key(n, j), "duplicate key '%s'", key);
		else if (slot)
			*slot = ydoc_value(n, j);
	}
	if (nmetrics > REGEX_MAX_METRICS) {
		spec_node_problem(p, n, "more than %d metrics", REGEX_MAX_METRICS);
		return;
	}
	if (combine)
		parse_combine(p, combine);
	if (!nmetrics && json && json->kind == YNODE_SCALAR && !strcmp(json->text, "lines") && !from && !item &&
	    !dups) {
		s->metrics = METRICS_JSON;
		return;
	}
	if (!nmetrics) {
		spec_node_problem(p, n, "no metric in 'metrics' (name: %s)", json ? "path" : "regex");
		return;
	}
	if (from)
		parse_source(p, from, &src, uses_item);
	s->metrics = json ? METRICS_SELECT : METRICS_REGEX;
	if (json) {
		const char *t = parse_path(p, json, "json", 1);

		s->json_records = t ? xstrdup(t) : NULL;
		s->json_src = src;
		src.path = NULL;
		if (item && (t = parse_path(p, item, "item", 0)))
			s->json_item = xstrdup(t);
		if (dups && (e = spec_node_enum(p, dups, "duplicate_keys", dup_names)) > 0)
			s->json_dups = e;
	} else if (dups) {
		spec_node_problem(p, dups, "'duplicate_keys' says how json metrics read a key given twice; "
			"regexes read no keys");
	} else if (item) {
		spec_node_problem(p, item, "'item' names the records of json metrics; a regex's matches become "
			"items with match: each");
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *kn = ydoc_key(n, j);
		const char *name = spec_node_key(p, kn);

		if (!name || reader_key(name) || !metric_name_ok(p, kn, name))
			continue;
		if (json && !has_key(ydoc_value(n, j), "regex"))
			parse_json_metric(p, name, ydoc_value(n, j));
		else
			parse_regex_metric(p, name, ydoc_value(n, j), &src, uses_item);
	}
	free(src.path);
}

void spec_metrics_parse(struct sp *p, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF], h[HINT_BUF];
	static const char *const json_name[] = { "json", NULL };

	if (n->kind == YNODE_SCALAR) {
		const char *t = spec_node_scalar(p, n, "metrics");

		if (t && !strcmp(t, "json"))
			p->s->metrics = METRICS_JSON;
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
	parse_map(p, n, uses_item);
}

static void source_text(struct strbuf *sb, const struct spec_source *src)
{
	sb_adds(sb, src->from == FROM_STDOUT ? "stdout" : src->from == FROM_STDERR ? "stderr" : src->path);
}

/* unit_base and scale where given (a spec without them keeps the text it always had). */
static void how_text(struct strbuf *sb, int base, const char *scale)
{
	if (base)
		sb_addf(sb, " base %d", base);
	if (scale)
		sb_addf(sb, " scale %s", scale);
}

void spec_metrics_text(const struct spec *s, struct strbuf *sb)
{
	static const char *const kinds[] = { "none", "json lines", "regex", "json" };

	sb_adds(sb, kinds[s->metrics]);
	if (s->metrics == METRICS_SELECT) {
		sb_adds(sb, " from ");
		source_text(sb, &s->json_src);
		sb_addf(sb, " records %s item %s", s->json_records, s->json_item ? s->json_item : "-");
		if (s->json_dups)
			sb_addf(sb, " duplicate keys %s", dup_names[s->json_dups]);
	}
	if (s->combine_said)
		sb_addf(sb, " combine %s", combine_names[s->combine]);
	for (int i = 0; i < s->nregex; i++) {
		sb_addf(sb, "; %s=%s from ", s->regex[i].name, s->regex[i].pattern);
		source_text(sb, &s->regex[i].src);
		sb_addf(sb, " match %s unit %s", match_names[s->regex[i].match],
			s->regex[i].unit ? s->regex[i].unit : "-");
		how_text(sb, s->regex[i].unit_base, s->regex[i].scale);
	}
	for (int i = 0; i < s->njmetrics; i++) {
		sb_addf(sb, "; %s=%s unit %s at %s", s->jmetrics[i].name, s->jmetrics[i].path,
			s->jmetrics[i].unit ? s->jmetrics[i].unit : "-",
			s->jmetrics[i].unit_path ? s->jmetrics[i].unit_path : "-");
		how_text(sb, s->jmetrics[i].unit_base, s->jmetrics[i].scale);
	}
}

/* Which way a unit improves: a time (converts into seconds) lower, a rate (per second) higher, else 0. */
static int unit_better(const char *unit)
{
	char err[96];
	double v;
	size_t n = unit ? strlen(unit) : 0;

	if (!n)
		return 0;
	if (!unit_convert(1, unit, "s", &v, err, sizeof(err)))
		return BETTER_LOWER;
	return n > 2 && !strcmp(unit + n - 2, "/s") ? BETTER_HIGHER : 0;
}

int spec_metric_better(const struct spec *s, const char *name)
{
	for (int i = 0; i < s->nregex; i++)
		if (!strcmp(s->regex[i].name, name))
			return s->regex[i].better ? s->regex[i].better : unit_better(s->regex[i].unit);
	for (int i = 0; i < s->njmetrics; i++)
		if (!strcmp(s->jmetrics[i].name, name))
			return s->jmetrics[i].better ? s->jmetrics[i].better : unit_better(s->jmetrics[i].unit);
	return 0;
}
