/* test_gang.c: how a gang cell's members' results become the cell's one result (gang_combine): the slowest
 * member per launch, the summary of those, failures, throttling, SM clocks and the kernel's derive(). */
#include <stdlib.h>

#include "master_int.h"
#include "stats.h"
#include "test.h"
#include "util.h"

#define NM 3

/*
 * Three members (gang ranks 0, 1, 2 on world ranks 2, 5, 7), five launches each. The slowest member
 * differs per launch: 1, 0, 2, 2, 1, so the combined samples are 0.012 0.020 0.017 0.019 0.018.
 */
static const double times[NM][5] = {
	{ 0.010, 0.020, 0.011, 0.013, 0.016 },   /* own median 0.013 */
	{ 0.012, 0.014, 0.015, 0.011, 0.018 },   /* own median 0.014 */
	{ 0.009, 0.016, 0.017, 0.019, 0.010 },   /* own median 0.016 */
};
static const double own_median[NM] = { 0.013, 0.014, 0.016 };
/* SM clocks in MHz, 0 unknown. Per launch the lowest known is 1950, 1500, none, 1700, 1410. */
static const double clocks[NM][5] = {
	{ 1980, 1500, 0, 1980, 1980 },
	{ 1950, 1980, 0, 0, 1410 },
	{ 0, 1980, 0, 1700, 1980 },
};
static int world[NM] = { 2, 5, 7 };

struct gang {
	struct task t;
	struct result m[NM];
	struct spec_timing timing;
	struct result c;
};

/* The members as measure.c's lockstep loop leaves them, for a cpu.allreduce cell of 64 KiB on 3. */
static void gang_init(struct gang *g, const char *params)
{
	memset(g, 0, sizeof(*g));
	g->t.cell = 42;
	g->t.key = (char *)"ar/bytes=65536/gpus=3";
	g->t.params = (char *)params;
	g->t.gang_size = NM;
	g->t.gang_ranks = world;
	g->timing.max_noise = 0.2;
	for (int i = 0; i < NM; i++) {
		struct result *r = &g->m[i];

		result_init(r);
		r->cell = 42;
		r->worker = world[i];
		r->started = 1000.5 - i;          /* the last member started first */
		r->wall = 2.0 + i * 0.25;         /* and it took longest */
		r->noise_ok = 1;
		for (int s = 0; s < 5; s++)
			result_add_sample(r, times[i][s], clocks[i][s]);
		result_set_metric(r, "seconds", own_median[i]);
		result_set_metric(r, "gbs", 65536 / own_median[i] / 1e9);
		result_set_metric(r, "errors", 0);
		result_set_metric(r, "batch", 4);
	}
}

static void gang_combine_now(struct gang *g)
{
	gang_combine(kernel_find("cpu.allreduce"), &g->t, g->m, &g->timing, &g->c);
}

static void gang_release_test(struct gang *g)
{
	for (int i = 0; i < NM; i++)
		result_release(&g->m[i]);
	result_release(&g->c);
}

/* The metric called name of r, NaN when r has none. */
static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);
	double d;

	return v && !parse_double(v, &d) ? d : NAN;
}

static void test_slowest_per_launch(void)
{
	static const double want[5] = { 0.012, 0.020, 0.017, 0.019, 0.018 };
	struct gang g;
	struct summary s;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_OK, "status");
	CHECK(g.c.error == NULL, "no error: '%s'", g.c.error ? g.c.error : "");
	CHECK_INT(g.c.cell, 42, "cell");
	CHECK_INT(g.c.worker, 2, "worker: the leader's world rank");
	CHECK_NEAR(g.c.started, 998.5, 0, "started: the earliest member's start");
	CHECK_NEAR(g.c.wall, 2.5, 0, "wall: the longest member's");
	CHECK_INT(g.c.nsamples, 5, "one sample per launch");
	for (int i = 0; i < 5 && i < g.c.nsamples; i++)
		CHECK(g.c.samples[i] == want[i], "launch %d: the slowest member's time: got %.17g, want %.17g", i,
		      g.c.samples[i], want[i]);

	/* The summary the store keeps, from the combined samples 0.012 0.020 0.017 0.019 0.018
	 * (sorted 0.012 0.017 0.018 0.019 0.020). */
	stats_summary(g.c.samples, (size_t)g.c.nsamples, &s);
	CHECK_NEAR(s.median, 0.018, 1e-15, "median: the middle of five");
	CHECK_NEAR(s.q1, 0.017, 1e-15, "q1: type 7, h = 4 * 0.25 = 1, the second smallest");
	CHECK_NEAR(s.q3, 0.019, 1e-15, "q3: h = 4 * 0.75 = 3, the fourth");
	CHECK_NEAR(s.min, 0.012, 0, "min");
	CHECK_NEAR(s.max, 0.020, 0, "max");
	CHECK_NEAR(s.mean, 0.0172, 1e-15, "mean: 0.086 / 5");
	/* Deviations from 0.0172: -5.2, 2.8, -0.2, 1.8, 0.8 (1e-3); squares sum to 38.8e-6; / 4 = 9.7e-6;
	 * sqrt = 0.0031144823004794872. */
	CHECK_NEAR(s.stdev, 0.0031144823004794872, 1e-12, "stdev (n - 1)");
	/* 0.0031144823004794872 / 0.0172 */
	CHECK_NEAR(g.c.sum.noise, 0.18107455235345857, 1e-12, "noise: stdev / mean of the combined samples");
	CHECK_INT(g.c.noise_ok, 1, "noise 0.181 is within max_noise 0.2");

	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "seconds: the combined median, not the leader's 0.013");
	CHECK_NEAR(metric(&g.c, "errors"), 0, 0, "errors");
	CHECK_NEAR(metric(&g.c, "batch"), 4, 0, "the leader's other metrics are carried over");
	/* The leader's gbs was 65536 bytes over its own median 0.013; the cell's is over the cell's median,
	 * 65536 / 0.018 / 1e9, the same as algbw_gbs. */
	CHECK_NEAR(metric(&g.c, "gbs"), 0.003640888888888889, 1e-12, "gbs over the combined median");
	/* cpu.allreduce's derive, as nccl-tests: algbw = bytes / seconds / 1e9 = 65536 / 0.018 / 1e9;
	 * busbw = algbw * 2 (n - 1) / n = algbw * 4 / 3 for 3 members. */
	CHECK_NEAR(metric(&g.c, "algbw_gbs"), 0.003640888888888889, 1e-12, "algbw_gbs from the combined median");
	CHECK_NEAR(metric(&g.c, "busbw_gbs"), 0.004854518518518518, 1e-12, "busbw_gbs = algbw * 2(n-1)/n");
	gang_release_test(&g);

	/* The same gang against a tighter target: 0.181 > 0.18. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	g.timing.max_noise = 0.18;
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_OK, "noisy: still ok");
	CHECK_INT(g.c.noise_ok, 0, "noise 0.181 misses max_noise 0.18, though every member met it");
	gang_release_test(&g);

	/* Two members: the same launches, busbw's factor 2 (2 - 1) / 2 = 1. Samples max(m0, m1): 0.012 0.020
	 * 0.015 0.013 0.018, median 0.015; algbw = 65536 / 0.015 / 1e9. */
	gang_init(&g, "{\"bytes\":65536}");
	g.t.gang_size = 2;
	gang_combine_now(&g);
	CHECK_INT(g.c.nsamples, 5, "pair: five samples");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.015, 1e-15, "pair: median of the pair's maxima");
	CHECK_NEAR(metric(&g.c, "algbw_gbs"), 0.0043690666666666666, 1e-12, "pair: algbw_gbs");
	CHECK_NEAR(metric(&g.c, "busbw_gbs"), 0.0043690666666666666, 1e-12, "pair: busbw_gbs = algbw");
	gang_release_test(&g);
}

/*
 * The lockstep loop makes every member take the same number of samples, sample i being the same launch
 * everywhere; a member with fewer (which that loop never sends) leaves the launches every member has,
 * which are still aligned from the first.
 */
static void test_unequal_counts(void)
{
	struct gang g;
	struct summary s;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	g.m[1].nsamples = 4;   /* member 1 lacks launch 4, where it was the slowest */
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_OK, "unequal: ok");
	CHECK_INT(g.c.nsamples, 4, "unequal: the four launches every member has");
	/* Maxima of launches 0..3: 0.012 0.020 0.017 0.019; sorted 0.012 0.017 0.019 0.020. */
	stats_summary(g.c.samples, (size_t)g.c.nsamples, &s);
	CHECK_NEAR(g.c.nsamples == 4 ? g.c.samples[3] : -1, 0.019, 0, "unequal: launch 3's maximum");
	CHECK_NEAR(s.median, 0.018, 1e-15, "unequal: median (0.017 + 0.019) / 2");
	CHECK_NEAR(s.q1, 0.01575, 1e-15, "unequal: q1, h = 0.75: 0.012 + 0.75 * 0.005");
	CHECK_NEAR(s.q3, 0.01925, 1e-15, "unequal: q3, h = 2.25: 0.019 + 0.25 * 0.001");
	CHECK_NEAR(s.mean, 0.017, 1e-15, "unequal: mean 0.068 / 4");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "unequal: seconds");
	gang_release_test(&g);

	/* The leader with fewer: the same rule from the other side. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	g.m[0].nsamples = 2;
	gang_combine_now(&g);
	CHECK_INT(g.c.nsamples, 2, "leader short: two launches");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.016, 1e-15, "leader short: median of 0.012 and 0.020");
	gang_release_test(&g);
}

static void test_failed_member(void)
{
	struct gang g;

	/* One member's check failed: the cell fails with its reason, naming gang rank and world rank. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	result_fail(&g.m[1], RESULT_ERROR, "check failed: %d of %d elements wrong", 3, 16384);
	result_set_metric(&g.m[1], "errors", 1);
	g.m[1].throttled = 1;
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_ERROR, "one failed: the cell fails");
	CHECK_STR(g.c.error, "gang rank 1 (rank 5): check failed: 3 of 16384 elements wrong",
		  "one failed: its error, naming the member");
	CHECK_INT(g.c.nsamples, 0, "one failed: no samples kept");
	CHECK_INT((long long)g.c.metrics.n, 0, "one failed: no metrics (no bandwidth of a failed cell)");
	CHECK_INT(g.c.worker, 2, "one failed: the leader's world rank");
	CHECK_INT(g.c.throttled, 1, "one failed: throttled still reported");
	CHECK_NEAR(g.c.wall, 2.5, 0, "one failed: wall still the longest");
	gang_release_test(&g);

	/* A member that failed without a message: the status name stands for it. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	g.m[2].status = RESULT_TIMEOUT;
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_TIMEOUT, "no message: the member's status");
	CHECK_STR(g.c.error, "gang rank 2 (rank 7): timeout", "no message: the status name");
	gang_release_test(&g);
}

static void test_all_failed(void)
{
	struct gang g;

	/* Member 1 hung; the two others timed out waiting for it in the collective. Every reason is kept,
	 * in gang order, and the first failure's status is the cell's. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	result_fail(&g.m[0], RESULT_TIMEOUT, "timeout: launch: cancelled");
	result_fail(&g.m[1], RESULT_TIMEOUT, "timeout: launch: hung until the timeout");
	result_fail(&g.m[2], RESULT_ERROR, "launch: MPI_Allreduce: connection reset");
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_TIMEOUT, "all failed: the first failure's status");
	CHECK_STR(g.c.error, "gang rank 0 (rank 2): timeout: launch: cancelled; "
		  "gang rank 1 (rank 5): timeout: launch: hung until the timeout; "
		  "gang rank 2 (rank 7): launch: MPI_Allreduce: connection reset", "all failed: every reason");
	CHECK_INT(g.c.nsamples, 0, "all failed: no samples");
	CHECK_INT((long long)g.c.metrics.n, 0, "all failed: no metrics");
	gang_release_test(&g);
}

/*
 * Throttled samples of a gang cell are kept and counted (sample i must stay launch i on every member);
 * the master cannot tell which launches they were (each member judges against its own GPU's maximum
 * clock), so the cell reports the largest count: at least that many launches ran throttled.
 */
static void test_throttled_and_clock(void)
{
	static const double want_clock[5] = { 1950, 1500, 0, 1700, 1410 };
	double known[5];
	size_t nk = 0;
	struct gang g;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	g.m[0].throttled = 0;
	g.m[1].throttled = 2;
	g.m[2].throttled = 1;
	gang_combine_now(&g);
	CHECK_INT(g.c.throttled, 2, "throttled: the largest member count (0, 2, 1)");
	CHECK_INT(g.c.nsamples, 5, "throttled samples are kept");
	/* Per launch the lowest known clock of the gang: the GPU that ran slowest sets it; a launch no
	 * member knows the clock of stays unknown (0). */
	for (int i = 0; i < 5 && i < g.c.nsamples; i++)
		CHECK(g.c.clocks[i] == want_clock[i], "launch %d: the lowest known SM clock: got %g, want %g", i,
		      g.c.clocks[i], want_clock[i]);
	/* sm_clock as the store computes it (median of the known clocks): 1410 1500 1700 1950 -> 1600. */
	for (int i = 0; i < g.c.nsamples; i++)
		if (g.c.clocks[i] > 0)
			known[nk++] = g.c.clocks[i];
	CHECK_NEAR(stats_median(known, nk), 1600, 0, "sm_clock: median of 1410 1500 1700 1950");
	gang_release_test(&g);
}

/* The worst errors count of any member, when one of them had errors but still passed. */
static void test_worst_errors(void)
{
	struct gang g;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	result_set_metric(&g.m[2], "errors", 3);
	result_set_metric(&g.m[1], "errors", 1);
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_OK, "errors: ok");
	CHECK_NEAR(metric(&g.c, "errors"), 3, 0, "errors: the worst member's 3, not the leader's 0");
	gang_release_test(&g);

	/* Only a member that is not the leader counted errors: still the cell's. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	json_obj_release(&g.m[0].metrics);
	json_obj_release(&g.m[2].metrics);
	result_set_metric(&g.m[1], "errors", 2);
	gang_combine_now(&g);
	CHECK_NEAR(metric(&g.c, "errors"), 2, 0, "errors: member 1's 2 though the leader has none");
	gang_release_test(&g);

	/* A kernel that checks nothing reports no errors metric: the cell claims no "0 errors" for it. */
	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	for (int i = 0; i < NM; i++) {
		json_obj_release(&g.m[i].metrics);
		result_set_metric(&g.m[i], "seconds", own_median[i]);
	}
	gang_combine_now(&g);
	CHECK(isnan(metric(&g.c, "errors")), "no member counted errors: no errors metric (got %g)",
	      metric(&g.c, "errors"));
	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "no errors metric: seconds still there");
	gang_release_test(&g);
}

/*
 * A cell's params hold only the spec's axes; derive() must see the kernel's defaults as the kernel did
 * (sizes as numbers): a sweep that left bytes at cpu.allreduce's default 1M got 0 GB/s.
 */
static void test_derive_defaults(void)
{
	struct gang g;

	gang_init(&g, "{\"dtype\":\"f64\"}");
	gang_combine_now(&g);
	/* 1M = 1048576 bytes; 1048576 / 0.018 / 1e9; busbw * 2 (3 - 1) / 3. */
	CHECK_NEAR(metric(&g.c, "algbw_gbs"), 0.058254222222222224, 1e-12, "default bytes: algbw_gbs");
	CHECK_NEAR(metric(&g.c, "busbw_gbs"), 0.077672296296296299, 1e-12, "default bytes: busbw_gbs");
	gang_release_test(&g);
}

/* Every rate the leader measured (work over its own median) is put over the gang's median, the cell's
 * seconds; one that cannot be (the leader sent no seconds) is left out rather than kept inconsistent. */
static void test_rates(void)
{
	struct gang g;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	result_set_metric(&g.m[0], "gflops", 2.0);
	result_set_metric(&g.m[1], "gflops", 9.0);   /* not the leader's: not read */
	gang_combine_now(&g);
	/* 2.0 * 0.013 / 0.018 */
	CHECK_NEAR(metric(&g.c, "gflops"), 1.4444444444444444, 1e-12, "gflops: the leader's work over 0.018 s");
	CHECK_NEAR(metric(&g.c, "gbs"), metric(&g.c, "algbw_gbs"), 1e-12, "gbs equals algbw_gbs");
	gang_release_test(&g);

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	result_release(&g.m[0]);
	result_init(&g.m[0]);
	for (int s = 0; s < 5; s++)
		result_add_sample(&g.m[0], times[0][s], clocks[0][s]);
	result_set_metric(&g.m[0], "gbs", 5.0);
	result_set_metric(&g.m[0], "batch", 4);
	gang_combine_now(&g);
	CHECK(isnan(metric(&g.c, "gbs")), "leader without seconds: no gbs (got %g)", metric(&g.c, "gbs"));
	CHECK_NEAR(metric(&g.c, "batch"), 4, 0, "leader without seconds: batch kept");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "leader without seconds: seconds");
	gang_release_test(&g);
}

/* No derive hook (or no kernel) adds nothing; unreadable params skip derive rather than fail the cell. */
static void test_no_derive(void)
{
	struct gang g;

	gang_init(&g, "{\"bytes\":65536,\"gpus\":3}");
	gang_combine(NULL, &g.t, g.m, &g.timing, &g.c);
	CHECK_INT(g.c.status, RESULT_OK, "no kernel: ok");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "no kernel: seconds");
	CHECK(isnan(metric(&g.c, "algbw_gbs")), "no kernel: no algbw_gbs");
	gang_release_test(&g);

	gang_init(&g, "{\"bytes\":");
	gang_combine_now(&g);
	CHECK_INT(g.c.status, RESULT_OK, "bad params: ok");
	CHECK(isnan(metric(&g.c, "busbw_gbs")), "bad params: no busbw_gbs");
	CHECK_NEAR(metric(&g.c, "seconds"), 0.018, 1e-15, "bad params: seconds");
	gang_release_test(&g);
}

/* gang_forget: a worker's failed cell retires every set of members with that worker, and only those. */
static void test_forget(void)
{
	static int r01[] = { 0, 1 }, r02[] = { 0, 2 }, r12[] = { 1, 2 }, r012[] = { 0, 1, 2 };
	struct gang_set sets[] = { { 2, 1, NULL }, { 2, 2, NULL }, { 2, 3, NULL }, { 3, 4, NULL } };
	int *ranks[] = { r01, r02, r12, r012 };
	struct master m;

	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 4; i++) {
		ALLOC_GROW(m.sets, m.nsets + 1, m.alloc_sets);
		m.sets[m.nsets] = sets[i];
		m.sets[m.nsets].ranks = xmalloc((size_t)sets[i].size * sizeof(int));
		memcpy(m.sets[m.nsets].ranks, ranks[i], (size_t)sets[i].size * sizeof(int));
		m.nsets++;
	}
	gang_forget(&m, 5);
	CHECK_INT(m.nsets, 4, "a worker in no set retires none");
	gang_forget(&m, 0);
	CHECK_INT(m.nsets, 1, "worker 0's failure retires its three sets");
	CHECK(m.nsets == 1 && m.sets[0].id == 3, "the set of 1 and 2 is kept (id %d)", m.nsets ? m.sets[0].id : -1);
	gang_forget(&m, 2);
	CHECK_INT(m.nsets, 0, "then worker 2's retires the last");
	free(m.sets);
}

int main(void)
{
	test_forget();
	test_slowest_per_launch();
	test_unequal_counts();
	test_failed_member();
	test_all_failed();
	test_throttled_and_clock();
	test_worst_errors();
	test_derive_defaults();
	test_rates();
	test_no_derive();
	return test_done();
}
