/* command.c: command cells: a program run per cell (or per item), timed as a measurement when the spec
 * asks (runs under the stopping rule, warm-up runs, prepare and cleanup around each run), its output read
 * for metrics by command_metrics.c. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "command_metrics.h"
#include "counters.h"
#include "criterion.h"
#include "spawn.h"
#include "command.h"

extern char **environ;

/* After the command exits, how long its pipes may stay open (a background child holding them) before
 * the rest of its group is killed; and how long a timed-out (or stopped) program and its tree have
 * between SIGTERM and SIGKILL: the grace of every tree sweep ends, one number for the docs to state. */
#define COMMAND_DRAIN_GRACE 1.0
#define COMMAND_TERM_GRACE SPAWN_TREE_GRACE
/* What a run's wall time is known to within: spawn.c sees its exit through a pidfd at once. */
#define COMMAND_RESOLUTION 1e-6
/* The tail of a prepare or cleanup command's stderr kept for its error message. */
#define COMMAND_HELPER_ERR 4096

struct command_state {
	const struct spec *s;
	const struct executor *ex;
	const struct task *t;
	const struct json_obj *params;
	struct result *r;
	const char *item;          /* the item of the run in progress; NULL when the command has no {item} */
	struct command_metrics *m;
	struct strbuf out;         /* the first COMMAND_CAPTURE_MAX bytes of stdout */
	struct strbuf err;         /* the last COMMAND_CAPTURE_MAX bytes of stderr (twice that, reading) */
	size_t run_err;            /* where this run's stderr starts in err */
};

static void command_stdout(void *data, const char *buf, size_t n)
{
	struct command_state *st = data;
	size_t keep;

	if (st->out.len < COMMAND_CAPTURE_MAX) {
		keep = COMMAND_CAPTURE_MAX - st->out.len;
		sb_add(&st->out, buf, n < keep ? n : keep);
	}
	command_metrics_stdout(st->m, buf, n);
}

static void command_stderr(void *data, const char *buf, size_t n)
{
	struct command_state *st = data;
	size_t drop;

	command_metrics_stderr(st->m, buf, n);
	sb_add(&st->err, buf, n);
	if (st->err.len <= 2 * COMMAND_CAPTURE_MAX)
		return;
	drop = st->err.len - COMMAND_CAPTURE_MAX;
	memmove(st->err.buf, st->err.buf + drop, COMMAND_CAPTURE_MAX);
	st->err.len = COMMAND_CAPTURE_MAX;
	st->err.buf[st->err.len] = '\0';
	st->run_err = st->run_err > drop ? st->run_err - drop : 0;
}

/* The last non-empty line of text[from..len], for error messages; "" when none. */
static char *command_last_line(const char *text, size_t from, size_t len)
{
	const char *b = text ? text + from : "";
	size_t end = len - from, start;

	while (end && (b[end - 1] == '\n' || b[end - 1] == '\r' || b[end - 1] == ' '))
		end--;
	for (start = end; start && b[start - 1] != '\n'; start--)
		;
	if (end - start > 200)
		end = start + 200;
	return xstrndup(b + start, end - start);
}

static char *command_expand_cb(const char *tmpl, void *data)
{
	const struct command_state *st = data;

	return command_expand(tmpl, st->params, st->item, st->ex->gpu, st->ex->host, st->t->key);
}

/* Environment of the child: ours, with the spec's env (expanded) added or replacing. */
static char **command_env(const struct command_state *st)
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
		v = command_expand_cb(s->env_vals[k], (void *)st);
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

/* An argv template with the run's placeholders filled in; command_free_strv frees it. */
static char **command_argv(const struct command_state *st, char *const *tmpl, int n)
{
	char **argv = xcalloc((size_t)n + 1, sizeof(*argv));

	for (int i = 0; i < n; i++)
		argv[i] = command_expand_cb(tmpl[i], (void *)st);
	return argv;
}

static void command_free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
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

/* How a program that ran ended, as the cell's failure (what: "" for the command, "prepare: " for a
 * helper); last: its last stderr line. 0 when it exited 0. A cell already failed keeps its failure. */
static int command_ended(struct command_state *st, const char *what, const char *prog,
			 const struct spawn_result *end, const char *last)
{
	struct result *r = st->r;
	char sig[32];

	if (r->status != RESULT_OK && (end->timed_out || end->status))
		return -1;
	if (end->timed_out)
		return result_fail(r, RESULT_TIMEOUT, "%stimeout: '%s' killed after %g s%s%s", what, prog,
				   st->s->timeout, *last ? ": " : "", last);
	if (WIFSIGNALED(end->status))
		return result_fail(r, RESULT_ERROR, "%skilled by signal %d (%s)", what, WTERMSIG(end->status),
				   command_signame(WTERMSIG(end->status), sig, sizeof(sig)));
	if (WIFEXITED(end->status) && WEXITSTATUS(end->status))
		return result_fail(r, RESULT_ERROR, "%sexit %d%s%s", what, WEXITSTATUS(end->status),
				   *last ? ": " : "", last);
	return 0;
}

/*
 * Run argv in its own process group: stdout and stderr to the capture and the metrics as they come when
 * data is the state, or (helpers) stdout dropped and stderr's tail kept. Ends when the program has exited
 * and its pipes are closed, or COMMAND_DRAIN_GRACE after it exited; at the timeout (or when the executor
 * must stop: spawn_abort) the group and the program's tree get SIGTERM, then SIGKILL COMMAND_TERM_GRACE
 * later. Whatever is left of them is then killed. -1 when it could not be started (end->exec_errno says
 * why).
 */
static int command_spawn(struct command_state *st, char **argv, char **env, int helper,
			 struct spawn_result *end)
{
	struct spawn_opts o = {
		.argv = argv,
		.env = env,
		.in = SPAWN_NULL,
		.out = { .to = SPAWN_CALL, .fn = command_stdout, .data = st },
		.err = { .to = SPAWN_CALL, .fn = command_stderr, .data = st },
		.deadline = st->s->timeout > 0 ? now_mono() + st->s->timeout : 0,
		.term_grace = COMMAND_TERM_GRACE,
		.linger = COMMAND_DRAIN_GRACE,
		.reset_peak = !helper,
	};

	if (helper) {
		o.out = (struct spawn_output){ .to = SPAWN_NULL };
		o.err = (struct spawn_output){ .to = SPAWN_CAPTURE, .cap = COMMAND_HELPER_ERR, .tail = 1 };
	}
	return spawn_run(&o, end);
}

/* prepare: or cleanup: (what), run before or after a run, its output not the run's. 0 when it exited 0;
 * else -1, and the cell fails with its error unless it has failed already. */
static int command_helper(struct command_state *st, char *const *tmpl, int n, const char *what)
{
	char **argv = command_argv(st, tmpl, n), **env = command_env(st), *last, prefix[32];
	struct spawn_result end;
	int ret;

	snprintf(prefix, sizeof(prefix), "%s: ", what);
	if (command_spawn(st, argv, env, 1, &end)) {
		ret = -1;
		if (st->r->status == RESULT_OK)
			result_fail(st->r, RESULT_ERROR, "%s: cannot run '%s': %s", what, argv[0],
				    strerror(end.exec_errno));
	} else {
		last = command_last_line(end.err.buf, 0, end.err.len);
		ret = command_ended(st, prefix, argv[0], &end, last);
		free(last);
	}
	spawn_result_release(&end);
	command_free_strv(argv);
	command_free_strv(env);
	return ret;
}

/*
 * One run of the command (for st->item), with prepare before it and cleanup after it. keep: a sample
 * (its wall time and usage into r, its output read for metrics); else a warm-up run. *wall: its wall
 * time. 0, or -1 when r is failed.
 */
static int command_once(struct command_state *st, int keep, double *wall)
{
	const struct spec *s = st->s;
	struct spawn_result end;
	char **argv, **env, *last;
	int ret;

	*wall = 0;
	if (s->prepare && command_helper(st, s->prepare, s->nprepare, "prepare"))
		return -1;
	argv = command_argv(st, s->command, s->ncommand);
	env = command_env(st);
	command_metrics_begin(st->m, st->item, keep, command_expand_cb, st);
	st->run_err = st->err.len;
	if (command_spawn(st, argv, env, 0, &end)) {
		ret = result_fail(st->r, RESULT_ERROR, "cannot run '%s': %s", argv[0], strerror(end.exec_errno));
	} else {
		struct run_usage u = { end.user, end.sys, end.rss };

		*wall = end.wall;
		if (keep) {
			result_add_sample(st->r, end.wall, 0);
			result_set_usage(st->r, &u);
		}
		last = command_last_line(st->err.buf, st->run_err, st->err.len);
		ret = command_ended(st, "", argv[0], &end, last);
		free(last);
		if (!ret)
			ret = command_metrics_end(st->m, st->r);
	}
	spawn_result_release(&end);
	command_free_strv(argv);
	command_free_strv(env);
	if (s->cleanup && command_helper(st, s->cleanup, s->ncleanup, "cleanup"))
		ret = -1;
	return ret;
}

/* How unsatisfactory a stopping rule is, to report the worst of a cell's items. */
static int command_stop_rank(enum stop_rule stop)
{
	static const int rank[NSTOP] = {
		[STOP_NONE] = 0, [STOP_PRECISION] = 1, [STOP_NOISE] = 1, [STOP_COUNT] = 1, [STOP_CONVERGED] = 2,
		[STOP_MAX_SAMPLES] = 3, [STOP_TIMEOUT] = 4,
	};

	return rank[stop];
}

/*
 * The warm-up runs and the kept runs of st->item: one run without runs: in the spec; exactly N with runs: N;
 * with min_runs: N at least N, then timing's stopping rule (criterion.c, min_samples N) on their wall times. The rule
 * that stopped them into *stop and the noise target it held them to into *target. 0, or -1 when r is
 * failed.
 */
static int command_runs(struct command_state *st, enum stop_rule *stop, double *target)
{
	const struct spec *s = st->s;
	struct spec_timing timing = s->timing;
	struct criterion c;
	double start, now, wall;
	int ret = -1;

	timing.min_samples = s->runs;
	criterion_init(&c, &timing);
	for (int i = 0; i < s->warmup_runs; i++) {
		if (command_once(st, 0, &wall))
			goto out;
		st->r->warmup = (isnan(st->r->warmup) ? 0 : st->r->warmup) + wall;
	}
	start = now_mono();
	for (*stop = STOP_NONE; *stop == STOP_NONE; ) {
		if (command_once(st, 1, &wall))
			goto out;
		if (!s->runs)
			break;
		criterion_add(&c, wall, COMMAND_RESOLUTION);
		/* The deadline ends the sampling only once the runs asked for are in. */
		now = now_mono();
		if (c.n >= s->runs)
			*stop = s->runs_exact ? STOP_COUNT : criterion_check(&c, now - start,
									    start + s->timing.timeout - now);
	}
	*target = s->runs && !s->runs_exact ? criterion_target(&c) : INFINITY;
	ret = 0;
out:
	criterion_release(&c);
	return ret;
}

/* Whether the command runs once per item: {item} in what a run uses (argv, env, prepare, cleanup, the
 * files and paths its metrics are read from). */
static int command_uses_item(const struct spec *s)
{
	const char *tmpl[] = { s->json_src.path, s->json_records, s->json_item };
	int i, uses = 0;

	for (i = 0; i < s->ncommand; i++)
		uses |= !!strstr(s->command[i], "{item}");
	for (i = 0; i < s->nprepare; i++)
		uses |= !!strstr(s->prepare[i], "{item}");
	for (i = 0; i < s->ncleanup; i++)
		uses |= !!strstr(s->cleanup[i], "{item}");
	for (i = 0; i < s->nenv; i++)
		uses |= !!strstr(s->env_vals[i], "{item}");
	for (i = 0; i < s->nregex; i++)
		uses |= s->regex[i].src.path && strstr(s->regex[i].src.path, "{item}");
	for (i = 0; i < (int)ARRAY_SIZE(tmpl); i++)
		uses |= tmpl[i] && strstr(tmpl[i], "{item}");
	return uses;
}

/* counters: the program once more, untimed, under ncu (counters.h), for the cell's first item; what could
 * not be read is said in one line of the result's stderr. */
static void command_counters(struct command_state *st, int uses_item)
{
	char **argv, **env, why[256];

	st->item = uses_item ? st->s->items[0] : NULL;
	argv = command_argv(st, st->s->command, st->s->ncommand);
	env = command_env(st);
	if (counters_command(st->s, argv, env, 1, st->r, why, sizeof(why)))
		sb_addf(&st->err, "%scounters: %s\n", st->err.len && st->err.buf[st->err.len - 1] != '\n' ? "\n" : "",
			why);
	command_free_strv(argv);
	command_free_strv(env);
}

void command_run(const struct executor *ex, const struct task *t, struct result *r)
{
	const struct spec *s = ex->spec;
	struct command_state st = { .s = s, .ex = ex, .t = t, .r = r };
	struct json_obj params = JSON_OBJ_INIT;
	enum stop_rule stop, worst = STOP_NONE;
	double target = INFINITY;
	char err[128];
	int i, uses_item = command_uses_item(s);

	st.params = &params;
	if (!s->ncommand) {
		result_fail(r, RESULT_INVALID, "the spec has no command");
		goto out;
	}
	if (json_parse_flat(t->params ? t->params : "{}", &params, 1, err, sizeof(err))) {
		result_fail(r, RESULT_INVALID, "cell parameters: %s", err);
		goto out;
	}
	if (uses_item && !s->nitems) {
		result_fail(r, RESULT_INVALID, "the command uses {item} but the spec has no items");
		goto out;
	}
	if (!(st.m = command_metrics_new(s, r)))
		goto out;
	for (i = 0; i < (uses_item ? s->nitems : 1); i++) {
		st.item = uses_item ? s->items[i] : NULL;
		if (command_runs(&st, &stop, &target))
			break;
		if (command_stop_rank(stop) > command_stop_rank(worst))
			worst = stop;
	}
	if (r->status == RESULT_OK && s->ncounters)
		command_counters(&st, uses_item);
	if (r->status == RESULT_OK) {
		command_metrics_finish(st.m, r);
		r->stop = worst;
		r->launches = s->runs ? 1 : 0;
		/* Noise and precision are verdicts on one program's runs: items are different programs, and
		 * without runs: there is one run, with no interval to judge. */
		if (s->runs && !(uses_item && s->nitems > 1))
			result_summarize(r, target, s->runs_exact ? NAN : s->timing.precision);
		else
			result_summarize(r, INFINITY, NAN);
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
	command_metrics_free(st.m);
	sb_release(&st.out);
	sb_release(&st.err);
	json_obj_release(&params);
}

double command_limit(const struct spec *s)
{
	/* One run (or prepare, or cleanup) takes its timeout, SIGKILL's grace and the pipes' drain at most;
	 * the kept runs go on past timing's timeout until runs: N are in, and one more may start just
	 * before it. */
	double run = (s->timeout + COMMAND_TERM_GRACE + COMMAND_DRAIN_GRACE) * (1 + !!s->prepare + !!s->cleanup);
	double per_item = (s->warmup_runs + (s->runs ? s->runs + 1 : 1)) * run + (s->runs ? s->timing.timeout : 0);

	if (s->timeout <= 0)
		return INFINITY;
	return (command_uses_item(s) ? s->nitems : 1) * per_item;
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
	const char *p = tmpl, *v;
	char name[SPEC_PLACEHOLDER_MAX + 1], num[32];

	sb_add(&sb, "", 0);   /* an empty template still gives "" (sb_detach of an unused strbuf does not) */
	while (*p) {
		/* the spec's grammar (spec_placeholder_len); a longer name is kept as written */
		size_t len = *p == '{' ? spec_placeholder_len(p) : 0;

		/* {{ and }} are literal braces: hyperfine's own {name} is written {{name}} */
		if ((*p == '{' || *p == '}') && p[1] == *p) {
			sb_addc(&sb, *p);
			p += 2;
			continue;
		}

		v = NULL;
		if (len && len <= SPEC_PLACEHOLDER_MAX) {
			memcpy(name, p + 1, len);
			name[len] = '\0';
			v = command_lookup(name, params, item, gpu, host, cell, num, sizeof(num));
		}
		if (v) {
			sb_adds(&sb, v);
			p += len + 2;
		} else {
			sb_addc(&sb, *p++);
		}
	}
	return sb_detach(&sb);
}
