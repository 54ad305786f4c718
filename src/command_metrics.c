/* command_metrics.c: a command's metrics read from what its runs print or write (command_metrics.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "json.h"
#include "rx.h"
#include "unit.h"
#include "command_values.h"
#include "command_metrics.h"

/* Longest line a regex reads: a longer one fails the run, naming it (never skipped, which would let a later
 * line satisfy match: one). */
#define LINE_MAX_BYTES (1024 * 1024)
#define LINE_MAX_TEXT "1 MiB"
/* The lines a message lists for a regex that matched more often than once. */
#define SHOWN_MATCHES 5
/* Bytes of a line or a record quoted in a message. */
#define SHOWN_TEXT 200

/* One source of a run's text: stdout or stderr as they come, or a file read after the run. */
struct source {
	const char *name;          /* "stdout", "stderr" or the file's path, for messages */
	enum spec_from from;
	struct strbuf line;        /* the line being assembled */
	struct strbuf shown;       /* a line with '\r' in it, as a terminal shows it */
	int line_skip;             /* it went over LINE_MAX_BYTES (said): dropped up to its newline */
	long lineno;               /* lines so far */
	int whole;                 /* JSON is read from it: all of it is kept in text */
	struct strbuf text;
	int over;                  /* text went past COMMAND_METRICS_TEXT_MAX */
};

/* A regex's matches in the run in progress. */
struct rx_run {
	char *file;                /* its file's path, expanded for the run (NULL: a stream) */
	long count;
	long lines[SHOWN_MATCHES];
	const char *where;         /* the source of lines[] */
	char *cap, *line;          /* the capture to convert (first or last match) and its line */
	long lineno;
	long file_lines;           /* lines of its file */
};

struct command_metrics {
	const struct spec *s;
	struct rx **re;
	int nre;                   /* compiled */
	struct command_values *acc;    /* the values so far */
	/* The run in progress. */
	int keep;
	char *item;
	struct source out, err;
	struct rx_run *rx;
	char *json_file, *records, *item_path;   /* expanded for the run */
	char **paths, **unit_paths;
	char *bad;                 /* the run's first problem */
};

/* Keep the run's first problem. */
static void bad(struct command_metrics *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct command_metrics *m, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (m->bad)
		return;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	m->bad = sb_detach(&sb);
}

/* " (stdout line 3: 'text')": where a problem is, for messages. */
static void at_line(struct strbuf *sb, const char *where, long lineno, const char *line)
{
	sb_addf(sb, " (%s line %ld: '", where, lineno);
	sb_add_printable(sb, line, SHOWN_TEXT);
	sb_adds(sb, strlen(line) > SHOWN_TEXT ? "...')" : "')");
}

/* " for item 'x'" when the run has an item. */
static const char *for_item(const struct command_metrics *m, char *buf, size_t n)
{
	char shown[68];

	if (!m->item)
		return "";
	snprintf(buf, n, " for item '%s'", printable(shown, m->item, 64));
	return buf;
}

/* One value of metric for item in the run; a second record of them under combine: error fails the run,
 * named in sb (the caller says where). 0, or -1 with the message in sb. */
static int keep_value(struct command_metrics *m, const char *item, const char *metric, double v,
		      struct strbuf *sb)
{
	if (!command_values_add(m->acc, item, metric, v))
		return 0;
	sb_addf(sb, "metric '%s': a second record of %s%s%s in one run, and combine: error refuses it (mean, "
		"sum, max or min combines them)", metric, item ? "item '" : "the cell", item ? item : "",
		item ? "'" : "");
	return -1;
}

/* keep_value, for a value read from line lineno of where: a refusal fails the run naming the line. */
static void keep_line_value(struct command_metrics *m, const char *item, const char *metric, double v,
			    const char *where, long lineno, const char *line)
{
	struct strbuf sb = STRBUF_INIT;

	if (keep_value(m, item, metric, v, &sb)) {
		at_line(&sb, where, lineno, line);
		bad(m, "%s", sb.buf);
	}
	sb_release(&sb);
}

/* A value's text converted as regex metric sr declares (no unit: a plain number); a problem names the
 * line. 0, or -1 after bad(). */
static int convert(struct command_metrics *m, const struct spec_regex *sr, const char *text,
		   const char *where, long lineno, const char *line, double *v)
{
	struct unit_how how = { sr->unit_base, sr->scale };
	const char *name = sr->name;
	struct strbuf sb = STRBUF_INIT;
	char why[128];

	if (!unit_parse_how(text, sr->unit, &how, v, why, sizeof(why)))
		return 0;
	sb_addf(&sb, "metric '%s': '", name);
	sb_add_printable(&sb, text, 64);
	sb_addf(&sb, "': %s", why);
	at_line(&sb, where, lineno, line);
	bad(m, "%s", sb.buf);
	sb_release(&sb);
	return -1;
}

static void rx_store(struct rx_run *x, const char *cap, const char *line, long lineno)
{
	free(x->cap);
	free(x->line);
	x->cap = xstrdup(cap);
	x->line = xstrndup(line, SHOWN_TEXT + 1);
	x->lineno = lineno;
}

/* A match of regex i on line (ov: rx_match's offsets): counted; its value taken now (match: each) or kept
 * for the run's end. */
static void rx_found(struct command_metrics *m, int i, const struct source *src, const char *line,
		     const long *ov)
{
	const struct spec_regex *sr = &m->s->regex[i];
	struct rx_run *x = &m->rx[i];
	const long *g = ov + 2 * sr->groups;
	char *cap = xstrndup(line + g[0], (size_t)(g[1] - g[0]));
	double v;

	if (x->count < SHOWN_MATCHES)
		x->lines[x->count] = src->lineno;
	x->where = src->name;
	x->count++;
	if (sr->match == MATCH_EACH) {
		char *item = sr->groups == 2 ? xstrndup(line + ov[2], (size_t)(ov[3] - ov[2])) :
			     xasprintf("%ld", x->count);

		if (!convert(m, sr, cap, src->name, src->lineno, line, &v))
			keep_line_value(m, item, sr->name, v, src->name, src->lineno, line);
		free(item);
	} else if (sr->match == MATCH_LAST || x->count == 1) {
		rx_store(x, cap, line, src->lineno);
	}
	free(cap);
}

/* Whether regex i reads src. */
static int rx_reads(const struct command_metrics *m, int i, const struct source *src)
{
	const struct rx_run *x = &m->rx[i];

	if (m->s->regex[i].src.from != src->from)
		return 0;
	return src->from != FROM_FILE || !strcmp(x->file, src->name);
}

/* A regex that stopped at its limits on a line: the run fails, naming both (the next attempt would too). */
static void rx_limit(struct command_metrics *m, int i, const struct source *src, const char *line,
		     const char *why)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addf(&sb, "metric '%s': regex '%s' stopped at its limits (%s): it backtracks too much on this line",
		m->s->regex[i].name, m->s->regex[i].pattern, why);
	at_line(&sb, src->name, src->lineno, line);
	bad(m, "%s", sb.buf);
	sb_release(&sb);
}

/* Every match of every regex that reads src, one line at a time. The line is what a terminal shows
 * (sb_set_terminal), without the '\r' of a "\r\n" ending and trailing blanks. */
static void source_line(struct command_metrics *m, struct source *src, char *line, size_t len)
{
	char why[128];
	long ov[6];
	size_t at;
	int rc;

	src->lineno++;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (memchr(line, '\r', len)) {
		sb_set_terminal(&src->shown, line, len);
		line = src->shown.buf ? src->shown.buf : (char *)"";
		len = src->shown.len;
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
	}
	/* Text stops at a NUL byte, as it always has for the regexes. */
	len = strnlen(line, len);
	for (int i = 0; i < m->nre && !m->bad; i++) {
		if (!rx_reads(m, i, src))
			continue;
		for (at = 0; at < len && (rc = rx_match(m->re[i], line, len, at, ov, 6, why, sizeof(why))); ) {
			if (rc < 0) {
				rx_limit(m, i, src, line, why);
				break;
			}
			if (ov[2 * m->s->regex[i].groups] >= 0 && (m->s->regex[i].groups == 1 || ov[2] >= 0))
				rx_found(m, i, src, line, ov);
			at = (size_t)ov[1] > at ? (size_t)ov[1] : at + 1;
		}
	}
}

/* A line over LINE_MAX_BYTES: the run fails when a regex reads it (JSON is read from the whole text). */
static void line_too_long(struct command_metrics *m, const struct source *src)
{
	for (int i = 0; i < m->nre; i++) {
		if (rx_reads(m, i, src)) {
			bad(m, "metric '%s': %s line %ld is over %s, the longest line a regex reads",
			    m->s->regex[i].name, src->name, src->lineno + 1, LINE_MAX_TEXT);
			return;
		}
	}
}

/* Text of src as it comes: kept whole for JSON, and cut into lines for the regexes. */
static void source_add(struct command_metrics *m, struct source *src, const char *buf, size_t n)
{
	const char *nl;
	size_t keep;

	if (!m->keep)
		return;
	if (src->whole && !src->over) {
		if (src->text.len + n > COMMAND_METRICS_TEXT_MAX)
			src->over = 1;
		else
			sb_add(&src->text, buf, n);
	}
	while (n) {
		nl = memchr(buf, '\n', n);
		keep = nl ? (size_t)(nl - buf) : n;
		if (!src->line_skip) {
			sb_add(&src->line, buf, keep);
			if (src->line.len > LINE_MAX_BYTES) {
				src->line_skip = 1;
				sb_reset(&src->line);
				line_too_long(m, src);
			}
		}
		if (!nl)
			break;
		if (!src->line_skip)
			source_line(m, src, src->line.buf, src->line.len);
		src->line_skip = 0;
		sb_reset(&src->line);
		buf = nl + 1;
		n -= keep + 1;
	}
}

/* A last line without a newline is still a line. */
static void source_end(struct command_metrics *m, struct source *src)
{
	if (src->line.len && !src->line_skip)
		source_line(m, src, src->line.buf, src->line.len);
	src->line_skip = 0;
	sb_reset(&src->line);
}

static void source_reset(struct source *src)
{
	sb_reset(&src->line);
	sb_reset(&src->text);
	src->line_skip = src->over = 0;
	src->lineno = 0;
}

/* The file at path, at most COMMAND_METRICS_TEXT_MAX bytes, into sb. -1 after bad(). */
static int read_file(struct command_metrics *m, const char *path, struct strbuf *sb)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;

	if (!f) {
		bad(m, "metrics: cannot read '%s', which the command was to write: %s", path, strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && sb->len <= COMMAND_METRICS_TEXT_MAX)
		sb_add(sb, buf, n);
	fclose(f);
	if (sb->len > COMMAND_METRICS_TEXT_MAX) {
		bad(m, "metrics: '%s' is over %zu MiB", path, COMMAND_METRICS_TEXT_MAX >> 20);
		return -1;
	}
	sb_add(sb, "", 0);
	return 0;
}

/* The regexes that read file path: its lines, as if they came from a stream. */
static void file_lines(struct command_metrics *m, const char *path)
{
	struct source src = { path, FROM_FILE, STRBUF_INIT, STRBUF_INIT, 0, 0, 0, STRBUF_INIT, 0 };
	struct strbuf text = STRBUF_INIT;

	if (!read_file(m, path, &text))
		source_add(m, &src, text.buf, text.len);
	source_end(m, &src);
	for (int i = 0; i < m->nre; i++)
		if (rx_reads(m, i, &src))
			m->rx[i].file_lines = src.lineno;
	sb_release(&text);
	sb_release(&src.line);
	sb_release(&src.shown);
	sb_release(&src.text);
}

/* Regex i after the run: it matched as its rule says, and the value it keeps converts. */
static void rx_end(struct command_metrics *m, int i, const struct source *out)
{
	const struct spec_regex *sr = &m->s->regex[i];
	struct rx_run *x = &m->rx[i];
	const char *where = sr->src.from == FROM_STDOUT ? "stdout" : sr->src.from == FROM_STDERR ? "stderr" :
			    x->file;
	char it[96];
	double v;

	if (!x->count) {
		bad(m, "metric '%s': regex '%s' matched no line of %s%s (%ld lines)", sr->name, sr->pattern,
		    where, for_item(m, it, sizeof(it)), sr->src.from == FROM_STDOUT ? out->lineno :
		    sr->src.from == FROM_STDERR ? m->err.lineno : x->file_lines);
		return;
	}
	if (sr->match == MATCH_ONE && x->count > 1) {
		struct strbuf sb = STRBUF_INIT;

		for (long j = 0; j < x->count && j < SHOWN_MATCHES; j++)
			sb_addf(&sb, "%s%ld", j ? ", " : "", x->lines[j]);
		bad(m, "metric '%s': regex '%s' matched %ld times in one run%s (%s lines %s%s): say which with "
		    "match: first, last or each", sr->name, sr->pattern, x->count, for_item(m, it, sizeof(it)),
		    x->where, sb.buf, x->count > SHOWN_MATCHES ? ", ..." : "");
		sb_release(&sb);
		return;
	}
	if (sr->match != MATCH_EACH && !convert(m, sr, x->cap, x->where, x->lineno, x->line, &v))
		keep_line_value(m, m->item, sr->name, v, x->where, x->lineno, x->line);
}

/* The text of line lineno (1-based) of text, for messages. */
static char *line_of(const char *text, size_t len, long lineno)
{
	const char *p = text, *end = text + len, *nl;

	while (--lineno > 0 && (nl = memchr(p, '\n', (size_t)(end - p))))
		p = nl + 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	return xstrndup(p, (size_t)((nl ? nl : end) - p));
}

/* One value of metrics: json lines: a number of the line's item, or of the run's. The line's text is found
 * only for a message: looking it up for every line would make a long output quadratic. */
struct line_ctx {
	struct command_metrics *m;
	const char *item, *where, *text;
	size_t len;
	long lineno;
};

static void json_line_member(const char *key, const struct json_val *v, void *data)
{
	struct line_ctx *c = data;
	struct strbuf sb = STRBUF_INIT;
	char *line;
	double d;

	if (!strcmp(key, "item"))
		return;
	if (!json_val_number(v, &d)) {
		keep_value(c->m, c->item, key, d, &sb);
	} else if (!strcmp(json_val_kind(v), "null")) {
		sb_addf(&sb, "metric '%s' is null, not a number", key);
	} else if (*json_val_kind(v) == 'a' && strchr("oa", json_val_kind(v)[3])) {
		/* "an object", "an array": a document's figures are below, and its top level is no record. */
		sb_addf(&sb, "metrics: json reads flat objects, and '%s' is %s: read a nested document with a "
			"path for each metric (metrics: {json: ., NAME: %s.KEY})", key, json_val_kind(v), key);
	}
	if (sb.len) {
		line = line_of(c->text, c->len, c->lineno);
		at_line(&sb, c->where, c->lineno, line);
		bad(c->m, "%s", sb.buf);
		free(line);
	}
	sb_release(&sb);
}

static void json_item_member(const char *key, const struct json_val *v, void *data)
{
	struct strbuf *item = data;
	double d;

	if (strcmp(key, "item"))
		return;
	if (json_val_string(v))
		sb_adds(item, json_val_string(v));
	else if (!json_val_number(v, &d))
		json_add_num(item, d);
}

/* metrics: json: every number of every object line is a value of its key. A document over several lines,
 * or a member that is an object or an array, is an error: a pretty-printed document's top level (fio's
 * "timestamp") would be kept as its figures, and its real figures dropped. */
static void json_lines(struct command_metrics *m, const struct json_docs *d, const char *text, size_t len)
{
	char it[96];

	if (!d->n)
		bad(m, "metrics: json, but the command printed no JSON object line%s (%ld lines of stdout)",
		    for_item(m, it, sizeof(it)), m->out.lineno);
	for (size_t i = 0; i < d->n && !m->bad; i++) {
		struct strbuf item = STRBUF_INIT;
		struct line_ctx c = { m, m->item, "stdout", text, len, d->line[i] };

		if (d->last[i] != d->line[i]) {
			struct strbuf sb = STRBUF_INIT;
			char *line = line_of(text, len, d->line[i]);

			sb_addf(&sb, "metrics: json reads one JSON object a line, and this one spans lines %ld to %ld: "
				"read a document with a path for each metric (metrics: {json: ., NAME: a.b[0]})",
				d->line[i], d->last[i]);
			at_line(&sb, "stdout", d->line[i], line);
			bad(m, "%s", sb.buf);
			sb_release(&sb);
			free(line);
			break;
		}
		json_val_foreach(d->v[i], json_item_member, &item);
		if (item.len)
			c.item = item.buf;
		json_val_foreach(d->v[i], json_line_member, &c);
		sb_release(&item);
	}
}

/* Where a record is, for messages: " in record 2 of 'jobs[*]' (stdout line 1: {...})". */
static void at_record(struct command_metrics *m, struct strbuf *sb, size_t k, const struct json_val *rec,
		      const char *where, long lineno)
{
	sb_addf(sb, " in record %zu of '%s' (%s line %ld: ", k + 1, m->records, where, lineno);
	json_val_show(sb, rec, SHOWN_TEXT);
	sb_addc(sb, ')');
}

/* The one value path selects in rec, or NULL with *why set. */
static const struct json_val *one_value(const struct json_val *rec, const char *path, char *why, size_t n)
{
	struct json_sel sel = { NULL, 0, 0 };
	const struct json_val *v = NULL;

	if (json_select(rec, path, &sel, why, n))
		;
	else if (sel.n == 1)
		v = sel.v[0];
	else if (!sel.n)
		snprintf(why, n, "is missing");
	else
		snprintf(why, n, "selects %zu values", sel.n);
	json_sel_release(&sel);
	return v;
}

/* The value of metric j in record rec, converted as declared: 0, or -1 with *why set. */
static int record_value(struct command_metrics *m, int j, const struct json_val *rec, double *out,
			char *why, size_t n)
{
	const struct spec_jmetric *jm = &m->s->jmetrics[j];
	const struct json_val *v = one_value(rec, m->paths[j], why, n), *u;
	struct unit_how how = { jm->unit_base, jm->scale };
	const char *unit = NULL, *text;
	char num[64], inner[64];

	if (!v)
		return -1;
	if (m->unit_paths[j]) {
		if (!(u = one_value(rec, m->unit_paths[j], inner, sizeof(inner))) || !(unit = json_val_string(u))) {
			snprintf(why, n, "has its unit at '%s', which %s", m->unit_paths[j],
				 u ? "is not a string" : inner);
			return -1;
		}
	}
	if (!json_val_number(v, out))
		text = NULL;
	else if (!(text = json_val_string(v))) {
		snprintf(why, n, "is %s, not a number", json_val_kind(v));
		return -1;
	}
	if (text && unit_parse_how(text, unit ? NULL : jm->unit, &how, out, num, sizeof(num))) {
		snprintf(why, n, "is \"%.40s\": %s", text, num);
		return -1;
	}
	if ((unit || (!text && jm->unit)) &&
	    unit_convert_how(*out, unit ? unit : "", jm->unit, &how, out, num, sizeof(num))) {
		snprintf(why, n, "%s", num);
		return -1;
	}
	return 0;
}

/* One selected record: its item and each metric's value. */
static void json_record(struct command_metrics *m, size_t k, const struct json_val *rec, const char *where,
			long lineno)
{
	struct strbuf item = STRBUF_INIT, sb = STRBUF_INIT;
	const struct json_val *iv;
	char why[192];
	double d;

	if (m->item_path) {
		if (!(iv = one_value(rec, m->item_path, why, sizeof(why))))
			sb_addf(&sb, "metrics: item '%s' %s", m->item_path, why);
		else if (json_val_string(iv))
			sb_adds(&item, json_val_string(iv));
		else if (!json_val_number(iv, &d))
			json_add_num(&item, d);
		else
			sb_addf(&sb, "metrics: item '%s' is %s, not a name", m->item_path, json_val_kind(iv));
	}
	for (int j = 0; j < m->s->njmetrics && !sb.len; j++) {
		if (!record_value(m, j, rec, &d, why, sizeof(why)))
			keep_value(m, item.len ? item.buf : m->item, m->s->jmetrics[j].name, d, &sb);
		else
			sb_addf(&sb, "metric '%s': '%s' %s", m->s->jmetrics[j].name, m->paths[j], why);
	}
	if (sb.len) {
		at_record(m, &sb, k, rec, where, lineno);
		bad(m, "%s", sb.buf);
	}
	sb_release(&item);
	sb_release(&sb);
}

/* metrics: {json: RECORDS, ...}: the records of every document, each metric read in each. */
static void json_select_records(struct command_metrics *m, const struct json_docs *d, const char *where)
{
	struct json_sel sel = { NULL, 0, 0 };
	long *line = NULL;
	char why[192], it[96];

	for (size_t i = 0; i < d->n && !m->bad; i++) {
		size_t before = sel.n;

		if (json_select(d->v[i], m->records, &sel, why, sizeof(why)))
			bad(m, "metrics: json '%s': %s", m->records, why);
		line = xrealloc(line, (sel.n + 1) * sizeof(*line));
		for (size_t k = before; k < sel.n; k++)
			line[k] = d->line[i];
	}
	if (!m->bad && !sel.n)
		bad(m, "metrics: json '%s' selected no record in %s%s (%zu JSON documents)", m->records, where,
		    for_item(m, it, sizeof(it)), d->n);
	else if (!m->bad && sel.n > 1 && !m->item_path && !m->s->combine_said)
		bad(m, "metrics: json '%s' selected %zu records in %s: name each with item: PATH, or say how "
		    "they make one value with combine: mean, sum, max or min", m->records, sel.n, where);
	for (size_t k = 0; k < sel.n && !m->bad; k++)
		json_record(m, k, sel.v[k], where, line[k]);
	free(line);
	json_sel_release(&sel);
}

/* The run's JSON: read from its source and taken as the spec says. */
static void json_end(struct command_metrics *m)
{
	const struct spec *s = m->s;
	enum spec_from from = s->metrics == METRICS_JSON ? FROM_STDOUT : s->json_src.from;
	const struct source *src = from == FROM_STDOUT ? &m->out : &m->err;
	struct strbuf file = STRBUF_INIT;
	const char *where = from == FROM_FILE ? m->json_file : src->name, *text = src->text.buf;
	size_t len = src->text.len;
	struct json_docs d;
	char why[128];
	long docline = 0, errline = 0;

	if (from == FROM_FILE) {
		if (read_file(m, m->json_file, &file))
			return;
		text = file.buf;
		len = file.len;
	} else if (src->over) {
		bad(m, "metrics: %s is over %zu MiB", where, COMMAND_METRICS_TEXT_MAX >> 20);
		return;
	}
	if (json_docs_read(text ? text : "", len, (s->metrics == METRICS_SELECT && m->records[0] == '[' ?
			   JSON_DOCS_ARRAYS : 0) | (s->json_dups == SPEC_DUP_LAST ? JSON_DOCS_DUP_LAST :
			   s->json_dups == SPEC_DUP_FIRST ? JSON_DOCS_DUP_FIRST : 0), &d,
			   &docline, &errline, why, sizeof(why))) {
		struct strbuf sb = STRBUF_INIT;
		char *line = line_of(text, len, docline);

		sb_addf(&sb, "metrics: not JSON: %s", why);
		if (errline != docline)
			sb_addf(&sb, " at line %ld", errline);
		at_line(&sb, where, docline, line);
		bad(m, "%s", sb.buf);
		sb_release(&sb);
		free(line);
	} else {
		if (s->metrics == METRICS_JSON)
			json_lines(m, &d, text, len);
		else
			json_select_records(m, &d, where);
		json_docs_release(&d);
	}
	sb_release(&file);
}

struct command_metrics *command_metrics_new(const struct spec *s, struct result *r)
{
	struct command_metrics *m = xcalloc(1, sizeof(*m));
	int json_from = s->metrics == METRICS_JSON ? FROM_STDOUT : s->metrics == METRICS_SELECT ?
			(int)s->json_src.from : -1;
	char why[160];
	int groups;

	m->s = s;
	m->acc = command_values_new(s->combine, s->combine_said);
	m->out.name = "stdout";
	m->out.from = FROM_STDOUT;
	m->out.whole = json_from == FROM_STDOUT;
	m->err.name = "stderr";
	m->err.from = FROM_STDERR;
	m->err.whole = json_from == FROM_STDERR;
	m->re = xcalloc((size_t)s->nregex + 1, sizeof(*m->re));
	m->rx = xcalloc((size_t)s->nregex + 1, sizeof(*m->rx));
	m->paths = xcalloc((size_t)s->njmetrics + 1, sizeof(*m->paths));
	m->unit_paths = xcalloc((size_t)s->njmetrics + 1, sizeof(*m->unit_paths));
	for (; m->nre < s->nregex; m->nre++) {
		if (!(m->re[m->nre] = rx_compile(s->regex[m->nre].pattern, &groups, why, sizeof(why)))) {
			result_fail(r, RESULT_INVALID, "metric '%s': bad regex '%s': %s", s->regex[m->nre].name,
				    s->regex[m->nre].pattern, why);
			command_metrics_free(m);
			return NULL;
		}
	}
	return m;
}

static char *expand_or_null(const char *tmpl, char *(*expand)(const char *, void *), void *data)
{
	return tmpl ? expand(tmpl, data) : NULL;
}

void command_metrics_begin(struct command_metrics *m, const char *item, int keep,
			   char *(*expand)(const char *tmpl, void *data), void *data)
{
	const struct spec *s = m->s;

	free(m->item);
	m->item = item ? xstrdup(item) : NULL;
	m->keep = keep;
	free(m->bad);
	m->bad = NULL;
	source_reset(&m->out);
	source_reset(&m->err);
	free(m->json_file);
	free(m->records);
	free(m->item_path);
	m->json_file = expand_or_null(s->json_src.path, expand, data);
	m->records = expand_or_null(s->json_records, expand, data);
	m->item_path = expand_or_null(s->json_item, expand, data);
	for (int j = 0; j < s->njmetrics; j++) {
		free(m->paths[j]);
		free(m->unit_paths[j]);
		m->paths[j] = expand(s->jmetrics[j].path, data);
		m->unit_paths[j] = expand_or_null(s->jmetrics[j].unit_path, expand, data);
	}
	for (int i = 0; i < m->nre; i++) {
		struct rx_run *x = &m->rx[i];

		free(x->file);
		free(x->cap);
		free(x->line);
		memset(x, 0, sizeof(*x));
		x->file = expand_or_null(s->regex[i].src.path, expand, data);
		if (keep && x->file)
			unlink(x->file);
	}
	if (keep && m->json_file)
		unlink(m->json_file);
}

void command_metrics_stdout(struct command_metrics *m, const char *buf, size_t n)
{
	source_add(m, &m->out, buf, n);
}

void command_metrics_stderr(struct command_metrics *m, const char *buf, size_t n)
{
	source_add(m, &m->err, buf, n);
}

int command_metrics_end(struct command_metrics *m, struct result *r)
{
	const struct spec *s = m->s;
	char *why;

	if (!m->keep)
		return 0;
	/* The wall time of the run just kept (r's last sample) for its item. */
	if (m->item && r->nsamples)
		command_values_wall(m->acc, m->item, r->samples[r->nsamples - 1]);
	source_end(m, &m->out);
	source_end(m, &m->err);
	for (int i = 0; i < m->nre; i++) {
		int seen = 0;

		/* Each file once, for every regex that reads it. */
		for (int j = 0; j < i && m->rx[i].file; j++)
			seen |= m->rx[j].file && !strcmp(m->rx[j].file, m->rx[i].file);
		if (m->rx[i].file && !seen)
			file_lines(m, m->rx[i].file);
	}
	for (int i = 0; i < m->nre && !m->bad; i++)
		rx_end(m, i, &m->out);
	if (!m->bad && (s->metrics == METRICS_JSON || s->metrics == METRICS_SELECT))
		json_end(m);
	if (command_values_run_end(m->acc, &why)) {
		bad(m, "%s", why);
		free(why);
	}
	if (m->bad)
		return result_fail(r, RESULT_INVALID, "%s", m->bad);
	return 0;
}

void command_metrics_finish(struct command_metrics *m, struct result *r)
{
	command_values_finish(m->acc, r);
}

void command_metrics_free(struct command_metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nre; i++)
		rx_free(m->re[i]);
	for (int i = 0; i < m->s->nregex; i++) {
		free(m->rx[i].file);
		free(m->rx[i].cap);
		free(m->rx[i].line);
	}
	for (int j = 0; j < m->s->njmetrics; j++) {
		free(m->paths[j]);
		free(m->unit_paths[j]);
	}
	free(m->re);
	free(m->rx);
	free(m->paths);
	free(m->unit_paths);
	free(m->json_file);
	free(m->records);
	free(m->item_path);
	free(m->item);
	free(m->bad);
	sb_release(&m->out.line);
	sb_release(&m->out.shown);
	sb_release(&m->out.text);
	sb_release(&m->err.line);
	sb_release(&m->err.shown);
	sb_release(&m->err.text);
	command_values_free(m->acc);
	free(m);
}
