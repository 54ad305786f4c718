/* test_unit.c: values with units as tools print them, converted into a declared unit (unit.c). */
#include "unit.h"
#include "util.h"
#include "test.h"

static double conv(const char *text, const char *to, char *err, size_t n)
{
	double v = NAN;

	err[0] = '\0';
	if (unit_parse(text, to, &v, err, n))
		return NAN;
	return v;
}

int main(void)
{
	static const struct {
		const char *text, *to;
		double want;
	} ok[] = {
		{ "158 ns", "s", 158e-9 }, { "11.9 us", "s", 11.9e-6 }, { "11.9 \xc2\xb5s", "s", 11.9e-6 },
		{ "11.9 \xce\xbcs", "s", 11.9e-6 }, { "1.41 ms", "s", 1.41e-3 }, { "2 s", "ms", 2000 },
		{ "1.41ms", "us", 1410 }, { "16.1k", "1", 16100 }, { "952", "1", 952 }, { "3M", "1", 3e6 },
		{ "62.9MiB/s", "B/s", 62.9 * 1048576 }, { "65.9MB/s", "MB/s", 65.9 }, { "1.5GB/s", "MB/s", 1500 },
		{ "2 KiB", "B", 2048 }, { "-0.5e3 ms", "s", -0.5 }, { "7 tok/s", "tok/s", 7 },
		{ "  4 s ", "s", 4 }, { "12", NULL, 12 }, { "1e-3", NULL, 1e-3 },
		/* The spellings GNU time, python -m timeit, pyperf and perf stat print. */
		{ "1.5 sec", "s", 1.5 }, { "2 secs", "ms", 2000 }, { "3 msec", "s", 3e-3 }, { "4 usec", "s", 4e-6 },
		{ "5 nsec", "s", 5e-9 }, { "12.3 K/sec", "/s", 12300 }, { "7 MB/sec", "B/s", 7e6 },
		{ "16.1K", "1", 16100 }, { "250 ms", "sec", 0.25 }, { "4.9e-324", NULL, 4.9e-324 },
	};
	static const struct {
		const char *text, *to, *err;
	} bad[] = {
		{ "158", "s", "no unit, and 's' was declared" },
		{ "16.1k", "B/s", "'k' is not a unit of 'B/s'" },
		{ "5 min", "s", "'min' is not a unit of 's'" },
		{ "2 ms", "1", "'ms' is not a unit of '1'" },
		{ "fast", "s", "not a number" },
		{ "1e999 s", "s", "out of range (over 1.8e308)" },
		{ "158 ns", NULL, "not a number (declare its unit: unit: ...)" },
		{ "0x10", NULL, "not a number" },
		{ "01", NULL, "not a number" },
		{ ".5", NULL, "not a number" },
	};
	char err[128];

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		CHECK_NEAR(conv(ok[i].text, ok[i].to, err, sizeof(err)), ok[i].want, 1e-12, ok[i].text);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		double v = conv(bad[i].text, bad[i].to, err, sizeof(err));

		CHECK(isnan(v) && !strcmp(err, bad[i].err), "'%s' into '%s' is refused: '%s'", bad[i].text,
		      bad[i].to ? bad[i].to : "(none)", err);
	}
	/* unit_base: 1024 (Google Benchmark's console counters) and scale: a bare number's unit. */
	{
		struct unit_how kib = { 1024, NULL }, bps = { 0, "B/s" }, secs = { 0, "s" };
		double v = NAN;

		CHECK(!unit_parse_how("9.4204G/s", "/s", &kib, &v, err, sizeof(err)) && v == 9.4204 * 1073741824.0,
		      "G is 2^30 with base 1024: %.17g", v);
		CHECK(!unit_parse_how("1 GB/s", "MB/s", &kib, &v, err, sizeof(err)) && v == 1024, "in both units");
		CHECK(!unit_parse_how("1.5Ki", "1", &kib, &v, err, sizeof(err)) && v == 1536, "Ki stays 1024");
		CHECK(!unit_parse_how("12345", "MB/s", &bps, &v, err, sizeof(err)) && fabs(v - 0.012345) < 1e-15,
		      "a bare number takes the scale's unit: %.17g", v);
		CHECK(!unit_parse_how("2", "ms", &secs, &v, err, sizeof(err)) && v == 2000, "seconds into ms");
		CHECK(!unit_parse_how("3 ms", "s", &secs, &v, err, sizeof(err)) && v == 0.003,
		      "a value with its own unit keeps it");
		CHECK(unit_parse_how("2", "B", &secs, &v, err, sizeof(err)) && !strcmp(err, "'s' is not a unit of 'B'"),
		      "a scale of another base is refused: '%s'", err);
	}
	CHECK(!unit_check("MB/s", err, sizeof(err)) && !unit_check("1", err, sizeof(err)), "units that may be declared");
	CHECK(unit_check("", err, sizeof(err)) && !strcmp(err, "an empty unit"), "not an empty one");
	CHECK(unit_check("m s", err, sizeof(err)) && strstr(err, "blank"), "nor one with a blank");
	return test_done();
}
