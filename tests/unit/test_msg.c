/* test_msg.c: message round trips and malformed buffers; JSON reading and writing; util parsing. */
#include <stdlib.h>

#include "msg.h"
#include "test.h"

static void test_task(void)
{
	struct task t = { 42, "00ff00ff00ff00ff", "{\"M\":64}", 1, "hostA/gpu0", 0, 0, 1, 0, 0, NULL }, u;
	struct strbuf sb = STRBUF_INIT;

	msg_put_task(&sb, &t);
	CHECK(!msg_get_task(sb.buf, sb.len, &u), "task decodes");
	CHECK_INT(u.cell, 42, "task cell");
	CHECK_STR(u.key, t.key, "task key");
	CHECK_STR(u.params, t.params, "task params");
	CHECK_INT(u.pass, 1, "task pass");
	CHECK_STR(u.replica, "hostA/gpu0", "task replica");
	CHECK_INT(u.gang_size, 1, "an ordinary task is a gang of one");
	CHECK(u.gang_ranks == NULL, "an ordinary task has no member list");
	task_release(&u);
	for (size_t n = 0; n < sb.len; n++)
		CHECK(msg_get_task(sb.buf, n, &u) == -1, "truncated task (%zu of %zu bytes) is refused", n, sb.len);
	sb_reset(&sb);
	{
		int ranks[3] = { 4, 1, 2 };

		t.gang_size = 3;
		t.gang_rank = 2;
		t.gang_id = 9;
		t.gang_ranks = ranks;
		msg_put_task(&sb, &t);
		CHECK(!msg_get_task(sb.buf, sb.len, &u), "gang task decodes");
		CHECK(u.gang_size == 3 && u.gang_rank == 2 && u.gang_id == 9, "gang fields %d %d %d", u.gang_size,
		      u.gang_rank, u.gang_id);
		CHECK(u.gang_ranks && u.gang_ranks[0] == 4 && u.gang_ranks[2] == 2, "gang members");
		task_release(&u);
		for (size_t n = 0; n < sb.len; n++)
			CHECK(msg_get_task(sb.buf, n, &u) == -1, "truncated gang task (%zu bytes) is refused", n);
	}
	sb_release(&sb);
}

static void test_tasks(void)
{
	struct task t[3] = {
		{ 1, "0000000000000001", "{\"a\":1}", 0, "", 0, 0, 1, 0, 0, NULL },
		{ 2, "0000000000000002", "{\"a\":2}", 1, "h", 0, 0, 1, 0, 0, NULL },
		{ 3, "0000000000000003", "{}", 0, "", 1, 0, 1, 0, 0, NULL },
	}, *u;
	const struct task *list[3] = { &t[0], &t[1], &t[2] };
	struct strbuf sb = STRBUF_INIT;
	int n = 0;

	msg_put_tasks(&sb, list, 3);
	CHECK(!msg_get_tasks(sb.buf, sb.len, &u, &n), "three tasks in one message decode");
	CHECK_INT(n, 3, "task count");
	CHECK(u[1].cell == 2 && !strcmp(u[1].replica, "h") && u[1].pass == 1, "second task's fields");
	CHECK(u[2].control == 1 && !strcmp(u[2].params, "{}"), "third task's fields");
	for (int i = 0; i < n; i++)
		task_release(&u[i]);
	free(u);
	for (size_t k = 0; k < sb.len; k++)
		CHECK(msg_get_tasks(sb.buf, k, &u, &n) == -1, "truncated list (%zu of %zu bytes) is refused", k, sb.len);
	sb_reset(&sb);
	msg_put_tasks(&sb, list, 0);
	CHECK(msg_get_tasks(sb.buf, sb.len, &u, &n) == -1, "an empty list is refused");
	sb_release(&sb);
}

static void test_result(void)
{
	struct result r, u;
	struct strbuf sb = STRBUF_INIT;

	result_init(&r);
	r.cell = 7;
	r.worker = 3;
	r.status = RESULT_TIMEOUT;
	r.error = xstrdup("timed out after 15 s");
	r.started = 1.7e9;
	r.wall = 15.25;
	result_add_sample(&r, 1e-3, 1980);
	result_add_sample(&r, 2e-3, 1965);
	result_add_sample(&r, 6e-3, 1960);
	result_summarize(&r, 0.9, NAN);
	r.throttled = 4;
	result_set_metric(&r, "gflops", 123.5);
	result_add_item(&r, "p1", "tok_s", 88.5);
	r.out = xstrdup("line\n");
	r.note = xstrdup("2 records of item p1 averaged");
	msg_put_result(&sb, &r);
	CHECK(!msg_get_result(sb.buf, sb.len, &u), "result decodes");
	CHECK_INT(u.cell, 7, "result cell");
	CHECK_INT(u.status, RESULT_TIMEOUT, "result status");
	CHECK_STR(u.error, "timed out after 15 s", "result error");
	CHECK_INT(u.nsamples, 3, "result samples");
	/* The summary travels as the worker computed it: the master stores it, never recomputes it. */
	CHECK_NEAR(u.sum.median, 2e-3, 0, "summary median as sent");
	CHECK_NEAR(u.sum.q1, 1.5e-3, 1e-15, "summary q1 as sent");
	CHECK_NEAR(u.sum.q3, 4e-3, 1e-15, "summary q3 as sent");
	CHECK_NEAR(u.sum.mean, 3e-3, 1e-15, "summary mean as sent");
	CHECK_NEAR(u.sum.noise, 0.88191710368819687, 1e-12, "summary noise: stdev / mean = sqrt(7) / 3");
	CHECK_INT(u.noise_ok, 1, "noise 0.88 meets the 0.9 target");
	CHECK_NEAR(u.samples[1], 2e-3, 0, "sample value exact");
	CHECK_NEAR(u.clocks[0], 1980, 0, "clock value exact");
	CHECK_INT(u.throttled, 4, "throttled count");
	CHECK_STR(json_obj_get(&u.metrics, "gflops"), "123.5", "metric");
	CHECK_INT(u.nitems, 1, "items");
	CHECK_STR(u.items[0].metric, "tok_s", "item metric");
	CHECK_NEAR(u.items[0].value, 88.5, 0, "item value");
	CHECK_STR(u.out, "line\n", "captured stdout");
	CHECK(u.err == NULL, "absent stderr stays NULL");
	CHECK_STR(u.note, "2 records of item p1 averaged", "the result's note");
	result_release(&u);
	for (size_t n = 0; n < sb.len; n += 3)
		CHECK(msg_get_result(sb.buf, n, &u) == -1, "truncated result (%zu bytes) is refused", n);
	sb.buf[12] = 9;   /* an impossible status (after cell i64 and worker u32) */
	CHECK(msg_get_result(sb.buf, sb.len, &u) == -1, "bad status is refused");
	result_release(&r);

	/* The median's interval, the precision verdict and the warm-up's end travel too: 1..7 ms, whose
	 * interval is [1, 7] ms (l = 0 at n = 7), a relative half-width of 0.75. */
	sb_reset(&sb);
	result_init(&r);
	for (int i = 7; i >= 1; i--)
		result_add_sample(&r, i * 1e-3, 0);
	result_summarize(&r, INFINITY, 0.8);
	r.settled = 0;
	r.stop = STOP_PRECISION;
	msg_put_result(&sb, &r);
	CHECK(!msg_get_result(sb.buf, sb.len, &u), "result with an interval decodes");
	CHECK(u.sum.ci_lo == 1e-3 && u.sum.ci_hi == 7e-3, "interval as sent: [%g, %g]", u.sum.ci_lo, u.sum.ci_hi);
	CHECK_INT(u.precise, 1, "precise as sent (0.75 <= 0.8)");
	CHECK_INT(u.settled, 0, "settled 0 as sent: max_warmup came first");
	CHECK_INT(u.stop, STOP_PRECISION, "stop rule precision as sent");
	result_release(&u);
	r.precise = 0;
	r.settled = -1;
	sb_reset(&sb);
	msg_put_result(&sb, &r);
	CHECK(!msg_get_result(sb.buf, sb.len, &u) && !u.precise && u.settled == -1, "precise 0, settled -1");
	result_release(&u);
	result_release(&r);
	sb_release(&sb);
}

/* A command's result: the failure no attempt can change, and what each run cost. */
static void test_result_usage(void)
{
	struct run_usage a = { 0.25, 0.125, 8388608 }, b = { 0.5, 0.0625, 9437184 };
	struct result r, u;
	struct strbuf sb = STRBUF_INIT;

	result_init(&r);
	r.cell = 9;
	result_add_sample(&r, 0.05, 0);
	result_set_usage(&r, &a);
	result_add_sample(&r, 0.06, 0);
	result_set_usage(&r, &b);
	result_fail(&r, RESULT_INVALID, "metric 't': regex 'x' matched no line of stdout (2 lines)");
	msg_put_result(&sb, &r);
	CHECK(!msg_get_result(sb.buf, sb.len, &u), "result with usage decodes");
	CHECK_INT(u.status, RESULT_INVALID, "the status class travels");
	CHECK(u.usage && u.usage[0].user == 0.25 && u.usage[0].sys == 0.125 && u.usage[0].rss == 8388608 &&
	      u.usage[1].user == 0.5 && u.usage[1].rss == 9437184, "every run's usage, exact");
	result_release(&u);
	for (size_t n = 0; n < sb.len; n++)
		CHECK(msg_get_result(sb.buf, n, &u) == -1, "truncated (%zu bytes) is refused", n);
	result_release(&r);
	result_init(&r);
	result_add_sample(&r, 1e-3, 1900);
	sb_reset(&sb);
	msg_put_result(&sb, &r);
	CHECK(!msg_get_result(sb.buf, sb.len, &u) && !u.usage, "a kernel's samples have no usage");
	result_release(&u);
	result_release(&r);
	sb_release(&sb);
}

/* The one precision rule: the median's 95 % interval within +-precision of it; no interval under 6
 * samples is never precise, unless nothing was asked (NaN: command cells). */
static void test_precision_rule(void)
{
	struct result r;

	result_init(&r);
	for (int i = 0; i < 10; i++)
		result_add_sample(&r, 100 + i, 0);   /* n = 10: l = 1, interval [101, 108], median 104.5 */
	result_summarize(&r, INFINITY, 3.5 / 104.5);
	CHECK(r.sum.ci_lo == 101 && r.sum.ci_hi == 108, "interval of 100..109: [%g, %g]", r.sum.ci_lo,
	      r.sum.ci_hi);
	CHECK_INT(r.precise, 1, "half-width 3.5 of 104.5 meets 3.5 / 104.5");
	result_summarize(&r, INFINITY, 3.4 / 104.5);
	CHECK_INT(r.precise, 0, "but not 3.4 / 104.5");
	CHECK_INT(r.noise_ok, 1, "no noise target: noise_ok");
	result_release(&r);
	for (int i = 0; i < 5; i++)
		result_add_sample(&r, 1, 0);
	result_summarize(&r, INFINITY, 0.5);
	CHECK(isnan(r.sum.ci_lo) && r.sum.median == 1, "5 equal samples: median 1, no interval");
	CHECK_INT(r.precise, 0, "no interval: not precise, however equal the samples");
	result_summarize(&r, INFINITY, NAN);
	CHECK_INT(r.precise, 1, "nothing asked (a command cell): precise");
	result_release(&r);
}

/* The one noise rule: noise <= target; NaN noise (one sample) meets only an infinite target. */
static void test_noise_rule(void)
{
	struct result r;

	result_init(&r);
	result_add_sample(&r, 1, 0);
	result_add_sample(&r, 3, 0);
	result_summarize(&r, 0.8, NAN);
	CHECK_NEAR(r.sum.noise, 0.70710678118654757, 1e-15, "noise of {1, 3}: sqrt(2) / 2");
	CHECK_INT(r.noise_ok, 1, "0.707 <= 0.8");
	result_summarize(&r, 0.7, NAN);
	CHECK_INT(r.noise_ok, 0, "0.707 > 0.7");
	result_release(&r);
	result_add_sample(&r, 1, 0);
	result_summarize(&r, 0.8, NAN);
	CHECK(isnan(r.sum.noise) && r.sum.median == 1, "one sample: median 1, noise NaN");
	CHECK_INT(r.noise_ok, 0, "NaN noise does not meet a finite target");
	result_summarize(&r, INFINITY, NAN);
	CHECK_INT(r.noise_ok, 1, "but meets no target at all (command cells)");
	result_release(&r);
	CHECK(isnan(r.sum.median) && isnan(r.sum.noise), "a fresh result's summary is all NaN (stored NULL)");
}

static void test_json(void)
{
	struct json_obj o = JSON_OBJ_INIT;
	struct strbuf sb = STRBUF_INIT;
	char err[128];

	CHECK(!json_parse_flat(" {\"item\": \"p\\u00e9\", \"tok_s\": -1.5e3, \"ok\": true, \"n\": null,"
			       " \"nested\": [1, {\"a\": \"]\"}]} ", &o, 1, err, sizeof(err)), "flat object parses");
	CHECK_INT(o.n, 4, "nested value skipped");
	CHECK_STR(json_obj_get(&o, "item"), "p\xc3\xa9", "unicode escape");
	CHECK_STR(json_obj_get(&o, "tok_s"), "-1.5e3", "number text kept");
	CHECK_INT(json_obj_find(&o, "ok")->type, JSON_BOOL, "bool type");
	json_obj_release(&o);
	CHECK(json_parse_flat("{\"a\": [1]}", &o, 0, err, sizeof(err)) == -1, "nested refused unless skipped");
	CHECK(json_parse_flat("{\"a\": 1,}", &o, 1, err, sizeof(err)) == -1, "trailing comma refused");
	CHECK(json_parse_flat("{\"a\": 01x}", &o, 1, err, sizeof(err)) == -1, "bad number refused");
	CHECK(json_parse_flat("tok_s=5", &o, 1, err, sizeof(err)) == -1, "non-JSON refused");
	CHECK(json_parse_flat("{\"a\": \"x", &o, 1, err, sizeof(err)) == -1, "unterminated string refused");
	CHECK(!json_parse_flat("{\"\": 1}", &o, 1, err, sizeof(err)) && o.n == 1, "empty key allowed");
	json_obj_release(&o);
	json_add_str(&sb, "a\"b\\c\n\x01");
	CHECK_STR(sb.buf, "\"a\\\"b\\\\c\\n\\u0001\"", "string escaping");
	sb_reset(&sb);
	json_add_num(&sb, 0.1);
	sb_addc(&sb, ' ');
	json_add_num(&sb, 1024);
	sb_addc(&sb, ' ');
	json_add_num(&sb, 1.0 / 3);
	CHECK_STR(sb.buf, "0.1 1024 0.3333333333333333", "shortest round-trip numbers");
	sb_release(&sb);
}

static void test_util(void)
{
	double v;
	long l;

	CHECK(!parse_bytes("64M", &v) && v == 64.0 * 1024 * 1024, "64M");
	CHECK(!parse_bytes("8 GiB", &v) && v == 8.0 * 1024 * 1024 * 1024, "8 GiB");
	CHECK(!parse_bytes("8B", &v) && v == 8, "8B");
	CHECK(!parse_bytes("1.5k", &v) && v == 1536, "1.5k");
	CHECK(parse_bytes("12 parsecs", &v) == -1, "bad unit refused");
	CHECK(parse_bytes("-1K", &v) == -1, "negative size refused");
	CHECK(!parse_long("-42", &l) && l == -42, "parse_long");
	CHECK(parse_long("4.5", &l) == -1, "parse_long refuses a fraction");
	CHECK(parse_double(" 1", &v) == -1, "leading space refused");
	CHECK_INT(edit_distance("kernal", "kernel"), 1, "edit distance");
	{
		const char *names[] = { "kernel", "command", "params", NULL };

		CHECK_STR(closest_name("kernal", names), "kernel", "closest name");
		CHECK(closest_name("zzzzzz", names) == NULL, "no suggestion when nothing is close");
	}
	/* iso_time keeps the second it last formatted: each call after another second must not reuse it. */
	{
		char b[32], small[8];

		iso_time(1700000000.25, b, sizeof(b));
		CHECK_STR(b, "2023-11-14T22:13:20.250Z", "iso_time");
		iso_time(1700000000.9994, b, sizeof(b));
		CHECK_STR(b, "2023-11-14T22:13:20.999Z", "iso_time, same second");
		iso_time(1700000061.0625, b, sizeof(b));
		CHECK_STR(b, "2023-11-14T22:14:21.062Z", "iso_time, a minute on");
		iso_time(0.5, b, sizeof(b));
		CHECK_STR(b, "1970-01-01T00:00:00.500Z", "iso_time, the epoch");
		iso_time(1700000061.0625, small, sizeof(small));
		CHECK_STR(small, "2023-11", "iso_time, truncated to the buffer");
	}
}

/* A result's record as the executor writes it to the pipe: whole only once every byte is there, and
 * peeked without decoding the rest. */
static void test_record(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct result r;
	enum result_status st;
	double started, wall;
	int64_t cell;

	result_init(&r);
	r.cell = 42;
	r.status = RESULT_TIMEOUT;
	r.started = 1000.5;
	r.wall = 2.25;
	result_fail(&r, RESULT_TIMEOUT, "hung");
	msg_record_put(&sb, &r);
	msg_record_put(&sb, &r);
	CHECK(sb.len % 2 == 0 && sb.len > 8, "two records, %zu bytes", sb.len);
	CHECK_INT(msg_record_len(sb.buf, sb.len), sb.len / 2, "the first record's length in a buffer of two");
	CHECK_INT(msg_record_len(sb.buf, sb.len / 2 - 1), 0, "one byte short: not whole yet");
	CHECK_INT(msg_record_len(sb.buf, 3), 0, "under its size field: not whole");
	CHECK_INT(msg_record_peek(sb.buf, sb.len / 2, &cell, &st, &started, &wall), 0, "peek");
	CHECK(cell == 42 && st == RESULT_TIMEOUT && started == 1000.5 && wall == 2.25,
	      "peeked cell %lld, status %d, started %g, wall %g", (long long)cell, (int)st, started, wall);
	result_release(&r);
	sb_release(&sb);
}

/* A worker's count of the master's silence: the first message allowed MSG_FIRST_WAIT, each later gap
 * MSG_ORPHAN_SECONDS of listening; a time the worker did not listen (an executor starting) is not counted. */
static void test_silence(void)
{
	struct msg_silence m;
	double t;

	msg_silence_start(&m, 100);
	for (t = 100; t < 100 + MSG_FIRST_WAIT - 1; t += 2)
		CHECK(!msg_silence_over(&m, t), "no first message yet at %g s: not over", t - 100);
	CHECK(msg_silence_over(&m, 100 + MSG_FIRST_WAIT), "no first message in %g s: over", MSG_FIRST_WAIT);

	msg_silence_start(&m, 0);
	msg_silence_heard(&m, 5);
	for (t = 5; t < 5 + MSG_ORPHAN_SECONDS - 0.5; t += 2)
		CHECK(!msg_silence_over(&m, t), "heard at 5, looking at %g: not over", t);
	CHECK(msg_silence_over(&m, 5 + MSG_ORPHAN_SECONDS), "silent %g s while listening: over", MSG_ORPHAN_SECONDS);

	/* Not listening for 100 s (an executor's start): the count starts again when it looks. */
	msg_silence_start(&m, 0);
	msg_silence_heard(&m, 1);
	CHECK(!msg_silence_over(&m, 2), "listening at 2");
	for (t = 102; t < 102 + MSG_ORPHAN_SECONDS - 1; t += 2)
		CHECK(!msg_silence_over(&m, t), "back after 100 s away, looking at %g: the count started again", t);
	CHECK(msg_silence_over(&m, 102 + MSG_ORPHAN_SECONDS), "the window after coming back: over");

	/* A message restarts the count. */
	msg_silence_start(&m, 0);
	msg_silence_heard(&m, 1);
	for (t = 1; t < 21; t += 2)
		msg_silence_over(&m, t);
	msg_silence_heard(&m, 21);
	for (t = 21; t < 21 + MSG_ORPHAN_SECONDS - 1; t += 2)
		CHECK(!msg_silence_over(&m, t), "heard at 21, looking at %g: not over", t);
	CHECK(msg_silence_over(&m, 21 + MSG_ORPHAN_SECONDS), "silent since 21: over");
	CHECK_INT(MSG_ORPHAN_SECONDS > MSG_LOST_SECONDS, 1, "the master decides first when a worker's host is cut");
}

int main(void)
{
	test_silence();
	test_task();
	test_record();
	test_tasks();
	test_result();
	test_result_usage();
	test_noise_rule();
	test_precision_rule();
	test_json();
	test_util();
	return test_done();
}
