/* test_command.c: command cells (metrics from JSON lines and regexes, items, timeouts that kill the whole
 * process group, stderr capture, missing programs) and command_expand. Run from the repository root:
 * it uses tests/progs/metrics.sh. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "command.h"
#include "test.h"

/* tests/progs/metrics.sh, made absolute: the tests run in a folder of their own (files they write). */
static char prog[4096];
#define PROG prog

static void test_expand(void)
{
	struct json_obj p = JSON_OBJ_INIT;
	char err[64], *s;

	json_parse_flat("{\"M\": 128, \"dtype\": \"f32\", \"gpu\": \"h200\", \"a.b\": 1}", &p, 0, err,
			sizeof(err));
	s = command_expand("gemm-{M}x{M}-{dtype}", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "gemm-128x128-f32", "parameters expand");
	free(s);
	s = command_expand("{item}/{host}/{cell}/{gpu}", NULL, "q7", 3, "node1", "00ff");
	CHECK_STR(s, "q7/node1/00ff/3", "item, host, cell and gpu expand");
	free(s);
	s = command_expand("{gpu}", NULL, NULL, -1, NULL, NULL);
	CHECK_STR(s, "-1", "gpu is -1 on a worker without one");
	free(s);
	s = command_expand("{gpu} {a.b}", &p, NULL, 2, NULL, NULL);
	CHECK_STR(s, "h200 1", "a parameter wins over a built-in name; dotted names work");
	free(s);
	s = command_expand("{item}{host}{cell}{nope}", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "{item}{host}{cell}{nope}", "unknown or NULL placeholders are kept as written");
	free(s);
	s = command_expand("{} { M} {M {{{M}}} }{ x{", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "{} { M} {M {128} }{ x{", "braces that are not placeholders are kept");
	free(s);
	s = command_expand("sleep {{M}} {{{{ }}}} {{nope} {M}}}", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "sleep {M} {{ }} {nope} 128}", "{{ and }} are literal braces");
	free(s);
	s = command_expand("{\"v\": {M}}", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "{\"v\": 128}", "JSON text around a placeholder is kept");
	free(s);
	s = command_expand("", &p, NULL, 0, NULL, NULL);
	CHECK_STR(s, "", "empty template");
	free(s);
	json_obj_release(&p);
	/* One grammar for the spec and the expansion: a name of SPEC_PLACEHOLDER_MAX is filled in, a longer
	 * one (which a spec refuses) kept as written. */
	CHECK_INT((int)spec_placeholder_len("{a.b-c_9} x"), 7, "a placeholder's name");
	CHECK_INT((int)spec_placeholder_len("{a b}"), 0, "a space: text");
	CHECK_INT((int)spec_placeholder_len("{}"), 0, "no name: text");
	CHECK_INT((int)spec_placeholder_len("{\"v\": 1}"), 0, "JSON: text");
	{
		char name[SPEC_PLACEHOLDER_MAX + 2], json[2 * SPEC_PLACEHOLDER_MAX + 64], tmpl[SPEC_PLACEHOLDER_MAX + 8];

		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		snprintf(json, sizeof(json), "{\"%s\": 5, \"%.*s\": 6}", name, SPEC_PLACEHOLDER_MAX, name);
		json_parse_flat(json, &p, 0, err, sizeof(err));
		snprintf(tmpl, sizeof(tmpl), "{%.*s}", SPEC_PLACEHOLDER_MAX, name);
		s = command_expand(tmpl, &p, NULL, 0, NULL, NULL);
		CHECK_STR(s, "6", "a name of SPEC_PLACEHOLDER_MAX characters is filled in");
		free(s);
		snprintf(tmpl, sizeof(tmpl), "{%s}", name);
		s = command_expand(tmpl, &p, NULL, 0, NULL, NULL);
		CHECK_STR(s, tmpl, "a longer one is kept as written");
		free(s);
		json_obj_release(&p);
	}
}

struct ct {
	struct spec s;
	struct executor ex;
	struct task t;
	struct result r;
};

static void ct_init(struct ct *c, char **argv, int argc, enum spec_metrics metrics)
{
	memset(c, 0, sizeof(*c));
	c->s.name = "cmd";
	c->s.command = argv;
	c->s.ncommand = argc;
	c->s.metrics = metrics;
	c->s.timeout = 30;
	c->ex.rank = 1;
	c->ex.gpu = -1;
	strcpy(c->ex.host, "testhost");
	c->ex.spec = &c->s;
	c->t.cell = 5;
	c->t.key = "0123456789abcdef";
	c->t.params = "{\"k\": 10}";
	result_init(&c->r);
}

/* strtod, not parse_double, which refuses a subnormal (ERANGE). */
static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);

	return v ? strtod(v, NULL) : NAN;
}

/* The value of item/metric in r, NaN when absent; *count how many rows matched. */
static double item(const struct result *r, const char *it, const char *m, int *count)
{
	double v = NAN;
	size_t i;

	*count = 0;
	for (i = 0; i < r->nitems; i++) {
		if (!strcmp(r->items[i].item, it) && !strcmp(r->items[i].metric, m)) {
			v = r->items[i].value;
			(*count)++;
		}
	}
	return v;
}

/* Run argv (argc words) with the n regex metrics re into c->r. */
static void run_regex(struct ct *c, char **argv, int argc, struct spec_regex *re, int n)
{
	ct_init(c, argv, argc, METRICS_REGEX);
	c->s.regex = re;
	c->s.nregex = n;
	command_run(&c->ex, &c->t, &c->r);
}

static void test_json(void)
{
	char *argv[] = { "sh", PROG, "json" };
	struct ct c;
	int n;

	ct_init(&c, argv, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_OK, "json command runs");
	CHECK(c.r.error == NULL, "no error: %s", c.r.error ? c.r.error : "");
	CHECK_INT(c.r.nitems, 6, "six item values (a/acc, a/tok, b/acc, b/tok, 3/acc, c/acc)");
	CHECK_NEAR(item(&c.r, "a", "acc", &n), 0.5, 1e-12, "a/acc is the mean of its two lines");
	CHECK_INT(n, 1, "one row for a/acc");
	CHECK_NEAR(item(&c.r, "a", "tok", &n), 10, 0, "a/tok");
	CHECK_NEAR(item(&c.r, "b", "acc", &n), 0, 0, "b/acc");
	CHECK_NEAR(item(&c.r, "3", "acc", &n), 0.5, 0, "a numeric item name");
	CHECK_NEAR(item(&c.r, "c", "acc", &n), 1, 0, "c/acc");
	CHECK(c.r.nitems == 6 && !strcmp(c.r.items[0].item, "a") && !strcmp(c.r.items[4].item, "3"),
	      "items in first-seen order");
	CHECK_NEAR(metric(&c.r, "acc"), (0.5 + 0 + 0.5 + 1) / 4, 1e-12, "acc: mean over items");
	CHECK_NEAR(metric(&c.r, "tok"), 20, 1e-12, "tok: mean over its items");
	CHECK_NEAR(metric(&c.r, "rate"), 150, 1e-12, "rate: mean of the lines without item");
	CHECK(isnan(metric(&c.r, "flag")) && isnan(metric(&c.r, "name")),
	      "booleans and strings are not metrics");
	CHECK(isnan(metric(&c.r, "item")), "item is not a metric");
	CHECK_INT(c.r.nsamples, 1, "one run, one sample");
	CHECK(c.r.samples[0] > 0 && c.r.samples[0] < 5, "the sample is the wall time: %.3f s",
	      c.r.samples[0]);
	CHECK_NEAR(metric(&c.r, "seconds"), c.r.samples[0], 1e-12, "seconds defaults to the run's wall time");
	CHECK(c.r.out && !strncmp(c.r.out, "starting\n", 9), "stdout captured");
	CHECK(c.r.err == NULL, "no stderr");
	CHECK_INT(c.r.noise_ok, 1, "a command has no noise target to miss");
	result_release(&c.r);

	/* metrics: none reads nothing from the output. */
	ct_init(&c, argv, 3, METRICS_NONE);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK && c.r.nitems == 0 && isnan(metric(&c.r, "acc")), "metrics none");
	CHECK(!isnan(metric(&c.r, "seconds")), "but seconds is there");
	result_release(&c.r);
}

static void test_items(void)
{
	char *argv[] = { "sh", PROG, "item", "{item}" };
	char *items[] = { "1", "2", "3" };
	char *env_keys[] = { "SCALE" }, *env_vals[] = { "{k}" };
	struct ct c;
	int n;

	ct_init(&c, argv, 4, METRICS_JSON);
	c.s.items = items;
	c.s.nitems = 3;
	c.s.env_keys = env_keys;
	c.s.env_vals = env_vals;
	c.s.nenv = 1;
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_OK, "per-item command runs");
	CHECK_INT(c.r.nsamples, 3, "once per item: three samples");
	CHECK_NEAR(item(&c.r, "1", "v", &n), 10, 0, "item 1: v = 1 * SCALE ({k} = 10 from the env)");
	CHECK_NEAR(item(&c.r, "2", "v", &n), 20, 0, "item 2 defaults each line's item");
	CHECK_NEAR(item(&c.r, "3", "v", &n), 30, 0, "item 3");
	CHECK_NEAR(metric(&c.r, "v"), 20, 1e-12, "v: mean over items");
	CHECK_NEAR(item(&c.r, "fixed", "w", &n), 2, 1e-12, "a line's own item wins; repeated values average");
	CHECK_INT(n, 1, "one row for fixed/w");
	CHECK_NEAR(metric(&c.r, "w"), 2, 1e-12, "w");
	CHECK_INT(c.r.nitems, 7, "four item values, and each item's seconds");
	CHECK(item(&c.r, "1", "seconds", &n) == c.r.samples[0] && item(&c.r, "3", "seconds", &n) == c.r.samples[2],
	      "an item's seconds is its run's wall time");
	CHECK(isnan(item(&c.r, "fixed", "seconds", &n)), "an item the output names has none");
	result_release(&c.r);

	ct_init(&c, argv, 4, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "no items"),
	      "{item} without items: '%s'", c.r.error);
	result_release(&c.r);
}

/* Several matches of a regex in one run: an error by default, or the first, the last, or an item each. */
static void test_regex(void)
{
	char *argv[] = { "sh", PROG, "text" };
	struct spec_regex re[] = {
		{ .name = "time", .pattern = "time: ([0-9.]+)", .groups = 1 },
		{ .name = "tput", .pattern = "throughput=([0-9.]+)", .groups = 1 },
	};
	struct ct c;
	int n;

	run_regex(&c, argv, 3, re, 2);
	CHECK_INT(c.r.status, RESULT_INVALID, "three matches of a regex that must match once: no run can help");
	CHECK_STR(c.r.error, "metric 'time': regex 'time: ([0-9.]+)' matched 3 times in one run (stdout lines 1, "
		  "2, 2): say which with match: first, last or each", "the error names the lines");
	result_release(&c.r);

	re[0].match = MATCH_FIRST;
	run_regex(&c, argv, 3, re, 2);
	CHECK_INT(c.r.status, RESULT_OK, "match: first");
	CHECK_NEAR(metric(&c.r, "time"), 1.5, 0, "the first match");
	CHECK_NEAR(metric(&c.r, "tput"), 10, 0, "tput matched once");
	CHECK_INT(c.r.nitems, 0, "no items without {item}");
	result_release(&c.r);

	re[0].match = MATCH_LAST;
	run_regex(&c, argv, 3, re, 1);
	CHECK_NEAR(metric(&c.r, "time"), 3.0, 0, "match: last");
	result_release(&c.r);

	re[0].match = MATCH_EACH;
	run_regex(&c, argv, 3, re, 1);
	CHECK_INT(c.r.nitems, 3, "match: each: an item each");
	CHECK_NEAR(item(&c.r, "1", "time", &n), 1.5, 0, "item 1 is the first match");
	CHECK_NEAR(item(&c.r, "3", "time", &n), 3.0, 0, "item 3 the second on line 2");
	CHECK_NEAR(metric(&c.r, "time"), (1.5 + 2.5 + 3.0) / 3, 1e-12, "the cell's value: the mean over items");
	result_release(&c.r);

	re[0].pattern = "time: ([0-9.]+";
	run_regex(&c, argv, 3, re, 1);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "bad regex"), "bad regex: '%s'",
	      c.r.error);
	result_release(&c.r);
}

/* match: each with two groups names items; values with units; stderr and files as sources. */
static void test_regex_sources(void)
{
	char *argv[] = { "sh", "-c", "echo 'BM_a/8 158 ns'; echo 'BM_b/8 11.9 us'; echo 'BM_c 1.41 ms';"
				     "echo 'read: IOPS=16.1k, BW=62.9MiB/s' >&2; echo 'Mean: 2.5 s' >out-{cell}.txt" };
	char *quiet[] = { "sh", "-c", "echo 'Mean: 1 s'" };
	struct spec_regex re[] = {
		{ .name = "time", .pattern = "^(BM_[^ ]+) ([0-9.]+ [a-z]+)$", .groups = 2, .match = MATCH_EACH,
		  .unit = "s" },
		{ .name = "iops", .pattern = "IOPS=([0-9.]+k?)", .groups = 1, .unit = "1",
		  .src = { FROM_STDERR, NULL } },
		{ .name = "bw", .pattern = "BW=([0-9.]+[A-Za-z/]+)", .groups = 1, .unit = "MB/s",
		  .src = { FROM_STDERR, NULL } },
		{ .name = "mean", .pattern = "Mean: (.*)", .groups = 1, .unit = "ms",
		  .src = { FROM_FILE, "out-{cell}.txt" } },
	};
	struct ct c;
	int n;

	run_regex(&c, argv, 3, re, 4);
	CHECK(c.r.status == RESULT_OK, "units, stderr and a file: '%s'", c.r.error ? c.r.error : "");
	CHECK_NEAR(item(&c.r, "BM_a/8", "time", &n), 158e-9, 1e-20, "158 ns in seconds, item from group 1");
	CHECK_NEAR(item(&c.r, "BM_b/8", "time", &n), 11.9e-6, 1e-18, "11.9 us");
	CHECK_NEAR(item(&c.r, "BM_c", "time", &n), 1.41e-3, 1e-15, "1.41 ms");
	CHECK_NEAR(metric(&c.r, "iops"), 16100, 1e-9, "IOPS=16.1k from stderr, a count");
	CHECK_NEAR(metric(&c.r, "bw"), 62.9 * 1048576 / 1e6, 1e-9, "MiB/s into MB/s");
	CHECK_NEAR(metric(&c.r, "mean"), 2500, 1e-9, "from the file the command wrote, in ms");
	result_release(&c.r);
	unlink("out-0123456789abcdef.txt");

	re[0].unit = NULL;
	run_regex(&c, argv, 3, re, 1);
	CHECK_INT(c.r.status, RESULT_INVALID, "a value with a unit where none is declared");
	CHECK_STR(c.r.error, "metric 'time': '158 ns': not a number (declare its unit: unit: ...) (stdout line 1: "
		  "'BM_a/8 158 ns')", "says so, with the line");
	result_release(&c.r);

	re[1].unit = "s";
	run_regex(&c, argv, 3, re + 1, 1);
	CHECK_STR(c.r.error, "metric 'iops': '16.1k': 'k' is not a unit of 's' (stderr line 1: 'read: "
		  "IOPS=16.1k, BW=62.9MiB/s')", "a unit that does not convert");
	result_release(&c.r);

	ct_init(&c, quiet, 3, METRICS_REGEX);
	c.s.regex = re + 3;
	c.s.nregex = 1;
	c.t.key = "nowhere/x";
	unlink("out-0123456789abcdef.txt");
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "cannot read 'out-nowhere/x.txt', which "
	      "the command was to write"), "a file the command did not write: '%s'", c.r.error);
	result_release(&c.r);
}

/* A metric the spec declares that is missing or not a finite number fails the cell, naming the line. */
static void test_strict_metrics(void)
{
	static const struct {
		const char *line, *error;
	} bad[] = {
		{ "{\"x\": NaN}", "metrics: not JSON: expected a value" },
		{ "{\"x\": 1e999}", "metrics: not JSON: number out of range" },
		{ "{\"x\": 1", "metrics: not JSON: " },
		{ "{\"x\": 1}garbage", "metrics: not JSON: text after the JSON value" },
		{ "{\"x\": 1, \"x\": 2}", "metrics: not JSON: duplicate key 'x'" },
		{ "{\"x\": null}", "metric 'x' is null, not a number" },
		/* A document's top level is no record: nested or pretty-printed, it is read by path. */
		{ "{\"jobs\": [{\"iops\": 7}], \"timestamp\": 5}", "metrics: json reads flat objects, and 'jobs' is "
		  "an array: read a nested document with a path for each metric (metrics: {json: ., NAME: "
		  "jobs.KEY})" },
		{ "{\"x\": 1,\n \"y\": 2}", "metrics: json reads one JSON object a line, and this one spans lines 2 "
		  "to 3: read a document with a path for each metric (metrics: {json: ., NAME: a.b[0]})" },
	};
	char *argv[] = { "sh", PROG, "bad", NULL };
	char *none[] = { "sh", PROG, "none" };
	char *text[] = { "sh", PROG, "text" };
	struct spec_regex word[] = {
		{ .name = "time", .pattern = "time: ([0-9.]+)", .groups = 1, .match = MATCH_FIRST },
		{ .name = "word", .pattern = "time: ([a-z]+)", .groups = 1 },
	};
	struct spec_regex never[] = {
		{ .name = "time", .pattern = "time: ([0-9.]+)", .groups = 1, .match = MATCH_LAST },
		{ .name = "never", .pattern = "zzz([0-9]+)", .groups = 1 },
	};
	struct ct c;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char want[200];

		argv[3] = (char *)bad[i].line;
		ct_init(&c, argv, 4, METRICS_JSON);
		command_run(&c.ex, &c.t, &c.r);
		snprintf(want, sizeof(want), "(stdout line 2: '%.*s')", (int)strcspn(bad[i].line, "\n"), bad[i].line);
		CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, bad[i].error) &&
		      strstr(c.r.error, want), "%s fails the cell: '%s'", bad[i].line, c.r.error);
		result_release(&c.r);
	}
	ct_init(&c, none, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_STR(c.r.error, "metrics: json, but the command printed no JSON object line (1 lines of stdout)",
		  "metrics: json and no JSON line fails");
	result_release(&c.r);

	run_regex(&c, text, 3, word, 2);
	CHECK_STR(c.r.error, "metric 'word': 'bogus': not a number (stdout line 3: 'throughput=10.0 "
		  "GB/s time: bogus')", "a capture that is not a number fails, naming the line");
	result_release(&c.r);

	run_regex(&c, text, 3, never, 2);
	CHECK_STR(c.r.error, "metric 'never': regex 'zzz([0-9]+)' matched no line of stdout (3 lines)",
		  "a declared regex that never matches fails");
	result_release(&c.r);
}

/* What a program prints cannot hang the reader or lose a value: a regex that backtracks past its limits
 * fails at once naming it and the line; a line over the regex reader's limit fails, naming it; progress
 * overwritten with '\r' is not a match; a sum past the largest double is averaged; a value no double holds
 * fails; a subnormal value is kept. */
static void test_bounded(void)
{
	char *hard[] = { "sh", "-c", "head -c 3000 /dev/zero | tr '\\0' a; echo cb" };
	char *longl[] = { "sh", "-c", "head -c 1100000 /dev/zero | tr '\\0' x; echo; echo t=5" };
	char *cr[] = { "sh", "-c", "printf 'x=1 MB/s\\rx=2 MB/s\\rx=3 MB/s\\r\\n x=44 GB/s\\r 7\\r\\n'" };
	char *big[] = { "sh", "-c", "echo '{\"v\": 1.7e308}'; echo '{\"v\": 1.7e308, \"w\": -1.7e308}'" };
	char *tiny[] = { "sh", "-c", "echo '{\"v\": 4.9e-324}'" };
	char *gb[] = { "sh", "-c", "echo 'size: 1e308 GB'" };
	struct spec_regex rx_hard[] = { { .name = "x", .pattern = "(a+a+)+b", .groups = 1 } };
	struct spec_regex rx_t[] = { { .name = "t", .pattern = "t=([0-9]+)", .groups = 1 } };
	struct spec_regex rx_cr[] = { { .name = "x", .pattern = "x=([0-9]+ MB/s)", .groups = 1, .unit = "B/s" },
				      { .name = "y", .pattern = "^ ([0-9]+)=44 GB/s$", .groups = 1 } };
	struct spec_regex rx_gb[] = { { .name = "size", .pattern = "size: (.*)", .groups = 1, .unit = "B" } };
	struct ct c;

	run_regex(&c, hard, 3, rx_hard, 1);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "metric 'x': regex '(a+a+)+b' "
	      "stopped at its limits (match limit exceeded): it backtracks too much on this line (stdout line 1: "
	      "'aaaaaaaa"), "a regex past its limits fails the cell, naming it and the line: '%s'", c.r.error);
	result_release(&c.r);

	run_regex(&c, longl, 3, rx_t, 1);
	CHECK_STR(c.r.error, "metric 't': stdout line 1 is over 1 MiB, the longest line a regex reads",
		  "a line over the limit fails, never skipped");
	result_release(&c.r);

	run_regex(&c, cr, 3, rx_cr, 2);
	CHECK_INT(c.r.status, RESULT_OK, "progress overwritten with \\r: one line, one match");
	CHECK_NEAR(metric(&c.r, "x"), 3e6, 0, "the text after the last \\r is the line");
	CHECK_NEAR(metric(&c.r, "y"), 7, 0, "and overwrites the start of what was there, as on a terminal");
	result_release(&c.r);

	ct_init(&c, big, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_OK, "values near the largest double");
	CHECK_NEAR(metric(&c.r, "v"), 1.7e308, 0, "two values of 1.7e308 average to 1.7e308, not inf");
	CHECK_NEAR(metric(&c.r, "w"), -1.7e308, 0, "and one of -1.7e308 is kept");
	result_release(&c.r);

	ct_init(&c, tiny, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(metric(&c.r, "v") == 4.9e-324, "a subnormal value is kept: %g", metric(&c.r, "v"));
	result_release(&c.r);

	run_regex(&c, gb, 3, rx_gb, 1);
	CHECK_STR(c.r.error, "metric 'size': '1e308 GB': out of range in 'B' (over 1.8e308) (stdout line 1: "
		  "'size: 1e308 GB')", "a value no double holds in the declared unit fails, naming it");
	result_release(&c.r);
}

/* The file path holds text; the command that prints it. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

#define GBENCH_JSON "gbench.json"

/* A Google Benchmark document: context, then records of iterations (a name repeated) and aggregates. */
static const char gbench[] =
	"{\n  \"context\": {\"date\": \"2024\", \"num_cpus\": 2, \"caches\": [{\"size\": 32768}]},\n"
	"  \"benchmarks\": [\n"
	"    {\"name\": \"BM_Sum/1024\", \"run_type\": \"iteration\", \"real_time\": 1160.0, \"cpu_time\": 1150.0,\n"
	"     \"time_unit\": \"ns\"},\n"
	"    {\"name\": \"BM_Sum/1024\", \"run_type\": \"iteration\", \"real_time\": 1167.0, \"cpu_time\": 1157.0,\n"
	"     \"time_unit\": \"ns\"},\n"
	"    {\"name\": \"BM_Sum/1024_mean\", \"run_type\": \"aggregate\", \"real_time\": 1163.5,\n"
	"     \"cpu_time\": 1153.5, \"time_unit\": \"ns\"},\n"
	"    {\"name\": \"BM_Big\", \"run_type\": \"iteration\", \"real_time\": 2.5, \"cpu_time\": 2.0,\n"
	"     \"time_unit\": \"ms\"}\n"
	"  ]\n}\n";

static void json_spec(struct ct *c, char **argv, int argc, const char *records, const char *item,
		      struct spec_jmetric *jm, int n)
{
	ct_init(c, argv, argc, METRICS_SELECT);
	c->s.json_records = (char *)records;
	c->s.json_item = (char *)item;
	c->s.jmetrics = jm;
	c->s.njmetrics = n;
}

/* JSON documents: records and values by path, units from a field, items, and what fails naming the path. */
static void test_json_select(void)
{
	char *argv[] = { "cat", GBENCH_JSON };
	struct spec_jmetric jm[] = {
		{ .name = "real_time", .path = "real_time", .unit = "s", .unit_path = "time_unit" },
		{ .name = "cpu", .path = "cpu_time" },
	};
	struct ct c;
	int n;

	write_file(GBENCH_JSON, gbench);
	json_spec(&c, argv, 2, "benchmarks[*]", "name", jm, 2);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK, "a multi-line document: '%s'", c.r.error ? c.r.error : "");
	CHECK_NEAR(item(&c.r, "BM_Sum/1024", "real_time", &n), 1163.5e-9, 1e-18,
		   "two repetitions of one name: their mean, in seconds");
	CHECK_INT(n, 1, "one row for the name");
	CHECK_NEAR(item(&c.r, "BM_Sum/1024_mean", "real_time", &n), 1163.5e-9, 1e-18, "the aggregate: its own item");
	CHECK_NEAR(item(&c.r, "BM_Big", "real_time", &n), 2.5e-3, 1e-15, "ms by its time_unit");
	CHECK_NEAR(item(&c.r, "BM_Big", "cpu", &n), 2.0, 0, "no unit declared: as written");
	CHECK_INT(c.r.nitems, 6, "three items, two metrics");
	result_release(&c.r);

	json_spec(&c, argv, 2, "benchmarks[run_type=iteration]", "name", jm, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK && c.r.nitems == 2, "a filter keeps the iterations: %zu items", c.r.nitems);
	result_release(&c.r);

	json_spec(&c, argv, 2, "benchmarks[*]", NULL, jm, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_INVALID, "several records and no item");
	CHECK_STR(c.r.error, "metrics: json 'benchmarks[*]' selected 4 records in stdout: name each with item: "
		  "PATH, or say how they make one value with combine: mean, sum, max or min", "says how to name them");
	result_release(&c.r);

	json_spec(&c, argv, 2, "benchmarks[-1]", NULL, jm, 2);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK && c.r.nitems == 0, "[-1]: the last record, no item");
	CHECK_NEAR(metric(&c.r, "real_time"), 2.5e-3, 1e-15, "a cell metric");
	result_release(&c.r);

	json_spec(&c, argv, 2, "benchmarks[*]", "name", jm + 1, 1);
	jm[1].path = "cpu_tme";
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_INVALID, "a missing value: no run can bring it");
	CHECK(c.r.error && !strncmp(c.r.error, "metric 'cpu': 'cpu_tme' is missing in record 1 of 'benchmarks[*]' "
	      "(stdout line 1: {\"name\":\"BM_Sum/1024\"", 80), "names the path and the record: '%s'", c.r.error);
	result_release(&c.r);

	jm[1].path = "context";
	json_spec(&c, argv, 2, ".", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.error && strstr(c.r.error, "metric 'cpu': 'context' is an object, not a number in record 1 of "
	      "'.'"), "a nested value is no number: '%s'", c.r.error);
	result_release(&c.r);

	jm[1].path = "context.caches[0].size";
	json_spec(&c, argv, 2, ".", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_NEAR(metric(&c.r, "cpu"), 32768, 0, "'.': the document is the record; a nested path");
	result_release(&c.r);

	jm[1].path = "context.date";
	json_spec(&c, argv, 2, ".", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_NEAR(metric(&c.r, "cpu"), 2024, 0, "a string that is a number");
	result_release(&c.r);

	jm[1].path = "benchmarks[run_type=aggregate].time_unit";
	json_spec(&c, argv, 2, ".", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.error && strstr(c.r.error, "'benchmarks[run_type=aggregate].time_unit' is \"ns\": not a number"),
	      "a string that is no number: '%s'", c.r.error);
	result_release(&c.r);

	jm[1].path = "benchmarks[run_type=iteration].name";
	json_spec(&c, argv, 2, ".", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.error && strstr(c.r.error, "selects 3 values"), "a filter matching three: '%s'", c.r.error);
	result_release(&c.r);

	json_spec(&c, argv, 2, "results[*]", NULL, jm + 1, 1);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_STR(c.r.error, "metrics: json 'results[*]' selected no record in stdout (1 JSON documents)",
		  "no record");
	result_release(&c.r);
	unlink(GBENCH_JSON);
}

/* argv with the records [*] of the file {cell}.json (cell "cellfile"), items named by k, metric jm. */
static void json_file_run(struct ct *c, char **argv, int argc, struct spec_jmetric *jm)
{
	json_spec(c, argv, argc, "[*]", "k", jm, 1);
	c->s.json_src = (struct spec_source){ FROM_FILE, "{cell}.json" };
	c->t.key = "cellfile";
	command_run(&c->ex, &c->t, &c->r);
}

/* JSON from stderr and from a file the command writes; a file left by an earlier run is not read. */
static void test_json_sources(void)
{
	char *err[] = { "sh", "-c", "echo log; echo '{\"x\": 1,' >&2; echo ' \"y\": {\"v\": 7} }' >&2" };
	char *file[] = { "sh", "-c", "echo '[{\"k\": \"a\", \"v\": 2}, {\"k\": 3, \"v\": 4}]' >{cell}.json" };
	char *nothing[] = { "true" };
	struct spec_jmetric jm[] = { { .name = "y", .path = "y.v" }, { .name = "v", .path = "v" } };
	struct ct c;
	int n;

	json_spec(&c, err, 3, ".", NULL, jm, 1);
	c.s.json_src.from = FROM_STDERR;
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK, "a document on stderr: '%s'", c.r.error ? c.r.error : "");
	CHECK_NEAR(metric(&c.r, "y"), 7, 0, "its value");
	result_release(&c.r);

	json_file_run(&c, file, 3, jm + 1);
	CHECK(c.r.status == RESULT_OK, "a document in a file: '%s'", c.r.error ? c.r.error : "");
	CHECK_NEAR(item(&c.r, "a", "v", &n), 2, 0, "a top-level array's records");
	CHECK_NEAR(item(&c.r, "3", "v", &n), 4, 0, "a number names an item");
	result_release(&c.r);

	json_file_run(&c, nothing, 1, jm + 1);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "cannot read "
	      "'cellfile.json', which the command was to write: No such file"),
	      "the file the last run left is removed before the run: '%s'", c.r.error);
	result_release(&c.r);
}

/* runs: N under the stopping rule, warm-up runs, prepare and cleanup around each run, and their usage. */
/* Several records of one item in one run combine as combine: says, then each run's value is averaged; the
 * default's averaging is said in the result's note. Run n prints item a twice (n, 10 n) and b once (7). */
static void test_combine(void)
{
	char *argv[] = { "sh", "-c", "n=$(($(cat n 2>/dev/null || echo 0) + 1)); echo $n >n; "
				     "echo \"{\\\"item\\\": \\\"a\\\", \\\"v\\\": $n}\"; "
				     "echo \"{\\\"item\\\": \\\"a\\\", \\\"v\\\": $((10 * n))}\"; "
				     "echo '{\"item\": \"b\", \"v\": 7}'" };
	char *big[] = { "sh", "-c", "echo '{\"v\": 1e308}'; echo '{\"v\": 1e308}'" };
	static const struct { enum spec_combine how; int said; double a; const char *note; } want[] = {
		{ COMBINE_MEAN, 0, (5.5 + 11) / 2, "2 records of item a averaged" },
		{ COMBINE_MEAN, 1, (5.5 + 11) / 2, NULL },
		{ COMBINE_SUM, 1, (11 + 22) / 2.0, NULL },
		{ COMBINE_MAX, 1, (10 + 20) / 2.0, NULL },
		{ COMBINE_MIN, 1, (1 + 2) / 2.0, NULL },
	};
	struct ct c;
	int n;

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		unlink("n");
		ct_init(&c, argv, 3, METRICS_JSON);
		c.s.runs = 2;
		c.s.runs_exact = 1;
		c.s.combine = want[i].how;
		c.s.combine_said = want[i].said;
		command_run(&c.ex, &c.t, &c.r);
		CHECK(c.r.status == RESULT_OK && c.r.nsamples == 2, "combine %d: '%s'", (int)want[i].how,
		      c.r.error ? c.r.error : "");
		CHECK(fabs(item(&c.r, "a", "v", &n) - want[i].a) < 1e-12, "combine %d: each run's records of a "
		      "combined, the runs averaged: %g", (int)want[i].how, item(&c.r, "a", "v", &n));
		CHECK_NEAR(item(&c.r, "b", "v", &n), 7, 0, "one record of b: its value");
		CHECK(want[i].note ? c.r.note && !strcmp(c.r.note, want[i].note) : !c.r.note,
		      "combine %d said %d: the note '%s'", (int)want[i].how, want[i].said, c.r.note ? c.r.note : "");
		result_release(&c.r);
	}

	unlink("n");
	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.combine = COMBINE_ERROR;
	c.s.combine_said = 1;
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_INVALID, "combine: error and two records: no run can help");
	CHECK_STR(c.r.error, "metric 'v': a second record of item 'a' in one run, and combine: error refuses it "
		  "(mean, sum, max or min combines them) (stdout line 2: '{\"item\": \"a\", \"v\": 10}')",
		  "names the record's line");
	result_release(&c.r);
	unlink("n");

	ct_init(&c, big, 3, METRICS_JSON);
	c.s.combine = COMBINE_SUM;
	c.s.combine_said = 1;
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_INVALID && c.r.error && strstr(c.r.error, "metric 'v': the sum of 2 records in "
	      "one run is past 1.79769e+308"), "a sum past the largest double fails: '%s'", c.r.error);
	result_release(&c.r);
	ct_init(&c, big, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK && c.r.note && !strcmp(c.r.note, "2 records averaged"),
	      "the cell's own two records averaged, said: '%s'", c.r.note ? c.r.note : "");
	CHECK_NEAR(metric(&c.r, "v"), 1e308, 1e296, "their mean never overflows");
	result_release(&c.r);
}

static void test_runs(void)
{
	char *argv[] = { "sh", "-c", "echo run >>runs.log; "
				     "echo '{\"v\": 1}'; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done" };
	char *prepare[] = { "sh", "-c", "echo prepare >>runs.log" };
	char *cleanup[] = { "sh", "-c", "echo cleanup >>runs.log" };
	char *fail[] = { "sh", "-c", "echo no space left >&2; exit 3" };
	struct strbuf log = STRBUF_INIT;
	struct ct c;

	unlink("runs.log");
	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.runs = 4;
	c.s.warmup_runs = 2;
	c.s.prepare = prepare;
	c.s.nprepare = 3;
	c.s.cleanup = cleanup;
	c.s.ncleanup = 3;
	c.s.timing = (struct spec_timing){ .min_time = 0, .max_noise = 0, .timeout = 100, .max_samples = 5 };
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.status == RESULT_OK, "runs: '%s'", c.r.error ? c.r.error : "");
	CHECK_INT(c.r.nsamples, 5, "noise 0 is never met: max_samples 5 ends the runs");
	CHECK_INT(c.r.stop, STOP_MAX_SAMPLES, "and is the rule stored");
	CHECK_INT(c.r.launches, 1, "a run a sample");
	CHECK(c.r.warmup > 0, "the warm-up runs' time: %g s", c.r.warmup);
	CHECK(c.r.usage && c.r.usage[0].user + c.r.usage[0].sys > 0 && c.r.usage[4].user + c.r.usage[4].sys > 0,
	      "every run's CPU time: %g + %g s", c.r.usage ? c.r.usage[4].user : -1, c.r.usage ? c.r.usage[4].sys : -1);
	CHECK(c.r.usage && c.r.usage[2].rss > 100000, "every run's peak RSS: %g bytes", c.r.usage ? c.r.usage[2].rss : -1);
	CHECK_NEAR(metric(&c.r, "v"), 1, 0, "metrics of the kept runs");
	sb_read_file(&log, "runs.log");
	CHECK_STR(log.buf, "prepare\nrun\ncleanup\nprepare\nrun\ncleanup\nprepare\nrun\ncleanup\nprepare\nrun\ncleanup\n"
		  "prepare\nrun\ncleanup\nprepare\nrun\ncleanup\nprepare\nrun\ncleanup\n",
		  "2 warm-up and 5 kept runs, each between prepare and cleanup");
	sb_release(&log);
	result_release(&c.r);

	/* The timeout ends the runs only once runs: N are in. */
	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.runs = 3;
	c.s.timing = (struct spec_timing){ .min_time = 0, .max_noise = 0, .timeout = 1e-9, .max_samples = 100 };
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.nsamples == 3 && c.r.stop == STOP_TIMEOUT, "3 runs, then the timeout: %d, stop %d",
	      c.r.nsamples, (int)c.r.stop);
	CHECK(isnan(c.r.warmup), "no warm-up run");
	result_release(&c.r);

	/* runs: N exactly (runs_exact): neither the stopping rule nor its deadline nor max_samples counts. */
	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.runs = 7;
	c.s.runs_exact = 1;
	c.s.timing = (struct spec_timing){ .min_time = 0, .max_noise = 0, .timeout = 1e-9, .max_samples = 5 };
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.nsamples == 7 && c.r.stop == STOP_COUNT, "exactly 7 runs, the count stored: %d, stop %d",
	      c.r.nsamples, (int)c.r.stop);
	CHECK(c.r.noise_ok == 1 && c.r.precise == 1, "no noise target or precision was asked");
	result_release(&c.r);

	/* Without runs: one run, no stopping rule, no noise target. */
	ct_init(&c, argv, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK(c.r.nsamples == 1 && c.r.stop == STOP_NONE && c.r.launches == 0 && c.r.usage, "one run, usage kept");
	result_release(&c.r);

	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.prepare = fail;
	c.s.nprepare = 3;
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_ERROR, "a failed prepare fails the cell, to be tried again");
	CHECK_STR(c.r.error, "prepare: exit 3: no space left", "saying so");
	CHECK_INT(c.r.nsamples, 0, "no run");
	result_release(&c.r);

	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.cleanup = fail;
	c.s.ncleanup = 3;
	command_run(&c.ex, &c.t, &c.r);
	CHECK_STR(c.r.error, "cleanup: exit 3: no space left", "a failed cleanup too");
	result_release(&c.r);
	unlink("runs.log");
}

/* The longest a cell may take, which the worker waits for before it takes its executor for hung. */
static void test_limit(void)
{
	char *argv[] = { "x", "{item}" }, *items[] = { "a", "b", "c" }, *helper[] = { "sync" };
	struct ct c;

	ct_init(&c, argv, 2, METRICS_NONE);
	c.s.timeout = 10;
	c.s.runs = 4;
	c.s.warmup_runs = 2;
	c.s.prepare = c.s.cleanup = helper;
	c.s.nprepare = c.s.ncleanup = 1;
	c.s.timing.timeout = 15;
	c.s.items = items;
	c.s.nitems = 3;
	/* per item: (2 warm-up + 4 runs + 1 past the deadline) x (10 s + 2 s SIGKILL grace + 1 s drain) x 3
	 * programs (prepare, the run, cleanup), and timing's 15 s */
	CHECK_NEAR(command_limit(&c.s), 3 * (7 * 13 * 3 + 15), 1e-12, "three items of runs, warm-up, helpers");
	c.s.command[1] = "x";
	c.s.runs = 0;
	c.s.warmup_runs = 0;
	c.s.prepare = c.s.cleanup = NULL;
	c.s.nprepare = c.s.ncleanup = 0;
	CHECK_NEAR(command_limit(&c.s), 13, 1e-12, "one run, no items: its timeout and graces");
	c.s.timeout = 0;
	CHECK(isinf(command_limit(&c.s)), "no timeout, no limit");
	result_release(&c.r);
}

static void test_capture(void)
{
	char *argv[] = { "sh", PROG, "many", "10000" };
	const char *last = "error line 10000 with some padding to make it longer\n";
	struct ct c;
	size_t n;

	ct_init(&c, argv, 4, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_OK, "a command with long output runs");
	CHECK_NEAR(metric(&c.r, "x"), 5000.5, 1e-9, "every line is parsed, not only the captured ones");
	CHECK(c.r.out && strlen(c.r.out) == COMMAND_CAPTURE_MAX, "stdout capped at %d: %zu",
	      COMMAND_CAPTURE_MAX, c.r.out ? strlen(c.r.out) : 0);
	CHECK(c.r.out && !strncmp(c.r.out, "{\"x\": 1}\n{\"x\": 2}\n", 18), "stdout keeps the head");
	n = c.r.err ? strlen(c.r.err) : 0;
	CHECK_INT(n, COMMAND_CAPTURE_MAX, "stderr capped");
	CHECK(n > strlen(last) && !strcmp(c.r.err + n - strlen(last), last), "stderr keeps the tail");
	result_release(&c.r);
}

static void test_failures(void)
{
	char *fail[] = { "sh", "-c", "echo out; echo first >&2; echo 'bad thing happened' >&2; exit 3" };
	char *quiet[] = { "sh", "-c", "exit 4" };
	char *sig[] = { "sh", "-c", "kill -SEGV $$" };
	char *missing[] = { "/nonexistent/sweep-prog", "x" };
	char *nopath[] = { "sweep-no-such-program-on-path" };
	struct ct c;

	ct_init(&c, fail, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_ERROR, "exit 3 is an error");
	CHECK_STR(c.r.error, "exit 3: bad thing happened", "error is the exit code and last stderr line");
	CHECK_STR(c.r.err, "first\nbad thing happened\n", "stderr captured");
	CHECK_STR(c.r.out, "out\n", "stdout captured");
	result_release(&c.r);

	ct_init(&c, quiet, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_STR(c.r.error, "exit 4", "exit without stderr");
	result_release(&c.r);

	ct_init(&c, sig, 3, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_ERROR, "a signal is an error");
	CHECK_STR(c.r.error, "killed by signal 11 (SIGSEGV)", "signal message");
	result_release(&c.r);

	ct_init(&c, missing, 2, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_ERROR, "a missing program is an error");
	CHECK_STR(c.r.error, "cannot run '/nonexistent/sweep-prog': No such file or directory",
		  "missing path");
	CHECK_INT(c.r.nsamples, 0, "and has no sample");
	result_release(&c.r);

	ct_init(&c, nopath, 1, METRICS_JSON);
	command_run(&c.ex, &c.t, &c.r);
	CHECK_STR(c.r.error, "cannot run 'sweep-no-such-program-on-path': No such file or directory",
		  "a name not on PATH");
	result_release(&c.r);
}

/* pid's exit status once it is gone (we are its subreaper), or -1 if it is still alive after 3 s. */
static int reap(pid_t pid)
{
	int st, i;

	for (i = 0; i < 300; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	return -1;
}

static void test_timeout(void)
{
	/* The shell and its background child both ignore SIGTERM: only the SIGKILL 2 s later ends them. */
	char *stubborn[] = { "sh", "-c", "trap '' TERM; sleep 100 & echo $!; echo started >&2; wait" };
	char *polite[] = { "sh", "-c", "sleep 100 & echo $!; wait" };
	char *leave[] = { "sh", "-c", "sleep 100 & echo $!" };
	double start, took;
	struct ct c;
	long gpid;
	int st;

	/* Orphaned grandchildren come to this process, so the test can see how they died. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	ct_init(&c, stubborn, 3, METRICS_NONE);
	c.s.timeout = 1;
	start = now_mono();
	command_run(&c.ex, &c.t, &c.r);
	took = now_mono() - start;
	CHECK_INT(c.r.status, RESULT_TIMEOUT, "a command past its timeout is a timeout");
	CHECK(c.r.error && strstr(c.r.error, "killed after 1 s") && strstr(c.r.error, "started"),
	      "timeout message with the last stderr line: '%s'", c.r.error);
	/* The lower bound is the rule; the upper one is far below the 100 s the group would live. */
	CHECK(took >= 3 && took < 30, "SIGTERM at 1 s, SIGKILL 2 s later: %.2f s", took);
	gpid = c.r.out ? atol(c.r.out) : 0;
	CHECK(gpid > 0, "the grandchild's pid was printed: %ld", gpid);
	if (gpid > 0) {
		st = reap(gpid);
		CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		      "the grandchild that ignored SIGTERM died of SIGKILL (status 0x%x)", st);
	}
	result_release(&c.r);

	ct_init(&c, polite, 3, METRICS_NONE);
	c.s.timeout = 0.5;
	start = now_mono();
	command_run(&c.ex, &c.t, &c.r);
	took = now_mono() - start;
	CHECK_INT(c.r.status, RESULT_TIMEOUT, "timeout of a group that obeys SIGTERM");
	CHECK(took >= 0.5 && took < 30, "ends at SIGTERM, not at SIGKILL's 100 s: %.2f s", took);
	gpid = c.r.out ? atol(c.r.out) : 0;
	if (gpid > 0) {
		st = reap(gpid);
		CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		      "the grandchild died of SIGTERM (status 0x%x)", st);
	} else {
		CHECK(0, "the grandchild's pid was printed");
	}
	result_release(&c.r);

	/* A command that exits leaving a child holding its stdout: ok, and the child is killed. */
	ct_init(&c, leave, 3, METRICS_NONE);
	start = now_mono();
	command_run(&c.ex, &c.t, &c.r);
	took = now_mono() - start;
	CHECK_INT(c.r.status, RESULT_OK, "a command that leaves a background child is ok");
	CHECK(took < 30, "it does not wait for the background child's 100 s: %.2f s", took);
	CHECK(c.r.nsamples == 1 && c.r.samples[0] < 5, "the sample is the command's own time: %.3f s",
	      c.r.nsamples ? c.r.samples[0] : -1);
	gpid = c.r.out ? atol(c.r.out) : 0;
	if (gpid > 0) {
		st = reap(gpid);
		CHECK(st != -1 && WIFSIGNALED(st), "the left-over child was killed (status 0x%x)", st);
	} else {
		CHECK(0, "the background child's pid was printed");
	}
	result_release(&c.r);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

static void test_worker(void)
{
	char *argv[] = { "sh", "-c", "echo '{\"k\": {k}, \"cell\": \"{cell}\", \"host\": \"{host}\"}'; "
				     "echo \"{\\\"g\\\": $G}\"" };
	char *env_keys[] = { "G" }, *env_vals[] = { "{gpu}" };
	struct ct c;

	ct_init(&c, argv, 3, METRICS_JSON);
	c.s.env_keys = env_keys;
	c.s.env_vals = env_vals;
	c.s.nenv = 1;
	c.ex.gpu = 6;
	executor_run(&c.ex, &c.t, &c.r);
	CHECK_INT(c.r.status, RESULT_OK, "executor_run runs a command cell");
	CHECK_NEAR(metric(&c.r, "k"), 10, 0, "a parameter placeholder in argv");
	CHECK_NEAR(metric(&c.r, "g"), 6, 0, "{gpu} in the environment");
	CHECK(c.r.out && strstr(c.r.out, "\"cell\": \"0123456789abcdef\"") && strstr(c.r.out, "testhost"),
	      "cell and host placeholders: %s", c.r.out);
	CHECK_INT(c.r.cell, 5, "r->cell");
	CHECK_INT(c.r.worker, 1, "r->worker");
	CHECK(c.r.wall > 0 && c.r.started > 1e9, "r->wall and r->started");
	result_release(&c.r);
}

int main(void)
{
	char dir[] = "/tmp/test_command.XXXXXX";

	if (!realpath("tests/progs/metrics.sh", prog)) {
		CHECK(0, "tests/progs/metrics.sh not found: run from the repository root");
		return test_done();
	}
	if (!mkdtemp(dir) || chdir(dir)) {
		CHECK(0, "cannot make and enter %s", dir);
		return test_done();
	}
	test_expand();
	test_json();
	test_items();
	test_regex();
	test_regex_sources();
	test_json_select();
	test_json_sources();
	test_runs();
	test_combine();
	test_limit();
	test_strict_metrics();
	test_bounded();
	test_capture();
	test_failures();
	test_timeout();
	test_worker();
	if (chdir("/") || rmdir(dir))
		CHECK(0, "%s is left with files in it", dir);
	return test_done();
}
