/* test_report_rows.h: rows as a statement returns them, for the report tests (each cell as text and as a
 * number), and a look at a cell. */
#ifndef SWEEP_TEST_REPORT_ROWS_H
#define SWEEP_TEST_REPORT_ROWS_H

#include <math.h>

#include "report_agg.h"
#include "report_rows.h"
#include "util.h"
#include "test.h"

/* The n rows of ncol cells: NULL is SQL's NULL; a number is an INT or FLOAT value (its text and number);
 * a text that starts with a quote ("'64") is a TEXT value: the quote dropped, no number. */
static inline void test_rows(struct report_rows *r, int ncol, const char *const *cell, size_t n)
{
	report_rows_init(r);
	for (int c = 0; c < ncol; c++)
		report_rows_col(r, "col", RCOL_TEXT);
	for (size_t j = 0; j < n; j++) {
		size_t at = report_rows_add(r);

		for (int c = 0; c < ncol; c++) {
			const char *s = cell[j * (size_t)ncol + (size_t)c];
			double v;

			if (s && *s == '\'') {
				report_rows_set_text(r, at, c, s + 1);
			} else if (s) {
				report_rows_set_text(r, at, c, s);
				report_rows_set_num(r, at, c, parse_double(s, &v) ? NAN : v);
			}
		}
	}
}

/* Cell (row, col) as "text|number" ("-" for unknown), for CHECK_STR. */
static inline const char *test_cell(const struct report_rows *r, size_t row, int col)
{
	static char buf[256];
	const char *s = report_rows_text(r, row, col);
	double v = report_rows_num(r, row, col);

	snprintf(buf, sizeof(buf), "%s|%s", s ? s : "-", "");
	if (!isnan(v))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%.17g", v);
	else
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "-");
	return buf;
}

/* The column names of r joined by commas. */
static inline const char *test_cols(const struct report_rows *r)
{
	static char buf[512];
	size_t k = 0;

	buf[0] = '\0';
	for (int c = 0; c < r->ncol && k < sizeof(buf); c++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", c ? "," : "", r->col[c].name);
	return buf;
}

#endif
