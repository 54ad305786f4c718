/* store_merge.c: `sweep merge`: sweep databases from other hosts or jobs into one; every input untrusted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "exitcode.h"
#include "store.h"
#include "store_merge_int.h"
#include "util.h"

int store_merge(const char *out, const char *const *inputs, int n, const struct store_merge_opts *o,
		struct store_merge_stats *stats)
{
	struct merge m = { .o = o, .out_path = out };
	struct input *in = xcalloc((size_t)(n ? n : 1), sizeof(*in));
	struct store_merge_stats *st = stats ? stats : xcalloc((size_t)(n ? n : 1), sizeof(*st));
	struct store_lock lock = { -1, -1, 0 };
	int made = 0, ret = FAIL_USAGE;   /* until the output is open, a refusal */
	char *msg = NULL;

	for (int i = 0; i < n; i++)
		in[i].fd = -1;
	if (sqlite3_libversion_number() < 3031000) {
		error("sweep merge needs SQLite 3.31 or newer for its defensive settings (this is %s)",
		      sqlite3_libversion());
		ret = FAIL_IO;
		goto out;
	}
	memset(st, 0, (size_t)n * sizeof(*st));
	/* Every input is checked before anything is written: a bad one leaves the output as it was. */
	for (int i = 0; i < n; i++) {
		in[i].path = inputs[i];
		in[i].st = &st[i];
		if (store_output_check("the output", out, inputs[i], STORE_OUT_DB)) {
			ret = FAIL_UNSAFE;   /* as a report's --out over what it reads */
			goto out;
		}
		if (store_merge_input_open(&in[i]) || store_merge_input_check_rows(&in[i]))
			goto out;
		store_merge_input_busy(&in[i]);
	}
	if ((ret = store_lock_path(out, "sweep merge", &lock)))   /* FAIL_BUSY while another writes it */
		goto out;
	made = lock.made;
	if ((ret = store_merge_output_open(&m, &made)))   /* FAIL_NOT_SWEEP: not a sweep database */
		goto out;
	made |= lock.made;   /* the lock made it (empty) */
	ret = FAIL_IO;
	iso_time(now_wall(), m.now, sizeof(m.now));
	if (sqlite3_exec(m.out, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
		store_merge_output_err(&m);
		goto out;
	}
	if (sqlite3_exec(m.out, store_merge_output_schema, NULL, NULL, &msg) ||
	    sqlite3_exec(m.out, store_slurm_schema, NULL, NULL, &msg)) {
		error("cannot merge into '%s': %s", out, msg);
		sqlite3_free(msg);
		goto rollback;
	}
	if (store_merge_output_conflicts(&m) || store_merge_copy_prints(&m))
		goto rollback;
	for (int i = 0; i < n; i++)
		if (store_merge_copy_input(&m, &in[i]))
			goto rollback;
	store_merge_output_release(&m);
	if (sqlite3_exec(m.out, "COMMIT", NULL, NULL, NULL)) {
		store_merge_output_err(&m);
		goto rollback;
	}
	ret = 0;
	goto out;
rollback:
	store_merge_output_release(&m);
	if (!sqlite3_get_autocommit(m.out))
		sqlite3_exec(m.out, "ROLLBACK", NULL, NULL, NULL);
out:
	store_merge_output_release(&m);
	for (int i = 0; i < n; i++)
		store_merge_input_close(&in[i]);
	if (m.out)
		sqlite3_close_v2(m.out);
	store_unlock(&lock);
	/* An output this merge made and could not fill is not left behind half made. */
	if (ret && made)
		store_remove_files(out);
	free(m.prints);
	free(in);
	if (!stats)
		free(st);
	return ret;
}

void store_merge_conflicts_note(const char *out_word, uint64_t n, struct strbuf *sb)
{
	sb_addf(sb, "%" PRIu64 " conflict%s: ok results of a host for cells that already had an ok result of that"
		" same host with other values (a cell measured twice there: its database made again, say); kept"
		" apart in the table conflicts, never over the result reports use; list them: sweep sql %s"
		" \"SELECT c.sweep, c.key, c.params, r.median AS kept, x.median AS other, x.source, x.run"
		" FROM conflicts x JOIN cells c ON c.id = x.cell LEFT JOIN results r ON r.id = x.kept ORDER BY x.id\"",
		n, n == 1 ? "" : "s", out_word);
}
