/* test_counters.c: ncu's CSV read into a result's metrics (counters.c), on what ncu 2025.3 printed for one
 * 2 GiB copy kernel on an H100 (tests/data/ncu-copy-2g.csv, with its ==PROF== lines and the program's own
 * output), on several kernels, and on a refusal; and CUPTI's session (counters_cupti.cu) against the fake
 * CUPTI (tests/unit/fake_cupti.cc): user replay, where the L2's clean and the launch run among its calls
 * a pass, and a clean or a launch that fails. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "counters.h"
#include "counters_cupti.h"
#include "test.h"

static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);
	double d;

	return v && !parse_double(v, &d) ? d : NAN;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = calloc(1, 1 << 16);

	if (!f)
		BUG("no %s", path);
	if (fread(s, 1, (1 << 16) - 1, f) == 0)
		BUG("empty %s", path);
	fclose(f);
	return s;
}

static void test_real(void)
{
	char *names[] = { "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
			  "sm__cycles_elapsed.max" };
	char *text = slurp("tests/data/ncu-copy-2g.csv"), why[256] = "";
	struct result r;

	result_init(&r);
	CHECK_INT(counters_parse_ncu(text, names, 4, &r, why, sizeof(why)), 3, "three of the four counters read");
	CHECK_NEAR(metric(&r, "dram__bytes_read.sum"), 2147650048, 0, "DRAM read: thousands' commas dropped");
	CHECK_NEAR(metric(&r, "dram__bytes_write.sum"), 2130494976, 0, "DRAM written");
	CHECK_NEAR(metric(&r, "lts__t_sector_hit_rate.pct"), 50.97, 0, "a ratio as printed");
	CHECK(isnan(metric(&r, "sm__cycles_elapsed.max")), "a counter ncu did not give is absent");
	result_release(&r);
	free(text);
}

static void test_kernels(void)
{
	const char *text =
		"\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
		"\"0\",\"a, with a comma\",\"x.sum\",\"byte\",\"1,000\"\n"
		"\"0\",\"a, with a comma\",\"y.pct\",\"%\",\"10\"\n"
		"\"0\",\"a, with a comma\",\"z.max\",\"cycle\",\"7\"\n"
		"\"1\",\"b\",\"x.sum\",\"byte\",\"2,500\"\n"
		"\"1\",\"b\",\"y.pct\",\"%\",\"30\"\n"
		"\"1\",\"b\",\"z.max\",\"cycle\",\"5\"\n"
		"\"1\",\"b\",\"w.min\",\"cycle\",\"n/a\"\n";
	char *names[] = { "x.sum", "y.pct", "z.max", "w.min" }, why[256];
	struct result r;

	result_init(&r);
	CHECK_INT(counters_parse_ncu(text, names, 4, &r, why, sizeof(why)), 3, "n/a is no value");
	CHECK_NEAR(metric(&r, "x.sum"), 3500, 0, ".sum: summed over kernels");
	CHECK_NEAR(metric(&r, "y.pct"), 20, 0, "a ratio: the mean");
	CHECK_NEAR(metric(&r, "z.max"), 7, 0, ".max: the largest");
	result_release(&r);
}

static void test_refused(void)
{
	const char *text = "==PROF== Connected to process 1 (p)\n"
		"==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
		"Counters on the target device 0.\n==PROF== Disconnected from process 1\n";
	char *names[] = { "dram__bytes_read.sum" }, why[256];
	struct result r;

	result_init(&r);
	CHECK_INT(counters_parse_ncu(text, names, 1, &r, why, sizeof(why)), 0, "refused: nothing read");
	CHECK_STR(why, "ncu: ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
		  "Counters on the target device 0.", "the driver's answer in one line");
	CHECK_INT((long long)r.metrics.n, 0, "nothing made up");
	CHECK_INT(counters_parse_ncu("", names, 1, &r, why, sizeof(why)), 0, "no output");
	CHECK_STR(why, "ncu gave no rows of the counters asked", "said");
	counters_note(&r, why);
	CHECK_STR(r.err, "counters: ncu gave no rows of the counters asked", "the note alone");
	result_release(&r);
}

#ifdef SWEEP_CUDA
#define CUPTI_LOG "build/tests/fake/test_counters.log"

/* A line in the fake's log, between CUPTI's own. */
static void cupti_say(const char *line)
{
	FILE *f = fopen(CUPTI_LOG, "a");

	if (!f)
		BUG("cannot open %s", CUPTI_LOG);
	fprintf(f, "%s\n", line);
	fclose(f);
}

/* What the callbacks answer: 0, or -1 from the pass fail_at (1 the first) on. */
struct cupti_test {
	int pass, fail_at, before_fails;
};

static int cupti_before(void *arg, char *why, size_t wn)
{
	struct cupti_test *t = arg;

	cupti_say("clean");
	if (!t->before_fails)
		return 0;
	snprintf(why, wn, "before the pass: no L2 to clean");
	return -1;
}

static int cupti_launch(void *arg, char *why, size_t wn)
{
	struct cupti_test *t = arg;

	cupti_say("launch");
	if (!t->fail_at || ++t->pass < t->fail_at)
		return 0;
	snprintf(why, wn, "the launch profiled: a broken kernel");
	return -1;
}

/* How often needle is in hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_cupti(void)
{
	char *names[] = { "dram__bytes_read.sum", "dram__bytes_write.sum" };
	char why[256] = "", *log;
	struct cupti_test t = { 0, 0, 0 };
	struct counters_launch l = { .before = cupti_before, .launch = cupti_launch, .arg = &t };
	const char *pass = "clean\ncuptiRangeProfilerStart = 0\nlaunch\ncuptiRangeProfilerStop = 0\n";
	struct result r;

	unlink(CUPTI_LOG);
	setenv("FAKE_CUPTI_LOG", CUPTI_LOG, 1);
	setenv("SWEEP_CUPTI_LIB", "build/tests/fake/libcupti-fake.so", 1);
	result_init(&r);
	CHECK_INT(counters_cupti(names, 2, 0, NULL, &l, &r, why, sizeof(why)), 0, "read through CUPTI");
	CHECK_NEAR(metric(&r, "dram__bytes_write.sum"), 2147484648.0, 0, "summed over the fake's two kernels");
	log = slurp(CUPTI_LOG);
	CHECK(strstr(log, "config: auto range 1, user replay, ") != NULL, "user replay: sweep drives the passes");
	CHECK(strstr(log, pass) != NULL, "the L2 cleaned outside the session, the launch between its start and stop");
	free(log);
	result_release(&r);

	/* Three passes: the clean and a launch each, every one outside the one before. */
	unlink(CUPTI_LOG);
	setenv("FAKE_CUPTI_PASSES", "3", 1);
	result_init(&r);
	CHECK_INT(counters_cupti(names, 2, 0, NULL, &l, &r, why, sizeof(why)), 0, "three passes read");
	CHECK_NEAR(metric(&r, "dram__bytes_read.sum"), 2147484648.0, 0, "the values as with one");
	log = slurp(CUPTI_LOG);
	CHECK_INT(count(log, "launch\n"), 3, "a launch a pass");
	CHECK_INT(count(log, "clean\n"), 3, "a clean a pass");
	CHECK(strstr(log, "cuptiRangeProfilerSetConfig = 0\n") && count(strstr(log, "cuptiRangeProfilerSetConfig = 0\n"),
	      pass) == 3, "each pass cleaned, then started, launched and stopped, after the configuration");
	CHECK(strstr(log, "cuptiRangeProfilerStop = 0\ncuptiRangeProfilerDecodeData = 0\n") != NULL,
	      "decoded after the last pass");
	free(log);
	result_release(&r);

	/* The second pass's launch fails: the session stopped, nothing kept. */
	unlink(CUPTI_LOG);
	t.fail_at = 2;
	result_init(&r);
	CHECK_INT(counters_cupti(names, 2, 0, NULL, &l, &r, why, sizeof(why)), -1, "a broken launch fails");
	CHECK_STR(why, "the launch profiled: a broken kernel", "said so, in the launch's words");
	CHECK(json_obj_get(&r.metrics, "dram__bytes_read.sum") == NULL, "and no value is made up");
	log = slurp(CUPTI_LOG);
	CHECK_INT(count(log, "launch\n"), 2, "no pass after it");
	CHECK(strstr(log, "launch\ncuptiRangeProfilerStop = 0\ncuptiRangeProfilerDisable = 0\n"
			  "cuptiProfilerHostDeinitialize = 0\ncuptiProfilerDeInitialize = 0\n") != NULL,
	      "the session stopped and put away after it");
	free(log);
	result_release(&r);

	/* The clean fails: no pass is started, nothing kept. */
	unlink(CUPTI_LOG);
	t.fail_at = 0;
	t.before_fails = 1;
	result_init(&r);
	CHECK_INT(counters_cupti(names, 2, 0, NULL, &l, &r, why, sizeof(why)), -1, "a failed clean fails");
	CHECK_STR(why, "before the pass: no L2 to clean", "said so");
	CHECK_INT((long long)r.metrics.n, 0, "nothing made up");
	log = slurp(CUPTI_LOG);
	CHECK(strstr(log, "cuptiRangeProfilerStart") == NULL && strstr(log, "launch\n") == NULL,
	      "no pass started after it");
	CHECK(strstr(log, "clean\ncuptiRangeProfilerDisable = 0\n") != NULL, "the session put away");
	free(log);
	result_release(&r);
	unsetenv("FAKE_CUPTI_PASSES");
	unlink(CUPTI_LOG);
}
#else
/* A build without CUDA has no CUPTI to ask: ncu is asked instead (executor.c). */
static void test_cupti(void)
{
	char *names[] = { "dram__bytes_read.sum" };
	char why[256] = "";
	struct result r;

	result_init(&r);
	CHECK_INT(counters_cupti(names, 1, 0, NULL, NULL, &r, why, sizeof(why)), COUNTERS_NO_CUPTI, "no CUPTI");
	CHECK_STR(why, "no CUPTI in a build without CUDA", "said why");
	result_release(&r);
}
#endif

int main(void)
{
	test_real();
	test_kernels();
	test_refused();
	test_cupti();
	return test_done();
}
