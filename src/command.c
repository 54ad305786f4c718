/* command.c: command cells: a program run per cell (or per item), its output parsed for measurements. */
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "spawn.h"
#include "stats.h"
#include "command.h"

extern char **environ;

/* After the command exits, how long its pipes may stay open (a background child holding them) before
 * the rest of its group is killed; and how long a timed-out group has between SIGTERM and SIGKILL. */
#define COMMAND_DRAIN_GRACE 1.0
#define COMMAND_TERM_GRACE 2.0
/* Longest stdout line parsed for metrics; the rest of a longer line is skipped. */
#define COMMAND_LINE_MAX (1024 * 1024)

/* The values one metric got for one item (item NULL: a line without an item) over the whole cell. */
struct acc {
	char *item, *metric;
	double sum;
	long n;
};

/* acc entries in first-seen order, with an open-addressing index so a long output with many items
 * stays linear. slots hold index + 1; 0 is an empty slot. */
struct acc_table {
	struct acc *v;
	size_t n, alloc;
	size_t *slots, nslots;
};

struct command_state {
	const struct spec *s;
	struct result *r;
	const char *item;          /* the item of the run in progress; NULL when the command has no {item} */
	regex_t *re;               /* s->nregex compiled patterns */
	struct acc_table acc;
	struct strbuf line;        /* stdout line being assembled */
	int line_skip;             /* the line went over COMMAND_LINE_MAX: drop it up to its newline */
	struct strbuf out;         /* the first COMMAND_CAPTURE_MAX bytes of stdout */
	struct strbuf err;         /* the last COMMAND_CAPTURE_MAX bytes of stderr (twice that, reading) */
	size_t run_err;            /* where this run's stderr starts in err */
	long lineno;               /* stdout lines of this run so far */
	long json_lines;           /* metric lines of this run (metrics: json) */
	long *found;               /* s->nregex: values each pattern gave in this run */
	char *bad;                 /* the first metric problem of the run, with its line (owned) */
};

static uint64_t acc_hash(const char *item, const char *metric)
{
	uint64_t h = hash64(HASH64_INIT, item ? "i" : "c", 1);

	if (item)
		h = hash64(h, item, strlen(item) + 1);
	return hash64(h, metric, strlen(metric) + 1);
}

static int acc_same(const struct acc *a, const char *item, const char *metric)
{
	if (!a->item != !item || (item && strcmp(a->item, item)))
		return 0;
	return !strcmp(a->metric, metric);
}

static void acc_rehash(struct acc_table *t)
{
	size_t i, j;

	free(t->slots);
	t->nslots = t->nslots ? 2 * t->nslots : 64;
	t->slots = xcalloc(t->nslots, sizeof(*t->slots));
	for (i = 0; i < t->n; i++) {
		j = acc_hash(t->v[i].item, t->v[i].metric) & (t->nslots - 1);
		while (t->slots[j])
			j = (j + 1) & (t->nslots - 1);
		t->slots[j] = i + 1;
	}
}

static void acc_add(struct acc_table *t, const char *item, const char *metric, double v)
{
	struct acc *a;
	size_t j;

	if (2 * (t->n + 1) > t->nslots)
		acc_rehash(t);
	j = acc_hash(item, metric) & (t->nslots - 1);
	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		a = &t->v[t->slots[j] - 1];
		if (acc_same(a, item, metric)) {
			a->sum += v;
			a->n++;
			return;
		}
	}
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	a = &t->v[t->n];
	a->item = item ? xstrdup(item) : NULL;
	a->metric = xstrdup(metric);
	a->sum = v;
	a->n = 1;
	t->slots[j] = ++t->n;
}

static void acc_release(struct acc_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].item);
		free(t->v[i].metric);
	}
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Keep the run's first metric problem: what is wrong, and the stdout line it is on (shortened). */
static void command_bad(struct command_state *st, const char *line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void command_bad(struct command_state *st, const char *line, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (st->bad)
		return;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (line) {
		sb_addf(&sb, " (stdout line %ld: '", st->lineno);
		sb_add_printable(&sb, line, 200);
		sb_adds(&sb, strlen(line) > 200 ? "...')" : "')");
	}
	st->bad = sb_detach(&sb);
}

/*
 * One stdout line of JSON: numbers are measurements of the line's item ("item": a string or a number),
 * else of the run's item, else of the cell. A line that starts with '{' is a metric line and must be
 * one strict JSON object (no NaN, 1e999, duplicate key or text after it); a metric that is null is not
 * a number. Other lines are just output.
 */
static void command_json_line(struct command_state *st, const char *line)
{
	struct json_obj o = JSON_OBJ_INIT;
	const char *item = st->item, *start = line;
	const struct json_pair *p;
	char err[128];
	double v;
	size_t i;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '{')
		return;
	if (json_parse_flat(line, &o, 1, err, sizeof(err))) {
		command_bad(st, start, "metrics: not a JSON object: %s", err);
		return;
	}
	st->json_lines++;
	p = json_obj_find(&o, "item");
	if (p && (p->type == JSON_STR || p->type == JSON_NUM))
		item = p->val;
	for (i = 0; i < o.n; i++) {
		if (!strcmp(o.v[i].key, "item"))
			continue;
		if (o.v[i].type == JSON_NULL)
			command_bad(st, start, "metric '%s' is null, not a number", o.v[i].key);
		else if (o.v[i].type != JSON_NUM)
			continue;
		else if (parse_double(o.v[i].val, &v) || !isfinite(v))
			command_bad(st, start, "metric '%s' is '%s', not a finite number", o.v[i].key, o.v[i].val);
		else
			acc_add(&st->acc, item, o.v[i].key, v);
	}
	json_obj_release(&o);
}

/* Every match of every pattern in a line: the first capture, read as a number, is a value of that
 * pattern's metric (for the run's item when the command has {item}). Patterns see one line at a time. */
static void command_regex_line(struct command_state *st, const char *line)
{
	regmatch_t m[2];
	const char *p;
	char *num;
	double v;
	int i;

	for (i = 0; i < st->s->nregex; i++) {
		for (p = line; *p && !regexec(&st->re[i], p, 2, m, p == line ? 0 : REG_NOTBOL); ) {
			if (m[1].rm_so >= 0) {
				/* the number syntax of JSON metrics, so both kinds accept the same numbers */
				num = xstrndup(p + m[1].rm_so, m[1].rm_eo - m[1].rm_so);
				if (!json_number_ok(num) || parse_double(num, &v) || !isfinite(v)) {
					command_bad(st, line, "metric '%s': '%s' is not a finite number",
						    st->s->regex[i].name, num);
				} else {
					acc_add(&st->acc, st->item, st->s->regex[i].name, v);
					st->found[i]++;
				}
				free(num);
			}
			p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
		}
	}
}

static void command_line(struct command_state *st, char *line, size_t len)
{
	st->lineno++;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (st->s->metrics == METRICS_JSON)
		command_json_line(st, line);
	else if (st->s->metrics == METRICS_REGEX)
		command_regex_line(st, line);
}

static void command_stdout(struct command_state *st, const char *buf, size_t n)
{
	const char *nl;
	size_t keep;

	if (st->out.len < COMMAND_CAPTURE_MAX) {
		keep = COMMAND_CAPTURE_MAX - st->out.len;
		sb_add(&st->out, buf, n < keep ? n : keep);
	}
	if (st->s->metrics == METRICS_NONE)
		return;
	while (n) {
		nl = memchr(buf, '\n', n);
		keep = nl ? (size_t)(nl - buf) : n;
		if (!st->line_skip) {
			sb_add(&st->line, buf, keep);
			if (st->line.len > COMMAND_LINE_MAX) {
				st->line_skip = 1;
				sb_reset(&st->line);
			}
		}
		if (!nl)
			break;
		if (!st->line_skip)
			command_line(st, st->line.buf, st->line.len);
		st->line_skip = 0;
		sb_reset(&st->line);
		buf = nl + 1;
		n -= keep + 1;
	}
}

/* A run's last line of output without a newline is still a line. */
static void command_stdout_end(struct command_state *st)
{
	if (st->line.len && !st->line_skip)
		command_line(st, st->line.buf, st->line.len);
	st->line_skip = 0;
	sb_reset(&st->line);
}

static void command_stderr(struct command_state *st, const char *buf, size_t n)
{
	size_t drop;

	sb_add(&st->err, buf, n);
	if (st->err.len <= 2 * COMMAND_CAPTURE_MAX)
		return;
	drop = st->err.len - COMMAND_CAPTURE_MAX;
	memmove(st->err.buf, st->err.buf + drop, COMMAND_CAPTURE_MAX);
	st->err.len = COMMAND_CAPTURE_MAX;
	st->err.buf[st->err.len] = '\0';
	st->run_err = st->run_err > drop ? st->run_err - drop : 0;
}

/* The last non-empty line the current run wrote to stderr, for error messages; "" when none. */
static char *command_last_err(const struct command_state *st)
{
	const char *b = st->err.buf ? st->err.buf + st->run_err : "";
	size_t end = st->err.len - st->run_err, start;

	while (end && (b[end - 1] == '\n' || b[end - 1] == '\r' || b[end - 1] == ' '))
		end--;
	for (start = end; start && b[start - 1] != '\n'; start--)
		;
	if (end - start > 200)
		end = start + 200;
	return xstrndup(b + start, end - start);
}

/* Environment of the child: ours, with the spec's env (expanded) added or replacing. */
static char **command_env(const struct command_state *st, const struct json_obj *params,
			  const struct executor *w, const struct task *t)
{
	const struct spec *s = st->s;
	size_t n = 0, i, len;
	char **env, *v;
	int k, replaced;

	while (environ[n])
		n++;
	env = xcalloc(n + s->nenv + 1, sizeof(*env));
	for (i = 0; i < n; i++)
		env[i] = xstrdup(environ[i]);
	for (k = 0; k < s->nenv; k++) {
		v = command_expand(s->env_vals[k], params, st->item, w->gpu, w->host, t->key);
		len = strlen(s->env_keys[k]);
		replaced = 0;
		for (i = 0; i < n; i++) {
			if (!strncmp(env[i], s->env_keys[k], len) && env[i][len] == '=') {
				free(env[i]);
				env[i] = xasprintf("%s=%s", s->env_keys[k], v);
				replaced = 1;
				break;
			}
		}
		if (!replaced)
			env[n++] = xasprintf("%s=%s", s->env_keys[k], v);
		free(v);
	}
	return env;
}

static void command_free_strv(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void command_out_fn(void *data, const char *buf, size_t n)
{
	command_stdout(data, buf, n);
}

static void command_err_fn(void *data, const char *buf, size_t n)
{
	command_stderr(data, buf, n);
}

/*
 * Run argv in its own process group, stdout and stderr to the parser and the capture as they come. Ends
 * when the command has exited and its pipes are closed, or COMMAND_DRAIN_GRACE after it exited; on
 * timeout the group gets SIGTERM, then SIGKILL COMMAND_TERM_GRACE later. Whatever is left of the group
 * is then killed. -1 when it could not be started (end->exec_errno says why).
 */
static int command_spawn(struct command_state *st, char **argv, char **env, struct spawn_result *end)
{
	struct spawn_opts o = {
		.argv = argv,
		.env = env,
		.in = SPAWN_NULL,
		.out = { .to = SPAWN_CALL, .fn = command_out_fn, .data = st },
		.err = { .to = SPAWN_CALL, .fn = command_err_fn, .data = st },
		.deadline = st->s->timeout > 0 ? now_mono() + st->s->timeout : 0,
		.term_grace = COMMAND_TERM_GRACE,
		.linger = COMMAND_DRAIN_GRACE,
	};
	int ret = spawn_run(&o, end);

	command_stdout_end(st);
	return ret;
}

static const char *command_signame(int sig, char *buf, size_t n)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, n, "SIG%s", abbrev);
	else
		snprintf(buf, n, "signal %d", sig);
	return buf;
}

/* After a run that exited 0: its metric problem, else a metric the spec declares that it did not give
 * (every regex must match, metrics: json needs a line). -1 when r is failed. */
static int command_check_metrics(struct command_state *st)
{
	const struct spec *s = st->s;
	const char *in = st->item ? " for item '" : "", *q = st->item ? "'" : "";

	if (st->bad) {
		result_fail(st->r, RESULT_ERROR, "%s", st->bad);
		return -1;
	}
	if (s->metrics == METRICS_JSON && !st->json_lines)
		return result_fail(st->r, RESULT_ERROR, "metrics: json, but the command printed no JSON object "
				   "line%s%s%s (%ld lines of stdout)", in, st->item ? st->item : "", q,
				   st->lineno);
	for (int i = 0; s->metrics == METRICS_REGEX && i < s->nregex; i++)
		if (!st->found[i])
			return result_fail(st->r, RESULT_ERROR, "metric '%s': regex '%s' matched no line of "
					   "stdout%s%s%s (%ld lines)", s->regex[i].name, s->regex[i].pattern,
					   in, st->item ? st->item : "", q, st->lineno);
	return 0;
}

/* Run the command once (for one item, or for the cell) and record its sample; -1 when r is failed. */
static int command_once(struct command_state *st, const struct executor *w, const struct task *t,
			const struct json_obj *params)
{
	const struct spec *s = st->s;
	struct spawn_result end;
	char **argv, **env, *last, sig[32];
	int i, ret = 0;

	argv = xcalloc(s->ncommand + 1, sizeof(*argv));
	for (i = 0; i < s->ncommand; i++)
		argv[i] = command_expand(s->command[i], params, st->item, w->gpu, w->host, t->key);
	env = command_env(st, params, w, t);
	st->run_err = st->err.len;
	st->lineno = 0;
	st->json_lines = 0;
	for (i = 0; i < s->nregex && st->found; i++)
		st->found[i] = 0;
	if (command_spawn(st, argv, env, &end)) {
		ret = result_fail(st->r, RESULT_ERROR, "cannot run '%s': %s", argv[0],
				  strerror(end.exec_errno));
		goto out;
	}
	result_add_sample(st->r, end.wall, 0);
	last = command_last_err(st);
	if (end.timed_out)
		ret = result_fail(st->r, RESULT_TIMEOUT, "timeout: '%s' killed after %g s%s%s", argv[0],
				  s->timeout, *last ? ": " : "", last);
	else if (WIFSIGNALED(end.status))
		ret = result_fail(st->r, RESULT_ERROR, "killed by signal %d (%s)", WTERMSIG(end.status),
				  command_signame(WTERMSIG(end.status), sig, sizeof(sig)));
	else if (WIFEXITED(end.status) && WEXITSTATUS(end.status))
		ret = result_fail(st->r, RESULT_ERROR, "exit %d%s%s", WEXITSTATUS(end.status),
				  *last ? ": " : "", last);
	else
		ret = command_check_metrics(st);
	free(last);
out:
	spawn_result_release(&end);
	command_free_strv(argv);
	command_free_strv(env);
	return ret;
}

/* Per-item values go to the items table; a cell metric is the mean over its items, or, for a metric
 * no line gave an item, the mean of its values. seconds defaults to the median wall time of the runs. */
static void command_metrics(struct command_state *st)
{
	struct result *r = st->r;
	struct acc_table *t = &st->acc;
	const char **names = xcalloc(t->n + 1, sizeof(*names));
	size_t i, j, nnames = 0;
	int has_seconds = 0;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].item)
			result_add_item(r, t->v[i].item, t->v[i].metric, t->v[i].sum / t->v[i].n);
		for (j = 0; j < nnames && strcmp(names[j], t->v[i].metric); j++)
			;
		if (j == nnames)
			names[nnames++] = t->v[i].metric;
	}
	for (j = 0; j < nnames; j++) {
		double isum = 0, csum = 0;
		long in = 0, cn = 0;

		for (i = 0; i < t->n; i++) {
			if (strcmp(t->v[i].metric, names[j]))
				continue;
			if (t->v[i].item) {
				isum += t->v[i].sum / t->v[i].n;
				in++;
			} else {
				csum += t->v[i].sum;
				cn += t->v[i].n;
			}
		}
		result_set_metric(r, names[j], in ? isum / in : csum / cn);
		if (!strcmp(names[j], "seconds"))
			has_seconds = 1;
	}
	if (!has_seconds && r->nsamples)
		result_set_metric(r, "seconds", stats_median(r->samples, r->nsamples));
	free(names);
}

static int command_uses_item(const struct spec *s)
{
	int i;

	for (i = 0; i < s->ncommand; i++)
		if (strstr(s->command[i], "{item}"))
			return 1;
	for (i = 0; i < s->nenv; i++)
		if (strstr(s->env_vals[i], "{item}"))
			return 1;
	return 0;
}

void command_run(const struct executor *w, const struct task *t, struct result *r)
{
	const struct spec *s = w->spec;
	struct command_state st;
	struct json_obj params = JSON_OBJ_INIT;
	char err[128];
	int i, nre = 0, uses_item = command_uses_item(s);

	memset(&st, 0, sizeof(st));
	st.s = s;
	st.r = r;
	if (!s->ncommand) {
		result_fail(r, RESULT_ERROR, "the spec has no command");
		goto out;
	}
	if (json_parse_flat(t->params ? t->params : "{}", &params, 1, err, sizeof(err))) {
		result_fail(r, RESULT_ERROR, "cell parameters: %s", err);
		goto out;
	}
	if (uses_item && !s->nitems) {
		result_fail(r, RESULT_ERROR, "the command uses {item} but the spec has no items");
		goto out;
	}
	if (s->metrics == METRICS_REGEX) {
		st.found = xcalloc(s->nregex, sizeof(*st.found));
		st.re = xcalloc(s->nregex, sizeof(*st.re));
		for (nre = 0; nre < s->nregex; nre++) {
			if (regcomp(&st.re[nre], s->regex[nre].pattern, REG_EXTENDED)) {
				result_fail(r, RESULT_ERROR, "metric '%s': bad regex '%s'",
					    s->regex[nre].name, s->regex[nre].pattern);
				goto out;
			}
		}
	}
	for (i = 0; i < (uses_item ? s->nitems : 1); i++) {
		st.item = uses_item ? s->items[i] : NULL;
		if (command_once(&st, w, t, &params))
			break;
	}
	if (r->status == RESULT_OK) {
		command_metrics(&st);
		result_summarize(r, INFINITY, NAN);   /* a command cell has no noise or precision to miss */
	}
out:
	if (st.out.len)
		r->out = sb_detach(&st.out);
	if (st.err.len > COMMAND_CAPTURE_MAX) {
		memmove(st.err.buf, st.err.buf + st.err.len - COMMAND_CAPTURE_MAX, COMMAND_CAPTURE_MAX);
		st.err.len = COMMAND_CAPTURE_MAX;
		st.err.buf[st.err.len] = '\0';
	}
	if (st.err.len)
		r->err = sb_detach(&st.err);
	for (i = 0; i < nre; i++)
		regfree(&st.re[i]);
	free(st.re);
	free(st.found);
	free(st.bad);
	acc_release(&st.acc);
	sb_release(&st.line);
	sb_release(&st.out);
	sb_release(&st.err);
	json_obj_release(&params);
}

static int command_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '-';
}

/* The value for placeholder name, or NULL to keep it as written. */
static const char *command_lookup(const char *name, const struct json_obj *params, const char *item, int gpu,
				 const char *host, const char *cell, char *buf, size_t len)
{
	const char *v;

	if (params && (v = json_obj_get(params, name)))
		return v;
	if (!strcmp(name, "item"))
		return item;
	if (!strcmp(name, "host"))
		return host;
	if (!strcmp(name, "cell"))
		return cell;
	if (!strcmp(name, "gpu")) {
		snprintf(buf, len, "%d", gpu);
		return buf;
	}
	return NULL;
}

char *command_expand(const char *tmpl, const struct json_obj *params, const char *item, int gpu,
		    const char *host, const char *cell)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = tmpl, *end, *v;
	char name[128], num[32];

	sb_add(&sb, "", 0);   /* an empty template still gives "" (sb_detach of an unused strbuf does not) */
	while (*p) {
		if (*p != '{') {
			sb_addc(&sb, *p++);
			continue;
		}
		for (end = p + 1; command_name_char(*end); end++)
			;
		v = NULL;
		if (*end == '}' && end > p + 1 && (size_t)(end - p - 1) < sizeof(name)) {
			memcpy(name, p + 1, end - p - 1);
			name[end - p - 1] = '\0';
			v = command_lookup(name, params, item, gpu, host, cell, num, sizeof(num));
		}
		if (v) {
			sb_adds(&sb, v);
			p = end + 1;
		} else {
			sb_addc(&sb, *p++);
		}
	}
	return sb_detach(&sb);
}
