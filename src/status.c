/* status.c: what a database says about its sweeps, as tables or as one JSON line of totals. */
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "query.h"
#include "slurm.h"

/* A run recorded 'running' whose writer is gone (killed before it could say so) is shown as such: the
 * next writer records it killed (store_lock); a reader only reports it. */
#define RUN_STATUS "CASE WHEN r.status = 'running' AND ?1 = '0' THEN 'gone (was running)' ELSE r.status END"

int status_print(struct store *st)
{
	const char *alive[] = { store_writer_alive(st) ? "1" : "0" };   /* -1, cannot tell: as alive */

	return query_print(st, "cells by state:\n",
			"SELECT sweep, count(*) AS cells,"
			" count(*) FILTER (WHERE state = 'ok') AS ok,"
			" count(*) FILTER (WHERE state = 'planned') AS planned,"
			" count(*) FILTER (WHERE state = 'running') AS running,"
			" count(*) FILTER (WHERE state = 'quarantined') AS quarantined,"
			" printf('%.1f%%', 100.0 * count(*) FILTER (WHERE state = 'ok') / count(*)) AS done,"
			/* ok cells whose result missed its precision: kept, but never silently */
			" count(*) FILTER (WHERE state = 'ok' AND EXISTS (SELECT 1 FROM results r WHERE"
			"  r.cell = cells.id AND r.status = 'ok' AND " STORE_IMPRECISE("r") ")) AS imprecise"
			/* Retired cells (no longer in the spec) are no part of what is to be done. */
			" FROM cells WHERE state != 'template' AND state != 'retired'"
			" GROUP BY sweep ORDER BY sweep", NULL, 0, TABLE_TEXT, 0) ||
	       query_print(st, "\nlatest run:\n",
			"SELECT id AS run, sweep, started, coalesce(finished, '-') AS finished, " RUN_STATUS
			" AS status FROM runs r ORDER BY id DESC LIMIT 1", alive, 1, TABLE_TEXT, 1) ||
	       query_print(st, "\nworkers of the latest run:\n",
			"SELECT h.hostname AS host, w.rank, coalesce(w.gpu, -1) AS gpu, count(r.id) AS results,"
			" count(r.id) FILTER (WHERE r.status = 'ok') AS ok,"
			" count(r.id) FILTER (WHERE r.status != 'ok') AS failed,"
			" printf('%.2f', CASE WHEN max(julianday(r.started)) > min(julianday(r.started))"
			"  THEN (count(r.id) - 1) / ((max(julianday(r.started)) - min(julianday(r.started))) * 86400)"
			"  END) AS cells_per_s,"
			" coalesce(max(r.started), '-') AS last_result"
			" FROM workers w JOIN hosts h ON h.id = w.host"
			" LEFT JOIN results r ON r.worker = w.id"
			" WHERE w.run = (SELECT max(id) FROM runs)"
			" GROUP BY w.id ORDER BY h.hostname, w.rank", NULL, 0, TABLE_TEXT, 1) ||
	       query_print(st, "\nfailures (cells not ok with an error):\n",
			"SELECT sweep, key, params, state, attempts, error FROM cells"
			" WHERE error IS NOT NULL AND state != 'ok' ORDER BY sweep, ord LIMIT 50",
			NULL, 0, TABLE_TEXT, 1) ||
	       slurm_status(st) ? -1 : 0;
}

static int json_row(const struct store_row *row, void *data)
{
	struct strbuf *sb = data;
	/* Columns: name, then type: 'n' number or null, 's' string or null. */
	static const char *const names[] = { "sweeps", "cells", "ok", "planned", "running", "quarantined",
		"failed", "last", "run", "run_status", "run_started", "run_finished", "run_ok", "elapsed", "now",
		"imprecise" };
	static const char types[] = "snnnnnnsnsssnnsn";
	double rate = NAN, eta = NAN;

	sb_addc(sb, '{');
	for (int i = 0; i < row->ncol && i < (int)ARRAY_SIZE(names); i++) {
		sb_addf(sb, "%s\"%s\":", i ? "," : "", names[i]);
		if (!row->text[i])
			sb_adds(sb, "null");
		else if (types[i] == 's')
			json_add_str(sb, row->text[i]);
		else
			json_add_num(sb, row->num[i]);
	}
	/* Cells per second over the latest run, and the time the cells left need at that rate. */
	if (row->text[12] && row->text[13] && row->num[13] > 0)
		rate = row->num[12] / row->num[13];
	if (rate > 0 && row->text[9] && !strcmp(row->text[9], "running"))
		eta = (row->num[3] + row->num[4]) / rate;
	sb_adds(sb, ",\"rate\":");
	json_add_num(sb, rate);
	sb_adds(sb, ",\"eta\":");
	json_add_num(sb, eta);
	sb_addc(sb, '}');
	return 0;
}

int status_json(struct store *st, struct strbuf *out)
{
	const char *alive[] = { store_writer_alive(st) ? "1" : "0" };   /* -1, cannot tell: as alive */

	return store_query(st,
			   "SELECT (SELECT group_concat(name, ',') FROM sweeps),"
			   " c.cells, c.ok, c.planned, c.running, c.quarantined,"
			   " (SELECT count(*) FROM results WHERE status != 'ok'),"
			   " (SELECT max(started) FROM results),"
			   " r.id, " RUN_STATUS ", r.started, r.finished,"
			   " (SELECT count(*) FROM results x WHERE x.run = r.id AND x.status = 'ok'),"
			   " (julianday(coalesce(r.finished, 'now')) - julianday(r.started)) * 86400,"
			   " strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),"
			   " (SELECT count(*) FROM results x JOIN cells k ON k.id = x.cell WHERE x.status = 'ok'"
			   "  AND " STORE_IMPRECISE("x") " AND k.state = 'ok')"
			   " FROM (SELECT count(*) FILTER (WHERE state != 'template' AND state != 'retired') AS cells,"
			   "  count(*) FILTER (WHERE state = 'ok') AS ok,"
			   "  count(*) FILTER (WHERE state = 'planned') AS planned,"
			   "  count(*) FILTER (WHERE state = 'running') AS running,"
			   "  count(*) FILTER (WHERE state = 'quarantined') AS quarantined FROM cells) c"
			   " LEFT JOIN (SELECT * FROM runs ORDER BY id DESC LIMIT 1) r ON 1",
			   alive, 1, 1, json_row, out);
}
