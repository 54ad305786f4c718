/* launch_status.c: the state of every sweep launched on the hosts of an inventory, read over ssh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exitcode.h"
#include "inventory.h"
#include "json.h"
#include "launch.h"
#include "remote.h"
#include "store.h"
#include "table.h"
#include "util.h"

/* ---- sweep status --hosts ---- */

/* One sweep of one host as the table shows it. */
struct status_row {
	char *name, *state;
	struct json_obj info;  /* the host's `sweep status --json` line; empty when none */
	double start, end, now;   /* by the host's clock (seconds since 1970); NaN when unknown */
};

struct status_host {
	struct status_row *rows;
	int nrows;
	int error;             /* the host could not be read: why in msg */
	int none;              /* nothing launched there */
	struct strbuf msg;
};

static void status_answer(const char *key, const char *rest, void *data)
{
	struct status_host *r = data;
	char name[256];
	const char *more;

	if (!strcmp(key, "error")) {
		if (!r->error) {
			r->error = 1;
			sb_add_printable(&r->msg, rest, 300);
		}
		return;
	}
	if (!strcmp(key, "none")) {
		r->none = 1;
		return;
	}
	if (!(more = launch_answer_name(rest, name, sizeof(name))))
		return;
	if (!strcmp(key, "state")) {
		r->rows = xrealloc(r->rows, (size_t)(r->nrows + 1) * sizeof(*r->rows));
		r->rows[r->nrows] = (struct status_row){ xstrdup(name), NULL, JSON_OBJ_INIT, NAN, NAN, NAN };
		{
			struct strbuf st = STRBUF_INIT;

			sb_add_printable(&st, *more ? more : "-", 40);
			r->rows[r->nrows].state = sb_detach(&st);
		}
		r->nrows++;
	} else if (!strcmp(key, "time") && r->nrows && !strcmp(r->rows[r->nrows - 1].name, name)) {
		struct status_row *row = &r->rows[r->nrows - 1];
		double v[3] = { NAN, NAN, NAN };
		char *end;

		for (int i = 0; i < 3 && *more; i++) {
			v[i] = strtod(more, &end);
			if (end == more || (*end && *end != ' ')) {
				v[i] = NAN;
				break;
			}
			more = end + (*end == ' ');
		}
		row->start = v[0] > 0 ? v[0] : NAN;
		row->end = v[1] > 0 ? v[1] : NAN;
		row->now = v[2] > 0 ? v[2] : NAN;
	} else if (!strcmp(key, "json") && *more && r->nrows && !strcmp(r->rows[r->nrows - 1].name, name)) {
		char err[128];
		struct status_row *row = &r->rows[r->nrows - 1];

		json_obj_release(&row->info);
		if (json_parse_flat(more, &row->info, 1, err, sizeof(err)))
			memset(&row->info, 0, sizeof(row->info));
	}
}

/* An error answer counts: the host said why (r->msg). */
static int status_answered(void *data)
{
	const struct status_host *r = data;

	return r->error || r->none || r->nrows;
}

static void status_host(int k, void *data)
{
	const struct launch_fan *s = data;
	const struct inventory_host *h = &s->inv->hosts[s->hosts[k]];
	struct status_host *r = (struct status_host *)s->res + k;
	struct strbuf sc = STRBUF_INIT;
	int rc;

	launch_script_begin(&sc, h, 0);
	sb_adds(&sc, "hasbin \"$B\" || { say error no sweep binary \"'$B'\" in \"$W\" on the host; exit 0; }\n");
	launch_script_names(&sc, s->only);
	sb_adds(&sc, "for n in \"$@\"; do\n"
		"  st=stopped\n"
		"  if [ -s \"results/$n.exit\" ]; then st=\"exit $(cat \"results/$n.exit\")\"\n"
		"  elif [ -s \"results/$n.pid\" ] && alive \"$(cat \"results/$n.pid\")\" \"results/$n.pid\"; then"
		" st=running\n"
		"  elif [ ! -f \"results/$n.pid\" ]; then st=not-launched; fi\n"
		/* Stopped on purpose (sweep stop): interrupted, with its exit status when it wrote one. */
		"  [ -f \"results/$n.stopped\" ] && [ \"$st\" != running ] &&"
		" st=\"interrupted $(cat \"results/$n.exit\" 2>/dev/null)\"\n"
		"  say state \"$n\" \"$st\"\n"
		"  say time \"$n\" \"$(cat \"results/$n.start\" 2>/dev/null || echo 0)\""
		" \"$(cat \"results/$n.end\" 2>/dev/null || echo 0)\" \"$(date +%s)\"\n"
		"  [ -f \"results/$n.db\" ] &&"
		" say json \"$n\" \"$(\"$B\" status \"results/$n.db\" --json --sweep \"$n\" 2>/dev/null | head -n 1)\"\n"
		"done\n");
	rc = launch_ask(h, sc.buf, now_mono() + s->seconds, status_answer, status_answered, r, &r->msg);
	if (rc)
		r->error = rc;
	sb_release(&sc);
}

/* Seconds as "45s", "12m", "3h05m", "2d04h". */
static void add_duration(struct strbuf *sb, double s)
{
	long v = (long)llround(s);

	if (v < 60)
		sb_addf(sb, "%lds", v);
	else if (v < 3600)
		sb_addf(sb, "%ldm%02lds", v / 60, v % 60);
	else if (v < 86400)
		sb_addf(sb, "%ldh%02ldm", v / 3600, v % 3600 / 60);
	else
		sb_addf(sb, "%ldd%02ldh", v / 86400, v % 86400 / 3600);
}

static double info_num(const struct json_obj *o, const char *key)
{
	const struct json_pair *p = json_obj_find(o, key);
	double v;

	if (!p || p->type != JSON_NUM || parse_double(p->val, &v))
		return NAN;
	return v;
}

static const char *info_str(const struct json_obj *o, const char *key)
{
	const struct json_pair *p = json_obj_find(o, key);

	return p && p->type == JSON_STR ? p->val : NULL;
}

/* Seconds from ISO time a to ISO time b (both "YYYY-MM-DDTHH:MM:SS..."), NaN when unreadable. */
static double iso_diff(const char *a, const char *b)
{
	struct tm ta = { 0 }, tb = { 0 };

	if (!a || !b || sscanf(a, "%d-%d-%dT%d:%d:%d", &ta.tm_year, &ta.tm_mon, &ta.tm_mday, &ta.tm_hour,
			       &ta.tm_min, &ta.tm_sec) != 6 ||
	    sscanf(b, "%d-%d-%dT%d:%d:%d", &tb.tm_year, &tb.tm_mon, &tb.tm_mday, &tb.tm_hour, &tb.tm_min,
		   &tb.tm_sec) != 6)
		return NAN;
	ta.tm_year -= 1900;
	tb.tm_year -= 1900;
	ta.tm_mon--;
	tb.tm_mon--;
	return difftime(timegm(&tb), timegm(&ta));
}

/* Seconds the run has taken: to its end, or to now by the host's clock; NaN when unknown. */
static double row_elapsed(const struct status_row *r)
{
	double to = !isnan(r->end) && r->end >= r->start ? r->end : r->now;

	return isnan(r->start) || isnan(to) || to < r->start ? NAN : to - r->start;
}

/* The inventory label price_per_hour of h; NaN when it has none (or not a number). */
static double host_price(const struct inventory_host *h)
{
	const char *v = json_obj_get(&h->labels, "price_per_hour");
	double p;

	return v && !parse_double(v, &p) && p >= 0 ? p : NAN;
}

/* The table row of one sweep on one host; price: per hour, NaN when not known. */
static void status_table_row(struct table *t, const char *host, const struct status_row *r, double price)
{
	struct strbuf c[10];
	const char *cells[11];
	double elapsed = row_elapsed(r);
	const struct json_obj *in = &r->info;
	double total = info_num(in, "cells"), ok = info_num(in, "ok"), rate = info_num(in, "rate");
	double eta = info_num(in, "eta"), failed = info_num(in, "failed"), quar = info_num(in, "quarantined");
	double age = iso_diff(info_str(in, "last"), info_str(in, "now"));
	const char *last = info_str(in, "last");
	long code = -1;
	int exited = !strncmp(r->state, "exit ", 5) && !parse_long(r->state + 5, &code);

	for (int i = 0; i < 10; i++)
		sb_init(&c[i]);
	sb_add_printable(&c[0], r->name, 64);
	/* The state: from the pid and exit files, which know whether the process is there. */
	if (!strcmp(r->state, "running"))
		sb_adds(&c[1], "running");
	else if (exited)
		sb_adds(&c[1], code == 0 ? "finished" : code == EXIT_CELLS ? "finished, incomplete" :
			       code == EXIT_INTERRUPTED ? "interrupted" : "failed");
	else if (!strcmp(r->state, "stopped"))
		sb_adds(&c[1], "stopped");
	else if (!strncmp(r->state, "interrupted", 11))
		sb_adds(&c[1], "interrupted");
	else
		sb_adds(&c[1], r->state);
	if (exited && code != 0 && code != EXIT_CELLS)
		sb_addf(&c[1], " (exit %ld)", code);
	if (!isnan(total) && !isnan(ok))
		sb_addf(&c[2], "%.0f/%.0f", ok, total);
	else
		sb_adds(&c[2], "-");
	if (rate > 0)
		sb_addf(&c[3], rate >= 10 ? "%.0f/s" : rate >= 0.1 ? "%.2f/s" : "%.1f/min", rate >= 0.1 ? rate :
			rate * 60);
	else
		sb_adds(&c[3], "-");
	if (!isnan(eta) && !strcmp(r->state, "running"))
		add_duration(&c[4], eta);
	else
		sb_adds(&c[4], "-");
	sb_addf(&c[5], "%.0f", isnan(failed) ? 0 : failed);
	if (quar > 0)
		sb_addf(&c[5], " (%.0f quarantined)", quar);
	if (last) {
		/* To the second, and how long ago by the host's clock (no skew with ours). */
		sb_add_printable(&c[6], last, 19);
		if (!isnan(age) && age >= 0) {
			sb_adds(&c[6], " (");
			add_duration(&c[6], age);
			sb_adds(&c[6], " ago)");
		}
	} else {
		sb_adds(&c[6], "-");
	}
	if (!isnan(elapsed))
		add_duration(&c[7], elapsed);
	else
		sb_adds(&c[7], "-");
	if (!isnan(elapsed) && !isnan(price))
		sb_addf(&c[8], "%.2f", elapsed / 3600 * price);
	else
		sb_adds(&c[8], "-");
	cells[0] = host;
	for (int i = 0; i < 9; i++)
		cells[i + 1] = c[i].buf;
	table_add(t, cells);
	for (int i = 0; i < 10; i++)
		sb_release(&c[i]);
}

int launch_status_hosts(const struct inventory *inv, const int *hosts, int nhosts, const char *only,
			double timeout, int jobs)
{
	static const char *const head[] = { "host", "sweep", "state", "done", "rate", "eta", "failed",
		"last result", "elapsed", "spend" };
	struct status_host *res = xcalloc((size_t)nhosts, sizeof(*res));
	struct launch_fan s = { inv, hosts, only, timeout, res };
	struct strbuf spend = STRBUF_INIT;
	struct table t;
	double total = 0;
	int bad = 0, priced = 0;

	remote_parallel(nhosts, jobs, status_host, &s);
	table_init(&t, 10, head);
	for (int k = 0; k < nhosts; k++) {
		const struct status_host *r = &res[k];
		const char *name = inv->hosts[hosts[k]].name;

		if (r->error || r->none) {
			const char *cells[10] = { name, "-", r->error == 2 ? "unreachable" : r->error ? "error" :
						  "nothing launched", "-", "-", "-", "-", "-", "-", "-" };

			table_add(&t, cells);
			bad += r->error != 0;
			continue;
		}
		double price = host_price(&inv->hosts[hosts[k]]), from = NAN, to = NAN;

		for (int i = 0; i < r->nrows; i++) {
			double e = row_elapsed(&r->rows[i]);

			status_table_row(&t, name, &r->rows[i], price);
			/* The host is paid for while any of its runs goes: from the first start to the last end. */
			if (!isnan(e)) {
				from = isnan(from) || r->rows[i].start < from ? r->rows[i].start : from;
				to = isnan(to) || r->rows[i].start + e > to ? r->rows[i].start + e : to;
			}
		}
		if (!isnan(price) && !isnan(from)) {
			sb_addf(&spend, "%s%s %.2f (", priced ? ", " : "", name, (to - from) / 3600 * price);
			add_duration(&spend, to - from);
			sb_addf(&spend, " at %g/h)", price);
			total += (to - from) / 3600 * price;
			priced++;
		}
	}
	table_print(&t, stdout, &table_text);
	table_release(&t);
	/* Spend from the label price_per_hour: the hours its launched runs took, first start to last end. */
	if (priced)
		printf("spend: %s; total %.2f\n", spend.buf, total);
	sb_release(&spend);
	for (int k = 0; k < nhosts; k++) {
		struct status_host *r = &res[k];

		if (r->error)
			printf("%s: %s%s\n", inv->hosts[hosts[k]].name, r->error == 2 ? "unreachable: " : "", r->msg.buf);
		for (int i = 0; i < r->nrows; i++) {
			free(r->rows[i].name);
			free(r->rows[i].state);
			json_obj_release(&r->rows[i].info);
		}
		free(r->rows);
		sb_release(&r->msg);
	}
	free(res);
	return bad ? FAIL_UNREACHABLE : FAIL_OK;
}

