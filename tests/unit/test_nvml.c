/* test_nvml.c: nvml.c and clocks.c against the fake NVML (fake_nvml.c, loaded through SWEEP_NVML_LIB as
 * the driver's library would be): energy, locks and their refusals, putting the clocks back, the lock
 * recorded in a hello's conditions and with a result. Every call that sets or resets a clock is read back
 * from the fake's log. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "clocks.h"
#include "msg.h"
#include "nvml.h"
#include "test.h"

static char log_path[256];

/* The fake's log so far, then emptied. */
static char *log_take(void)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = fopen(log_path, "r");

	if (f) {
		s = malloc(8192);
		n = fread(s, 1, 8191, f);
		s[n] = '\0';
		fclose(f);
	}
	remove(log_path);
	return s ? s : strdup("");
}

static void check_log(const char *want, const char *name)
{
	char *got = log_take();

	CHECK_TEXT(got, want, name);
	free(got);
}

static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);
	double d;

	return v && !parse_double(v, &d) ? d : NAN;
}

/* The counter over 50 ms: the fake's constant 300 W. */
static void test_energy(void)
{
	struct timespec nap = { 0, 50000000 };
	double e0, e1, t0, t1;
	void *dev;

	CHECK_INT(nvml_device(NULL, "GPU-fake-1", &dev), 0, "a device by UUID");
	CHECK_INT(nvml_energy(dev, &e0), 0, "energy read");
	t0 = now_mono();
	nanosleep(&nap, NULL);
	CHECK_INT(nvml_energy(dev, &e1), 0, "energy read again");
	t1 = now_mono();
	CHECK_NEAR((e1 - e0) / (t1 - t0), 300, 0.05, "joules over seconds: the fake's 300 W");
	CHECK_INT(nvml_energy(NULL, &e0), -1, "no device, no energy");
}

static void test_lock(void)
{
	struct spec s = { .clock_sm = 1410, .clock_mem = 2619 };
	struct json_obj o = JSON_OBJ_INIT;
	struct clocks_held h;
	struct result r;
	char name[64];
	unsigned mhz;
	void *dev;

	CHECK_INT(clocks_device("", 3, &dev, name, sizeof(name)), 0, "no UUID: the local rank's NVML device");
	CHECK_STR(name, "NVML GPU 1", "rank 3 of 2 GPUs: the second");
	CHECK_INT(clocks_lock(&s, dev, name, &h), 0, "lock");
	CHECK_INT(nvml_clock(dev, NVML_SM, 0, &mhz), 0, "clock read");
	CHECK_INT(mhz, 1410, "the SM clock where it was locked");
	result_init(&r);
	clocks_result(&s, dev, &r);
	CHECK_NEAR(metric(&r, "lock_sm"), 1410, 0, "lock_sm with the result");
	CHECK_NEAR(metric(&r, "lock_mem"), 2619, 0, "lock_mem with the result");
	CHECK_NEAR(metric(&r, "locked_sm"), 1410, 0, "locked_sm: what NVML reads");
	CHECK_NEAR(metric(&r, "locked_mem"), 2619, 0, "locked_mem: what NVML reads");
	result_release(&r);
	check_log("nvmlDeviceSetGpuLockedClocks 1 1410 1410 = 0\nnvmlDeviceSetMemoryLockedClocks 1 2619 2619 = 0\n",
		  "SM then memory locked, each at its MHz");
	clocks_restore(&h);
	check_log("nvmlDeviceResetGpuLockedClocks 1 = 0\nnvmlDeviceResetMemoryLockedClocks 1 = 0\n", "both put back");
	clocks_restore(&h);
	check_log("", "put back once: a second restore does nothing");

	s.clock_sm = SPEC_CLOCK_BASE;
	s.clock_mem = 0;
	CHECK_INT(clocks_lock(&s, dev, name, &h), 0, "lock at base");
	clocks_describe(&s, dev, 1, &o);
	CHECK_STR(json_obj_get(&o, "lock_sm"), "base", "base asked, said as a word");
	CHECK_STR(json_obj_get(&o, "locked_sm"), "1590", "the base clock reached");
	CHECK(!json_obj_get(&o, "lock_mem"), "memory not asked: not said");
	json_obj_release(&o);
	result_init(&r);
	clocks_result(&s, dev, &r);
	CHECK(isnan(metric(&r, "lock_sm")), "base is no number: no lock_sm metric");
	CHECK_NEAR(metric(&r, "locked_sm"), 1590, 0, "locked_sm at base");
	result_release(&r);
	clocks_restore(&h);
	check_log("nvmlDeviceSetGpuLockedClocks 1 4294967041 4294967041 = 0\nnvmlDeviceResetGpuLockedClocks 1 = 0\n",
		  "base is NVML's TDP limit id, as NVBench locks it");
}

static void test_refused(void)
{
	struct spec s = { .clock_sm = 1410, .clock_mem = 2619 };
	struct clocks_held h;
	char err[512];
	void *dev;

	CHECK_INT(nvml_device_index(0, &dev), 0, "device 0");
	setenv("FAKE_NVML_DENY", "1", 1);
	test_capture_start();
	CHECK_INT(clocks_lock(&s, dev, "GPU-x", &h), -1, "lock refused");
	capture_into(err, sizeof(err));
	CHECK(strstr(err, "cannot lock the SM clock of GPU-x: no permission (Insufficient Permissions): locking "
			  "clocks needs root") != NULL, "said why: %s", err);
	check_log("nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 4\n", "refused, nothing else tried or reset");

	setenv("FAKE_NVML_DENY", "memory", 1);
	test_capture_start();
	CHECK_INT(clocks_lock(&s, dev, "GPU-x", &h), -1, "memory lock refused");
	capture_into(err, sizeof(err));
	check_log("nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 0\nnvmlDeviceSetMemoryLockedClocks 0 2619 2619 = 4\n"
		  "nvmlDeviceResetGpuLockedClocks 0 = 0\n", "the SM lock taken is put back when memory's is refused");
	CHECK(!h.dev && !h.sm && !h.mem, "nothing left to restore");
	unsetenv("FAKE_NVML_DENY");

	/* A machine whose clocks must not change: no call reaches NVML. */
	setenv("SWEEP_NO_LOCK_CLOCKS", "1", 1);
	test_capture_start();
	CHECK_INT(clocks_lock(&s, dev, "GPU-x", &h), -1, "lock forbidden");
	CHECK_INT(clocks_reset(dev, "GPU-x"), -1, "reset forbidden");
	capture_into(err, sizeof(err));
	CHECK(strstr(err, "cannot lock the clocks of GPU-x: SWEEP_NO_LOCK_CLOCKS is set") != NULL, "said: %s", err);
	check_log("", "forbidden: NVML never asked");
	setenv("SWEEP_NO_LOCK_CLOCKS", "0", 1);
	CHECK(clocks_forbidden() == NULL, "0 forbids nothing");
	unsetenv("SWEEP_NO_LOCK_CLOCKS");
}

/* The worker's start: a hello's conditions gain the lock; a spec without clocks: locks nothing. */
static void test_worker_start(void)
{
	struct spec s = { .clock_sm = 1500 }, none = { 0 };
	struct hello h = { .rank = 1, .local_rank = 0, .gpu = -1, .host = "n1", .facts = "{}", .gpu_uuid = "",
			   .binding = "", .conditions = "{\"loadavg\":0.5}" };
	struct strbuf sb = STRBUF_INIT;
	struct clocks_held held;
	struct hello got;

	msg_put_hello(&sb, &h);
	CHECK_INT(clocks_worker_start(&none, &sb, &held), 0, "no clocks: nothing to do");
	check_log("", "no clocks asked: no NVML call that sets anything");
	CHECK_INT(clocks_worker_start(&s, &sb, &held), 0, "worker start locks");
	CHECK_INT(msg_get_hello(sb.buf, sb.len, &got), 0, "the hello still reads");
	CHECK_STR(got.conditions, "{\"loadavg\":0.5,\"lock_sm\":1500,\"locked_sm\":1500}",
		  "the lock among the conditions, asked and reached");
	CHECK_STR(got.host, "n1", "the rest of the hello kept");
	hello_release(&got);
	clocks_restore(&held);
	check_log("nvmlDeviceSetGpuLockedClocks 0 1500 1500 = 0\nnvmlDeviceResetGpuLockedClocks 0 = 0\n",
		  "locked on GPU 0 (local rank 0), put back");
	sb_release(&sb);
}

int main(void)
{
	snprintf(log_path, sizeof(log_path), "/tmp/test_nvml.%d.log", (int)getpid());
	setenv("FAKE_NVML_LOG", log_path, 1);
	setenv("SWEEP_NVML_LIB", "build/tests/fake/libnvidia-ml.so.1", 1);
	unsetenv("FAKE_NVML_GPUS");
	unsetenv("FAKE_NVML_DENY");
	remove(log_path);
	CHECK_INT(nvml_open(), 0, "the fake loads through SWEEP_NVML_LIB");
	test_energy();
	test_lock();
	test_refused();
	test_worker_start();
	remove(log_path);
	return test_done();
}
