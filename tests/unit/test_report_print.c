/* test_report_print.c: the one printer of report tables, format by format: intervals in their value's
 * cell for reading, decimals alike down a column, marks and their footnote, summaries, text and series
 * columns, and where --out may write. Expected texts by hand. */
#include <stdlib.h>
#include <unistd.h>

#include "report_print.h"
#include "test_report_rows.h"

static char out_path[64];

/* What report_print writes for d in fmt (through --out, read back). Caller frees. */
static char *printed(const struct table_format *fmt, int digits, const struct report_doc *d)
{
	struct report_out out = { fmt, digits, out_path, NULL, NULL };
	struct strbuf sb = STRBUF_INIT;
	int rc;

	rc = report_print(&out, d);
	CHECK_INT(rc, FAIL_OK, "printed");
	if (sb_read_file(&sb, out_path))
		sb_adds(&sb, "(unreadable)");
	return sb_detach(&sb);
}

static int num_col(struct report_rows *r, const char *name, int sig, int align)
{
	int c = report_rows_col(r, name, RCOL_NUM);

	r->col[c].sig = sig;
	r->col[c].nosum = !sig;
	r->col[c].align = align;
	return c;
}

/* A comparison as report_pair makes one: a marked A and ratio in row 1, a blank-edged key in row 2. */
static void compare_rows(struct report_rows *r)
{
	int c;
	static const double v[2][6] = {
		{ 4, 12.5, 7.5, 12.5 / 7.5, 1.5882353, 1.7692308 },
		{ 3, 12, 7, 12.0 / 7, 1.62, 1.83 },
	};

	report_rows_init(r);
	report_rows_col(r, "model", RCOL_KEY);
	num_col(r, "n", 0, 0);
	num_col(r, "tok_s_a", 4, 1);
	num_col(r, "tok_s_b", 4, 1);
	c = num_col(r, "ratio", 3, 0);
	r->col[c].ci = 1;
	num_col(r, "ci_lo", 3, 0);
	num_col(r, "ci_hi", 3, 0);
	r->ci_head = xstrdup("a/b [95% CI]");
	for (int j = 0; j < 2; j++) {
		size_t at = report_rows_add(r);

		report_rows_set_text(r, at, 0, j ? " m2" : "m1");
		for (c = 0; c < 6; c++)
			report_rows_set_num(r, at, c + 1, v[j][c]);
	}
	report_rows_mark(r, 0, 2, MARK_IMPRECISE);
	report_rows_mark(r, 0, 4, MARK_IMPRECISE);
}

static void test_compare_formats(void)
{
	struct report_rows r;
	struct report_doc d = { &r, NULL, "CAP", 1, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *s;

	compare_rows(&r);
	s = printed(&table_md, 0, &d);
	CHECK_TEXT(s, "CAP\n\n"
		   "| model | n   | tok_s_a | tok_s_b | a/b [95% CI]       |\n"
		   "|:----- | ---:| -------:| -------:|:------------------ |\n"
		   "| m1    |   4 |  12.50\xe2\x80\xa0 |    7.50 | 1.67 [1.59, 1.77]\xe2\x80\xa0 |\n"
		   "| \" m2\" |   3 |  12.00  |    7.00 | 1.71 [1.62, 1.83]  |\n"
		   "\n\xe2\x80\xa0 holds medians not known to the precision asked; --strict leaves them out\n",
		   "Markdown: the method above, the interval in one cell, A and B to 2 decimals, marks, the footnote");
	free(s);
	s = printed(&table_csv, 0, &d);
	CHECK_TEXT(s, "model,n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi,precise\n"
		   "m1,4,12.5,7.5,1.66667,1.58824,1.76923,0\n"
		   " m2,3,12,7,1.71429,1.62,1.83,1\n", "CSV: every column, 6 digits, precise for the marks");
	free(s);
	s = printed(&table_json, 0, &d);
	CHECK_TEXT(s, "[{\"model\":\"m1\",\"n\":4,\"tok_s_a\":12.5,\"tok_s_b\":7.5,\"ratio\":1.66667,"
		   "\"ci_lo\":1.58824,\"ci_hi\":1.76923,\"precise\":0},\n"
		   " {\"model\":\" m2\",\"n\":3,\"tok_s_a\":12,\"tok_s_b\":7,\"ratio\":1.71429,\"ci_lo\":1.62,"
		   "\"ci_hi\":1.83,\"precise\":1}]\n", "JSON: numbers as numbers");
	free(s);
	s = printed(&table_latex, 0, &d);
	CHECK_TEXT(s, "% CAP\n\\begin{tabular}{lrrrl}\n\\toprule\n"
		   "model & n & tok\\_s\\_a & tok\\_s\\_b & a/b [95\\% CI] \\\\\n\\midrule\n"
		   "m1 & 4 & 12.50\\rlap{$^\\dagger$} & 7.50 & 1.67 [1.59, 1.77]\\rlap{$^\\dagger$} \\\\\n"
		   "\" m2\" & 3 & 12.00 & 7.00 & 1.71 [1.62, 1.83] \\\\\n\\bottomrule\n\\end{tabular}\n"
		   "% $^\\dagger$: holds medians not known to the precision asked; --strict leaves them out\n"
		   "\\par{\\footnotesize $^\\dagger$ holds medians not known to the precision asked.}\n",
		   "LaTeX: the method as a comment, the footnote as a paragraph");
	free(s);
	d.marked = 2;
	s = printed(&table_text, 2, &d);
	/* --digits 2: 12.5 to 0 decimals is 12 (to even), 7.5 would keep 1 digit at 0 decimals: its own 2 */
	CHECK_TEXT(s, "CAP\n\nmodel  n  tok_s_a  tok_s_b  a/b [95% CI]   \n"
		   "m1     4      12\xe2\x80\xa0      7.5  1.7 [1.6, 1.8]\xe2\x80\xa0\n"
		   "\" m2\"  3      12       7.0  1.7 [1.6, 1.8] \n"
		   "\n\xe2\x80\xa0 holds medians not known to the precision asked (2 results); --strict leaves them out\n",
		   "text with --digits 2, the marked results counted");
	free(s);
	/* What the results said of themselves: a footnote of no mark, in each format that has footnotes. */
	d.said = "2 records of item r_1 averaged (1 result)";
	s = printed(&table_md, 0, &d);
	CHECK(strstr(s, "--strict leaves them out\n\nNote: 2 records of item r_1 averaged (1 result)\n") != NULL,
	      "Markdown: the note under the other footnotes: '%s'", s);
	free(s);
	s = printed(&table_latex, 0, &d);
	CHECK(strstr(s, "\n% 2 records of item r_1 averaged (1 result)\n"
		      "\\par{\\footnotesize Note: 2 records of item r\\_1 averaged (1 result).}\n") != NULL,
	      "LaTeX: a comment and a paragraph, its text escaped: '%s'", s);
	free(s);
	s = printed(&table_html, 0, &d);
	CHECK(strstr(s, "<p class=\"footnote\">Note: 2 records of item r_1 averaged (1 result)</p>\n") != NULL,
	      "HTML: a footnote paragraph: '%s'", s);
	free(s);
	s = printed(&table_csv, 0, &d);
	CHECK(!strstr(s, "Note"), "CSV: only rows");
	free(s);
	report_rows_release(&r);
}

/* Summary rows under the table: the statistic and its group in the first cell, the count left empty, the
 * table's decimals, n as an integer; for programs no precise. The t interval of 1 and 4 with scipy:
 * stats.t.interval(0.95, 1, loc=2.5, scale=stats.sem([1, 4])) = (-16.5593..., 21.5593...). */
static void test_summary_print(void)
{
	static const char *const host[] = { "a", "c", "b" }, *const class[] = { "g1", "g1", "g2" };
	static const double v[] = { 1, 4, 10 };
	struct report_notes nt = { 0 };
	struct report_rows r, s;
	struct report_doc d = { &r, &s, NULL, 1, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *p, *caveat;

	report_rows_init(&r);
	report_rows_col(&r, "host", RCOL_KEY);
	report_rows_group(&r, "label.class");
	num_col(&r, "n", 0, 0);
	num_col(&r, "v", 4, 0);
	for (size_t j = 0; j < 3; j++) {
		report_rows_add(&r);
		report_rows_set_text(&r, j, 0, host[j]);
		report_rows_set_text(&r, j, 1, class[j]);
		report_rows_set_num(&r, j, 2, 1);
		report_rows_set_num(&r, j, 3, v[j]);
	}
	report_rows_mark(&r, 1, 3, MARK_IMPRECISE);
	report_agg_summary(&r, NULL, &s, &nt);
	d.caveat = caveat = report_notes_caveats(&nt);
	p = printed(&table_csv, 0, &d);
	CHECK_TEXT(p, "stat,host,label.class,n,v,precise\n,a,g1,1,1,1\n,c,g1,1,4,0\n,b,g2,1,10,1\n"
		   "median,,g1,,2.5,\nmin,,g1,,1,\nmax,,g1,,4,\nmean,,g1,,2.5,\nci95 lo,,g1,,-16.5593,\n"
		   "ci95 hi,,g1,,21.5593,\nn,,g1,,2,\n"
		   "median,,g2,,10,\nmin,,g2,,10,\nmax,,g2,,10,\nmean,,g2,,10,\nci95 lo,,g2,,,\n"
		   "ci95 hi,,g2,,,\nn,,g2,,1,\n", "CSV summary: the statistic in a column of its own, the group in "
		   "its, no precise");
	free(p);
	p = printed(&table_json, 0, &d);
	CHECK(strstr(p, "[{\"stat\":null,\"host\":\"a\",\"label.class\":\"g1\",\"n\":1,\"v\":1,\"precise\":1},") &&
	      strstr(p, "{\"stat\":\"ci95 lo\",\"host\":null,\"label.class\":\"g1\",\"n\":null,\"v\":-16.5593,"
		     "\"precise\":null}"), "JSON: the statistic a member of its own");
	free(p);
	p = printed(&table_md, 0, &d);
	CHECK_TEXT(p, "| host         | label.class | n   | v       |\n"
		   "|:------------ |:----------- | ---:| -------:|\n"
		   "| a            | g1          |   1 |   1.00  |\n"
		   "| c            | g1          |   1 |   4.00\xe2\x80\xa0 |\n"
		   "| b            | g2          |   1 |  10.00  |\n"
		   "| median (g1)  |             |     |   2.50  |\n"
		   "| min (g1)     |             |     |   1.00  |\n"
		   "| max (g1)     |             |     |   4.00  |\n"
		   "| mean (g1)    |             |     |   2.50  |\n"
		   "| ci95 lo (g1) |             |     | -16.56\xe2\x80\xa1 |\n"
		   "| ci95 hi (g1) |             |     |  21.56\xe2\x80\xa1 |\n"
		   "| n (g1)       |             |     |      2  |\n"
		   "| median (g2)  |             |     |  10.00  |\n"
		   "| min (g2)     |             |     |  10.00  |\n"
		   "| max (g2)     |             |     |  10.00  |\n"
		   "| mean (g2)    |             |     |  10.00  |\n"
		   "| ci95 lo (g2) |             |     |      -  |\n"
		   "| ci95 hi (g2) |             |     |      -  |\n"
		   "| n (g2)       |             |     |      1  |\n"
		   "\n\xe2\x80\xa0 holds medians not known to the precision asked; --strict leaves them out\n"
		   "\n\xe2\x80\xa1 a summary's interval rests on fewer than 5 units (see the warnings)\n",
		   "Markdown summary: the table's 2 decimals, n an integer, no interval of one value, an interval "
		   "of 2 units marked");
	free(p);
	report_rows_release(&s);
	report_notes_release(&nt);
	free(caveat);
	report_rows_release(&r);
}

/* A summary's values follow the rule an interval's bounds follow: one that differs from 1 does not print as
 * 1 (a share of 0.9996 to 0.99985, whose t interval's upper bound is 0.99986: not 1.000); the column's
 * decimals elsewhere. By hand (python3 statistics): median 0.99975, mean 0.99974, t interval
 * 0.99974 -+ 2.776 * 0.0001025 / sqrt(5) = [0.999621, 0.999859]. */
static void test_summary_apart_from_1(void)
{
	static const double v[] = { 0.9996, 0.9997, 0.99975, 0.9998, 0.99985 };
	struct report_notes nt = { 0 };
	struct report_rows r, s;
	struct report_doc d = { &r, &s, NULL, 1, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *p;

	report_rows_init(&r);
	report_rows_col(&r, "host", RCOL_KEY);
	num_col(&r, "share", 3, 0);
	for (size_t j = 0; j < 5; j++) {
		report_rows_add(&r);
		report_rows_set_text(&r, j, 0, (const char *[]){ "a", "b", "c", "d", "e" }[j]);
		report_rows_set_num(&r, j, 1, v[j]);
	}
	report_agg_summary(&r, NULL, &s, &nt);
	p = printed(&table_md, 0, &d);
	CHECK(strstr(p, "| e       |  1.000 |\n") != NULL, "the rows: the column's 3 decimals");
	CHECK(strstr(p, "| min     | 0.9996 |\n") != NULL, "min 0.9996: not 1.000");
	CHECK(strstr(p, "| ci95 lo | 0.9996 |\n") != NULL, "ci95 lo 0.99962: not 1.000");
	CHECK(strstr(p, "| ci95 hi | 0.9999 |\n") != NULL, "ci95 hi 0.99986: not 1.000");
	CHECK(strstr(p, "| mean    | 0.9997 |\n") != NULL, "mean 0.99974: not 1.000");
	CHECK(strstr(p, "| n       |      5 |\n") != NULL, "n an integer");
	free(p);
	report_rows_release(&s);
	report_notes_release(&nt);
	report_rows_release(&r);
}

/* An interval's bounds print apart from each other and from 1 wherever they are apart: the column gains
 * decimals (reading) or digits (programs) until every row shows it; identical bounds stay alike. */
static void test_interval_precision(void)
{
	static const double v[][3] = {
		{ 1.0012, 0.9954, 1.0093 },        /* includes 1: must not print as [1.00, 1.01] */
		{ 1.0502, 1.0494, 1.0511 },        /* 10,000 items: not [1.05, 1.05] */
		{ 1, 1, 1 },                       /* A/A: [1, 1] for true */
	};
	struct report_rows r;
	struct report_doc d = { &r, NULL, NULL, 1, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *p;
	int c;

	report_rows_init(&r);
	report_rows_col(&r, "model", RCOL_KEY);
	c = num_col(&r, "ratio", 3, 0);
	r.col[c].ci = 1;
	num_col(&r, "ci_lo", 3, 0);
	num_col(&r, "ci_hi", 3, 0);
	r.ci_head = xstrdup("a/b [95% CI]");
	for (size_t j = 0; j < 3; j++) {
		report_rows_add(&r);
		report_rows_set_text(&r, j, 0, j == 0 ? "m1" : j == 1 ? "m2" : "m3");
		for (int k = 0; k < 3; k++)
			report_rows_set_num(&r, j, 1 + k, v[j][k]);
	}
	p = printed(&table_md, 0, &d);
	CHECK_TEXT(p, "| model | a/b [95% CI]         |\n|:----- |:-------------------- |\n"
		   "| m1    | 1.001 [0.995, 1.009] |\n| m2    | 1.050 [1.049, 1.051] |\n"
		   "| m3    | 1.000 [1.000, 1.000] |\n", "Markdown: 3 decimals, where 2 would hide it");
	free(p);
	/* a bound just over 1 (1.0004): 4 decimals */
	report_rows_set_num(&r, 2, 2, 1.0004);
	report_rows_set_num(&r, 2, 3, 1.02);
	p = printed(&table_text, 0, &d);
	CHECK(strstr(p, "m3     1.0000 [1.0004, 1.0200]") != NULL, "text: 1.0004 apart from 1");
	free(p);
	/* for programs: 6 significant digits, more where a bound would print as 1 */
	report_rows_set_num(&r, 0, 1, 1.00001);
	report_rows_set_num(&r, 0, 2, 0.99999993);
	report_rows_set_num(&r, 0, 3, 1.0000002);
	p = printed(&table_csv, 0, &d);
	CHECK_TEXT(p, "model,ratio,ci_lo,ci_hi\nm1,1.00001,0.99999993,1.0000002\nm2,1.0502,1.0494,1.0511\n"
		   "m3,1,1.0004,1.02\n", "CSV: 8 digits for the column, so no bound prints as 1");
	free(p);
	/* bounds equal to the ratio but for a sum's rounding (4e-16): alike, at the column's precision */
	for (size_t j = 0; j < 2; j++)
		for (int k = 0; k < 3; k++)
			report_rows_set_num(&r, j, 1 + k, v[j][k]);
	report_rows_set_num(&r, 2, 1, 2);
	report_rows_set_num(&r, 2, 2, 2 - 4e-16);
	report_rows_set_num(&r, 2, 3, 2 + 4e-16);
	p = printed(&table_md, 0, &d);
	CHECK(strstr(p, "| m3    | 2.000 [2.000, 2.000] |\n") != NULL, "Markdown: rounding noise forces no decimals");
	free(p);
	p = printed(&table_csv, 0, &d);
	CHECK(strstr(p, "\nm3,2,2,2\n") != NULL, "CSV: nor digits");
	free(p);
	report_rows_release(&r);
}

/* Text and series columns print as they are, numbers with their own digits; a heading is for reading
 * only, and not in LaTeX. */
static void test_text_print(void)
{
	static const double ratio[] = { 1, 1.02, 0.97 };
	struct report_rows r;
	struct report_doc d = { &r, NULL, "H", 0, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *p;

	report_rows_init(&r);
	report_rows_col(&r, "host", RCOL_TEXT);
	num_col(&r, "first_s", 4, -1);
	report_rows_col(&r, "ratio_over_time", RCOL_SERIES);
	num_col(&r, "max_noise_%", 2, -1);
	report_rows_add(&r);
	report_rows_add(&r);
	report_rows_set_text(&r, 0, 0, " h1");
	report_rows_set_num(&r, 0, 1, 0.00123456);
	report_rows_set_series(&r, 0, 2, ratio, 3);
	report_rows_set_num(&r, 1, 1, 12.5);
	report_rows_set_series(&r, 1, 2, ratio, 1);
	report_rows_set_num(&r, 1, 3, 4.25);
	p = printed(&table_csv, 0, &d);
	CHECK_TEXT(p, "host,first_s,ratio_over_time,max_noise_%\n h1,0.00123456,1 1.02 0.97,\n,12.5,1,4.25\n",
		   "CSV: no heading; text as it is, unknown empty");
	free(p);
	p = printed(&table_text, 0, &d);
	CHECK_TEXT(p, "H\n\nhost  first_s   ratio_over_time     max_noise_%\n"
		   " h1   0.001235  1.000 1.020 0.9700            -\n"
		   "         12.50  1.000                       4.2\n",
		   "text: the heading, each number with its own digits");
	free(p);
	p = printed(&table_latex, 0, &d);
	CHECK(!strncmp(p, "\\begin{tabular}", 15), "LaTeX: no heading");
	free(p);
	report_rows_release(&r);
}

static void test_num_and_out(void)
{
	struct report_opts o;
	char buf[40], db[80], errs[512], want[512];
	FILE *f;

	report_opts_init(&o);
	report_print_num(o.fmt, o.digits, 1234.5678, 4, buf, sizeof(buf));
	CHECK_STR(buf, "1235", "4 significant digits for reading");
	report_print_num(o.fmt, o.digits, NAN, 4, buf, sizeof(buf));
	CHECK_STR(buf, "-", "unknown for reading");
	report_print_num(o.fmt, o.digits, 7, 0, buf, sizeof(buf));
	CHECK_STR(buf, "7", "a count");
	o.fmt = &table_csv;
	report_print_num(o.fmt, o.digits, 1234.5678, 4, buf, sizeof(buf));
	CHECK_STR(buf, "1234.57", "6 digits for programs");
	report_print_num(o.fmt, o.digits, NAN, 0, buf, sizeof(buf));
	CHECK_STR(buf, "", "unknown for programs");
	o.digits = 2;
	report_print_num(o.fmt, o.digits, 1234.5678, 4, buf, sizeof(buf));
	CHECK_STR(buf, "1200", "--digits 2 for programs too");

	snprintf(db, sizeof(db), "%s.db", out_path);
	f = fopen(db, "w");
	fputs("SQLite format 3", f);
	fputc('\0', f);
	fclose(f);
	test_capture_start();
	CHECK_INT(report_out_check("--out", db, "other.db"), FAIL_UNSAFE, "an SQLite file is not overwritten");
	CHECK_INT(report_out_check("--out", out_path, out_path), FAIL_UNSAFE, "nor the database being read");
	capture_into(errs, sizeof(errs));
	snprintf(want, sizeof(want), "sweep: --out '%s' is an SQLite database: not overwriting it\n"
		 "sweep: --out '%s' is the database being read: not overwriting it\n", db, out_path);
	CHECK_TEXT(errs, want, "said why");
	CHECK_INT(report_out_check("--out", out_path, "other.db"), FAIL_OK, "a report may be");
	CHECK_INT(report_out_check("--out", "/nonexistent/r.md", NULL), FAIL_OK, "a new file may be");
	CHECK_INT(report_out_check("--out", "/dev/null", NULL), FAIL_OK, "a device may be");
	CHECK_INT(report_out_check("--out", NULL, "x.db"), FAIL_OK, "stdout may be");
	unlink(db);
}

/* Seconds on a figure's axis in the unit that suits the largest: ns, µs, ms, or s as they are. */
static void test_seconds_unit(void)
{
	static const struct {
		double max, scale;
		const char *unit;
	} want[] = { { 4e-7, 1e9, "ns" }, { 1e-6, 1e6, "µs" }, { 4e-4, 1e6, "µs" }, { 1e-3, 1e3, "ms" },
		     { 0.5, 1e3, "ms" }, { 1, 1, "s" }, { 30, 1, "s" }, { 0, 1, "s" } };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *unit = "s";
		double scale = report_plot_seconds(want[i].max, &unit);

		CHECK(scale == want[i].scale && !strcmp(unit, want[i].unit), "%g s drawn x %g in %s: got x %g in %s",
		      want[i].max, want[i].scale, want[i].unit, scale, unit);
	}
}

int main(void)
{
	int fd;

	snprintf(out_path, sizeof(out_path), "/tmp/test_report_print.XXXXXX");
	fd = mkstemp(out_path);
	close(fd);
	test_compare_formats();
	test_summary_print();
	test_interval_precision();
	test_summary_apart_from_1();
	test_text_print();
	test_num_and_out();
	test_seconds_unit();
	unlink(out_path);
	return test_done();
}
