/* report_conditions.h: what each number of a report was measured under (report --conditions, --ledger), and
 * the differences between the conditions of two sets of results (for a comparison of two sides). */
#ifndef SWEEP_REPORT_CONDITIONS_H
#define SWEEP_REPORT_CONDITIONS_H

#include <stdio.h>

#include "json.h"
#include "report_print.h"
#include "report_query.h"

/*
 * The conditions of a set of results, one json_obj of name -> value text per result (in the order of
 * report_query_ledger's rows): sweep_version, sweep_commit, host, gpu, "file NAME" (a file's hash:
 * identity.h), then the worker's conditions (hostinfo_conditions: driver, cuda_runtime, sm_clock_mhz,
 * cpu_governor, aslr, loadavg, ...). A condition a result does not have is absent from its object: it was
 * not known, and is never filled in. Owns everything (report_conds_release).
 */
struct report_conds {
	struct json_obj *res;
	size_t n, alloc;
	char **names;              /* every name some result has, in the order first met */
	size_t nnames, alloc_names;
};
void report_conds_init(struct report_conds *c);
void report_conds_release(struct report_conds *c);
/* The conditions of report_query_ledger's rows (nkey row keys before its columns) appended to c, one
 * result a row. Pure. */
void report_conds_read(const struct report_rows *in, int nkey, struct report_conds *c);
/* The distinct values of name over the results [from, to) of c ("-" for unknown), joined by ", " in the
 * order met, appended to sb; returns how many there are. */
int report_conds_values(const struct report_conds *c, const char *name, size_t from, size_t to,
			struct strbuf *sb);
/*
 * The conditions that differ between two sets of results (the two sides of a comparison: two databases,
 * or a result and the results it superseded): one line "NAME: A -> B\n" per name whose distinct values
 * differ, A and B as report_conds_values writes them, in the order of a's names then b's others, appended
 * to out. Returns the number of lines (0: measured under the same conditions, as far as they are known).
 * Pure: unit tests call it with hand-made sets.
 */
int report_conds_diff(const struct report_conds *a, const struct report_conds *b, struct strbuf *out);
/*
 * The table's conditions, after its table (--conditions: a block of those common to every number, then
 * the rows with the conditions that vary, the results behind each row and the query that gives them)
 * and its ledger (--ledger FILE: a line per result with its value, conditions and provenance; CSV for a
 * .csv name, else JSON lines). An enum fail.
 */
int report_conditions(const struct report_plan *p);
/* The same two blocks of conditions written into to in the report's format (a page's conditions
 * section). An enum fail. */
int report_conditions_to(const struct report_plan *p, FILE *to);
/* The same as a page's conditions section (HTML) into *html (the caller frees it; it may be set on a
 * failure too), computed before the page is printed. An enum fail. */
int report_conditions_page(const struct report_plan *p, char **html);

#endif
