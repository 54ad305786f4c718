/* test_report_pair.c: --compare's pairing and its paired bootstrap on rows made by hand. Expected values
 * by hand, and the bootstrap's bounds from a copy of sweep's generator in Python with numpy's quantiles
 * (tests/unit/report_values.py prints them). */
#include <stdlib.h>

#include "test_report_rows.h"

static const char *const model[] = { "model" };

static struct report_pairing pairing(const char *group)
{
	struct report_pairing pp = { model, 1, group, "system", "a", "b", "tok_s", 0.95, 1000, 1,
				     STATS_RATIO_OF_MEANS, STATS_PERCENTILE };

	return pp;
}

/* Units of one arm only are left out with a note naming them; a unit without a value in an arm is no
 * pair; pairs whose A is twice B give the ratio 2 in every resample, so the interval is [2, 2]. A
 * summary summarises the ratio only. */
static void test_pairs(void)
{
	/* model, in A, in B, unit, mean, passes, marked (ordered by model, unit) */
	static const char *const in[] = {
		"m1", "1", "0", "'u1", "10", "1", "0",
		"m1", "0", "1", "'u1", "5", "1", "0",
		"m1", "1", "0", "'u2", "12", "1", "1",
		"m1", "0", "1", "'u2", "6", "1", "0",
		"m1", "1", "0", "'u3", "7", "1", "0",
		"m1", "0", "1", "'u4", "7", "1", "0",
		"m1", "1", "0", "'u5", NULL, "1", "0",
		"m1", "0", "1", "'u5", "3", "1", "0",
		"m2", "1", "0", "'u1", "1", "1", "0",
	};
	struct report_pairing pp = pairing(NULL);
	struct report_notes nt = { 0 };
	struct report_rows r, t;

	test_rows(&r, 7, in, 9);
	report_pair(&r, &pp, &t, &nt);
	CHECK_STR(test_cols(&t), "model,n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi", "columns");
	CHECK_STR(t.ci_head, "a/b [95% CI]", "the interval's heading");
	CHECK(t.col[1].sig == 0 && t.col[1].nosum && t.col[2].align == 1 && t.col[3].align == 1 &&
	      t.col[4].ci && t.col[4].sig == 3 && t.col[5].sig == 3 && t.col[6].sig == 3, "column kinds");
	CHECK(t.col[2].nosum && t.col[3].nosum && !t.col[4].nosum && t.col[5].nosum && t.col[6].nosum,
	      "a summary summarises the ratio, not the arms nor the bounds");
	CHECK_INT(t.n, 2, "a row per model");
	CHECK_NEAR(report_rows_num(&t, 0, 1), 2, 0, "m1: 2 pairs");
	CHECK_NEAR(report_rows_num(&t, 0, 2), 11, 0, "m1: mean of A over the pairs");
	CHECK_NEAR(report_rows_num(&t, 0, 3), 5.5, 0, "m1: mean of B");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 2, 0, "m1: ratio");
	CHECK(report_rows_num(&t, 0, 5) == 2 && report_rows_num(&t, 0, 6) == 2, "m1: every resample is 2");
	CHECK((t.mark[0 * 7 + 2] & MARK_IMPRECISE) && (t.mark[0 * 7 + 4] & MARK_IMPRECISE) && !t.mark[0 * 7 + 3],
	      "a marked unit of A: A and the ratio");
	CHECK(report_rows_num(&t, 1, 1) == 0 && isnan(report_rows_num(&t, 1, 4)), "m2: nothing to compare");
	CHECK_INT(nt.n, 3, "two notes and a warning");
	CHECK_STR(nt.n > 0 ? nt.v[0] : "", "model=m1: 2 units without a partner, left out of the ratio: u3 (only "
		  "system=a), u4 (only system=b)", "the units without a partner");
	CHECK_STR(nt.n > 1 ? nt.v[1] : "", "model=m2: no results for system=b: nothing to compare",
		  "an arm without results");
	CHECK(nt.n > 2 && nt.warn[2] && !nt.warn[0], "then a warning");
	CHECK_STR(nt.n > 2 ? nt.v[2] : "", "fewer than 5 pairs: model=m1 (n = 2); an interval of so few is rough, "
		  "of one missing (marked)", "m1's 2 pairs");
	CHECK(t.mark[0 * 7 + 4] & MARK_CAVEAT, "m1's ratio marked");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);
}

/* The paired bootstrap: the ratio of means, and the bounds of 1000 resamples at 90 % from
 * report_values.py (its copy of the generator and numpy.quantile(..., method="linear")). */
static void test_bootstrap(void)
{
	static const double a[] = { 3.1, 2.4, 5.0, 4.2, 1.9, 3.3, 2.8, 4.9, 3.7, 2.2, 4.4, 3.0 };
	static const double b[] = { 2.0, 2.1, 3.9, 2.5, 1.8, 2.6, 2.4, 3.1, 2.9, 2.0, 3.3, 2.7 };
	struct report_pairing pp = { NULL, 0, NULL, "system", "a", "b", "t", 0.9, 1000, 7, STATS_RATIO_OF_MEANS,
				     STATS_PERCENTILE };
	struct report_notes nt = { 0 };
	struct report_rows r, t;

	/* no row keys: in A, in B, unit, mean, passes, marked; unit i in both arms */
	report_rows_init(&r);
	for (int c = 0; c < 6; c++)
		report_rows_col(&r, "col", RCOL_TEXT);
	for (int i = 0; i < 12; i++)
		for (int arm = 0; arm < 2; arm++) {
			size_t at = report_rows_add(&r);
			char unit[16];

			snprintf(unit, sizeof(unit), "i%02d", i);
			report_rows_set_num(&r, at, 0, arm == 0);
			report_rows_set_num(&r, at, 1, arm == 1);
			report_rows_set_text(&r, at, 2, unit);
			report_rows_set_num(&r, at, 3, arm ? b[i] : a[i]);
			report_rows_set_num(&r, at, 4, 1);
			report_rows_set_num(&r, at, 5, 0);
		}
	report_pair(&r, &pp, &t, &nt);
	CHECK_INT(t.n, 1, "no row keys: one row");
	CHECK_NEAR(report_rows_num(&t, 0, 0), 12, 0, "12 pairs");
	CHECK_NEAR(report_rows_num(&t, 0, 3), 40.9 / 31.3, 1e-15, "ratio of the sums 40.9 / 31.3");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 1.2191313932980601, 1e-13, "5 % bound, seed 7");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 1.3981095254058713, 1e-13, "95 % bound, seed 7");
	CHECK_INT(nt.n, 0, "no note");
	report_rows_release(&t);

	/* another seed, other resamples: the bounds move (seed 8: 1.2164809139035941, 1.3933648908857512) */
	pp.seed = 8;
	report_pair(&r, &pp, &t, &nt);
	CHECK_NEAR(report_rows_num(&t, 0, 4), 1.2164809139035941, 1e-13, "5 % bound, seed 8");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 1.3933648908857512, 1e-13, "95 % bound, seed 8");
	report_rows_release(&t);

	/* the geometric mean of the ratios, and BCa intervals (report_values.py: scipy's BCa of the same
	 * resamples); the arms their geometric means, whose ratio the ratio is */
	pp.seed = 7;
	pp.stat = STATS_GEOMEAN_RATIO;
	report_pair(&r, &pp, &t, &nt);
	CHECK_NEAR(report_rows_num(&t, 0, 3), 1.2814042267407109, 1e-15, "geometric mean of the 12 ratios");
	CHECK_NEAR(report_rows_num(&t, 0, 1) / report_rows_num(&t, 0, 2), 1.2814042267407109, 1e-14,
		   "the ratio of the arms' geometric means");
	CHECK_NEAR(report_rows_num(&t, 0, 4), 1.1952541134600925, 1e-13, "its 5 % bound");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 1.3760583746473942, 1e-13, "its 95 % bound");
	report_rows_release(&t);
	pp.interval = STATS_BCA;
	report_pair(&r, &pp, &t, &nt);
	CHECK_NEAR(report_rows_num(&t, 0, 4), 1.2012171471811954, 1e-12, "geometric mean, BCa 5 % bound");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 1.3849125350437013, 1e-12, "geometric mean, BCa 95 % bound");
	report_rows_release(&t);
	pp.stat = STATS_RATIO_OF_MEANS;
	report_pair(&r, &pp, &t, &nt);
	CHECK_NEAR(report_rows_num(&t, 0, 4), 1.2291265438703891, 1e-12, "ratio of means, BCa 5 % bound");
	CHECK_NEAR(report_rows_num(&t, 0, 5), 1.4126205226915749, 1e-12, "ratio of means, BCa 95 % bound");
	CHECK(nt.n == 0 && !t.mark[3], "12 pairs, 1000 resamples: nothing to warn of");
	report_rows_release(&t);
	pp.interval = STATS_PERCENTILE;

	/* fewer than 1000 resamples: every interval marked and said once */
	pp.boot = 999;
	report_pair(&r, &pp, &t, &nt);
	CHECK(t.mark[3] == MARK_CAVEAT && nt.n == 1 && nt.warn[0] &&
	      !strcmp(nt.v[0], "--boot 999: fewer than 1000 resamples, the bounds move with --seed (marked)"),
	      "--boot 999 warned of: %s", nt.n ? nt.v[0] : "none");
	report_notes_release(&nt);
	report_rows_release(&t);

	/* no resamples: the ratio alone */
	pp.boot = 0;
	report_pair(&r, &pp, &t, &nt);
	CHECK(fabs(report_rows_num(&t, 0, 3) - 40.9 / 31.3) < 1e-15 && isnan(report_rows_num(&t, 0, 4)) &&
	      isnan(report_rows_num(&t, 0, 5)), "--boot 0: the ratio, no interval");
	report_rows_release(&t);
	report_rows_release(&r);
}

/* A zero mean of B gives no ratio, said; more than ten units without a partner are counted past ten; a
 * group that is not a row key has its column. */
static void test_notes_and_group(void)
{
	char in[12][7][16];
	const char *cell[12 * 7];
	struct report_pairing pp = pairing("label.class");
	struct report_notes nt = { 0 };
	struct report_rows r, t;

	/* grouped: model, group, in A, in B, unit, mean, passes, marked */
	{
		static const char *const g[] = {
			"m", "'server", "1", "0", "'u", "1", "1", "0",
			"m", "'server", "0", "1", "'u", "0", "1", "0",
		};

		test_rows(&r, 8, g, 2);
	}
	report_pair(&r, &pp, &t, &nt);
	CHECK_STR(test_cols(&t), "model,label.class,n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi", "the group's column");
	CHECK(t.group == 1 && !strcmp(test_cell(&t, 0, 1), "server|-"), "its value");
	CHECK(report_rows_num(&t, 0, 2) == 1 && isnan(report_rows_num(&t, 0, 5)), "one pair, no ratio");
	CHECK_STR(nt.n ? nt.v[0] : "", "model=m: the mean of system=b is 0: no ratio", "the note");
	CHECK(nt.n == 3 && strstr(nt.v[2], "a value <= 0 in an arm: model=m (u in system=b: 0)"),
	      "and the 0 warned of: %s", nt.n == 3 ? nt.v[2] : "");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);

	/* twelve units of A alone */
	for (int i = 0; i < 12; i++) {
		snprintf(in[i][0], 16, "m");
		snprintf(in[i][1], 16, "1");
		snprintf(in[i][2], 16, "0");
		snprintf(in[i][3], 16, "'u%02d", i);
		snprintf(in[i][4], 16, "1");
		snprintf(in[i][5], 16, "1");
		snprintf(in[i][6], 16, "0");
		for (int c = 0; c < 7; c++)
			cell[i * 7 + c] = in[i][c];
	}
	pp = pairing(NULL);
	test_rows(&r, 7, cell, 12);
	report_pair(&r, &pp, &t, &nt);
	CHECK_STR(nt.n ? nt.v[0] : "", "model=m: no results for system=b: nothing to compare",
		  "an arm without results is said as such");
	report_notes_release(&nt);
	report_rows_release(&t);
	/* one unit of B among them: now twelve units have no partner */
	snprintf(in[11][1], 16, "0");
	snprintf(in[11][2], 16, "1");
	report_rows_release(&r);
	test_rows(&r, 7, cell, 12);
	report_pair(&r, &pp, &t, &nt);
	CHECK_STR(nt.n ? nt.v[0] : "", "model=m: 12 units without a partner, left out of the ratio: u00 (only "
		  "system=a), u01 (only system=a), u02 (only system=a), u03 (only system=a), u04 (only system=a), "
		  "u05 (only system=a), u06 (only system=a), u07 (only system=a), u08 (only system=a), u09 (only "
		  "system=a) and 2 more", "ten named, the rest counted");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);
}

/* Each caveat of a comparison, one warning per kind naming its rows, the ratio marked: one pair (no
 * interval), a value <= 0 (no geometric mean at all), unequal passes; and a BCa interval that cannot be
 * had (every resample ties with the estimate but one side). */
static void test_caveats(void)
{
	/* model, in A, in B, unit, mean, passes, marked */
	static const char *const in[] = {
		"one", "1", "0", "'u1", "10", "1", "0", "one", "0", "1", "'u1", "5", "1", "0",
		"neg", "1", "0", "'u1", "3", "2", "0", "neg", "0", "1", "'u1", "-1", "2", "0",
		"neg", "1", "0", "'u2", "4", "2", "0", "neg", "0", "1", "'u2", "2", "2", "0",
		"neg", "1", "0", "'u3", "5", "2", "0", "neg", "0", "1", "'u3", "2", "2", "0",
		"neg", "1", "0", "'u4", "6", "2", "0", "neg", "0", "1", "'u4", "2", "2", "0",
		"neg", "1", "0", "'u5", "7", "2", "0", "neg", "0", "1", "'u5", "2", "2", "0",
		"pas", "1", "0", "'u1", "3", "1", "0", "pas", "0", "1", "'u1", "1", "2", "0",
		"pas", "1", "0", "'u2", "4", "2", "0", "pas", "0", "1", "'u2", "2", "2", "0",
		"pas", "1", "0", "'u3", "5", "2", "0", "pas", "0", "1", "'u3", "2", "2", "0",
		"pas", "1", "0", "'u4", "6", "2", "0", "pas", "0", "1", "'u4", "2", "2", "0",
		"pas", "1", "0", "'u5", "7", "2", "0", "pas", "0", "1", "'u5", "2", "2", "0",
	};
	struct report_pairing pp = pairing(NULL);
	struct report_notes nt = { 0 };
	struct report_rows r, t;
	char *caveats;

	test_rows(&r, 7, in, 22);
	report_pair(&r, &pp, &t, &nt);
	CHECK_INT(t.n, 3, "three rows");
	CHECK(report_rows_num(&t, 0, 4) == 2 && isnan(report_rows_num(&t, 0, 5)) && isnan(report_rows_num(&t, 0, 6)),
	      "one pair: the ratio 2, no interval");
	CHECK(t.mark[0 * 7 + 4] == MARK_CAVEAT && t.mark[1 * 7 + 4] == MARK_CAVEAT &&
	      t.mark[2 * 7 + 4] == MARK_CAVEAT && !t.mark[2 * 7 + 2], "each ratio marked, only the ratio");
	CHECK_NEAR(report_rows_num(&t, 1, 4), 25.0 / 7, 1e-15, "neg: the ratio of means is there, 25 / 7");
	CHECK_INT(nt.n, 3, "three warnings");
	CHECK_STR(nt.n > 0 ? nt.v[0] : "", "fewer than 5 pairs: model=one (n = 1); an interval of so few is rough, "
		  "of one missing (marked)", "one pair");
	CHECK_STR(nt.n > 1 ? nt.v[1] : "", "a value <= 0 in an arm: model=neg (u1 in system=b: -1); a ratio of means "
		  "over values of both signs says little (marked)", "the value <= 0");
	CHECK_STR(nt.n > 2 ? nt.v[2] : "", "units with unequal passes in the two arms: model=pas (1 unit, such as "
		  "u1: 1 in a, 2 in b); each arm's mean over its passes is paired all the same (marked)",
		  "unequal passes");
	caveats = report_notes_caveats(&nt);
	CHECK_STR(caveats, "an interval rests on fewer than 5 pairs; an arm holds a value <= 0; a unit has unequal "
		  "passes in the two arms", "the footnote's caveats");
	free(caveats);
	report_notes_release(&nt);
	report_rows_release(&t);

	pp.stat = STATS_GEOMEAN_RATIO;
	report_pair(&r, &pp, &t, &nt);
	CHECK(isnan(report_rows_num(&t, 1, 4)) && isnan(report_rows_num(&t, 1, 3)), "neg: no geometric mean");
	CHECK(nt.n == 3 && strstr(nt.v[1], "the ratios have no geometric mean"), "said: %s", nt.n > 1 ? nt.v[1] : "");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);

	/* B = 1, -1, 2: leaving out the 2 leaves a sum of 0, so the jackknife (BCa's acceleration) has no
	 * ratio: no BCa interval, said */
	{
		static const char *const z[] = {
			"z", "1", "0", "'u1", "1", "1", "0", "z", "0", "1", "'u1", "1", "1", "0",
			"z", "1", "0", "'u2", "1", "1", "0", "z", "0", "1", "'u2", "-1", "1", "0",
			"z", "1", "0", "'u3", "1", "1", "0", "z", "0", "1", "'u3", "2", "1", "0",
		};

		test_rows(&r, 7, z, 6);
	}
	pp.stat = STATS_RATIO_OF_MEANS;
	pp.interval = STATS_BCA;
	report_pair(&r, &pp, &t, &nt);
	CHECK(report_rows_num(&t, 0, 4) == 1.5 && isnan(report_rows_num(&t, 0, 5)), "the ratio 1.5, no interval");
	CHECK(nt.n == 3 && !strcmp(nt.v[2], "no BCa interval of the ratio of means: model=z (the resamples fall "
				   "on one side of it, or its jackknife has no value)"), "said: %s",
	      nt.n > 2 ? nt.v[2] : "");
	report_notes_release(&nt);
	report_rows_release(&t);
	report_rows_release(&r);
}

int main(void)
{
	test_pairs();
	test_bootstrap();
	test_notes_and_group();
	test_caveats();
	return test_done();
}
