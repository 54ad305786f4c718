/* spec.c: a sweep spec read from YAML into struct spec, every problem reported as path:line:col. */
#include "spec_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/kernel.h"

/* libyaml's loader recurses once per nesting level; a spec needs four. */
#define YAML_MAX_DEPTH 64
#define SWEEP_NAME_MAX 128

enum top_key {
	K_SWEEP, K_DB, K_KERNEL, K_COMMAND, K_PARAMS, K_EXCLUDE, K_REPEAT, K_ORDER, K_SEED, K_TIMING, K_PER,
	K_HOSTS, K_GANG, K_MAX_ATTEMPTS, K_CONTROL, K_METRICS, K_TIMEOUT, K_ENV, K_ITEMS, K_RUNS, K_WARMUP,
	K_PREPARE, K_CLEANUP, K_INPUTS, K_WORKDIR, K_CLOCKS, K_COUNTERS, K_MIN_RUNS, K_MAX_RUNS, NTOP
};
static const char *const top_names[] = {
	"sweep", "db", "kernel", "command", "params", "exclude", "repeat", "order", "seed", "timing", "per",
	"hosts", "gang", "max_attempts", "control", "metrics", "timeout", "env", "items", "runs", "warmup",
	"prepare", "cleanup", "inputs", "workdir", "clocks", "counters", "min_runs", "max_runs", NULL
};
enum timing_key {
	T_PRECISION, T_MIN_SAMPLES, T_MIN_TIME, T_MAX_NOISE, T_TIMEOUT, T_WARMUP, T_MAX_WARMUP, T_L2, T_THROTTLE,
	T_BATCH, T_MAX_SAMPLES, NTIMING
};
static const char *const timing_names[] = {
	"precision", "min_samples", "min_time", "max_noise", "timeout", "warmup", "max_warmup", "l2", "throttle",
	"batch", "max_samples", NULL
};
static const char *const order_names[] = { "sequential", "interleave", "shuffle", NULL };
static const char *const per_names[] = { "any", "host", "gpu", NULL };
static const char *const gang_names[] = { "host", "any", NULL };
static const char *const l2_names[] = { "cold", "hot", NULL };
/* Timing keys a command's runs have no use for, and what stands for them there. */
static const struct {
	int key;
	const char *why;
} command_timing[] = {
	{ T_MIN_SAMPLES, "a command's least number of runs is 'min_runs: N'" },
	{ T_WARMUP, "a command's warm-up is 'warmup: N' runs" },
	{ T_L2, "a command's runs have no L2 flush" },
	{ T_THROTTLE, "a command's runs have no SM clock" },
	{ T_MAX_WARMUP, "a command's runs have no SM clock to settle" },
	{ T_BATCH, "a command's sample is one run" },
};

/* Two timing keys the spec gives (both read: ok) whose values cannot both hold (bad): a problem at the one
 * written later, naming both and why. Defaults never conflict: only values written in the spec are held
 * against each other. */
static void timing_conflict(struct sp *p, const struct ynode *const *v, const int *ok, int a, int b, int bad,
			    const char *why)
{
	int later;

	if (!bad || !ok[a] || !ok[b])
		return;
	later = v[b]->line > v[a]->line || (v[b]->line == v[a]->line && v[b]->col > v[a]->col) ? b : a;
	spec_node_problem(p, v[later], "'%s' %s conflicts with '%s' %s (line %d): %s", timing_names[later],
			  v[later]->text, timing_names[a + b - later], v[a + b - later]->text,
			  v[a + b - later]->line, why);
}

/* timing: for a command sweep: its stopping rule applies to runs (min_runs: N is its min_samples). */
static int parse_command_timing(struct sp *p, const struct ynode *n, const struct ynode **k, int runs)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(command_timing); i++) {
		if (k[command_timing[i].key]) {
			spec_node_problem(p, k[command_timing[i].key], "'%s' means nothing for a command (%s)",
				timing_names[command_timing[i].key], command_timing[i].why);
			bad = 1;
		}
	}
	if (!runs) {
		spec_node_problem(p, n, "'timing' of a command sweep needs 'min_runs: N', its stopping rule's least "
			"number of runs (runs: N is exactly N runs; without either a command runs once)");
		bad = 1;
	}
	return bad ? -1 : 0;
}

static void parse_timing(struct sp *p, const struct ynode *n, const struct ynode *runs)
{
	const struct ynode *v[NTIMING + 1] = { 0 }, *k[NTIMING + 1] = { 0 };
	struct spec_timing *t = &p->s->timing;
	int l2, ok[NTIMING] = { 0 };

	if (spec_node_fields(p, n, "'timing'", timing_names, v, k))
		return;
	if (v[T_PRECISION])
		ok[T_PRECISION] = !spec_node_double(p, v[T_PRECISION], "precision", 0, 1, INFINITY, &t->precision);
	if (p->s->command && parse_command_timing(p, n, k, runs != NULL))
		return;
	if (v[T_MIN_SAMPLES])
		ok[T_MIN_SAMPLES] = !spec_node_int(p, v[T_MIN_SAMPLES], "min_samples", 1, &t->min_samples);
	if (v[T_MIN_TIME])
		ok[T_MIN_TIME] = !spec_node_double(p, v[T_MIN_TIME], "min_time", 0, 0, INFINITY, &t->min_time);
	if (v[T_MAX_NOISE])
		ok[T_MAX_NOISE] = !spec_node_double(p, v[T_MAX_NOISE], "max_noise", 0, 1, INFINITY, &t->max_noise);
	if (v[T_TIMEOUT])
		ok[T_TIMEOUT] = !spec_node_double(p, v[T_TIMEOUT], "timeout", 0, 1, INFINITY, &t->timeout);
	if (v[T_WARMUP])
		ok[T_WARMUP] = !spec_node_double(p, v[T_WARMUP], "warmup", 0, 0, INFINITY, &t->warmup);
	if (v[T_MAX_WARMUP])
		ok[T_MAX_WARMUP] = !spec_node_double(p, v[T_MAX_WARMUP], "max_warmup", 0, 0, INFINITY,
						     &t->max_warmup);
	else if (t->warmup > t->max_warmup)
		t->max_warmup = t->warmup;   /* the bound is never below a warm-up asked for */
	if (v[T_L2] && (l2 = spec_node_enum(p, v[T_L2], "l2", l2_names)) >= 0)
		t->l2_hot = l2;
	if (v[T_THROTTLE])
		spec_node_double(p, v[T_THROTTLE], "throttle", 0, 0, 1, &t->throttle);
	if (v[T_BATCH])
		spec_node_int(p, v[T_BATCH], "batch", 0, &t->batch);
	if (v[T_MAX_SAMPLES])
		spec_node_int(p, v[T_MAX_SAMPLES], "max_samples", 2, &t->max_samples);
	if (!p->s->command && t->min_samples > t->max_samples)
		spec_node_problem(p, v[T_MIN_SAMPLES] ? v[T_MIN_SAMPLES] : v[T_MAX_SAMPLES],
				  "min_samples %d is over max_samples %d", t->min_samples, t->max_samples);
	timing_conflict(p, v, ok, T_MIN_TIME, T_TIMEOUT, t->min_time >= t->timeout,
			"no cell could take its min_time of samples before its timeout");
	timing_conflict(p, v, ok, T_WARMUP, T_TIMEOUT, t->warmup >= t->timeout,
			"a warm-up that long leaves no time for samples");
	timing_conflict(p, v, ok, T_WARMUP, T_MAX_WARMUP, t->max_warmup < t->warmup,
			"max_warmup bounds the whole warm-up, warmup included");
}

static void parse_name(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];
	const char *t = spec_node_scalar(p, n, "sweep");

	if (!t)
		return;
	if (!*t) {
		spec_node_problem(p, n, "empty sweep name");
		return;
	}
	if (strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(t)) {
		spec_node_problem(p, n, "invalid sweep name '%s' (use letters, digits, '.', '_' and '-')",
			spec_shown(a, t));
		return;
	}
	if (strlen(t) > SWEEP_NAME_MAX) {
		spec_node_problem(p, n, "sweep name longer than %d characters", SWEEP_NAME_MAX);
		return;
	}
	p->s->name = xstrdup(t);
}

static void parse_kernel(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	const char *t = spec_node_scalar(p, n, "kernel");
	const char **names;
	size_t count = 0, np = 0;

	if (!t)
		return;
	p->s->kernel = xstrdup(t);
	for (count = 0; kernel_registry[count]; count++)
		;
	names = xcalloc(count + 1, sizeof(*names));
	for (size_t i = 0; i < count; i++)
		names[i] = kernel_registry[i]->name;
	p->kernel = kernel_find(t);
	if (!p->kernel)
		spec_node_problem(p, n, "unknown kernel '%s'%s", spec_shown(a, t),
			spec_node_hint(p, h, t, names));
	free(names);
	if (!p->kernel)
		return;
	for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++)
		np++;
	p->knames = xcalloc(np + 1, sizeof(*p->knames));
	for (size_t i = 0; i < np; i++)
		p->knames[i] = p->kernel->params[i].name;
}

/*
 * runs: N is exactly N runs (as hyperfine's --runs); min_runs: N at least N, then timing's stopping rule,
 * which max_runs: M caps (timing's max_samples: hyperfine's --min-runs and --max-runs). One or the other.
 */
static void parse_command_runs(struct sp *p, const struct ynode *const *v)
{
	struct spec *s = p->s;
	int max;

	if (v[K_RUNS] && (v[K_MIN_RUNS] || v[K_MAX_RUNS])) {
		spec_node_problem(p, v[K_MIN_RUNS] ? v[K_MIN_RUNS] : v[K_MAX_RUNS], "'runs' is exactly N runs, "
			"'min_runs' and 'max_runs' the stopping rule's bounds: give one or the other");
		return;
	}
	if (v[K_RUNS] && !spec_node_int(p, v[K_RUNS], "runs", 1, &s->runs))
		s->runs_exact = 1;
	if (v[K_MIN_RUNS])
		spec_node_int(p, v[K_MIN_RUNS], "min_runs", 1, &s->runs);
	else if (v[K_MAX_RUNS])
		spec_node_problem(p, v[K_MAX_RUNS], "'max_runs' needs 'min_runs: N' (runs: N is exactly N runs)");
	if (v[K_MAX_RUNS] && v[K_MIN_RUNS] && !spec_node_int(p, v[K_MAX_RUNS], "max_runs", 1, &max))
		s->timing.max_samples = max;
}

/* A command sweep's keys beside command (read by parse_doc): their placeholders, items, runs. */
static void parse_command_keys(struct sp *p, const struct ynode *const *v)
{
	struct spec *s = p->s;
	int uses_item = 0;

	for (int i = 0; i < s->ncommand; i++)
		spec_command_placeholders(p, s->command[i], ydoc_item(v[K_COMMAND], i), &uses_item);
	if (v[K_ENV])
		spec_command_env(p, v[K_ENV], &uses_item);
	if (v[K_METRICS])
		spec_metrics_parse(p, v[K_METRICS], &uses_item);
	if (v[K_PREPARE])
		s->prepare = spec_command_argv(p, v[K_PREPARE], "prepare", &s->nprepare, &uses_item);
	if (v[K_CLEANUP])
		s->cleanup = spec_command_argv(p, v[K_CLEANUP], "cleanup", &s->ncleanup, &uses_item);
	parse_command_runs(p, v);
	if (v[K_WARMUP])
		spec_node_int(p, v[K_WARMUP], "warmup", 0, &s->warmup_runs);
	if (v[K_TIMEOUT])
		spec_node_double(p, v[K_TIMEOUT], "timeout", 0, 1, INFINITY, &s->timeout);
	if (v[K_ITEMS])
		spec_command_items(p, v[K_ITEMS]);
	else if (uses_item)
		spec_node_problem(p, v[K_COMMAND] ? v[K_COMMAND] : v[K_ENV],
			"'{item}' is used but no 'items' are given");
}

/* db: (beside the spec; the default results/NAME.db is the start folder's) and workdir:. */
static void parse_paths(struct sp *p, const struct ynode *const *v)
{
	struct spec *s = p->s;
	const char *t = NULL;

	if (v[K_DB] && (t = spec_node_scalar(p, v[K_DB], "db")) && !*t)
		spec_node_problem(p, v[K_DB], "empty 'db'");
	else if (v[K_DB] && t)
		s->db = spec_beside(p->path, t);
	else if (!v[K_DB] && s->name)
		s->db = xasprintf("results/%s.db", s->name);
	if (v[K_WORKDIR] && (t = spec_node_scalar(p, v[K_WORKDIR], "workdir")) && !*t)
		spec_node_problem(p, v[K_WORKDIR], "empty 'workdir'");
	else if (v[K_WORKDIR] && t)
		s->workdir = xstrdup(t);
}

static void parse_doc(struct sp *p, const struct ynode *root)
{
	const struct ynode *v[NTOP + 1] = { 0 }, *k[NTOP + 1] = { 0 };
	static const int command_only[] = { K_METRICS, K_TIMEOUT, K_ENV, K_ITEMS, K_RUNS, K_WARMUP, K_PREPARE,
					    K_CLEANUP, K_WORKDIR, K_MIN_RUNS, K_MAX_RUNS };
	struct spec *s = p->s;
	int e;

	if (!root) {
		spec_node_problem_at(p, 1, 1, "empty spec");
		return;
	}
	if (spec_node_fields(p, root, NULL, top_names, v, k))
		return;
	if (v[K_SWEEP])
		parse_name(p, v[K_SWEEP]);
	else
		spec_node_problem(p, root, "missing 'sweep' (the sweep's name)");
	parse_paths(p, v);

	if (v[K_KERNEL] && v[K_COMMAND])
		spec_node_problem(p, k[K_COMMAND],
			"both 'kernel' and 'command' given: a sweep runs one or the other");
	else if (!v[K_KERNEL] && !v[K_COMMAND])
		spec_node_problem(p, root, "missing 'kernel' or 'command'");
	if (v[K_KERNEL])
		parse_kernel(p, v[K_KERNEL]);
	if (v[K_COMMAND])
		spec_command_parse(p, v[K_COMMAND]);
	if (v[K_KERNEL] && !v[K_COMMAND])
		for (size_t i = 0; i < ARRAY_SIZE(command_only); i++)
			if (v[command_only[i]])
				spec_node_problem(p, k[command_only[i]], "'%s' is for command sweeps only%s",
					top_names[command_only[i]], command_only[i] == K_TIMEOUT ?
					" (a kernel's is timing: {timeout: SECONDS})" : command_only[i] == K_WARMUP ?
					" (a kernel's is timing: {warmup: SECONDS})" : "");

	if (v[K_PARAMS])
		spec_params_parse(p, v[K_PARAMS]);
	spec_params_check(p);
	if (p->kernel)
		for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++)
			if (!pd->def && !spec_params_has(p, pd->name))
				spec_node_problem(p, v[K_KERNEL], "kernel '%s' needs parameter '%s' (it has "
					"no default)", p->kernel->name, pd->name);
	if (v[K_EXCLUDE])
		spec_params_exclude(p, v[K_EXCLUDE]);
	if (v[K_CONTROL])
		spec_params_control(p, v[K_CONTROL]);

	parse_command_keys(p, v);

	if (v[K_INPUTS] && (s->inputs = spec_node_strings(p, v[K_INPUTS], "inputs", &s->ninputs)))
		for (int i = 0; i < s->ninputs; i++)
			if (!*s->inputs[i])
				spec_node_problem(p, ydoc_item(v[K_INPUTS], i), "empty path in 'inputs'");
	if (v[K_REPEAT])
		spec_node_int(p, v[K_REPEAT], "repeat", 1, &s->repeat);
	if (v[K_ORDER] && (e = spec_node_enum(p, v[K_ORDER], "order", order_names)) >= 0)
		s->order = (enum spec_order)e;
	if (v[K_SEED]) {
		long seed;

		if (!spec_node_long(p, v[K_SEED], "seed", 0, LONG_MAX, &seed))
			s->seed = (uint64_t)seed;
	}
	if (v[K_TIMING] && v[K_MAX_RUNS] && v[K_MIN_RUNS])
		spec_node_problem(p, v[K_MAX_RUNS], "'max_runs' is timing's max_samples: give one of them");
	else if (v[K_TIMING])
		parse_timing(p, v[K_TIMING], v[K_MIN_RUNS]);
	if (s->command && !s->runs_exact && s->runs > s->timing.max_samples)
		spec_node_problem(p, v[K_MIN_RUNS], "min_runs %d is over %s %d", s->runs,
			v[K_MAX_RUNS] ? "max_runs" : "timing's max_samples", s->timing.max_samples);
	if (v[K_PER] && (e = spec_node_enum(p, v[K_PER], "per", per_names)) >= 0)
		s->per = (enum spec_per)e;
	if (v[K_HOSTS])
		s->hosts = spec_node_strings(p, v[K_HOSTS], "hosts", &s->nhosts);
	if (v[K_GANG] && (e = spec_node_enum(p, v[K_GANG], "gang", gang_names)) >= 0)
		s->gang = (enum spec_gang)e;
	if (v[K_MAX_ATTEMPTS])
		spec_node_int(p, v[K_MAX_ATTEMPTS], "max_attempts", 1, &s->max_attempts);
	if (v[K_CLOCKS])
		spec_gpu_clocks(p, v[K_CLOCKS]);
	if (v[K_COUNTERS])
		spec_gpu_counters(p, v[K_COUNTERS]);
	spec_params_defaults(p);
}

static void spec_defaults(struct spec *s)
{
	s->repeat = 1;
	s->order = ORDER_SEQUENTIAL;
	s->seed = 1;
	/* precision and min_time: docs/timing.md ("The stopping rule") gives the measurements behind them. */
	s->timing.precision = 0.005;
	s->timing.min_samples = 10;
	s->timing.min_time = 0.02;
	s->timing.max_noise = 0;
	s->timing.timeout = 15;
	s->timing.warmup = 0.05;
	s->timing.max_warmup = 1;
	s->timing.l2_hot = 0;
	s->timing.throttle = 0.75;
	s->timing.max_samples = 10000;
	s->metrics = METRICS_NONE;
	s->timeout = 600;
	s->per = PER_ANY;
	s->gang = GANG_HOST;
	s->max_attempts = 3;
	s->control_every = 20;
}

/* Read text's one YAML document into p->s. */
static void parse_text(struct sp *p, const char *text, size_t len)
{
	struct ydoc d;
	int rc = ydoc_parse(&d, text, len, YAML_MAX_DEPTH);

	if (!rc)
		parse_doc(p, d.root);
	if (rc || d.trailing_error)
		spec_node_problem_at(p, d.err.line, d.err.col, "%s", d.err.msg);
	else if (d.second_line)
		spec_node_problem_at(p, d.second_line, d.second_col,
			"a second YAML document: a spec file holds one");
	ydoc_release(&d);
}

char *spec_beside(const char *spec_path, const char *rel)
{
	const char *slash = spec_path ? strrchr(spec_path, '/') : NULL;

	if (rel[0] == '/' || !slash)
		return xstrdup(rel);
	return xasprintf("%.*s%s", (int)(slash - spec_path + 1), spec_path, rel);
}

char *spec_folder(const struct spec *s)
{
	char *dir = spec_beside(s->path, s->workdir ? s->workdir : "."), *abs = realpath(dir, NULL);

	if (!abs)
		error("%s: the folder %s commands run in, '%s': %s", s->path, s->workdir ? "'workdir' names as the" :
		      "of the spec, where", dir, strerror(errno));
	free(dir);
	return abs;
}

/* Parse text into out; problems are printed (and the spec released: -1) unless quiet, when they are
 * dropped and out kept as far as it was read. */
static int parse(const char *path, const char *text, size_t len, struct spec *out, int quiet)
{
	struct sp p;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	spec_defaults(out);
	out->path = xstrdup(path);
	out->text = xmalloc(len + 1);
	if (len)
		memcpy(out->text, text, len);
	out->text[len] = '\0';
	out->hash = hash64(HASH64_INIT, text, len);
	p.path = path;
	p.s = out;
	parse_text(&p, text, len);
	free(p.names);
	free(p.phnames);
	free(p.sorted);
	free(p.knames);
	ret = spec_node_flush(&p, quiet);
	if (quiet)
		return 0;
	if (ret)
		spec_release(out);
	return ret;
}

int spec_parse(const char *path, const char *text, size_t len, struct spec *out)
{
	return parse(path, text, len, out, 0);
}

void spec_read_leniently(const char *text, size_t len, struct spec *out)
{
	parse("(stored spec)", text, len, out, 1);
}

int spec_load(const char *path, struct spec *out)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	memset(out, 0, sizeof(*out));
	if (sb_read_file(&sb, path)) {
		sb_release(&sb);
		return -1;
	}
	ret = spec_parse(path, sb.buf ? sb.buf : "", sb.len, out);
	sb_release(&sb);
	return ret;
}

static void free_strings(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void spec_release(struct spec *s)
{
	for (int a = 0; a < s->naxes; a++) {
		struct spec_axis *ax = &s->axes[a];

		for (size_t i = 0; ax->vals && i < (size_t)ax->npoints * (size_t)ax->nkeys; i++)
			free(ax->vals[i].text);
		free(ax->vals);
		free_strings(ax->keys, ax->nkeys);
	}
	free(s->axes);
	for (int e = 0; e < s->nexclude; e++) {
		for (int i = 0; i < s->exclude[e].n; i++)
			free(s->exclude[e].vals[i].text);
		free(s->exclude[e].vals);
		free_strings(s->exclude[e].keys, s->exclude[e].n);
	}
	free(s->exclude);
	for (int i = 0; i < s->nregex; i++) {
		free(s->regex[i].name);
		free(s->regex[i].pattern);
		free(s->regex[i].src.path);
		free(s->regex[i].unit);
		free(s->regex[i].scale);
	}
	free(s->regex);
	for (int i = 0; i < s->njmetrics; i++) {
		free(s->jmetrics[i].name);
		free(s->jmetrics[i].path);
		free(s->jmetrics[i].unit);
		free(s->jmetrics[i].unit_path);
		free(s->jmetrics[i].scale);
	}
	free(s->jmetrics);
	free(s->json_src.path);
	free(s->json_records);
	free(s->json_item);
	free_strings(s->prepare, s->nprepare);
	free_strings(s->cleanup, s->ncleanup);
	free_strings(s->command, s->ncommand);
	free_strings(s->env_keys, s->nenv);
	free_strings(s->env_vals, s->nenv);
	free_strings(s->items, s->nitems);
	free_strings(s->hosts, s->nhosts);
	free_strings(s->inputs, s->ninputs);
	free_strings(s->counters, s->ncounters);
	json_obj_release(&s->control);
	free(s->path);
	free(s->workdir);
	free(s->text);
	free(s->name);
	free(s->db);
	free(s->kernel);
	memset(s, 0, sizeof(*s));
}
