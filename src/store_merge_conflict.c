/* store_merge_conflict.c: an ok result for a cell that has one: the same values, or a conflict kept apart. */
#include "store_merge_int.h"
#include "json.h"
#include "util.h"

/* JSON of a result's samples, metrics and items in the input, for a conflict row. */
static int result_json(struct input *in, int64_t id, struct strbuf *samples, struct strbuf *metrics,
		       struct strbuf *items)
{
	static const char *const sql[] = {
		"SELECT seconds FROM samples WHERE result = ?1 ORDER BY i",
		"SELECT name, value FROM metrics WHERE result = ?1 ORDER BY name",
		"SELECT item, metric, value FROM items WHERE result = ?1 ORDER BY item, metric",
	};
	struct strbuf *out[] = { samples, metrics, items };

	for (int k = 0; k < 3; k++) {
		sqlite3_stmt *s = prep(in->db, sql[k]);
		int rc, n = 0;

		if (!s)
			return store_merge_input_err(in, "cannot read it");
		sqlite3_bind_int64(s, 1, id);
		sb_addc(out[k], k == 1 ? '{' : '[');
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			double v = sqlite3_column_double(s, k);

			if (n++)
				sb_addc(out[k], ',');
			if (k == 1) {
				json_add_str(out[k], col_text(s, 0) ? col_text(s, 0) : "");
				sb_addc(out[k], ':');
			} else if (k == 2) {
				sb_addc(out[k], '[');
				json_add_str(out[k], col_text(s, 0) ? col_text(s, 0) : "");
				sb_addc(out[k], ',');
				json_add_str(out[k], col_text(s, 1) ? col_text(s, 1) : "");
				sb_addc(out[k], ',');
			}
			if (sqlite3_column_type(s, k) == SQLITE_NULL)
				sb_adds(out[k], "null");
			else
				json_add_num(out[k], v);
			if (k == 2)
				sb_addc(out[k], ']');
		}
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return store_merge_input_err(in, "cannot read it");
		sb_addc(out[k], k == 1 ? '}' : ']');
	}
	return 0;
}

/* Two ok results say the same: equal counts and summaries (NULL equal to NULL). */
int store_merge_conflict_same(sqlite3_stmt *kept, sqlite3_stmt *s)
{
	/* kept: id, n, median, mean, min, max; s: results_cols (n 8, median 9, mean 10, min 11, max 12). */
	static const int pairs[][2] = { { 1, 8 }, { 2, 9 }, { 3, 10 }, { 4, 11 }, { 5, 12 } };

	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		int a = sqlite3_column_type(kept, pairs[i][0]), b = sqlite3_column_type(s, pairs[i][1]);

		if ((a == SQLITE_NULL) != (b == SQLITE_NULL))
			return 0;
		if (a != SQLITE_NULL &&
		    sqlite3_column_double(kept, pairs[i][0]) != sqlite3_column_double(s, pairs[i][1]))
			return 0;
	}
	return 1;
}

int store_merge_conflict_add(struct merge *m, struct input *in, sqlite3_stmt *s, int64_t cell, int64_t run,
			     int64_t worker, int64_t kept)
{
	sqlite3_stmt *f = store_merge_output_stmt(m, O_CONFLICT_FIND);
	sqlite3_stmt *a = store_merge_output_stmt(m, O_CONFLICT_ADD);
	struct strbuf samples = STRBUF_INIT, metrics = STRBUF_INIT, items = STRBUF_INIT;
	int found, ret = -1;

	if (!f || !a)
		return -1;
	sqlite3_bind_int64(f, 1, cell);
	bind_col(f, 2, s, 5);
	store_bind_id(f, 3, run);
	bind_col(f, 4, s, 6);
	if (store_merge_output_step(m, f, &found, NULL))
		return -1;
	if (found) {
		in->st->results_same++;
		return 0;
	}
	if (result_json(in, sqlite3_column_int64(s, 0), &samples, &metrics, &items))
		goto out;
	sqlite3_bind_int64(a, 1, in->merge);
	sqlite3_bind_int64(a, 2, cell);
	sqlite3_bind_int64(a, 3, kept);
	sqlite3_bind_text(a, 4, in->path, -1, SQLITE_TRANSIENT);
	store_bind_id(a, 5, run);
	store_bind_id(a, 6, worker);
	/* attempt .. sm_clock: results_cols 5 .. 19, except status (4). */
	for (int i = 5; i <= 19; i++)
		bind_col(a, 7 + i - 5, s, i);
	sqlite3_bind_text(a, 22, samples.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(a, 23, metrics.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(a, 24, items.buf, -1, SQLITE_TRANSIENT);
	/* ci_lo, ci_hi, precise: results_cols 29 .. 31 */
	for (int i = 29; i <= 31; i++)
		bind_col(a, 25 + i - 29, s, i);
	if (store_merge_output_step(m, a, NULL, NULL))
		goto out;
	in->st->conflicts++;
	ret = 0;
out:
	sb_release(&samples);
	sb_release(&metrics);
	sb_release(&items);
	return ret;
}
