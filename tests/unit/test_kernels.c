/* test_kernels.c: every CPU kernel's hooks one by one: check passes, a corrupted output fails, counts,
 * parameter access, and debug.fail's crashes in forked children. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../kernels/kernel.h"
#include "test.h"

/* From OpenBLAS; cblas.h is not included: kernels/cpu_gemm.c is its one owner (tests/layers.py). */
int openblas_get_num_threads(void);

/* The sanitizer build must let debug.fail segv die by the signal, as the real binary does. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0";
}

struct kt {
	struct kctx ctx;
	struct json_obj params, metrics;
	volatile int cancel;
};

/* A context for kernel k with params given as JSON (every parameter the kernel reads must be there). */
static void kt_init(struct kt *t, const char *json)
{
	char err[128];

	memset(t, 0, sizeof(*t));
	if (json_parse_flat(json, &t->params, 0, err, sizeof(err)))
		BUG("bad test params %s: %s", json, err);
	t->ctx.params = &t->params;
	t->ctx.gpu = -1;
	t->ctx.cancel = &t->cancel;
	t->ctx.metrics = &t->metrics;
}

static void kt_release(struct kt *t, const struct kernel_ops *k)
{
	if (k->teardown)
		k->teardown(&t->ctx);
	json_obj_release(&t->params);
	json_obj_release(&t->metrics);
}

static void test_registry(void)
{
	static const char *const names[] = { "sleep", "cpu.copy", "cpu.read", "cpu.gemm", "debug.fail" };
	const struct kernel_ops *const *k;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		const struct kernel_ops *f = kernel_find(names[i]);

		CHECK(f && !strcmp(f->name, names[i]), "kernel_find('%s')", names[i]);
		CHECK(f && f->place == KERNEL_CPU && f->setup && f->launch, "'%s' is a complete CPU kernel",
		      names[i]);
	}
	for (k = kernel_registry; *k; k++)
		n++;
	CHECK(n >= ARRAY_SIZE(names), "registry lists %zu kernels", n);
	CHECK(kernel_find("cpu.gem") == NULL, "kernel_find of an unknown name is NULL");
	CHECK_STR(kernel_param(kernel_find("cpu.gemm"), "dtype")->choices, "f32|f64", "gemm dtype choices");
	CHECK_STR(kernel_param(kernel_find("cpu.copy"), "bytes")->def, "64M", "copy bytes default");
	CHECK_INT(kernel_param(kernel_find("cpu.read"), "bytes")->type, PARAM_BYTES, "read bytes type");
	CHECK(kernel_param(kernel_find("sleep"), "nope") == NULL, "kernel_param of an unknown name is NULL");
}

static void test_kparam(void)
{
	struct kt t;
	pid_t pid;
	int st;

	kt_init(&t, "{\"a\": 256, \"b\": 1e3, \"c\": 2.5, \"s\": \"f64\", \"n\": -7}");
	CHECK_INT(kparam_long(&t.ctx, "a"), 256, "kparam_long plain");
	CHECK_INT(kparam_long(&t.ctx, "b"), 1000, "kparam_long of 1e3");
	CHECK_INT(kparam_long(&t.ctx, "n"), -7, "kparam_long negative");
	CHECK_NEAR(kparam_double(&t.ctx, "c"), 2.5, 0, "kparam_double");
	CHECK_STR(kparam_str(&t.ctx, "s"), "f64", "kparam_str string");
	CHECK_STR(kparam_str(&t.ctx, "a"), "256", "kparam_str of a number is its text");
	CHECK_INT(kfail(&t.ctx, "bad %s %d", "x", 3), -1, "kfail returns -1");
	CHECK_STR(t.ctx.err, "bad x 3", "kfail formats into err");
	/* Missing or malformed is a BUG: the process aborts (spec.c keeps such cells from ever running). */
	fflush(stdout);
	if (!(pid = fork())) {
		kparam_long(&t.ctx, "missing");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "kparam_long of a missing name aborts (0x%x)", st);
	if (!(pid = fork())) {
		kparam_long(&t.ctx, "c");
		_exit(0);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "kparam_long of 2.5 aborts (0x%x)", st);
	kt_release(&t, kernel_find("sleep"));
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_sleep(void)
{
	const struct kernel_ops *k = kernel_find("sleep");
	double t0, dt, lo = 1e9, hi = 0;
	struct kt t;
	int i, ok = 1;

	kt_init(&t, "{\"ms\": 0, \"jitter\": 0}");
	CHECK_INT(k->setup(&t.ctx), 0, "sleep setup");
	t0 = mono();
	for (i = 0; i < 100000; i++)
		ok &= k->launch(&t.ctx) == 0;
	dt = mono() - t0;
	CHECK(ok, "100000 launches of ms=0 succeed");
	CHECK(dt < 0.05, "ms=0 is nearly free: %.1f ns a launch", dt / 100000 * 1e9);
	kt_release(&t, k);

	kt_init(&t, "{\"ms\": 5, \"jitter\": 0}");
	k->setup(&t.ctx);
	t0 = mono();
	CHECK_INT(k->launch(&t.ctx), 0, "sleep 5 ms");
	dt = mono() - t0;
	CHECK(dt >= 0.005 && dt < 0.030, "ms=5 sleeps 5 ms: %.3f ms", dt * 1e3);
	kt_release(&t, k);

	kt_init(&t, "{\"ms\": 0, \"jitter\": 2}");
	k->setup(&t.ctx);
	for (i = 0; i < 30; i++) {
		t0 = mono();
		k->launch(&t.ctx);
		dt = mono() - t0;
		lo = dt < lo ? dt : lo;
		hi = dt > hi ? dt : hi;
	}
	CHECK(hi < 0.012 && hi - lo > 0.0002, "jitter=2 spreads launches: %.3f .. %.3f ms", lo * 1e3,
	      hi * 1e3);
	kt_release(&t, k);

	/* A long sleep polls cancel: it ends within one 10 ms slice of being cancelled. */
	kt_init(&t, "{\"ms\": 60000, \"jitter\": 0}");
	k->setup(&t.ctx);
	t.cancel = 1;
	t0 = mono();
	CHECK_INT(k->launch(&t.ctx), -1, "a cancelled long sleep fails");
	CHECK(mono() - t0 < 0.05, "and returns at once");
	CHECK(strstr(t.ctx.err, "cancelled") != NULL, "with a reason: '%s'", t.ctx.err);
	kt_release(&t, k);

	kt_init(&t, "{\"ms\": -1, \"jitter\": 0}");
	CHECK_INT(k->setup(&t.ctx), -1, "negative ms is refused");
	kt_release(&t, k);
}

static void test_copy(void)
{
	const struct kernel_ops *k = kernel_find("cpu.copy");
	double flops = -1, bytes = -1;
	struct kout *out;
	struct kt t;

	kt_init(&t, "{\"bytes\": 4099}");
	CHECK_INT(k->setup(&t.ctx), 0, "copy setup");
	out = t.ctx.priv;
	CHECK_INT(out->bytes, 4099, "copy output size");
	CHECK_INT(k->launch(&t.ctx), 0, "copy launch");
	CHECK_INT(k->check(&t.ctx), 0, "copy check after a launch");
	((unsigned char *)out->data)[100] ^= 0x10;
	CHECK_INT(k->check(&t.ctx), -1, "copy check with a flipped byte fails");
	CHECK(strstr(t.ctx.err, "byte 100") != NULL, "and names the byte: '%s'", t.ctx.err);
	k->counts(&t.ctx, &flops, &bytes);
	CHECK_NEAR(flops, 0, 0, "copy flops");
	CHECK_NEAR(bytes, 2 * 4099, 0, "copy bytes = read + written");
	kt_release(&t, k);

	/* Before any launch the destination is not the source: check cannot pass by accident. */
	kt_init(&t, "{\"bytes\": 1024}");
	k->setup(&t.ctx);
	CHECK_INT(k->check(&t.ctx), -1, "copy check before any launch fails");
	kt_release(&t, k);

	kt_init(&t, "{\"bytes\": 0}");
	CHECK_INT(k->setup(&t.ctx), -1, "copy of 0 bytes is refused");
	kt_release(&t, k);
}

static void test_read(void)
{
	const struct kernel_ops *k = kernel_find("cpu.read");
	uint64_t *buf = malloc(8000), sum = 0;
	double flops = -1, bytes = -1;
	struct kout *out;
	struct kt t;
	int i;

	kt_init(&t, "{\"bytes\": 8005}");
	CHECK_INT(k->setup(&t.ctx), 0, "read setup");
	out = t.ctx.priv;
	CHECK_INT(k->launch(&t.ctx), 0, "read launch");
	CHECK_INT(k->check(&t.ctx), 0, "read check");
	/* The sum really is the sum of the buffer setup filled (seed 2, whole words). */
	kfill_random(buf, 8000, 2);
	for (i = 0; i < 1000; i++)
		sum += buf[i];
	CHECK(*(uint64_t *)out->data == sum, "read sums 1000 words");
	*(uint64_t *)out->data ^= 1;
	CHECK_INT(k->check(&t.ctx), -1, "read check with a wrong sum fails");
	k->counts(&t.ctx, &flops, &bytes);
	CHECK_NEAR(bytes, 8000, 0, "read bytes: whole words only");
	CHECK_NEAR(flops, 0, 0, "read flops");
	kt_release(&t, k);
	free(buf);

	kt_init(&t, "{\"bytes\": 7}");
	CHECK_INT(k->setup(&t.ctx), -1, "read of less than a word is refused");
	kt_release(&t, k);
}

static void test_gemm_one(const char *dtype, int f64)
{
	const struct kernel_ops *k = kernel_find("cpu.gemm");
	double flops, bytes, v;
	struct kout *out;
	char json[160];
	struct kt t;
	long m = 70, n = 65, kk = 33, i;
	int zeros = 0;

	snprintf(json, sizeof(json), "{\"M\": %ld, \"N\": %ld, \"K\": %ld, \"dtype\": \"%s\", "
		 "\"threads\": 0}", m, n, kk, dtype);
	kt_init(&t, json);
	CHECK((k->setup(&t.ctx)) == (0), "gemm %s setup", dtype);
	out = t.ctx.priv;
	CHECK(out->bytes == (size_t)(m * n * (f64 ? 8 : 4)), "gemm %s C size", dtype);
	CHECK((k->check(&t.ctx)) == (-1), "gemm %s check before any launch fails", dtype);
	CHECK((k->launch(&t.ctx)) == (0), "gemm %s launch", dtype);
	CHECK((k->check(&t.ctx)) == (0), "gemm %s check", dtype);
	for (i = 0; i < m * n; i++)
		zeros += (f64 ? ((double *)out->data)[i] : ((float *)out->data)[i]) == 0;
	CHECK_INT(zeros, 0, "gemm output has no zeros");

	/* One element inside the checked corner, off by one part in a thousand. */
	if (f64) {
		v = ((double *)out->data)[5 * n + 7];
		((double *)out->data)[5 * n + 7] = v + 1e-3 * (fabs(v) + 1);
	} else {
		v = ((float *)out->data)[5 * n + 7];
		((float *)out->data)[5 * n + 7] = (float)(v + 1e-3 * (fabs(v) + 1));
	}
	CHECK((k->check(&t.ctx)) == (-1), "gemm %s check with one wrong element fails", dtype);
	CHECK(strstr(t.ctx.err, "C[5][7]") != NULL, "and names it: '%s'", t.ctx.err);
	if (f64)
		((double *)out->data)[0] = NAN;
	else
		((float *)out->data)[0] = NAN;
	CHECK((k->check(&t.ctx)) == (-1), "gemm %s check with a NaN fails", dtype);
	k->launch(&t.ctx);
	CHECK((k->check(&t.ctx)) == (0), "gemm %s check passes again after a launch", dtype);
	k->counts(&t.ctx, &flops, &bytes);
	CHECK_NEAR(flops, 2.0 * m * n * kk, 0, "gemm flops = 2MNK");
	CHECK_NEAR(bytes, (double)(m * kk + kk * n + m * n) * (f64 ? 8 : 4), 0, "gemm bytes");
	kt_release(&t, k);
}

static void test_gemm(void)
{
	const struct kernel_ops *k = kernel_find("cpu.gemm");
	int before = openblas_get_num_threads();
	struct kt t;

	test_gemm_one("f32", 0);
	test_gemm_one("f64", 1);

	kt_init(&t, "{\"M\": 8, \"N\": 8, \"K\": 8, \"dtype\": \"f32\", \"threads\": 1}");
	CHECK_INT(k->setup(&t.ctx), 0, "gemm threads=1 setup");
	CHECK_INT(openblas_get_num_threads(), 1, "threads=1 sets OpenBLAS threads");
	k->launch(&t.ctx);
	CHECK_INT(k->check(&t.ctx), 0, "gemm threads=1 check");
	kt_release(&t, k);
	CHECK_INT(openblas_get_num_threads(), before, "teardown restores OpenBLAS threads");

	kt_init(&t, "{\"M\": 8, \"N\": 0, \"K\": 8, \"dtype\": \"f32\", \"threads\": 0}");
	CHECK_INT(k->setup(&t.ctx), -1, "gemm N=0 is refused");
	kt_release(&t, k);
	kt_init(&t, "{\"M\": 8, \"N\": 8, \"K\": 8, \"dtype\": \"bf16\", \"threads\": 0}");
	CHECK_INT(k->setup(&t.ctx), -1, "gemm dtype bf16 is refused");
	kt_release(&t, k);
}

/* Run debug.fail with params in a forked child; return its wait status. */
static int fail_in_child(const char *json)
{
	const struct kernel_ops *k = kernel_find("debug.fail");
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct kt t;

		kt_init(&t, json);
		if (k->setup(&t.ctx))
			_exit(90);
		k->launch(&t.ctx);
		_exit(91);
	}
	waitpid(pid, &status, 0);
	return status;
}

/* The hang test cancels from a timer signal: what the worker's watchdog thread does, without threads. */
static volatile int *alarm_cancel;

static void on_alarm(int sig)
{
	*alarm_cancel = 1;
}

static void cancel_after(volatile int *cancel, long us)
{
	struct itimerval it = { .it_value = { .tv_sec = us / 1000000, .tv_usec = us % 1000000 } };

	alarm_cancel = cancel;
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void test_debug_fail(void)
{
	const struct kernel_ops *k = kernel_find("debug.fail");
	double t0;
	struct kt t;
	int st;

	kt_init(&t, "{\"mode\": \"error\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	CHECK_INT(k->setup(&t.ctx), 0, "debug.fail setup");
	CHECK_INT(k->launch(&t.ctx), -1, "mode error fails the launch");
	CHECK_STR(t.ctx.err, "debug.fail: failing on purpose", "mode error message");
	kt_release(&t, k);

	kt_init(&t, "{\"mode\": \"error\", \"on\": \"i=3\", \"i\": 2, \"ms\": 0}");
	k->setup(&t.ctx);
	CHECK_INT(k->launch(&t.ctx), 0, "on=i=3 does not fire where i=2");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"error\", \"on\": \"i=3\", \"i\": 3, \"ms\": 0}");
	k->setup(&t.ctx);
	CHECK_INT(k->launch(&t.ctx), -1, "on=i=3 fires where i=3");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"error\", \"on\": \"i=3.0\", \"i\": 3, \"ms\": 0}");
	k->setup(&t.ctx);
	CHECK_INT(k->launch(&t.ctx), -1, "on=i=3.0 fires where i=3 (numbers compare as numbers)");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"error\", \"on\": \"dtype=f64\", \"dtype\": \"f32\", \"i\": 3, \"ms\": 0}");
	k->setup(&t.ctx);
	CHECK_INT(k->launch(&t.ctx), 0, "on=dtype=f64 does not fire where dtype is f32");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"error\", \"on\": \"zz=1\", \"i\": 3, \"ms\": 0}");
	k->setup(&t.ctx);
	CHECK_INT(k->launch(&t.ctx), 0, "on= a parameter the cell lacks never fires");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"error\", \"on\": \"i\", \"i\": 3, \"ms\": 0}");
	CHECK_INT(k->setup(&t.ctx), -1, "on without '=' is refused");
	kt_release(&t, k);
	kt_init(&t, "{\"mode\": \"ok\", \"on\": \"\", \"i\": 0, \"ms\": 20}");
	k->setup(&t.ctx);
	t0 = mono();
	CHECK_INT(k->launch(&t.ctx), 0, "mode ok succeeds");
	CHECK(mono() - t0 >= 0.02, "after sleeping ms=20");
	kt_release(&t, k);

	kt_init(&t, "{\"mode\": \"hang\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	k->setup(&t.ctx);
	cancel_after(&t.cancel, 200000);
	t0 = mono();
	CHECK_INT(k->launch(&t.ctx), -1, "mode hang fails once cancelled");
	CHECK(mono() - t0 >= 0.19 && mono() - t0 < 1.0, "hang lasted until the cancel: %.3f s", mono() - t0);
	CHECK_STR(t.ctx.err, "hung: cancelled after timeout", "mode hang message");
	kt_release(&t, k);

	st = fail_in_child("{\"mode\": \"segv\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "mode segv dies by SIGSEGV (status 0x%x)", st);
	st = fail_in_child("{\"mode\": \"abort\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "mode abort dies by SIGABRT (status 0x%x)", st);
	st = fail_in_child("{\"mode\": \"exit\", \"on\": \"\", \"i\": 0, \"ms\": 0}");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7, "mode exit exits 7 (status 0x%x)", st);
	st = fail_in_child("{\"mode\": \"segv\", \"on\": \"i=1\", \"i\": 0, \"ms\": 0}");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 91, "mode segv where on= does not hold returns (0x%x)", st);
}

static void test_helpers(void)
{
	unsigned char a[37], b[37];
	uint64_t s1 = 9, s2 = 9;
	size_t i, nz = 0;

	kfill_random(a, sizeof(a), 42);
	kfill_random(b, sizeof(b), 42);
	for (i = 0; i < sizeof(a); i++)
		nz += a[i] != 0;
	CHECK(!memcmp(a, b, sizeof(a)), "kfill_random repeats for a seed");
	CHECK(nz > 30, "kfill_random fills with non-zero bytes (%zu of 37)", nz);
	kfill_random(b, sizeof(b), 43);
	CHECK(memcmp(a, b, sizeof(a)) != 0, "another seed, other bytes");
	CHECK(krand(&s1) == krand(&s2) && krand(&s1) != krand(&s1), "krand is a repeatable stream");
}

int main(void)
{
	test_registry();
	test_kparam();
	test_helpers();
	test_sleep();
	test_copy();
	test_read();
	test_gemm();
	test_debug_fail();
	return test_done();
}
