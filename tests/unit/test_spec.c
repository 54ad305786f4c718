/* test_spec.c: spec parsing: every field of good specs, and every class of error with its line:col. */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "spec.h"
#include "util.h"
#include "../kernels/kernel.h"

static char errs[1 << 16];   /* what the last parse printed on stderr */

/* spec_parse of text as "t.yaml" with stderr captured into errs. */
static int parse(const char *text, struct spec *s)
{
	int rc;

	test_capture_start();
	rc = spec_parse("t.yaml", text, strlen(text), s);
	capture_into(errs, sizeof(errs));
	return rc;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* text fails to parse and one printed line is exactly "sweep: t.yaml:" want. */
#define CHECK_ERR(t_, w_) do { \
	struct spec s_; \
	char line_[512]; \
	int rc_ = parse((t_), &s_); \
	snprintf(line_, sizeof(line_), "sweep: t.yaml:%s\n", (w_)); \
	int ok_ = rc_ == -1 && strstr(errs, line_) != NULL; \
	CHECK(ok_, "error '%s'", (w_)); \
	if (!ok_) \
		printf("# rc %d, printed:\n%s", rc_, errs); \
	CHECK(s_.name == NULL && s_.axes == NULL && s_.text == NULL, "failed spec is released"); \
} while (0)

static const struct spec_axis *axis_named(const struct spec *s, const char *key)
{
	for (int a = 0; a < s->naxes; a++)
		for (int k = 0; k < s->axes[a].nkeys; k++)
			if (!strcmp(s->axes[a].keys[k], key))
				return &s->axes[a];
	return NULL;
}

static const char full[] =
	"# a command sweep using every feature\n"
	"sweep: grid-1.x_y\n"
	"command: [\"./bin/x\", \"--m\", \"{M}\", \"--n={N}\", \"{item}\", \"{gpu}\", \"{host}\", \"{cell}\","
	" \"{}\"]\n"
	"params:\n"
	"  dtype: [f32, \"f64\"]\n"
	"  M: [64, 256, 1024]\n"
	"  shape:\n"
	"    - {N: 1024, K: 1024}\n"
	"    - {K: 2048, N: 4096}\n"
	"  bytes: {from: 8, to: 8G, factor: 2}\n"
	"  lin: {from: 0, to: 1, step: 0.25}\n"
	"  iters: 5\n"
	"exclude:\n"
	"  - {dtype: f64, M: 1024}\n"
	"  - {iters: 5}\n"
	"repeat: 2\n"
	"order: interleave\n"
	"seed: 7\n"
	"timing: {precision: 0.002, min_time: 0.2, max_noise: 0.01, timeout: 5, max_samples: 40}\n"
	"min_runs: 3\n"
	"warmup: 2\n"
	"prepare: [sync, \"{M}\"]\n"
	"cleanup: [rm, -f, \"out-{item}.txt\"]\n"
	"per: host\n"
	"hosts: [a, b]\n"
	"gang: any\n"
	"max_attempts: 4\n"
	"control: {params: {dtype: f32, M: 256, N: 1024, K: 1024, bytes: 8, lin: 0, iters: 5}, every: 7}\n"
	"metrics: {from: stderr, tok_s: 'tok/s: ([0-9.]+)', ms: {regex: 'took ([0-9.]+ [a-z]+)', match: last,"
	" unit: ms, from: \"out-{item}.txt\"}}\n"
	"timeout: 30.5\n"
	"env: {CUDA_VISIBLE_DEVICES: \"{gpu}\", MODE: \"{dtype}-x\"}\n"
	"items: [x, y, z]\n"
	"db: other.db\n";

static void test_full(void)
{
	struct spec s;
	const struct spec_axis *a;
	int rc = parse(full, &s);

	CHECK_INT(rc, 0, "full spec parses");
	CHECK_STR(errs, "", "nothing printed");
	if (rc)
		return;
	CHECK_STR(s.path, "t.yaml", "path");
	CHECK(s.text && !strcmp(s.text, full), "text kept verbatim");
	CHECK(s.hash == hash64(HASH64_INIT, full, strlen(full)), "hash is hash64 of the text");
	CHECK_STR(s.name, "grid-1.x_y", "name");
	CHECK_STR(s.db, "other.db", "db given");
	CHECK(s.kernel == NULL, "no kernel");
	CHECK_INT(s.ncommand, 9, "argv length");
	CHECK_STR(s.command[0], "./bin/x", "argv[0]");
	CHECK_STR(s.command[3], "--n={N}", "argv[3] keeps its placeholder");
	CHECK_STR(s.command[8], "{}", "braces that are no placeholder are text");
	CHECK_INT(s.command_line, 3, "command line");
	CHECK_INT(s.command_col, 10, "command col");

	CHECK_INT(s.naxes, 6, "axes");
	a = &s.axes[0];
	CHECK_STR(a->keys[0], "dtype", "axis 0 key");
	CHECK_INT(a->nkeys, 1, "axis 0 one key");
	CHECK_INT(a->npoints, 2, "axis 0 points");
	CHECK_STR(a->vals[0].text, "f32", "dtype 0");
	CHECK_STR(a->vals[1].text, "f64", "dtype 1 (quoted)");
	CHECK_INT(a->vals[0].is_num + a->vals[1].is_num, 0, "strings are not numbers");
	CHECK_INT(a->line, 5, "axis 0 line");
	CHECK_INT(a->col, 10, "axis 0 col");
	a = &s.axes[1];
	CHECK_STR(a->keys[0], "M", "axis 1 key");
	CHECK_INT(a->npoints, 3, "M points");
	CHECK_STR(a->vals[2].text, "1024", "M 2");
	CHECK_INT(a->vals[0].is_num && a->vals[1].is_num && a->vals[2].is_num, 1, "M values are numbers");
	CHECK_INT(a->vals[1].line, 6, "M[1] line");
	CHECK_INT(a->vals[1].col, 11, "M[1] col");
	a = &s.axes[2];
	CHECK_INT(a->nkeys, 2, "zipped group keys");
	CHECK_STR(a->keys[0], "N", "group key 0");
	CHECK_STR(a->keys[1], "K", "group key 1");
	CHECK_INT(a->npoints, 2, "group points");
	CHECK_STR(a->vals[0].text, "1024", "point 0 N");
	CHECK_STR(a->vals[1].text, "1024", "point 0 K");
	CHECK_STR(a->vals[2].text, "4096", "point 1 N (written second)");
	CHECK_STR(a->vals[3].text, "2048", "point 1 K (written first)");
	CHECK_INT(a->vals[3].line, 9, "point 1 K line");
	CHECK_INT(a->vals[3].col, 11, "point 1 K col");
	a = &s.axes[3];
	CHECK_STR(a->keys[0], "bytes", "range key");
	CHECK_INT(a->npoints, 31, "8..8G by 2 has 31 points");
	CHECK_STR(a->vals[0].text, "8", "range first");
	CHECK_STR(a->vals[1].text, "16", "range second");
	CHECK_STR(a->vals[30].text, "8589934592", "range last is 8G, written as an integer");
	CHECK_INT(a->vals[30].is_num, 1, "range values are numbers");
	a = &s.axes[4];
	CHECK_INT(a->npoints, 5, "0..1 step 0.25 has 5 points");
	CHECK_STR(a->vals[0].text, "0", "step first");
	CHECK_STR(a->vals[1].text, "0.25", "step second");
	CHECK_STR(a->vals[4].text, "1", "step includes to");
	a = &s.axes[5];
	CHECK_STR(a->keys[0], "iters", "scalar axis key");
	CHECK_INT(a->npoints, 1, "scalar axis has one point");
	CHECK_STR(a->vals[0].text, "5", "scalar axis value");

	CHECK_INT(s.nexclude, 2, "excludes");
	CHECK_INT(s.exclude[0].n, 2, "exclude 0 keys");
	CHECK_STR(s.exclude[0].keys[0], "dtype", "exclude key 0");
	CHECK_STR(s.exclude[0].vals[0].text, "f64", "exclude val 0");
	CHECK_STR(s.exclude[0].keys[1], "M", "exclude key 1");
	CHECK_STR(s.exclude[0].vals[1].text, "1024", "exclude val 1");
	CHECK_INT(s.exclude[0].vals[1].is_num, 1, "exclude number");
	CHECK_INT(s.exclude[0].line, 14, "exclude line");
	CHECK_INT(s.exclude[0].col, 5, "exclude col");
	CHECK_INT(s.exclude[1].n, 1, "exclude 1 keys");

	CHECK_INT(s.repeat, 2, "repeat");
	CHECK_INT(s.order, ORDER_INTERLEAVE, "order");
	CHECK_INT(s.seed, 7, "seed");
	CHECK_NEAR(s.timing.precision, 0.002, 1e-12, "a command's precision");
	CHECK_NEAR(s.timing.min_time, 0.2, 1e-12, "min_time");
	CHECK_NEAR(s.timing.max_noise, 0.01, 1e-12, "max_noise");
	CHECK_NEAR(s.timing.timeout, 5, 1e-12, "timing timeout");
	CHECK_INT(s.timing.max_samples, 40, "max_samples");
	CHECK_INT(s.runs, 3, "runs");
	CHECK_INT(s.runs_exact, 0, "min_runs: at least, then the stopping rule");
	CHECK_INT(s.warmup_runs, 2, "warm-up runs");
	CHECK(s.nprepare == 2 && !strcmp(s.prepare[1], "{M}"), "prepare keeps its placeholder");
	CHECK(s.ncleanup == 3 && !strcmp(s.cleanup[2], "out-{item}.txt"), "cleanup");
	CHECK_INT(s.per, PER_HOST, "per");
	CHECK_INT(s.nhosts, 2, "hosts");
	CHECK_STR(s.hosts[1], "b", "host 1");
	CHECK_INT(s.gang, GANG_ANY, "gang");
	CHECK_INT(s.max_attempts, 4, "max_attempts");

	CHECK_INT(s.control.n, 7, "control params");
	CHECK_STR(json_obj_get(&s.control, "dtype"), "f32", "control dtype");
	CHECK_INT(json_obj_find(&s.control, "dtype")->type, JSON_STR, "control dtype is a string");
	CHECK_STR(json_obj_get(&s.control, "K"), "1024", "control K");
	CHECK_INT(json_obj_find(&s.control, "K")->type, JSON_NUM, "control K is a number");
	CHECK_INT(s.control_every, 7, "control every");

	CHECK_INT(s.metrics, METRICS_REGEX, "metrics regex");
	CHECK_INT(s.nregex, 2, "regexes");
	CHECK_STR(s.regex[0].name, "tok_s", "regex name");
	CHECK_STR(s.regex[0].pattern, "tok/s: ([0-9.]+)", "regex pattern");
	CHECK_STR(s.regex[1].name, "ms", "regex 1 name");
	CHECK(s.regex[0].src.from == FROM_STDERR && s.regex[0].match == MATCH_ONE && !s.regex[0].unit,
	      "regex 0 reads the metrics' from, one match, no unit");
	CHECK(s.regex[1].src.from == FROM_FILE && !strcmp(s.regex[1].src.path, "out-{item}.txt") &&
	      s.regex[1].match == MATCH_LAST && !strcmp(s.regex[1].unit, "ms"), "regex 1's own from, match, unit");
	CHECK_NEAR(s.timeout, 30.5, 1e-12, "command timeout");
	CHECK_INT(s.nenv, 2, "env");
	CHECK_STR(s.env_keys[0], "CUDA_VISIBLE_DEVICES", "env key");
	CHECK_STR(s.env_vals[0], "{gpu}", "env value keeps its placeholder");
	CHECK_STR(s.env_vals[1], "{dtype}-x", "env value 1");
	CHECK_INT(s.nitems, 3, "items");
	CHECK_STR(s.items[2], "z", "item 2");
	spec_release(&s);
	CHECK(s.axes == NULL && s.name == NULL && s.naxes == 0, "release empties the spec");
}

/* A kernel's timing keys, all of them. */
static void test_kernel_timing(void)
{
	struct spec s;
	int rc = parse("sweep: k\nkernel: sleep\ntiming: {precision: 0.002, min_samples: 3, min_time: 0.2, "
		       "max_noise: 0.01, timeout: 5, warmup: 0.1, max_warmup: 2, l2: hot, throttle: 0.5, "
		       "batch: 4}\n", &s);

	CHECK_INT(rc, 0, "kernel timing parses");
	if (rc)
		return;
	CHECK_NEAR(s.timing.precision, 0.002, 1e-12, "precision");
	CHECK_INT(s.timing.min_samples, 3, "min_samples");
	CHECK_NEAR(s.timing.min_time, 0.2, 1e-12, "min_time");
	CHECK_NEAR(s.timing.max_noise, 0.01, 1e-12, "max_noise");
	CHECK_NEAR(s.timing.timeout, 5, 1e-12, "timing timeout");
	CHECK_NEAR(s.timing.warmup, 0.1, 1e-12, "warmup");
	CHECK_NEAR(s.timing.max_warmup, 2, 1e-12, "max_warmup");
	CHECK_INT(s.timing.l2_hot, 1, "l2 hot");
	CHECK_NEAR(s.timing.throttle, 0.5, 1e-12, "throttle");
	CHECK_INT(s.timing.batch, 4, "batch");
	CHECK_INT(s.runs, 0, "no runs for a kernel");
	spec_release(&s);
	/* A command's min_samples is runs: the kernels' default of 10 is no bound on its max_samples. */
	rc = parse("sweep: c\ncommand: [x]\nmin_runs: 3\ntiming: {max_samples: 5}\n", &s);
	CHECK(rc == 0 && s.runs == 3 && !s.runs_exact && s.timing.max_samples == 5, "min_runs 3, max_samples 5: %s",
	      errs);
	if (!rc)
		spec_release(&s);
}

/* Which way a metric improves: better:, else a time unit lower, a rate per second higher, else unknown. */
static void test_metric_better(void)
{
	struct spec s;
	int rc = parse("sweep: b\ncommand: [x]\nmetrics: {lat: {regex: 'l=(.*)', unit: us},\n"
		       "  bw: {regex: 'b=(.*)', unit: GiB/s}, n: {regex: 'n=(.*)', unit: '1'}, plain: 'p=(.*)',\n"
		       "  hits: {regex: 'h=(.*)', better: higher}, t: {regex: 't=(.*)', unit: s, better: higher}}\n", &s);

	CHECK_INT(rc, 0, "regex metrics with better and units parse");
	CHECK_STR(errs, "", "nothing printed");
	if (rc)
		return;
	CHECK_INT(spec_metric_better(&s, "lat"), BETTER_LOWER, "a time unit: lower");
	CHECK_INT(spec_metric_better(&s, "bw"), BETTER_HIGHER, "a rate per second: higher");
	CHECK_INT(spec_metric_better(&s, "n"), 0, "a count: unknown");
	CHECK_INT(spec_metric_better(&s, "plain"), 0, "no unit: unknown");
	CHECK_INT(spec_metric_better(&s, "hits"), BETTER_HIGHER, "better: higher");
	CHECK_INT(spec_metric_better(&s, "t"), BETTER_HIGHER, "better: over the unit");
	CHECK_INT(spec_metric_better(&s, "nope"), 0, "not declared: unknown");
	spec_release(&s);
	rc = parse("sweep: b\ncommand: [x]\nmetrics: {json: '.', lat: {path: x, better: lower}}\n", &s);
	CHECK(!rc && spec_metric_better(&s, "lat") == BETTER_LOWER, "a json metric's better:");
	if (!rc)
		spec_release(&s);
}

/* metrics: {json: ...}: records, item and each metric's path, unit and unit path. */
static void test_json_metrics(void)
{
	struct spec s;
	int rc = parse("sweep: j\ncommand: [b, \"{n}\"]\nparams: {n: [1]}\n"
		       "metrics: {from: \"out-{n}.json\", json: \"benchmarks[*]\", item: name,\n"
		       "  real_time: {path: real_time, unit: s, unit_path: time_unit}, iops: \"jobs[0].read.iops\",\n"
		       "  t: \"summaries[tag=nv/cold/time/gpu/mean].data[name=value].value\"}\n", &s);

	CHECK_INT(rc, 0, "json metrics parse");
	CHECK_STR(errs, "", "nothing printed");
	if (rc)
		return;
	CHECK_INT(s.metrics, METRICS_SELECT, "selection form");
	CHECK(s.json_src.from == FROM_FILE && !strcmp(s.json_src.path, "out-{n}.json"), "from a file");
	CHECK_STR(s.json_records, "benchmarks[*]", "records");
	CHECK_STR(s.json_item, "name", "item");
	CHECK_INT(s.njmetrics, 3, "three metrics");
	CHECK(!strcmp(s.jmetrics[0].name, "real_time") && !strcmp(s.jmetrics[0].unit, "s") &&
	      !strcmp(s.jmetrics[0].unit_path, "time_unit"), "unit and unit path");
	CHECK(!strcmp(s.jmetrics[1].path, "jobs[0].read.iops") && !s.jmetrics[1].unit, "a path alone");
	CHECK_INT(s.nregex, 0, "no regex");
	spec_release(&s);

	rc = parse("sweep: j\ncommand: [fio]\nmetrics: {json: '.', iops: 'jobs[0].read.iops',\n"
		   "  iops_text: {regex: 'IOPS=([0-9.]+k?)', unit: '1'}}\n", &s);
	CHECK_INT(rc, 0, "a regex among json metrics");
	if (rc)
		return;
	CHECK(s.metrics == METRICS_SELECT && s.njmetrics == 1 && s.nregex == 1 &&
	      !strcmp(s.regex[0].name, "iops_text") && s.regex[0].src.from == FROM_STDOUT, "one of each");
	spec_release(&s);
}

static void test_defaults(void)
{
	struct spec s;
	int rc = parse("sweep: s\nkernel: sleep\n", &s);

	CHECK_INT(rc, 0, "minimal spec parses");
	if (rc)
		return;
	CHECK_STR(s.name, "s", "name");
	CHECK_STR(s.db, "results/s.db", "db default");
	CHECK_STR(s.kernel, "sleep", "kernel");
	CHECK(s.command == NULL && s.ncommand == 0, "no command");
	/* The kernel's defaults are axes of one point each, typed as if written: every cell names them. */
	CHECK_INT(s.naxes, 2, "sleep's two defaults are axes");
	if (s.naxes == 2) {
		CHECK_STR(s.axes[0].keys[0], "ms", "first default");
		CHECK_STR(s.axes[0].vals[0].text, "1", "its value");
		CHECK_INT(s.axes[0].vals[0].is_num, 1, "a number");
		CHECK_STR(s.axes[1].keys[0], "jitter", "second default");
	}
	CHECK_INT(s.nexclude, 0, "no excludes");
	CHECK_INT(s.repeat, 1, "repeat default");
	CHECK_INT(s.order, ORDER_SEQUENTIAL, "order default");
	CHECK_INT(s.seed, 1, "seed default");
	CHECK_NEAR(s.timing.precision, 0.005, 1e-12, "precision default: the median to +-0.5 %");
	CHECK_INT(s.timing.min_samples, 10, "min_samples default");
	CHECK_NEAR(s.timing.min_time, 0.02, 1e-12, "min_time default");
	CHECK_NEAR(s.timing.max_noise, 0, 0, "max_noise default: NVBench's rule off");
	CHECK(isinf(spec_noise_target(&s.timing)), "no noise target to miss by default");
	CHECK_NEAR(s.timing.timeout, 15, 1e-12, "timing timeout default");
	CHECK_NEAR(s.timing.warmup, 0.05, 1e-12, "warmup default");
	CHECK_NEAR(s.timing.max_warmup, 1, 1e-12, "max_warmup default");
	CHECK_INT(s.timing.l2_hot, 0, "l2 cold default");
	CHECK_NEAR(s.timing.throttle, 0.75, 1e-12, "throttle default");
	CHECK_INT(s.timing.batch, 0, "batch default: measure.c sizes batches");
	CHECK_INT(s.metrics, METRICS_NONE, "metrics default");
	CHECK_NEAR(s.timeout, 600, 1e-12, "command timeout default");
	CHECK(s.items == NULL && s.nitems == 0, "no items");
	CHECK(s.hosts == NULL && s.nhosts == 0, "all hosts");
	CHECK_INT(s.per, PER_ANY, "per default");
	CHECK_INT(s.gang, GANG_HOST, "gang default");
	CHECK_INT(s.max_attempts, 3, "max_attempts default");
	CHECK_INT((long long)s.control.n, 0, "no control");
	CHECK_INT(s.control_every, 20, "control every default");
	spec_release(&s);

	/* A warm-up asked for longer than the default bound raises the bound: defaults never conflict. */
	CHECK_INT(parse("sweep: a\nkernel: sleep\ntiming: {warmup: 2, min_time: 0.5}\n", &s), 0,
		  "warmup 2 without max_warmup");
	CHECK_NEAR(s.timing.max_warmup, 2, 0, "max_warmup follows warmup up");
	spec_release(&s);
}

/* Kernel parameters are typed: byte sizes become integers, integers are written as integers. */
static void test_kernel_types(void)
{
	struct spec s;
	int rc;

	rc = parse("sweep: c\nkernel: cpu.copy\n"
		   "params: {bytes: [\"64M\", 1 GiB, 4096, 1K, 2kb]}\n"
		   "exclude: [{bytes: 1G}]\n"
		   "control: {params: {bytes: 8M}}\n", &s);
	CHECK_INT(rc, 0, "cpu.copy spec parses");
	if (!rc) {
		CHECK_STR(s.axes[0].vals[0].text, "67108864", "64M in bytes");
		CHECK_INT(s.axes[0].vals[0].is_num, 1, "a byte size is a number");
		CHECK_STR(s.axes[0].vals[1].text, "1073741824", "1 GiB in bytes");
		CHECK_STR(s.axes[0].vals[2].text, "4096", "plain bytes");
		CHECK_STR(s.axes[0].vals[3].text, "1024", "1K");
		CHECK_STR(s.axes[0].vals[4].text, "2048", "2kb");
		CHECK_STR(s.exclude[0].vals[0].text, "1073741824", "exclude values are converted too");
		CHECK_STR(json_obj_get(&s.control, "bytes"), "8388608", "control values are converted too");
		CHECK_INT(json_obj_find(&s.control, "bytes")->type, JSON_NUM, "control bytes is a number");
		spec_release(&s);
	}

	rc = parse("sweep: g\nkernel: cpu.gemm\n"
		   "params:\n  M: [1e3, 256.0]\n  dtype: [f32, f64]\n"
		   "  K: {from: 1K, to: 4K, factor: 2}\n", &s);
	CHECK_INT(rc, 0, "cpu.gemm spec parses");
	if (!rc) {
		CHECK_STR(s.axes[0].vals[0].text, "1000", "1e3 as an integer");
		CHECK_STR(s.axes[0].vals[1].text, "256", "256.0 as an integer");
		CHECK_INT(s.axes[1].vals[1].is_num, 0, "dtype is a string");
		CHECK_INT(s.axes[2].npoints, 3, "1K..4K by 2");
		CHECK_STR(s.axes[2].vals[2].text, "4096", "range end");
		spec_release(&s);
	}

	rc = parse("sweep: s\nkernel: sleep\nparams: {ms: [0.5, 2], jitter: 0}\n", &s);
	CHECK_INT(rc, 0, "sleep spec parses");
	if (!rc) {
		CHECK_STR(s.axes[0].vals[0].text, "0.5", "float kept as written");
		CHECK_INT(s.axes[0].vals[0].is_num, 1, "float is a number");
		spec_release(&s);
	}

	/* A string parameter is a string even when it reads as a number. */
	rc = parse("sweep: f\nkernel: debug.fail\nparams: {on: [7], mode: ok}\n", &s);
	CHECK_INT(rc, 0, "debug.fail spec parses");
	if (!rc) {
		CHECK_STR(axis_named(&s, "on")->vals[0].text, "7", "string param text");
		CHECK_INT(axis_named(&s, "on")->vals[0].is_num, 0, "string param is no number");
		spec_release(&s);
	}
}

static void test_scalars_and_items(void)
{
	struct spec s;
	const struct spec_axis *a;
	int rc;

	rc = parse("sweep: n\ncommand: [x, \"{v}\", \"{item}\"]\n"
		   "params: {v: [1, \"1\", 1.5e3, abc, inf, .5, -2, true, 'x y']}\n"
		   "metrics: json\nitems: 30\n", &s);
	CHECK_INT(rc, 0, "scalar kinds parse");
	if (rc)
		return;
	a = &s.axes[0];
	CHECK_INT(a->npoints, 9, "values");
	CHECK_INT(a->vals[0].is_num, 1, "1 is a number");
	CHECK_INT(a->vals[1].is_num, 0, "quoted 1 is a string");
	CHECK_INT(a->vals[2].is_num, 1, "1.5e3 is a number");
	CHECK_STR(a->vals[2].text, "1.5e3", "numbers keep their spelling");
	CHECK_INT(a->vals[3].is_num, 0, "abc is a string");
	CHECK_INT(a->vals[4].is_num, 0, "inf is no JSON number");
	CHECK_INT(a->vals[5].is_num, 1, ".5 is a number");
	CHECK_INT(a->vals[6].is_num, 1, "-2 is a number");
	CHECK_INT(a->vals[7].is_num, 0, "true is not a number");
	CHECK_STR(a->vals[8].text, "x y", "single-quoted string");
	CHECK_INT(s.metrics, METRICS_JSON, "metrics json");
	CHECK_INT(s.nitems, 30, "items: 30");
	CHECK_STR(s.items[0], "0", "item 0");
	CHECK_STR(s.items[29], "29", "item 29");
	spec_release(&s);
}

static void test_load(void)
{
	char path[] = "/tmp/test_spec_XXXXXX";
	const char *text = "sweep: l\nkernel: sleep\nparams: {ms: [1, 2]}\n";
	struct spec s;
	int fd = mkstemp(path), rc;

	CHECK(fd >= 0, "temporary file");
	if (fd < 0)
		return;
	CHECK_INT(write(fd, text, strlen(text)), (long long)strlen(text), "write spec");
	close(fd);
	rc = spec_load(path, &s);
	CHECK_INT(rc, 0, "spec_load");
	if (!rc) {
		CHECK_STR(s.path, path, "path from spec_load");
		CHECK(s.text && !strcmp(s.text, text), "text from the file");
		CHECK_INT(s.axes[0].npoints, 2, "axis from the file");
		spec_release(&s);
	}
	unlink(path);

	test_capture_start();
	rc = spec_load("/nonexistent/x.yaml", &s);
	capture_into(errs, sizeof(errs));
	CHECK_INT(rc, -1, "missing file fails");
	CHECK(strstr(errs, "cannot open '/nonexistent/x.yaml'") != NULL, "missing file message");
}

static void test_errors(void)
{
	/* YAML syntax: libyaml's problem at its mark, with its context. */
	CHECK_ERR("sweep: a\nkernel: [sleep\n",
		  "3:1: did not find expected ',' or ']' (while parsing a flow sequence at 2:9)");
	CHECK_ERR("sweep: a\n  kernel: x\n", "2:9: mapping values are not allowed in this context");
	CHECK_ERR("sweep: a\nkernel: sleep\n---\nsweep: b\n",
		  "4:1: a second YAML document: a spec file holds one");
	CHECK_ERR("", "1:1: empty spec");
	CHECK_ERR("- a\n- b\n", "1:1: expected a mapping at the top level, got a list");

	/* Keys. */
	CHECK_ERR("sweep: a\ncommand: [x]\nkernal: sleep\n",
		  "3:1: unknown key 'kernal' (did you mean 'kernel'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nzzz: 1\n", "3:1: unknown key 'zzz'");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {min_sample: 3}\n",
		  "3:10: unknown key 'min_sample' in 'timing' (did you mean 'min_samples'?)");
	CHECK_ERR("sweep: a\nkernel: sleep\nrepeat: 1\nrepeat: 2\n",
		  "4:1: duplicate key 'repeat' (first at 3:1)");
	CHECK_ERR("kernel: sleep\n", "1:1: missing 'sweep' (the sweep's name)");
	CHECK_ERR("sweep: a\n", "1:1: missing 'kernel' or 'command'");
	CHECK_ERR("sweep: a\nkernel: sleep\ncommand: [x]\n",
		  "3:1: both 'kernel' and 'command' given: a sweep runs one or the other");
	/* Parameter names are identifiers: placeholders, --where and JSON paths name them. */
	CHECK_ERR("sweep: a\ncommand: [x, \"{a b}\"]\nparams:\n  a b: [1]\n",
		  "4:3: parameter name 'a b' is not an identifier"
		  " (ASCII letters, digits and '_', not starting with a digit)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  g:\n    - {x: 1, 9z: 2}\n",
		  "5:14: parameter name '9z' is not an identifier"
		  " (ASCII letters, digits and '_', not starting with a digit)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  n\xc3\xa9v: [1]\n",
		  "4:3: parameter name 'n\xc3\xa9v' is not an identifier"
		  " (ASCII letters, digits and '_', not starting with a digit)");
	CHECK_ERR("sweep: my sweep\nkernel: sleep\n",
		  "1:8: invalid sweep name 'my sweep' (use letters, digits, '.', '_' and '-')");
	CHECK_ERR("sweep: a\nkernel: sleep\nenv: {A: b}\n", "3:1: 'env' is for command sweeps only");

	/* Types and values of settings. */
	CHECK_ERR("sweep: a\nkernel: sleep\nrepeat: two\n",
		  "3:9: expected an integer for 'repeat', got 'two'");
	CHECK_ERR("sweep: a\nkernel: sleep\nrepeat: 0\n", "3:9: 'repeat' must be at least 1, got 0");
	CHECK_ERR("sweep: a\nkernel: sleep\nrepeat: [1]\n",
		  "3:9: expected a scalar for 'repeat', got a list");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {min_time: soon}\n",
		  "3:20: expected a number for 'min_time', got 'soon'");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {batch: -1}\n",
		  "3:17: 'batch' must be at least 0, got -1");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {throttle: 2}\n",
		  "3:20: 'throttle' must be at most 1, got 2");
	CHECK_ERR("sweep: a\nkernel: sleep\norder: interleaved\n",
		  "3:8: invalid value 'interleaved' for 'order' (did you mean 'interleave'?)");
	CHECK_ERR("sweep: a\nkernel: sleep\nper: everywhere\n",
		  "3:6: invalid value 'everywhere' for 'per' (expected any|host|gpu)");
	CHECK_ERR("sweep: a\nkernel: sleep\ngang: gpu\n",
		  "3:7: invalid value 'gpu' for 'gang' (expected host|any)");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {l2: warm}\n",
		  "3:14: invalid value 'warm' for 'l2' (expected cold|hot)");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {precision: 0}\n",
		  "3:21: 'precision' must be greater than 0, got 0");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {max_noise: 0}\n",
		  "3:21: 'max_noise' must be greater than 0, got 0");
	/* Timing keys whose values cannot both hold: at the later one, naming both. */
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming:\n  timeout: 2\n  min_time: 2\n",
		  "5:13: 'min_time' 2 conflicts with 'timeout' 2 (line 4): no cell could take its min_time of "
		  "samples before its timeout");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {warmup: 3, timeout: 2.5}\n",
		  "3:30: 'timeout' 2.5 conflicts with 'warmup' 3 (line 3): a warm-up that long leaves no time for "
		  "samples");
	CHECK_ERR("sweep: a\nkernel: sleep\ntiming: {max_warmup: 0.01, warmup: 0.1}\n",
		  "3:36: 'warmup' 0.1 conflicts with 'max_warmup' 0.01 (line 3): max_warmup bounds the whole "
		  "warm-up, warmup included");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: jsn\n",
		  "3:10: invalid value 'jsn' for 'metrics' (did you mean 'json'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nitems: 0\n", "3:8: 'items' must be at least 1, got 0");
	CHECK_ERR("sweep: a\ncommand: [x]\nitems: [p, q, p]\n", "3:8: duplicate item 'p'");
	CHECK_ERR("sweep: a\ncommand: [x]\nhosts: []\n", "3:8: empty list for 'hosts'");
	CHECK_ERR("sweep: a\ncommand: []\n", "2:10: empty list for 'command'");
	CHECK_ERR("sweep: a\ncommand: [x]\nenv: {1A: b}\n", "3:7: invalid environment variable name '1A'");

	/* Axes. */
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  M: []\n", "4:6: empty axis 'M'");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  M:\n", "4:5: empty axis 'M'");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  s:\n    - {N: 1, K: 2}\n    - {N: 3, Q: 4}\n",
		  "6:7: entry 2 of zipped group 's' has other keys than the first (N, K)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  s:\n    - {N: 1}\n    - 3\n",
		  "6:7: expected a mapping in zipped group 's', got a scalar");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  N: [1, 2]\n  s: [{N: 1, K: 2}]\n",
		  "5:6: parameter 'N' is in two axes (first at 4:6)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  M: [1, [2]]\n",
		  "4:10: expected a scalar for 'M', got a list");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: 8, to: 1, factor: 2}\n",
		  "4:6: range 'b' is empty: 'from' is greater than 'to'");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: 1, to: 8, factor: 1}\n",
		  "4:31: 'factor' must be greater than 1, got 1");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: 1, to: 8}\n",
		  "4:6: range 'b' needs one of 'factor' or 'step'");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: 0, to: 8G, step: 1}\n",
		  "4:6: range 'b' has more than 100000 points");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {N: 1, K: 2}\n",
		  "4:6: expected a list, a scalar or a range {from, to, factor|step} for 'b', got a mapping "
		  "(a zipped group is a list of mappings)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: [1, ~]\n", "4:10: no value for 'b'");
	CHECK_ERR("sweep: a\ncommand: [x]\nitems: 200000\n",
		  "3:8: too many values: a spec holds at most 100000");
	CHECK_ERR("sweep: a\nkernel: sleep\ntimeout: 5\n",
		  "3:1: 'timeout' is for command sweeps only (a kernel's is timing: {timeout: SECONDS})");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: 1, to: 8, fator: 2}\n",
		  "4:23: unknown key 'fator' in range 'b' (did you mean 'factor'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams:\n  b: {from: x, to: 8, step: 2}\n",
		  "4:13: expected a number for 'from', got 'x'");

	/* Excludes. */
	CHECK_ERR("sweep: a\ncommand: [x]\nparams: {dtype: [f32]}\nexclude:\n  - {dtyp: f32}\n",
		  "5:6: exclude key 'dtyp' is not a parameter (did you mean 'dtype'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams: {dtype: [f32]}\nexclude:\n  - {}\n",
		  "5:5: empty exclude entry (it would drop every cell)");

	/* Placeholders. */
	CHECK_ERR("sweep: a\ncommand: [x, \"{modle}\"]\nparams: {model: [p]}\n",
		  "2:14: unknown placeholder '{modle}' (did you mean '{model}'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nparams: {model: [p]}\nenv: {X: \"{gpus}\"}\n",
		  "4:10: unknown placeholder '{gpus}' (did you mean '{gpu}'?)");
	CHECK_ERR("sweep: a\ncommand: [x, \"{item}\"]\n", "2:10: '{item}' is used but no 'items' are given");

	/* Kernels and their parameters. */
	CHECK_ERR("sweep: a\nkernel: cpu.gem\n", "2:9: unknown kernel 'cpu.gem' (did you mean 'cpu.gemm'?)");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\nparams:\n  dtyp: [f32]\n",
		  "4:3: kernel 'cpu.gemm' has no parameter 'dtyp' (did you mean 'dtype'?)");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\nparams:\n  M: [64, 1.5]\n",
		  "4:11: expected an integer for 'M', got '1.5'");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\nparams:\n  M: [\"64\"]\n",
		  "4:7: expected an integer for 'M', got '64'");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\nparams:\n  dtype: [f32, f16]\n",
		  "4:16: invalid value 'f16' for 'dtype' (expected f32|f64)");
	CHECK_ERR("sweep: a\nkernel: sleep\nparams:\n  ms: [fast]\n",
		  "4:8: expected a number for 'ms', got 'fast'");
	CHECK_ERR("sweep: a\nkernel: cpu.copy\nparams:\n  bytes: [lots]\n",
		  "4:11: expected a byte size for 'bytes', got 'lots'");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\nparams:\n  M: {from: 1, to: 4, factor: 1.5}\n",
		  "4:6: expected an integer for 'M', got '1.5'");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\ncontrol: {params: {dtyp: f32}}\n",
		  "3:20: control parameter 'dtyp' is not a parameter of kernel 'cpu.gemm' "
		  "(did you mean 'dtype'?)");
	CHECK_ERR("sweep: a\nkernel: cpu.gemm\ncontrol: {params: {M: x}}\n",
		  "3:23: expected an integer for 'M', got 'x'");
	CHECK_ERR("sweep: a\nkernel: sleep\ncontrol: {every: 5}\n", "3:10: missing 'params' in 'control'");
	CHECK_ERR("sweep: a\ncommand: [x, \"{m}\"]\nparams: {m: [1], n: [2]}\ncontrol: {params: {m: 1}}\n",
		  "4:19: control lacks parameter 'n'");

	/* Metrics regexes are compiled. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: 'took [0-9]+'}\n",
		  "3:14: regex for metric 't' must have exactly one capture group, it has 0");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: '(a)(b)'}\n",
		  "3:14: regex for metric 't' must have exactly one capture group, it has 2");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: '(a'}\n",
		  "3:14: invalid regex for metric 't': missing closing parenthesis at offset 2");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: 'a{99999}(b)'}\n",
		  "3:14: invalid regex for metric 't': number too big in {} quantifier at offset 7");
	/* duplicate_keys: beside json: only. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: ., duplicate_keys: some, v: a}\n",
		  "3:36: invalid value 'some' for 'duplicate_keys' (expected error|last|first)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {duplicate_keys: last, v: 'v=(.*)'}\n",
		  "3:27: 'duplicate_keys' says how json metrics read a key given twice; regexes read no keys");
	{
		struct spec s;
		int rc = parse("sweep: a\ncommand: [x]\nmetrics: {json: ., duplicate_keys: first, v: a}\n", &s);

		CHECK(rc == 0 && s.json_dups == SPEC_DUP_FIRST && s.njmetrics == 1, "duplicate_keys: first: %s", errs);
		if (!rc)
			spec_release(&s);
	}
	/* combine: in the mapping form, of regexes, of json paths, and of JSON lines (json: lines). */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: ., combine: avg, v: a}\n",
		  "3:29: invalid value 'avg' for 'combine' (expected mean|sum|max|min|error)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: lines, item: x}\n",
		  "3:10: no metric in 'metrics' (name: path)");
	{
		static const char *const text[] = {
			"sweep: a\ncommand: [x]\nmetrics: {json: ., combine: max, v: a}\n",
			"sweep: a\ncommand: [x]\nmetrics: {combine: error, v: 'v=(.*)'}\n",
			"sweep: a\ncommand: [x]\nmetrics: {json: lines, combine: sum}\n",
			"sweep: a\ncommand: [x]\nmetrics: json\n",
		};
		static const int how[] = { COMBINE_MAX, COMBINE_ERROR, COMBINE_SUM, COMBINE_MEAN };
		static const int kind[] = { METRICS_SELECT, METRICS_REGEX, METRICS_JSON, METRICS_JSON };
		struct spec s;

		for (int i = 0; i < 4; i++) {
			int rc = parse(text[i], &s);

			CHECK(rc == 0 && (int)s.combine == how[i] && s.combine_said == (i < 3) &&
			      (int)s.metrics == kind[i], "combine: spec %d: %s", i, errs);
			if (!rc)
				spec_release(&s);
		}
	}
	/* unit_base and scale: how a metric reads k/M/G/T and a bare number. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=(.*)', unit: B, unit_base: 1023}}\n",
		  "3:52: unit_base is 1000 or 1024, not '1023'");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=(.*)', unit: s, scale: B}}\n",
		  "3:48: scale 'B' does not convert into unit 's': 'B' is not a unit of 's'");
	{
		struct spec s;
		int rc = parse("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=(.*)', unit: B/s, unit_base: 1024, "
			       "scale: MB/s}, u: {regex: 'u=(.*)', scale: ms}}\n", &s);

		CHECK_INT(rc, 0, "unit_base and scale parse");
		if (!rc) {
			CHECK(s.regex[0].unit_base == 1024 && !strcmp(s.regex[0].scale, "MB/s") &&
			      !strcmp(s.regex[0].unit, "B/s"), "base 1024, scale MB/s, unit B/s");
			CHECK(!s.regex[1].unit_base && !strcmp(s.regex[1].unit, "ms"), "a scale alone is the unit");
			spec_release(&s);
		}
	}
	/* GNU ERE that PCRE2 would read otherwise without a word is refused, saying what to write. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: '\\<took ([0-9]+)'}\n",
		  "3:14: regex for metric 't': '\\<' and '\\>' (GNU word anchors) are literal characters in PCRE2: "
		  "write \\b");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: 'took ([0-9]{,3})'}\n",
		  "3:14: regex for metric 't': '{,m}' is literal text in PCRE2: write {0,m}");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: \"x ([0-9]+)\\\\'\"}\n",
		  "3:14: regex for metric 't': '\\`' and '\\'' (GNU buffer anchors) are not PCRE2: write ^ or $");
	/* What glibc's matcher could not run in bounded time parses: PCRE2 runs it under limits. A '<' or
	 * '{,' in brackets is a member, and non-capturing groups do not count as groups. */
	{
		struct spec s;

		CHECK_INT(parse("sweep: a\ncommand: [x]\nmetrics: {t: '((x*)+)+ ([0-9]+)'}\n", &s), -1,
			  "four groups are refused");
		int rc = parse("sweep: a\ncommand: [x]\nmetrics: {t: '(?:(?:x*)+)+ ([0-9]+)[<{,3}]'}\n", &s);

		CHECK_INT(rc, 0, "nested repeats in non-capturing groups parse");
		if (!rc) {
			CHECK_INT(s.regex[0].groups, 1, "non-capturing groups are not counted");
			spec_release(&s);
		}
	}

	/* Command timing: runs under timing's stopping rule; keys with no meaning for a command refused. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 3\ntiming: {min_samples: 5}\n",
		  "4:10: 'min_samples' means nothing for a command (a command's least number of runs is 'min_runs: N')");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 3\ntiming: {warmup: 1}\n",
		  "4:10: 'warmup' means nothing for a command (a command's warm-up is 'warmup: N' runs)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 3\ntiming: {max_noise: 0.1, l2: hot}\n",
		  "4:26: 'l2' means nothing for a command (a command's runs have no L2 flush)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 3\ntiming: {throttle: 0.5}\n",
		  "4:10: 'throttle' means nothing for a command (a command's runs have no SM clock)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 3\ntiming: {batch: 2}\n",
		  "4:10: 'batch' means nothing for a command (a command's sample is one run)");
	CHECK_ERR("sweep: a\ncommand: [x]\ntiming: {max_noise: 0.1}\n",
		  "3:9: 'timing' of a command sweep needs 'min_runs: N', its stopping rule's least number of runs "
		  "(runs: N is exactly N runs; without either a command runs once)");
	CHECK_ERR("sweep: a\ncommand: [x]\nruns: 4\ntiming: {max_noise: 0.1}\n",
		  "4:9: 'timing' of a command sweep needs 'min_runs: N', its stopping rule's least number of runs "
		  "(runs: N is exactly N runs; without either a command runs once)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 20\ntiming: {max_samples: 10}\n",
		  "3:11: min_runs 20 is over timing's max_samples 10");
	CHECK_ERR("sweep: a\ncommand: [x]\nmin_runs: 20\nmax_runs: 10\n", "3:11: min_runs 20 is over max_runs 10");
	CHECK_ERR("sweep: a\ncommand: [x]\nruns: 3\nmin_runs: 2\n",
		  "4:11: 'runs' is exactly N runs, 'min_runs' and 'max_runs' the stopping rule's bounds: give one or the "
		  "other");
	CHECK_ERR("sweep: a\ncommand: [x]\nmax_runs: 5\n",
		  "3:11: 'max_runs' needs 'min_runs: N' (runs: N is exactly N runs)");
	{
		struct spec s;
		int rc = parse("sweep: a\ncommand: [x]\nruns: 50\n", &s);

		CHECK(rc == 0 && s.runs == 50 && s.runs_exact == 1, "runs: 50 is exactly 50, over any max_samples");
		if (!rc)
			spec_release(&s);
		rc = parse("sweep: a\ncommand: [x]\nmin_runs: 2\nmax_runs: 9\n", &s);
		CHECK(rc == 0 && s.runs == 2 && !s.runs_exact && s.timing.max_samples == 9,
		      "min_runs 2 and max_runs 9: the stopping rule's bounds");
		if (!rc)
			spec_release(&s);
	}
	CHECK_ERR("sweep: a\ncommand: [x]\nruns: 0\n", "3:7: 'runs' must be at least 1, got 0");
	CHECK_ERR("sweep: a\ncommand: [x]\nwarmup: -1\n", "3:9: 'warmup' must be at least 0, got -1");
	CHECK_ERR("sweep: a\nkernel: sleep\nwarmup: 2\n",
		  "3:1: 'warmup' is for command sweeps only (a kernel's is timing: {warmup: SECONDS})");
	CHECK_ERR("sweep: a\nkernel: sleep\nruns: 2\n", "3:1: 'runs' is for command sweeps only");
	CHECK_ERR("sweep: a\ncommand: [x]\nprepare: [\"{nope}\"]\n", "3:11: unknown placeholder '{nope}'");
	CHECK_ERR("sweep: a\ncommand: [x]\ncleanup: sync\n", "3:10: expected a list for 'cleanup', got a scalar");
	CHECK_ERR("sweep: a\ncommand: [x, \"{{n}} {nope}\"]\n", "2:14: unknown placeholder '{nope}'");
	{
		struct spec s;
		int rc = parse("sweep: a\ncommand: [hyperfine, \"sleep {{n}}\", \"{{{{x}}}}\"]\n", &s);

		CHECK(rc == 0, "{{n}} is no placeholder: %s", errs);
		if (!rc)
			spec_release(&s);
	}

	/* Metrics: from, match, unit, JSON paths. */
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=([0-9]+)', match: some}}\n",
		  "3:43: invalid value 'some' for 'match' (did you mean 'one'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: '(a)(b)(c)', match: each}}\n",
		  "3:22: regex for metric 't' must have one or two capture groups with match: each (the item, then "
		  "the value), it has 3");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=(.*)', unit: 'm s'}}\n",
		  "3:38: invalid unit 'm s': a unit has no blank or control character");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regex: 't=(.*)', better: faster}}\n",
		  "3:40: invalid value 'faster' for 'better' (expected lower|higher)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: '.', t: {path: x, better: up}}\n",
		  "3:43: invalid value 'up' for 'better' (expected lower|higher)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {t: {regx: 't=(.*)'}}\n",
		  "3:15: unknown key 'regx' in a regex metric (did you mean 'regex'?)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {from: '{nope}.txt', t: 't=(.*)'}\n",
		  "3:17: unknown placeholder '{nope}'");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {from: stdout}\n", "3:10: no metric in 'metrics' (name: regex)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {item: name, t: 't=(.*)'}\n",
		  "3:17: 'item' names the records of json metrics; a regex's matches become items with match: each");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: 'a[*', t: x}\n",
		  "3:17: invalid path 'a[*' for 'json': bad path at '[*': a path is '.', or keys and indexes like "
		  "a.b[0], [*], [key=value] or [\"a.b\"]");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: '.', t: 'jobs[*].iops'}\n",
		  "3:25: invalid path 'jobs[*].iops' for 't': [*] selects many values: a metric's path selects one");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: '.'}\n", "3:10: no metric in 'metrics' (name: path)");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: '.', t: {path: x, unit_path: u}}\n",
		  "3:35: 'unit_path' needs 'unit', the unit the value is converted into");
	CHECK_ERR("sweep: a\ncommand: [x]\nmetrics: {json: '.', t: {unit: s}}\n",
		  "3:25: metric 't' has no 'path'");

	/* Hostile input: no crash, no hang, an error. */
	CHECK_ERR("sweep: a\nkernel: sleep\nparams: &x {ms: *x}\n",
		  "3:9: expected a list, a scalar or a range {from, to, factor|step} for 'ms', got a mapping "
		  "(a zipped group is a list of mappings)");
	{
		char deep[300];

		memset(deep, '[', 200);
		strcpy(deep + 200, "\n");
		CHECK_ERR(deep, "1:65: nesting deeper than 64 levels");
	}
	{
		static const char nul[] = "sweep: \"a\\0b\"\nkernel: sleep\n";

		CHECK_ERR(nul, "1:8: NUL byte in the value of 'sweep'");
	}
}

/* Every problem is reported, one line each, in file order. */
static void test_all_problems(void)
{
	struct spec s;
	const char *first = "sweep: t.yaml:1:1: missing 'kernel' or 'command'\n"
			    "sweep: t.yaml:1:8: invalid sweep name 'a b'";
	int rc = parse("sweep: a b\nkernal: sleep\nrepeat: two\norder: random\n", &s);

	CHECK_INT(rc, -1, "several problems fail");
	CHECK_INT(count_lines(errs), 5, "five problems, five lines");
	CHECK(!strncmp(errs, first, strlen(first)), "problems in file order");
	CHECK(strstr(errs, "t.yaml:4:8: invalid value 'random' for 'order' "
		      "(expected sequential|interleave|shuffle)") != NULL, "the last problem too");
}

/* A kernel parameter without a default must be given. No built-in kernel may have one: then say so. */
static void test_required(void)
{
	for (int i = 0; kernel_registry[i]; i++) {
		for (const struct param_def *pd = kernel_registry[i]->params; pd && pd->name; pd++) {
			char text[256], want[256];

			if (pd->def)
				continue;
			snprintf(text, sizeof(text), "sweep: a\nkernel: %s\n", kernel_registry[i]->name);
			snprintf(want, sizeof(want), "2:9: kernel '%s' needs parameter '%s' "
				 "(it has no default)", kernel_registry[i]->name, pd->name);
			CHECK_ERR(text, want);
			return;
		}
	}
	printf("# skip: no registered kernel has a required parameter\n");
}

/* clocks: MHz, base for the SM clock; none asked by default; a clock of Hz is a typo, not a lock. */
static void test_clocks(void)
{
	struct spec s;

	CHECK_INT(parse("sweep: s\nkernel: sleep\n", &s), 0, "no clocks");
	CHECK(!spec_clocks_asked(&s) && !s.clock_sm && !s.clock_mem, "no clocks asked by default");
	spec_release(&s);
	CHECK_INT(parse("sweep: s\nkernel: sleep\nclocks: {sm: base, memory: 2619}\n", &s), 0, "clocks parse");
	CHECK_INT(s.clock_sm, SPEC_CLOCK_BASE, "sm: base");
	CHECK_INT(s.clock_mem, 2619, "memory MHz");
	CHECK(spec_clocks_asked(&s), "clocks asked");
	spec_release(&s);
	CHECK_INT(parse("sweep: s\nkernel: sleep\nclocks: {memory: 1593}\n", &s), 0, "memory alone");
	CHECK(s.clock_sm == 0 && s.clock_mem == 1593 && spec_clocks_asked(&s), "memory alone asked");
	spec_release(&s);
	CHECK_INT(parse("sweep: s\nkernel: sleep\nclocks: {sm: 1410000000}\n", &s), -1, "Hz refused");
	CHECK(strstr(errs, "t.yaml:3:14: 'clocks.sm' must be between 1 and 20000, got 1410000000") != NULL,
	      "said where and why: %s", errs);
	CHECK_INT(parse("sweep: s\nkernel: sleep\nclocks: {gpu: 1410}\n", &s), -1, "unknown key refused");
	CHECK(strstr(errs, "t.yaml:3:10:") != NULL && strstr(errs, "gpu") != NULL, "the key named: %s", errs);
}

int main(void)
{
	test_full();
	test_clocks();
	test_kernel_timing();
	test_json_metrics();
	test_metric_better();
	test_defaults();
	test_kernel_types();
	test_scalars_and_items();
	test_load();
	test_errors();
	test_all_problems();
	test_required();
	return test_done();
}
