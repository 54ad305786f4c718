/* test_report_agg.c: the pure aggregation of reports on rows made by hand: tables and pivots, what varies,
 * summaries, limits, drift, scores, a plot's points. Expected values by hand, the summaries' t intervals
 * with scipy (tests/unit/report_values.py prints them). */
#include <stdlib.h>

#include "test_report_rows.h"

/* Without column keys: the row keys, n and the metric; a value resting on a marked result is marked. */
static void test_table(void)
{
	/* M, value, count, marked */
	static const char *const in[] = {
		"1024", "12.5", "3", "0",
		"2048", "7.25", "2", "1",
		NULL, NULL, "0", "0",
	};
	static const char *const keys[] = { "M" };
	struct report_rows r, t;

	test_rows(&r, 4, in, 3);
	report_agg_table(&r, keys, 1, NULL, 0, NULL, "gflops", &t);
	CHECK_STR(test_cols(&t), "M,n,gflops", "columns");
	CHECK(t.col[0].kind == RCOL_KEY && t.col[1].kind == RCOL_NUM && t.col[1].sig == 0 && t.col[1].nosum &&
	      t.col[2].sig == 4 && !t.col[2].nosum && t.group == -1, "kinds: a key, a count, the metric");
	CHECK_INT(t.n, 3, "rows");
	CHECK_STR(test_cell(&t, 1, 0), "2048|-", "row 2's key");
	CHECK_STR(test_cell(&t, 1, 1), "-|2", "row 2's n");
	CHECK_STR(test_cell(&t, 1, 2), "-|7.25", "row 2's value");
	CHECK_STR(test_cell(&t, 2, 0), "-|-", "a NULL key stays unknown");
	CHECK(!t.mark[0 * 3 + 2] && t.mark[1 * 3 + 2] && !t.mark[1 * 3 + 1], "the marked value, only it");
	CHECK_INT(report_agg_marked(&r), 1, "results behind marks");
	report_rows_release(&t);

	/* a --summary group that is not a row key gets a column after the keys */
	{
		static const char *const g[] = {
			"1", "5", "1", "'consumer", "0",
			"2", "6", "1", NULL, "2",
		};

		report_rows_release(&r);
		test_rows(&r, 5, g, 2);
		report_agg_table(&r, keys, 1, NULL, 0, "label.class", "tok_s", &t);
		CHECK_STR(test_cols(&t), "M,label.class,n,tok_s", "the group's column");
		CHECK(t.group == 1 && t.col[1].kind == RCOL_LABEL, "a label");
		CHECK_STR(test_cell(&t, 0, 1), "consumer|-", "its value");
		CHECK_STR(test_cell(&t, 1, 1), "-|-", "unknown");
		CHECK(t.mark[1 * 4 + 3], "the mark after the group");
		CHECK_INT(report_agg_marked(&r), 2, "two results behind marks");
		report_rows_release(&t);
		report_agg_table(&r, keys, 1, NULL, 0, "M", "tok_s", &t);
		CHECK(t.group == 0 && !strcmp(test_cols(&t), "M,n,tok_s"), "a group that is a row key: no column");
		report_rows_release(&t);
	}
	report_rows_release(&r);
}

/* With column keys: columns in SQLite's order (NULL, numbers by value, text), values laid out under
 * them, a missing combination unknown. */
static void test_pivot(void)
{
	/* M, N, value, count, marked: rows in SQL order (by M, then N) */
	static const char *const in[] = {
		"1", NULL, "9", "1", "0",
		"1", "64", "1.5", "1", "0",
		"1", "256", "3", "1", "1",
		"2", "'x", "4", "1", "0",
		"2", "64", "2.5", "1", "0",
		"2", "'", "7", "1", "0",
	};
	static const char *const keys[] = { "M" }, *const cols[] = { "N" };
	struct report_rows r, t;

	test_rows(&r, 5, in, 6);
	report_agg_table(&r, keys, 1, cols, 1, NULL, "t", &t);
	CHECK_STR(test_cols(&t), "M,N=-,N=64,N=256,N=\"\",N=x", "sorted columns: NULL, 64, 256, then text");
	CHECK_INT(t.n, 2, "one row per M");
	CHECK_STR(test_cell(&t, 0, 1), "-|9", "M=1 N=NULL");
	CHECK_STR(test_cell(&t, 0, 3), "-|3", "M=1 N=256");
	CHECK_STR(test_cell(&t, 0, 5), "-|-", "M=1 N=x: none");
	CHECK_STR(test_cell(&t, 1, 2), "-|2.5", "M=2 N=64");
	CHECK_STR(test_cell(&t, 1, 4), "-|7", "M=2 N='': the empty text, quoted in its heading");
	CHECK_STR(test_cell(&t, 1, 5), "-|4", "M=2 N=x");
	CHECK(t.mark[0 * 6 + 3] && !t.mark[0 * 6 + 2], "the mark goes with its value");
	CHECK(t.col[2].align == 1 && t.col[5].align == 1 && !t.col[2].nosum, "one unit: aligned alike");
	report_rows_release(&t);
	report_rows_release(&r);
}

static void test_varying(void)
{
	static const char *const in[] = { "1", "3", NULL, "2" };
	static const char *const cand[] = { "a", "b", "c", "d" };
	struct report_rows r;
	char **v;
	int n;

	test_rows(&r, 4, in, 1);
	v = report_agg_varying(&r, cand, 4, &n);
	CHECK(n == 2 && !strcmp(v[0], "b") && !strcmp(v[1], "d") && !v[2], "b and d vary (more than one value)");
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	report_rows_release(&r);
}

/* Summary row k of group block b (NSUM rows a group), value column c (after stat and group). */
static double sum_at(const struct report_rows *s, size_t b, int k, int c)
{
	return report_rows_num(s, b * NSUM + (size_t)k, 2 + c);
}

/* Per group, in group order: median, min, max, mean, the t interval (scipy: stats.t.interval(0.95, n - 1,
 * loc=mean, scale=stats.sem(x))) and n; unknown values and rows of no group left out; a count not
 * summarised. */
static void test_summary(void)
{
	static const char *const keys[] = { "host" };
	struct report_notes nt = { 0 };
	struct report_rows t, s;

	/* through the table, so that the columns are typed: keys, group, n, v */
	{
		struct report_rows q;
		static const char *const sql[] = {
			"a", "1", "1", "'g1", "0", "b", "10", "1", "'g2", "0", "c", "4", "1", "'g1", "0",
			"d", "100", "1", NULL, "0", "e", "2", "1", "'g1", "0", "f", NULL, "1", "'g1", "0",
		};

		test_rows(&q, 5, sql, 6);
		report_agg_table(&q, keys, 1, NULL, 0, "class", "v", &t);
		report_rows_release(&q);
	}
	report_rows_sort_group(&t);
	CHECK(!strcmp(test_cell(&t, 0, 0), "d|-") && !strcmp(test_cell(&t, 1, 0), "a|-") &&
	      !strcmp(test_cell(&t, 2, 0), "c|-") && !strcmp(test_cell(&t, 4, 0), "f|-") &&
	      !strcmp(test_cell(&t, 5, 0), "b|-"), "sorted by group, unknown first, in order within one");
	report_agg_summary(&t, NULL, &s, &nt);
	CHECK_STR(test_cols(&s), "stat,group,n,v", "summary columns");
	CHECK_INT(s.n, 2 * NSUM, "two groups of statistics");
	CHECK(!strcmp(test_cell(&s, 0, 0), "median|-") && !strcmp(test_cell(&s, 0, 1), "g1|-") &&
	      !strcmp(test_cell(&s, NSUM, 1), "g2|-") && !strcmp(test_cell(&s, NSUM - 1, 0), "n|-"),
	      "stat and group named");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEDIAN, 1), 2, 0, "g1 median of 1, 2, 4");
	CHECK_NEAR(sum_at(&s, 0, SUM_MIN, 1), 1, 0, "g1 min");
	CHECK_NEAR(sum_at(&s, 0, SUM_MAX, 1), 4, 0, "g1 max");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEAN, 1), 2.3333333333333335, 1e-15, "g1 mean");
	CHECK_NEAR(sum_at(&s, 0, SUM_LO, 1), -1.4612497002634259, 1e-11, "g1 ci95 lo (scipy)");
	CHECK_NEAR(sum_at(&s, 0, SUM_HI, 1), 6.1279163669300925, 1e-11, "g1 ci95 hi (scipy)");
	CHECK_NEAR(sum_at(&s, 0, SUM_N, 1), 3, 0, "g1 n: the unknown value is not counted");
	CHECK(isnan(sum_at(&s, 0, SUM_MEDIAN, 0)), "the count is not summarised");
	CHECK_NEAR(sum_at(&s, 1, SUM_MEDIAN, 1), 10, 0, "g2 median");
	CHECK(isnan(sum_at(&s, 1, SUM_LO, 1)) && isnan(sum_at(&s, 1, SUM_HI, 1)), "one value: no interval");
	/* fewer than 5 units: the interval marked, a warning per group, the footnote's caveat */
	CHECK(s.mark[SUM_LO * s.ncol + 3] == MARK_CAVEAT && s.mark[SUM_HI * s.ncol + 3] == MARK_CAVEAT &&
	      !s.mark[SUM_MEAN * s.ncol + 3] && !s.mark[SUM_LO * s.ncol + 2], "g1's interval marked, only it");
	CHECK_INT(nt.n, 2, "a warning per group");
	CHECK(nt.n == 2 && nt.warn[0] && !strcmp(nt.v[0], "the summary of 'g1' rests on 3 units (n, one value per "
						  "row), fewer than 5: its 95% interval is rough or missing (marked)"),
	      "g1's warning: %s", nt.n ? nt.v[0] : "none");
	CHECK(nt.ncaveat == 1 && !strcmp(nt.caveat[0], "a summary's interval rests on fewer than 5 units"),
	      "said once for the footnote");
	report_notes_release(&nt);
	report_rows_release(&s);

	/* without a group: all rows, the one of no group too; 5 units: no warning */
	t.group = -1;
	report_agg_summary(&t, NULL, &s, &nt);
	CHECK_INT(s.n, NSUM, "one group of statistics");
	CHECK(!report_rows_text(&s, 0, 1), "of no group");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEDIAN, 1), 4, 0, "median of 1, 2, 4, 10, 100");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEAN, 1), 23.4, 1e-15, "mean");
	CHECK_NEAR(sum_at(&s, 0, SUM_N, 1), 5, 0, "n");
	CHECK(nt.n == 0 && !s.mark[SUM_LO * s.ncol + 3], "5 units: nothing to warn of");
	report_rows_release(&s);
	report_rows_release(&t);
}

/* A summary over units: one value per host (the mean of its rows; an unknown host is one unit), n counts
 * hosts; values from report_values.py (numpy means, scipy's t interval). Without a unit: every row. */
static void test_summary_units(void)
{
	static const char *const keys[] = { "host", "model" };
	static const char *const sql[] = {
		"h1", "'a", "0.80", "1", "0", "h1", "'b", "0.78", "1", "0", "h1", "'c", "0.86", "1", "0",
		"h2", "'a", "0.55", "1", "0", "h2", "'b", "0.60", "1", "0", "h2", "'c", "0.57", "1", "0",
		"h3", "'a", "0.71", "1", "0", "h3", "'b", "0.74", "1", "0", "h3", "'c", "0.69", "1", "0",
		NULL, "'a", "0.9", "1", "0", NULL, "'b", "0.7", "1", "0", "h3", "'d", NULL, "0", "0",
	};
	struct report_notes nt = { 0 };
	struct report_rows q, t, s;

	test_rows(&q, 5, sql, 12);
	report_agg_table(&q, keys, 2, NULL, 0, NULL, "share", &t);
	report_rows_release(&q);
	report_agg_summary(&t, "host", &s, &nt);
	CHECK_NEAR(sum_at(&s, 0, SUM_N, 1), 4, 0, "n: 4 hosts (h1, h2, h3 and the unknown one), not 11 rows");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEDIAN, 1), 0.7566666666666666, 1e-15, "median of the hosts' means");
	CHECK_NEAR(sum_at(&s, 0, SUM_MIN, 1), 0.57333333333333325, 1e-15, "min: h2's mean");
	CHECK_NEAR(sum_at(&s, 0, SUM_MAX, 1), 0.81333333333333335, 1e-15, "max: h1's mean");
	CHECK_NEAR(sum_at(&s, 0, SUM_MEAN, 1), 0.72500000000000009, 1e-15, "mean of the hosts' means");
	CHECK_NEAR(sum_at(&s, 0, SUM_LO, 1), 0.54932371119681778, 1e-12, "ci95 lo over 4 hosts (scipy)");
	CHECK_NEAR(sum_at(&s, 0, SUM_HI, 1), 0.9006762888031824, 1e-12, "ci95 hi over 4 hosts (scipy)");
	CHECK(nt.n == 1 && strstr(nt.v[0], "rests on 4 units (n, one value per host)"), "4 hosts: warned: %s",
	      nt.n ? nt.v[0] : "none");
	report_notes_release(&nt);
	report_rows_release(&s);
	report_agg_summary(&t, NULL, &s, &nt);
	CHECK_NEAR(sum_at(&s, 0, SUM_N, 1), 11, 0, "each row a unit: n 11");
	CHECK_NEAR(sum_at(&s, 0, SUM_LO, 1), 0.64171245506056929, 1e-12, "ci95 lo over 11 rows (scipy)");
	CHECK_NEAR(sum_at(&s, 0, SUM_HI, 1), 0.79465118130306722, 1e-12, "ci95 hi over 11 rows (scipy)");
	CHECK_INT(nt.n, 0, "11 rows: no warning");
	report_notes_release(&nt);
	report_rows_release(&s);
	report_rows_release(&t);
}

/* --limit: the values as they come; the share the statistic of the metric over that of the limit, of the
 * results with both; the metric and the share marked; the hosts without a probe named once each, sorted. */
static void test_limit(void)
{
	/* host, count, stat(v), stat(lim), stat(v) and stat(lim) of the results with both, hosts without
	 * probe 0, marked. a: tok_s 10, 30, 20 against limits 100, 50, 25: medians 20 and 50, share 0.4 (not
	 * the median of the ratios, 0.6) */
	static const char *const in[] = {
		"b", "2", "10", "100", "12", "100", "b", "0",
		"a", "3", "20", "50", "20", "50", "b,a", "1",
		"c", "1", "30", NULL, NULL, NULL, "a", "0",
	};
	static const char *const keys[] = { "host" }, *const joined[] = { "bw" };
	struct report_notes nt = { 0 };
	struct report_rows r, t;

	test_rows(&r, 8, in, 3);
	report_agg_limit(&r, keys, 1, NULL, "tok_s", joined, 1, &t, &nt);
	CHECK_STR(test_cols(&t), "host,n,tok_s,limit,share", "columns");
	CHECK(t.col[2].align == 1 && t.col[3].align == 1 && t.col[4].sig == 3 && t.col[1].nosum,
	      "the metric and its limit one unit; the share 3 digits");
	CHECK_STR(test_cell(&t, 1, 4), "-|0.40000000000000002", "a's share: 20 / 50");
	CHECK_STR(test_cell(&t, 0, 4), "-|0.12", "b's share: of the results with both, 12 / 100");
	CHECK_STR(test_cell(&t, 0, 2), "-|10", "b's metric: of every result");
	CHECK_STR(test_cell(&t, 2, 3), "-|-", "c's limit unknown");
	CHECK(t.mark[1 * 5 + 2] && t.mark[1 * 5 + 4] && !t.mark[1 * 5 + 3] && !t.mark[0 * 5 + 2],
	      "the metric and the share rest on the marked result");
	CHECK(nt.n == 1 && !strcmp(nt.v[0], "no probe 'bw' for hosts a, b: the limit and share of their rows "
				   "are '-'"), "the note: %s", nt.n ? nt.v[0] : "none");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);
}

/* --drift: workers by host, run, rank and parameters; the drift is the largest |median / reference - 1|,
 * the reference the median of the runs, the noise the largest; unstable past the threshold; up to 8
 * ratios to the reference, spread evenly. */
static void test_drift(void)
{
	/* host, run, rank, gpu, params, median, noise */
	static const char *const in[] = {
		"h1", "r1", "0", NULL, "{}", "1", "0.01",
		"h1", "r1", "0", NULL, "{}", "1.02", NULL,
		"h1", "r1", "0", NULL, "{}", "0.97", "0.02",
		"h2", "r1", "1", "0", "{}", "2", NULL,
		"h2", "r1", "1", "0", "{}", "2", "0.04",
		NULL, NULL, NULL, NULL, "{}", "5", NULL,
	};
	static const char *ten[10 * 7];
	struct report_rows r, w, t;
	char *why;
	int nunstable;

	test_rows(&r, 7, in, 6);
	report_agg_drift(&r, 0, &w);
	CHECK_INT(w.n, 3, "three workers");
	CHECK_STR(test_cols(&w), "host,run,worker,gpu,n,medians,reference,drift,noise", "worker columns");
	CHECK_STR(test_cell(&w, 0, 5), "1 1.02 0.96999999999999997|-", "h1's medians, a series");
	CHECK_NEAR(report_rows_num(&w, 0, 6), 1, 0, "h1's reference: the median of 1, 1.02, 0.97");
	CHECK_NEAR(report_rows_num(&w, 0, 7), fabs(0.97 / 1 - 1), 0, "h1's drift: |0.97 - 1|");
	CHECK_NEAR(report_rows_num(&w, 0, 8), 0.02, 0, "h1's largest noise");
	CHECK(report_rows_num(&w, 1, 7) == 0 && !strcmp(test_cell(&w, 1, 3), "0|-"), "h2: no drift, gpu 0");
	CHECK(!strcmp(test_cell(&w, 2, 0), "(unknown)|-") && !strcmp(test_cell(&w, 2, 3), "-|-") &&
	      isnan(report_rows_num(&w, 2, 8)), "an unknown host, no gpu, one run: no noise");
	why = report_agg_unstable(&w, 0, 0.025);
	CHECK_STR(why, "drift 3.0% > 2.5%", "h1 drifts");
	free(why);
	why = report_agg_unstable(&w, 1, 0.03);
	CHECK_STR(why, "noise 4.0% > 3%", "h2 is noisy");
	free(why);
	CHECK(!report_agg_unstable(&w, 1, 0.05), "h2 is stable at 5%%");
	report_agg_drift_table(&w, 0.035, &t, &nunstable);
	CHECK_STR(test_cols(&t), "host,run,worker,gpu,n,median_s,ratio_over_time,max_drift_%,noise_%,status",
		  "table columns");
	CHECK_INT(nunstable, 1, "one unstable at 3.5%");
	CHECK_STR(test_cell(&t, 0, 6), "1 1.02 0.96999999999999997|-", "h1's ratios");
	CHECK_STR(test_cell(&t, 0, 9), "stable|-", "h1 at 3.5%");
	CHECK_STR(test_cell(&t, 1, 9), "UNSTABLE: noise 4.0% > 3.5%|-", "h2's status");
	CHECK(report_rows_num(&t, 0, 4) == 3 && report_rows_num(&t, 0, 5) == 1, "h1: n 3, median 1");
	CHECK_NEAR(report_rows_num(&t, 0, 7), 3.0000000000000027, 1e-15, "h1: max drift in %");
	CHECK_NEAR(report_rows_num(&t, 1, 8), 4, 1e-15, "h2: max noise in %");
	report_rows_release(&t);
	report_rows_release(&w);
	report_rows_release(&r);

	/* ten runs: 8 ratios to the median 14.5 at runs 0, 1, 3, 4, 5, 6, 8, 9 (llround(i * 9 / 7)) */
	for (int i = 0; i < 10; i++) {
		static char med[10][16];

		snprintf(med[i], sizeof(med[i]), "%d", 10 + i);
		ten[i * 7 + 0] = "h";
		ten[i * 7 + 4] = "{}";
		ten[i * 7 + 5] = med[i];
	}
	test_rows(&r, 7, ten, 10);
	report_agg_drift(&r, 0, &w);
	report_agg_drift_table(&w, 0.03, &t, &nunstable);
	CHECK_STR(test_cell(&t, 0, 6), "0.68965517241379315 0.75862068965517238 0.89655172413793105 "
		  "0.96551724137931039 1.0344827586206897 1.103448275862069 1.2413793103448276 1.3103448275862069|-",
		  "8 of 10 ratios: runs 0 1 3 4 5 6 8 9");
	CHECK(report_rows_num(&t, 0, 4) == 10 && report_rows_num(&t, 0, 5) == 14.5, "n 10, median 14.5");
	CHECK_NEAR(report_rows_num(&t, 0, 7), 31.03448275862069, 1e-12, "max drift 4.5 / 14.5");
	report_rows_release(&t);
	report_rows_release(&w);
	report_rows_release(&r);
}

/* A slow first run alone no longer flags a host, and --drop-first leaves it out; a command's control runs
 * of one sample (no noise stored) get their spread as the noise. Values from report_values.py (numpy). */
static void test_drift_reference(void)
{
	/* host, run, rank, gpu, params, median, noise */
	static const char *const in[] = {
		"flat", "1", "0", NULL, "{}", "1.03", "0.004", "flat", "1", "0", NULL, "{}", "1.001", "0.004",
		"flat", "1", "0", NULL, "{}", "0.999", "0.004", "flat", "1", "0", NULL, "{}", "1.0", "0.004",
		"flat", "1", "0", NULL, "{}", "1.002", "0.004", "flat", "1", "0", NULL, "{}", "0.998", "0.004",
		"cmd", "1", "1", NULL, "{}", "2.0", NULL, "cmd", "1", "1", NULL, "{}", "2.1", NULL,
		"cmd", "1", "1", NULL, "{}", "1.9", NULL, "cmd", "1", "1", NULL, "{}", "2.2", NULL,
	};
	struct report_rows r, w;
	char *why;

	test_rows(&r, 7, in, 10);
	report_agg_drift(&r, 0, &w);
	CHECK_NEAR(report_rows_num(&w, 0, 6), 1.0004999999999999, 1e-15, "flat: the median of its runs");
	CHECK_NEAR(report_rows_num(&w, 0, 7), 0.029485257371314466, 1e-13, "flat: the slow first run, 2.9 %%");
	CHECK(!(why = report_agg_unstable(&w, 0, 0.03)), "flat is stable at 3 %% (against the first run: 3.0 %%)");
	free(why);
	CHECK_NEAR(report_rows_num(&w, 1, 6), 2.0499999999999998, 1e-15, "cmd: median");
	CHECK_NEAR(report_rows_num(&w, 1, 7), 0.07317073170731736, 1e-13, "cmd: drift");
	CHECK_NEAR(report_rows_num(&w, 1, 8), 0.062975338962722283, 1e-13, "cmd: noise, the runs' spread");
	why = report_agg_unstable(&w, 1, 0.08);
	CHECK(!why, "cmd at 8 %%: stable (%s)", why ? why : "");
	free(why);
	why = report_agg_unstable(&w, 1, 0.065);
	CHECK_STR(why, "drift 7.3% > 6.5%", "cmd at 6.5 %%: its drift");
	free(why);
	report_rows_release(&w);
	report_rows_release(&r);
	/* runs of two levels (1, 1, 1.1, 1.1): within 4.8 % of their median, yet their spread is 5.5 %: the
	 * noise alone flags the host at 5 % (numpy: std(ddof=1) / mean = 0.054985739922821547) */
	{
		static const char *const two[] = {
			"two", "1", "0", NULL, "{}", "1", NULL, "two", "1", "0", NULL, "{}", "1", NULL,
			"two", "1", "0", NULL, "{}", "1.1", NULL, "two", "1", "0", NULL, "{}", "1.1", NULL,
		};

		test_rows(&r, 7, two, 4);
	}
	report_agg_drift(&r, 0, &w);
	CHECK_NEAR(report_rows_num(&w, 0, 7), 0.047619047619047672, 1e-13, "two levels: drift 4.8 %");
	CHECK_NEAR(report_rows_num(&w, 0, 8), 0.054985739922821547, 1e-13, "two levels: noise 5.5 %");
	why = report_agg_unstable(&w, 0, 0.05);
	CHECK_STR(why, "noise 5.5% > 5%", "the noise of a command's runs flags a host alone");
	free(why);
	report_rows_release(&w);
	report_rows_release(&r);
	test_rows(&r, 7, in, 10);
	report_agg_drift(&r, 1, &w);
	CHECK_NEAR(report_rows_num(&w, 0, 4), 5, 0, "--drop-first: 5 runs of flat");
	CHECK_NEAR(report_rows_num(&w, 0, 6), 1, 0, "flat without its first run: median 1");
	CHECK_NEAR(report_rows_num(&w, 0, 7), 0.0020000000000000018, 1e-13, "flat without it: 0.2 %%");
	report_rows_release(&w);
	report_rows_release(&r);
}

/* --score: rms = sqrt(mean(err^2)), blind or late, met when rms <= bar; rows without a result out. */
static void test_score(void)
{
	/* key, metric, blind, n, mean(err^2), mean(err), not measured */
	static const char *const in[] = {
		"a", "t", "1", "2", "25", "3", "1",
		"a", "t", "0", "0", NULL, NULL, "2",
		"b", "t", "0", "1", "144", "-12", "0",
	};
	static const char *const keys[] = { "model" };
	struct report_score_counts n;
	struct report_rows r, t;

	test_rows(&r, 7, in, 3);
	report_agg_score(&r, keys, 1, 10, &t, &n);
	CHECK_STR(test_cols(&t), "model,metric,predictions,n,rms_err_%,mean_err_%,bar", "columns");
	CHECK_INT(t.n, 2, "the row without a result is left out");
	CHECK(!strcmp(test_cell(&t, 0, 2), "blind|-") && !strcmp(test_cell(&t, 1, 2), "late|-"), "blind, late");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 5, 0, "rms of mean err^2 25");
	CHECK_NEAR(report_rows_num(&t, 1, 5), -12, 0, "mean error");
	CHECK(!strcmp(test_cell(&t, 0, 6), "met|-") && !strcmp(test_cell(&t, 1, 6), "missed|-"), "bar 10 %%");
	CHECK(n.pending == 3 && n.groups == 2 && n.met == 1, "counts: %d pending, %d of %d met", n.pending, n.met,
	      n.groups);
	report_rows_release(&t);
	report_agg_score(&r, keys, 1, NAN, &t, &n);
	CHECK(t.ncol == 6 && n.groups == 0, "no bar, no bar column");
	report_rows_release(&t);
	report_rows_release(&r);
}

static void test_points(void)
{
	/* facet, series, x, y, n, lo, hi */
	static const char *const in[] = {
		NULL, "a", "1", "2", "3", "1", "5",
		NULL, "a", NULL, "2", "1", "2", "2",
		NULL, "b", "'big", NULL, "0", NULL, NULL,
		NULL, "b", "'small", "4", "1", NULL, NULL,
	};
	struct report_rows r, p;

	test_rows(&r, 7, in, 4);
	report_agg_points(&r, &p);
	CHECK_INT(p.n, 2, "points without an x or a value are left out");
	CHECK(!strcmp(test_cell(&p, 1, 2), "small|-") && report_rows_num(&p, 1, 3) == 4, "x as text, its y");
	CHECK(report_rows_num(&p, 0, 5) == 1 && report_rows_num(&p, 0, 6) == 5, "the interval's bounds kept");
	CHECK(isnan(report_rows_num(&p, 1, 5)) && isnan(report_rows_num(&p, 1, 6)), "no interval: unknown");
	report_rows_release(&p);
	report_rows_release(&r);
}

/* report_rows_drop keeps each row's first cells in place: the table's statement ends with the columns a
 * split of rows asks for, dropped before the table is laid out. */
static void test_drop(void)
{
	static const char *const cell[] = { "'a", "1", "2", "'x", "'b", "3", NULL, "'y" };
	struct report_rows r;

	test_rows(&r, 4, cell, 2);
	report_rows_drop(&r, 2);
	CHECK(r.ncol == 2, "two columns left: %d", r.ncol);
	CHECK_STR(test_cell(&r, 0, 0), "a|-", "row 0, col 0");
	CHECK_STR(test_cell(&r, 0, 1), "1|1", "row 0, col 1");
	CHECK_STR(test_cell(&r, 1, 0), "b|-", "row 1, col 0");
	CHECK_STR(test_cell(&r, 1, 1), "3|3", "row 1, col 1");
	report_rows_release(&r);
}

int main(void)
{
	test_table();
	test_pivot();
	test_varying();
	test_drop();
	test_summary();
	test_summary_units();
	test_limit();
	test_drift();
	test_drift_reference();
	test_score();
	test_points();
	return test_done();
}
