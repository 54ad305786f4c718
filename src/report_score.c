/* report_score.c: `sweep report --score`: predictions registered with `sweep predict` against results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct score_rows {
	const struct report *r;
	struct table *t;
	int nkey;
	double bar;
	int groups, met, pending;
};

static int score_row(const struct store_row *row, void *data)
{
	struct score_rows *s = data;
	const double *v = &row->num[s->nkey + 2];  /* n, mean(err^2), mean(err), not measured yet */
	char n[24], rms[40], mean[40];
	const char **cells = xcalloc((size_t)s->nkey + 8, sizeof(*cells));
	int c = 0;

	s->pending += (int)v[3];
	if (v[0] > 0) {
		double r = sqrt(v[1]);
		int ok = r <= s->bar;

		for (int k = 0; k < s->nkey + 1; k++)
			cells[c++] = row->text[k];
		cells[c++] = row->num[s->nkey + 1] == 1 ? "blind" : "late";
		snprintf(n, sizeof(n), "%.0f", v[0]);
		report_num(s->r, r, 3, rms, sizeof(rms));
		report_num(s->r, v[2], 3, mean, sizeof(mean));
		cells[c++] = n;
		cells[c++] = rms;
		cells[c++] = mean;
		if (!isnan(s->bar)) {
			cells[c++] = ok ? "met" : "missed";
			s->groups++;
			s->met += ok;
		}
		table_add(s->t, cells);
	}
	free(cells);
	return 0;
}

int report_score(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	struct table t;
	struct score_rows s = { r, &t, r->nrows, r->bar, 0, 0, 0 };
	const char **head = xcalloc((size_t)r->nrows + 8, sizeof(*head));
	int nh = 0, ret = -1;
	FILE *f;

	report_binds_reset(r);
	/* Each prediction is scored against every ok result of its cell's parameters and pass (the cell
	 * itself, or the per-host replicas of a template cell).
	 * error = 100 (measured - predicted) / predicted. */
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind, count(err), avg(err * err), avg(err), count(*) - count(err)"
		" FROM (SELECT ");
	for (int i = 0; i < r->nrows; i++) {
		if (report_key_sql(r, r->rows[i], &sql))
			goto out;
		sb_addf(&sql, " AS k%d, ", i);
	}
	sb_adds(&sql, "p.metric AS metric, p.blind AS blind, 100.0 * (m.value - p.value) / p.value AS err"
		" FROM predictions p JOIN cells c0 ON c0.key = p.key"
		" JOIN cells c ON c.sweep = c0.sweep AND c.params = c0.params AND c.pass = c0.pass"
		"  AND c.state != 'template'"
		" LEFT JOIN results r ON r.cell = c.id AND r.status = 'ok'"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host"
		" LEFT JOIN metrics m ON m.result = r.id AND m.name = p.metric"
		" WHERE p.sweep = ");
	report_bind(r, &sql, r->sweep);
	if (r->metric) {
		sb_adds(&sql, " AND p.metric = ");
		report_bind(r, &sql, r->metric);
	}
	if (r->where) {
		sb_adds(&sql, " AND (");
		if (report_expr_sql(r, "--where", r->where, 0, &sql))
			goto out;
		sb_addc(&sql, ')');
	}
	for (size_t i = 0; i < r->nexcluded; i++) {
		sb_adds(&sql, " AND coalesce(h.hostname, '') != ");
		report_bind(r, &sql, r->excluded[i]);
	}
	sb_adds(&sql, ") GROUP BY ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind ORDER BY ");
	for (int i = 0; i < r->nrows; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_adds(&sql, "metric, blind DESC");
	for (int i = 0; i < r->nrows; i++)
		head[nh++] = r->rows[i];
	head[nh++] = "metric";
	head[nh++] = "predictions";
	head[nh++] = "n";
	head[nh++] = "rms_err_%";
	head[nh++] = "mean_err_%";
	if (!isnan(r->bar))
		head[nh++] = "bar";
	table_init(&t, nh, head);
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, score_row, &s))
		goto out_t;
	if (!t.nrows) {
		error("no predictions of sweep '%s'%s%s have a measured result%s", r->sweep,
		      r->metric ? " for " : "", r->metric ? r->metric : "",
		      s.pending ? " yet" : " (register them with 'sweep predict')");
		goto out_t;
	}
	if (!report_out_open(r, &f)) {
		if (r->fmt->heading) {
			char bar[64] = "", *h;

			if (!isnan(r->bar))
				snprintf(bar, sizeof(bar), "; bar: rms error <= %g%%", r->bar);
			h = xasprintf("predictions of sweep %s: error = 100 (measured - predicted) / predicted%s",
				      r->sweep, bar);
			r->fmt->heading(h, f);
			free(h);
		}
		table_print(&t, f, r->fmt);
		ret = report_out_close(r, f);
	}
	if (s.pending)
		report_note("%d predicted %s not measured yet", s.pending,
			    s.pending == 1 ? "result is" : "results are");
	if (!ret && !isnan(r->bar))
		report_note("bar %g%%: met by %d of %d groups", r->bar, s.met, s.groups);
out_t:
	table_release(&t);
out:
	free(head);
	sb_release(&sql);
	return ret;
}
