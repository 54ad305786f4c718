/* test_report_verdict.c: sweep compare's verdict rule and its pairing of two sides' cells, on rows made by
 * hand; expected values by hand. */
#include <stdlib.h>

#include "test_report_rows.h"

/* The rule, on the slowdown's interval: wholly past the threshold (slower or faster), wholly within it
 * (unchanged), else inconclusive; by direction. */
static void test_rule(void)
{
	CHECK_STR(report_verdict(1.15, 1.10, 1.20, BETTER_LOWER, 0.02), "slower", "a time 15 % up");
	CHECK_STR(report_verdict(1.15, 1.10, 1.20, BETTER_HIGHER, 0.02), "faster", "a rate 15 % up");
	CHECK_STR(report_verdict(0.85, 0.80, 0.90, BETTER_LOWER, 0.02), "faster", "a time 15 % down");
	CHECK_STR(report_verdict(0.85, 0.80, 0.90, BETTER_HIGHER, 0.02), "slower", "a rate 15 % down");
	CHECK_STR(report_verdict(1.15, 0.99, 1.30, BETTER_LOWER, 0.02), "inconclusive", "the interval holds 1");
	CHECK_STR(report_verdict(1.015, 1.01, 1.02, BETTER_LOWER, 0.02), "unchanged", "sure, and under 2 %");
	CHECK_STR(report_verdict(1.0, 0.99, 1.01, BETTER_LOWER, 0.02), "unchanged", "1 [0.99, 1.01]");
	/* the two rows: a change shown, but not shown past 2 % nor within it */
	CHECK_STR(report_verdict(1.0199, 1.0026, 1.0406, BETTER_LOWER, 0.02), "inconclusive",
		  "1.0199 [1.0026, 1.0406]");
	CHECK_STR(report_verdict(1.0225, 1.0057, 1.038, BETTER_LOWER, 0.02), "inconclusive",
		  "1.0225 [1.0057, 1.038]");
	CHECK_STR(report_verdict(1.025, 1.021, 1.04, BETTER_LOWER, 0.02), "slower", "the whole interval past 2 %");
	CHECK_STR(report_verdict(1.0, 1.0, 1.02, BETTER_LOWER, 0.02), "unchanged", "the bound at 1.02 is within");
	/* the threshold's faster side is 1 / 1.02 = 0.98039 */
	CHECK_STR(report_verdict(0.975, 0.97, 0.98, BETTER_LOWER, 0.02), "faster", "0.98 < 0.98039: faster");
	CHECK_STR(report_verdict(0.975, 0.97, 0.981, BETTER_LOWER, 0.02), "inconclusive", "0.981 reaches in");
	CHECK_STR(report_verdict(0.99, 0.981, 1.0, BETTER_LOWER, 0.02), "unchanged", "0.981 is within");
	CHECK_STR(report_verdict(0.99, 0.980, 1.0, BETTER_LOWER, 0.02), "inconclusive", "0.980 is past 2 %");
	/* higher-better: the slowdown is 1/ratio, its bounds 1/hi and 1/lo */
	CHECK_STR(report_verdict(0.97, 0.96, 0.979, BETTER_HIGHER, 0.02), "slower", "1/0.979 = 1.0215 > 1.02");
	CHECK_STR(report_verdict(0.99, 0.981, 1.0, BETTER_HIGHER, 0.02), "unchanged", "1/0.981 = 1.0194");
	CHECK(report_verdict(1.5, 1.4, 1.6, BETTER_UNKNOWN, 0.02) == NULL, "no direction, no verdict");
	CHECK(report_verdict(1.5, NAN, NAN, BETTER_LOWER, 0.02) == NULL, "no interval, no verdict");

	/* --fail-above: slower by more than it with the whole interval past it */
	CHECK_INT(report_verdict_worse(1.15, 1.10, 1.20, BETTER_LOWER, 0.05), 1, "15 % slower, interval > 1.05");
	CHECK_INT(report_verdict_worse(1.15, 1.04, 1.20, BETTER_LOWER, 0.05), 0, "the interval reaches 1.04");
	CHECK_INT(report_verdict_worse(0.85, 0.80, 0.90, BETTER_HIGHER, 0.05), 1, "a rate down: 1/0.9 > 1.05");
	CHECK_INT(report_verdict_worse(0.85, 0.80, 0.96, BETTER_HIGHER, 0.05), 0, "1/0.96 = 1.042 < 1.05");
	CHECK_INT(report_verdict_worse(1.15, 1.10, 1.20, BETTER_LOWER, NAN), 0, "no --fail-above");
	CHECK_INT(report_verdict_worse(1.15, 1.10, 1.20, BETTER_UNKNOWN, 0.05), 0, "no direction");
}

static const char *const keys[] = { "n", "host" };

static struct report_baseline baseline(void)
{
	struct report_baseline bl = { keys, 2, "lat", 0.95, 1000, 1, BETTER_LOWER, 0.02, 0.05 };

	return bl;
}

/* Cells paired by every key (a host on one side only is its own cell), units by name within a cell
 * whatever their order; the rest said in notes. */
static void test_pairing(void)
{
	/* n, host, unit, value, marked: ordered by keys */
	static const char *const base[] = {
		"1", "'a", "'0", "10", "0",
		"1", "'a", "'1", "12", "0",
		"1", "'a", "'2", "11", "0",
		"2", "'a", "'0", "20", "0",
		"2", "'a", "'1", "20", "0",
		"3", "'a", "'0", "5", "0",
	};
	static const char *const nw[] = {
		"1", "'a", "'1", "24", "1",
		"1", "'a", "'0", "20", "0",
		"1", "'a", "'3", "99", "0",
		"2", "'a", "'0", "20", "0",
		"2", "'a", "'1", "20", "0",
		"3", "'b", "'0", "5", "0",
	};
	struct report_baseline bl = baseline();
	struct report_baseline_counts n;
	struct report_notes nt = { 0 };
	struct report_rows b, w, t;
	char *caveats;

	test_rows(&b, 5, base, 6);
	test_rows(&w, 5, nw, 6);
	report_baseline(&b, &w, &bl, &t, &n, &nt);
	CHECK_STR(test_cols(&t), "n,host,pairs,lat_base,lat_new,ratio,ci_lo,ci_hi,verdict,caveat", "columns");
	CHECK_STR(t.ci_head, "new/base [95% CI]", "the interval's heading");
	CHECK_INT(t.n, 2, "a row per cell of both sides");
	/* n=1: units 0 and 1 pair (20/10, 24/12: every resample 2); 2 and 3 have no partner */
	CHECK_STR(test_cell(&t, 0, 0), "1|-", "n=1 first, in NEW's order (a key: text)");
	CHECK_NEAR(report_rows_num(&t, 0, 2), 2, 0, "n=1: 2 pairs");
	CHECK_NEAR(report_rows_num(&t, 0, 3), 11, 0, "n=1: base over the pairs");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 22, 0, "n=1: new over the pairs");
	CHECK(report_rows_num(&t, 0, 5) == 2 && report_rows_num(&t, 0, 6) == 2 && report_rows_num(&t, 0, 7) == 2,
	      "n=1: ratio 2 in every resample");
	CHECK_STR(report_rows_text(&t, 0, 8), "slower", "n=1: twice the time is slower");
	CHECK(t.mark[0 * 10 + 5], "a marked unit marks the ratio");
	CHECK(report_rows_num(&t, 1, 5) == 1 && !strcmp(report_rows_text(&t, 1, 8), "unchanged"), "n=2: unchanged");
	CHECK_INT(n.only_base, 1, "n=3 on host a: only in base");
	CHECK_INT(n.only_new, 1, "n=3 on host b: only in new");
	CHECK_INT(n.worse, 1, "one row past --fail-above 5 %");
	CHECK_INT(nt.n, 5, "three notes and two warnings");
	CHECK_STR(nt.n > 0 ? nt.v[0] : "", "n=1 host=a: 2 units without a partner on the other side, left out of "
		  "the ratio", "units without a partner, counted");
	CHECK_STR(nt.n > 1 ? nt.v[1] : "", "only in new: n=3 host=b (lat 5 over 1 unit)", "a cell only in new");
	CHECK_STR(nt.n > 2 ? nt.v[2] : "", "only in base: n=3 host=a (lat 5 over 1 unit)", "a cell only in base");
	CHECK_STR(nt.n > 3 ? nt.v[3] : "", "fewer than 5 pairs: n=1 host=a (n = 2); n=2 host=a (n = 2); an interval "
		  "of so few is rough, of one missing (marked)", "few pairs warned of");
	CHECK_STR(nt.n > 4 ? nt.v[4] : "", "one pass: n=1 host=a (one pass a side); n=2 host=a (one pass a side); "
		  "run-to-run variation is not measured, the interval holds the units' alone: give the sweep "
		  "'repeat: 2' or more to measure it (marked)", "one pass a side warned of");
	CHECK(nt.n > 4 && nt.warn[3] && nt.warn[4] && !nt.warn[2], "warnings, not notes");
	CHECK(t.mark[1 * 10 + 5] & MARK_CAVEAT, "a row warned of is marked");
	CHECK_STR(report_rows_text(&t, 1, 9), "fewer than 5 pairs (2); one pass a side: run-to-run variation not "
		  "measured", "the row's own caveats, for programs");
	caveats = report_notes_caveats(&nt);
	CHECK_STR(caveats, "an interval rests on fewer than 5 pairs; one pass a side: run-to-run variation not "
		  "measured ('repeat: 2' or more measures it)", "the footnote's caveats");
	free(caveats);
	report_notes_release(&nt);
	report_rows_release(&t);

	/* no direction: the same ratios, no verdict, nothing past --fail-above */
	bl.better = BETTER_UNKNOWN;
	report_baseline(&b, &w, &bl, &t, &n, &nt);
	CHECK(report_rows_text(&t, 0, 8) == NULL && report_rows_num(&t, 0, 5) == 2, "ratios without a verdict");
	CHECK_INT(n.worse, 0, "nothing judged");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&w);
	report_rows_release(&b);
}

/* One pair: a ratio, no interval, no verdict, said. */
static void test_one_pair(void)
{
	static const char *const base[] = { "1", "'a", "'0", "10", "0" };
	static const char *const nw[] = { "1", "'a", "'0", "30", "0" };
	struct report_baseline bl = baseline();
	struct report_baseline_counts n;
	struct report_notes nt = { 0 };
	struct report_rows b, w, t;

	test_rows(&b, 5, base, 1);
	test_rows(&w, 5, nw, 1);
	report_baseline(&b, &w, &bl, &t, &n, &nt);
	CHECK(report_rows_num(&t, 0, 5) == 3 && isnan(report_rows_num(&t, 0, 6)) && isnan(report_rows_num(&t, 0, 7)),
	      "ratio 3, no interval");
	CHECK(report_rows_text(&t, 0, 8) == NULL && n.worse == 0, "no verdict, not worse");
	CHECK_STR(nt.n ? nt.v[0] : "", "n=1 host=a: 1 pair: no interval, no verdict", "said");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&w);
	report_rows_release(&b);
}

/* Two passes a side (n, host, unit, value, marked, replicate): BASE's second pass shifts every item 10 %
 * up, NEW's none. The items agree on the ratio, so resampling them gives [60/63, 60/63]; the shift BASE's
 * passes share widens it by z r sqrt(1/441) (stats_between_var: shifts -+1/21, no residual). */
static void test_replicates(void)
{
	static const char *const base[] = {
		"1", "'a", "'0", "10", "0", "'1/1", "1", "'a", "'0", "11", "0", "'2/1",
		"1", "'a", "'1", "20", "0", "'1/1", "1", "'a", "'1", "22", "0", "'2/1",
		"1", "'a", "'2", "30", "0", "'1/1", "1", "'a", "'2", "33", "0", "'2/1",
		"1", "'a", "'3", "40", "0", "'1/1", "1", "'a", "'3", "44", "0", "'2/1",
		"1", "'a", "'4", "50", "0", "'1/1", "1", "'a", "'4", "55", "0", "'2/1",
	};
	static const char *const nw[] = {
		"1", "'a", "'0", "10", "0", "'1/7", "1", "'a", "'0", "10", "0", "'2/7",
		"1", "'a", "'1", "20", "0", "'1/7", "1", "'a", "'1", "20", "0", "'2/7",
		"1", "'a", "'2", "30", "0", "'1/7", "1", "'a", "'2", "30", "0", "'2/7",
		"1", "'a", "'3", "40", "0", "'1/7", "1", "'a", "'3", "40", "0", "'2/7",
		"1", "'a", "'4", "50", "0", "'1/7",
	};
	struct report_baseline bl = baseline();
	struct report_baseline_counts n;
	struct report_notes nt = { 0 };
	struct report_rows b, w, t;

	test_rows(&b, 6, base, 10);
	test_rows(&w, 6, nw, 9);
	report_baseline(&b, &w, &bl, &t, &n, &nt);
	CHECK_INT(t.n, 1, "one cell");
	CHECK_NEAR(report_rows_num(&t, 0, 2), 5, 0, "five pairs, not ten rows");
	CHECK_NEAR(report_rows_num(&t, 0, 3), 31.5, 1e-12, "base: the items' means over their passes");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 30, 1e-12, "new: item 4 has one pass, its mean 50");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 30 / 31.5, 1e-12, "the ratio of means");
	CHECK_NEAR(report_rows_num(&t, 0, 6), 0.863493696846256, 1e-9, "the lower bound: the passes' shift added");
	CHECK_NEAR(report_rows_num(&t, 0, 7), 1.0412682079156486, 1e-9, "the upper bound");
	CHECK_STR(report_rows_text(&t, 0, 8), "inconclusive", "a 5 % change within a 10 % shift: inconclusive");
	CHECK_INT(nt.n, 1, "one warning");
	CHECK_STR(nt.n ? nt.v[0] : "", "units with unequal passes in base and new: n=1 host=a (1 unit, such as 4: 2 "
		  "in base, 1 in new); each side's mean over its passes is paired all the same (marked)",
		  "unequal passes warned of");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&w);
	report_rows_release(&b);
}

int main(void)
{
	test_rule();
	test_pairing();
	test_one_pair();
	test_replicates();
	return test_done();
}
