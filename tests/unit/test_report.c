/* test_report.c: the pure parts of the reports: the CSV reader, expressions into SQL. */
#include <stdlib.h>

#include "report.h"
#include "test.h"

/* Read every record of text; the fields joined by '|' and records by '/'. */
static char *csv_all(const char *text, int *nrec)
{
	struct strbuf sb = STRBUF_INIT;
	size_t pos = 0;
	char **f, err[64];
	int n;

	*nrec = 0;
	while ((n = report_csv_record(text, &pos, &f, err, sizeof(err))) > 0) {
		if ((*nrec)++)
			sb_addc(&sb, '/');
		for (int i = 0; i < n; i++) {
			sb_addf(&sb, "%s%s", i ? "|" : "", f[i]);
			free(f[i]);
		}
		free(f);
	}
	if (n < 0) {
		sb_addf(&sb, "!%s", err);
		*nrec = -1;
	}
	return sb_detach(&sb);
}

static void test_csv(void)
{
	char *s;
	int n;

	s = csv_all("sweep,M,metric,value\ngemm,1024,gflops,12.5\n", &n);
	CHECK_STR(s, "sweep|M|metric|value/gemm|1024|gflops|12.5", "plain csv");
	CHECK_INT(n, 2, "records");
	free(s);
	/* RFC 4180: quotes around a field, "" for a quote, commas and newlines inside quotes, CRLF */
	s = csv_all("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",,x\r\n", &n);
	CHECK_STR(s, "a|b,c|say \"hi\"/multi\nline||x", "quoted fields");
	CHECK_INT(n, 2, "records with CRLF");
	free(s);
	s = csv_all("a,b", &n);
	CHECK_STR(s, "a|b", "no final newline");
	free(s);
	s = csv_all("a,\"b\n", &n);
	CHECK_STR(s, "!a quoted field does not end", "unterminated quote");
	CHECK_INT(n, -1, "unterminated quote is an error");
	free(s);
	s = csv_all("", &n);
	CHECK_INT(n, 0, "empty text has no record");
	free(s);
}

static char **names(const char *const *v)
{
	size_t n = 0;
	char **out;

	while (v[n])
		n++;
	out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

static void report_fixture(struct report *r)
{
	static const char *const params[] = { "M", "K", "dtype", "bytes_per_token", NULL };
	static const char *const metrics[] = { "gflops", "seconds", "tok_s", NULL };
	static const char *const probes[] = { "host_read_gbs", NULL };

	memset(r, 0, sizeof(*r));
	r->sweep = xstrdup("s");
	r->params = names(params);
	r->nparams = 4;
	r->metrics = names(metrics);
	r->nmetrics = 3;
	r->probes = names(probes);
	r->nprobes = 1;
}

/* The SQL of an expression and its bound values, as "SQL | ?1=... ?2=..."; or "error". */
static char *expr(struct report *r, const char *e, int flags)
{
	struct strbuf sql = STRBUF_INIT;

	report_binds_reset(r);
	if (report_expr_sql(r, "--where", e, flags, &sql)) {
		sb_release(&sql);
		return xstrdup("error");
	}
	sb_adds(&sql, " |");
	for (size_t i = 0; i < r->nbind; i++)
		sb_addf(&sql, " ?%zu=%s", i + 1, r->binds[i]);
	return sb_detach(&sql);
}

static void check_expr(struct report *r, const char *e, int flags, const char *want)
{
	char *got = expr(r, e, flags);

	CHECK(!strcmp(got, want), "expression \"%s\": got \"%s\", want \"%s\"", e, got, want);
	free(got);
}

static void test_expr(void)
{
	struct report r;
	const char *probe = "(SELECT value FROM report_probes WHERE worker = r.worker AND name = ?1)";
	char want[1024];

	report_fixture(&r);
	/* names become SQL we write, with the name itself bound; division is real */
	check_expr(&r, "M / K", 0, "json_extract(c.params, ?1) * 1.0 / json_extract(c.params, ?2) |"
		   " ?1=$.\"M\" ?2=$.\"K\"");
	check_expr(&r, "M >= 1024 AND dtype = 'f32'", 0,
		   "json_extract(c.params, ?1) >= 1024 AND json_extract(c.params, ?2) = ?3 |"
		   " ?1=$.\"M\" ?2=$.\"dtype\" ?3=f32");
	check_expr(&r, "host in ('a', 'it''s') or label.class = 'server'", 0,
		   "h.hostname IN ( ?1 , ?2 ) OR json_extract(h.facts, ?3) = ?4 |"
		   " ?1=a ?2=it's ?3=$.labels.\"class\" ?4=server");
	check_expr(&r, "tok_s > 1.5e3", 0,
		   "(SELECT value FROM metrics WHERE result = r.id AND name = ?1) > 1.5e3 | ?1=tok_s");
	check_expr(&r, "tflops > .5", 0,
		   "(SELECT value * 0.001 FROM metrics WHERE result = r.id AND name = ?1) > .5 | ?1=gflops");
	snprintf(want, sizeof(want), "%s * 1e9 * 1.0 / json_extract(c.params, ?2) | ?1=host_read_gbs "
		 "?2=$.\"bytes_per_token\"", probe);
	check_expr(&r, "host_read_gbs * 1e9 / bytes_per_token", EXPR_PROBES, want);
	check_expr(&r, "CASE WHEN dtype = 'f16' THEN 2 ELSE 4 END * abs(M - K)", 0,
		   "CASE WHEN json_extract(c.params, ?1) = ?2 THEN 2 ELSE 4 END * abs ("
		   " json_extract(c.params, ?3) - json_extract(c.params, ?4) ) |"
		   " ?1=$.\"dtype\" ?2=f16 ?3=$.\"M\" ?4=$.\"K\"");
	/* probes only where the report allows them (--limit) */
	check_expr(&r, "host_read_gbs > 1", 0, "error");

	/* refused: anything outside the closed set of tokens, and what could smuggle SQL in */
	check_expr(&r, "M = 1; DROP TABLE cells", 0, "error");
	check_expr(&r, "M = 1 -- comment", 0, "error");
	check_expr(&r, "M -- K", 0,
		   "json_extract(c.params, ?1) - - json_extract(c.params, ?2) | ?1=$.\"M\" ?2=$.\"K\"");
	check_expr(&r, "load_extension('x')", 0, "error");
	check_expr(&r, "(SELECT 1)", 0, "error");
	check_expr(&r, "dtype = \"f32\"", 0, "error");
	check_expr(&r, "dtype = f32", 0, "error");
	check_expr(&r, "dtype = 'f32", 0, "error");
	check_expr(&r, "M = 1e", 0, "error");
	check_expr(&r, "M = 12abc", 0, "error");
	check_expr(&r, "(M = 1", 0, "error");
	check_expr(&r, "M = 1)", 0, "error");
	check_expr(&r, "M = x'00'", 0, "error");
	check_expr(&r, "M || 'a'", 0, "error");
	check_expr(&r, "  ", 0, "error");
	check_expr(&r, "M = ?1", 0, "error");
	check_expr(&r, "M = @x", 0, "error");
	/* "/" followed by "*" cannot open a comment: tokens are separated by spaces */
	check_expr(&r, "M /*x*/ K", 0, "error");
	check_expr(&r, "M / -K", 0, "json_extract(c.params, ?1) * 1.0 / - json_extract(c.params, ?2) |"
		   " ?1=$.\"M\" ?2=$.\"K\"");
	/* a text value holding SQL stays a bound value */
	check_expr(&r, "dtype = ''' OR 1=1 --'", 0,
		   "json_extract(c.params, ?1) = ?2 | ?1=$.\"dtype\" ?2=' OR 1=1 --");
	report_release(&r);
}

/* --metric noise reads the results' noise; --strict keeps results known to their precision; the title
 * of a pooled report names what was pooled. */
static void test_noise_and_pool(void)
{
	struct report r;
	struct strbuf sql = STRBUF_INIT;

	report_fixture(&r);
	CHECK(!report_metric(&r, "noise") && r.metric_noise, "noise is a metric of every result");
	CHECK(report_from(&r, &sql, JOIN_METRIC) == 0, "report_from");
	CHECK(strstr(sql.buf, " JOIN (SELECT id AS result, noise AS value FROM results WHERE noise IS NOT NULL)"
			      " m ON m.result = r.id") && !strstr(sql.buf, "noise_ok"),
	      "noise joined as m.value, every result: %s", sql.buf);
	sb_reset(&sql);
	report_binds_reset(&r);
	r.strict = 1;
	CHECK(!report_metric(&r, "gflops") && !r.metric_noise, "a stored metric again");
	CHECK(report_from(&r, &sql, JOIN_METRIC) == 0, "report_from --strict");
	CHECK(strstr(sql.buf, "JOIN metrics m ON m.result = r.id AND m.name = ?1") &&
	      strstr(sql.buf, " AND NOT (" STORE_IMPRECISE("r") ")"),
	      "--strict leaves out results short of their precision: %s", sql.buf);
	CHECK_STR(report_pooled(&r), "", "nothing pooled, nothing said");
	CHECK(!report_split("--pool", "N,dtype", &r.pool, &r.npool), "--pool N,dtype");
	CHECK_STR(report_pooled(&r), " and N, dtype", "the title names the pooled keys");
	sb_release(&sql);
	report_release(&r);
}

int main(void)
{
	test_noise_and_pool();
	test_csv();
	test_expr();
	return test_done();
}
