/* test_report.c: the pure parts of the reports: the CSV reader, expressions and statements into SQL. */
#include <stdlib.h>

#include "report_plan.h"
#include "report_print.h"
#include "report_query.h"
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

static char **names(const char *const *v, size_t *n)
{
	char **out;

	*n = 0;
	while (v[*n])
		(*n)++;
	out = xcalloc(*n + 1, sizeof(*out));
	for (size_t i = 0; i < *n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

/* A context as report_ctx_open resolves one, without a database. */
static void report_fixture(struct report_ctx *c)
{
	static const char *const params[] = { "M", "K", "dtype", "bytes_per_token", "case", NULL };
	static const char *const metrics[] = { "gflops", "seconds", "tok_s", NULL };
	static const char *const probes[] = { "host_read_gbs", NULL };
	size_t n;

	memset(c, 0, sizeof(*c));
	c->sweep = xstrdup("s");
	c->params = names(params, &c->nparams);
	c->spec_order = names(params, &n);
	c->metrics = names(metrics, &c->nmetrics);
	c->probes = names(probes, &c->nprobes);
}

/* A statement and its bound values as "SQL | ?1=... ?2=..." (owned); q is released. */
static char *shown(struct report_query *q)
{
	char *out;

	sb_adds(&q->sql, " |");
	for (size_t i = 0; i < q->nbind; i++)
		sb_addf(&q->sql, " ?%zu=%s", i + 1, q->binds[i]);
	out = sb_detach(&q->sql);
	report_query_release(q);
	return out;
}

/* The SQL of an expression and its bound values, as "SQL | ?1=... ?2=..."; or "error". */
static char *expr(const struct report_ctx *c, const char *e, int flags)
{
	struct report_query q = REPORT_QUERY_INIT;

	if (report_expr_sql(c, &q, "--where", e, flags)) {
		report_query_release(&q);
		return xstrdup("error");
	}
	return shown(&q);
}

static void check_expr(const struct report_ctx *c, const char *e, int flags, const char *want)
{
	char *got = expr(c, e, flags);

	CHECK(!strcmp(got, want), "expression \"%s\": got \"%s\", want \"%s\"", e, got, want);
	free(got);
}

static void test_expr(void)
{
	struct report_ctx r;
	const char *probe = "(SELECT value FROM report_probes WHERE worker = r.worker AND name = ?1)";
	char want[1024];

	report_fixture(&r);
	/* names become SQL we write, with the name itself bound; division is real */
	check_expr(&r, "M / K", 0, "sweep_param(c.params, ?1) * 1.0 / sweep_param(c.params, ?2) |"
		   " ?1=$.\"M\" ?2=$.\"K\"");
	check_expr(&r, "M >= 1024 AND dtype = 'f32'", 0,
		   "sweep_param(c.params, ?1) >= 1024 AND sweep_param(c.params, ?2) = ?3 |"
		   " ?1=$.\"M\" ?2=$.\"dtype\" ?3=f32");
	check_expr(&r, "host in ('a', 'it''s') or label.class = 'server'", 0,
		   "h.hostname IN ( ?1 , ?2 ) OR sweep_fact(h.id, h.facts, ?3) = ?4 |"
		   " ?1=a ?2=it's ?3=$.labels.\"class\" ?4=server");
	check_expr(&r, "tok_s > 1.5e3", 0,
		   "(SELECT value FROM metrics WHERE result = r.id AND name = ?1) > 1.5e3 | ?1=tok_s");
	check_expr(&r, "tflops > .5", 0,
		   "(SELECT value * 0.001 FROM metrics WHERE result = r.id AND name = ?1) > .5 | ?1=gflops");
	snprintf(want, sizeof(want), "%s * 1e9 * 1.0 / sweep_param(c.params, ?2) | ?1=host_read_gbs "
		 "?2=$.\"bytes_per_token\"", probe);
	check_expr(&r, "host_read_gbs * 1e9 / bytes_per_token", EXPR_PROBES, want);
	check_expr(&r, "CASE WHEN dtype = 'f16' THEN 2 ELSE 4 END * abs(M - K)", 0,
		   "CASE WHEN sweep_param(c.params, ?1) = ?2 THEN 2 ELSE 4 END * abs ("
		   " sweep_param(c.params, ?3) - sweep_param(c.params, ?4) ) |"
		   " ?1=$.\"dtype\" ?2=f16 ?3=$.\"M\" ?4=$.\"K\"");
	/* probes only where the report allows them (--limit) */
	check_expr(&r, "host_read_gbs > 1", 0, "error");

	/* refused: anything outside the closed set of tokens, and what could smuggle SQL in */
	check_expr(&r, "M = 1; DROP TABLE cells", 0, "error");
	check_expr(&r, "M = 1 -- comment", 0, "error");
	check_expr(&r, "M -- K", 0,
		   "sweep_param(c.params, ?1) - - sweep_param(c.params, ?2) | ?1=$.\"M\" ?2=$.\"K\"");
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
	check_expr(&r, "M / -K", 0, "sweep_param(c.params, ?1) * 1.0 / - sweep_param(c.params, ?2) |"
		   " ?1=$.\"M\" ?2=$.\"K\"");
	/* a text value holding SQL stays a bound value */
	check_expr(&r, "dtype = ''' OR 1=1 --'", 0,
		   "sweep_param(c.params, ?1) = ?2 | ?1=$.\"dtype\" ?2=' OR 1=1 --");
	report_ctx_release(&r);
}

/* The message an expression is refused with (owned), or "accepted". */
static char *refusal(const struct report_ctx *c, const char *e)
{
	struct report_query q = REPORT_QUERY_INIT;
	char *msg;

	test_capture_start();
	if (!report_expr_sql(c, &q, "--where", e, 0)) {
		free(test_capture_end());
		report_query_release(&q);
		return xstrdup("accepted");
	}
	msg = test_capture_end();
	report_query_release(&q);
	return msg;
}

static void check_refusal(const struct report_ctx *c, const char *e, const char *want)
{
	char *got = refusal(c, e);

	CHECK(strstr(got, want) != NULL, "\"%s\" refused: %s", e, want);
	if (!strstr(got, want))
		printf("# said: %s", got);
	free(got);
}

/* The grammar: a name that is a word of the syntax in double quotes; what SQLite would refuse is refused
 * here first, with the column and what was expected; deep nesting and long chains bounded. */
static void test_grammar(void)
{
	struct report_ctx r;
	struct strbuf deep = STRBUF_INIT, chain = STRBUF_INIT;

	static const char *const accepted[][2] = {
		{ "\"case\" = 'n1'", "sweep_param(c.params, ?1) = ?2 | ?1=$.\"case\" ?2=n1" },
		{ "\"M\" IS NOT NULL AND NOT M IN (1, 2) AND dtype NOT LIKE 'f%'",
		  "sweep_param(c.params, ?1) IS NOT NULL AND NOT sweep_param(c.params, ?2) IN ( 1 , 2 ) AND "
		  "sweep_param(c.params, ?3) NOT LIKE ?4 | ?1=$.\"M\" ?2=$.\"M\" ?3=$.\"dtype\" ?4=f%" },
		{ "CASE dtype WHEN 'f32' THEN 1 ELSE 2 END = 1 OR M NOT BETWEEN -1 AND +2",
		  "CASE sweep_param(c.params, ?1) WHEN ?2 THEN 1 ELSE 2 END = 1 OR sweep_param(c.params, ?3) "
		  "NOT BETWEEN - 1 AND + 2 | ?1=$.\"dtype\" ?2=f32 ?3=$.\"M\"" },
		{ "round(M, 2) > min(K, 3, 4) AND log(2, M) < 1",
		  "round ( sweep_param(c.params, ?1) , 2 ) > min ( sweep_param(c.params, ?2) , 3 , 4 ) AND log ( 2 , "
		  "sweep_param(c.params, ?3) ) < 1 | ?1=$.\"M\" ?2=$.\"K\" ?3=$.\"M\"" },
	};
	/* what is refused, and the message's words */
	static const char *const refused[][2] = {
		{ "case = 'n1'", "'=' at column 6 of --where 'case = 'n1'': expected a name, a number, 'text', '(', "
		  "CASE or a function ('case' is a word of the syntax: the parameter of that name is written "
		  "\"case\")" },
		{ "M >", "--where 'M >' ends where a name, a number, 'text', '(', CASE or a function should follow" },
		{ "M = = 1", "'=' at column 5 of --where 'M = = 1': expected a name" },
		{ "M = 1 = 2", "'=' at column 7 of --where 'M = 1 = 2': expected AND, OR or an operator" },
		{ "M = 1 2", "'2' at column 7 of --where 'M = 1 2': expected AND, OR or an operator" },
		{ "abs(M, K) > 1", "abs() at column 1 of --where 'abs(M, K) > 1' takes 1 argument, not 2" },
		{ "min(M) > 1", "min() at column 1 of --where 'min(M) > 1' takes 2 or more arguments, not 1" },
		{ "round(M, 1, 2) > 1", "takes 1 or 2 arguments, not 3" },
		{ "M BETWEEN 1", "--where 'M BETWEEN 1' ends where AND should follow" },
		{ "CASE END", "'END' at column 6 of --where 'CASE END': expected a name" },
		{ "CASE WHEN M THEN 1", "ends where WHEN, ELSE or END should follow" },
		{ "M IN ()", "')' at column 7 of --where 'M IN ()': expected a name" },
		{ "M IN 1", "'1' at column 6 of --where 'M IN 1': expected '('" },
		{ "M NOT 1", "'1' at column 7 of --where 'M NOT 1': expected IN, BETWEEN or LIKE after NOT" },
		{ "NOT", "--where 'NOT' ends where a name" },
		{ "()", "')' at column 2 of --where '()': expected a name" },
		{ "M = 'a' 'b'", "'b' at column 9 of --where 'M = 'a' 'b'': expected AND, OR or an operator" },
		{ "\"nope\" = 1", "unknown name \"nope\" at column 1 of --where" },
		{ "\"\" = 1", "empty \"name\" at column 1" },
		{ "\"M = 1", "unterminated \"name\" at column 1" },
	};

	report_fixture(&r);
	for (size_t i = 0; i < ARRAY_SIZE(accepted); i++)
		check_expr(&r, accepted[i][0], 0, accepted[i][1]);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		check_refusal(&r, refused[i][0], refused[i][1]);
	for (int i = 0; i < 70; i++)
		sb_addc(&deep, '(');
	sb_adds(&deep, "M");
	for (int i = 0; i < 70; i++)
		sb_addc(&deep, ')');
	check_refusal(&r, deep.buf, "nests deeper than 64 at column 65");
	sb_adds(&chain, "M");
	for (int i = 0; i < 250; i++)
		sb_adds(&chain, " + 1");
	check_refusal(&r, chain.buf, "is too long a chain of operators (more than 200)");
	sb_release(&deep);
	sb_release(&chain);
	report_ctx_release(&r);
}

/* A statement of the table, as "PART | ?1=... ?2=... || FINAL" (store_query_split). */
static char *table_sql(const struct report_plan *p)
{
	struct report_query q = REPORT_QUERY_INIT;
	char *final, *part, *both;

	CHECK(report_query_table(p, &q) == FAIL_OK, "the table's statement");
	final = xstrdup(q.final.buf ? q.final.buf : "");
	part = shown(&q);
	both = xasprintf("%s || %s", part, final);
	free(part);
	free(final);
	return both;
}

/* --metric noise reads the results' noise; --strict keeps results not marked (STORE_IMPRECISE); the
 * statement of a table, whole; a title of a pooled report names what was pooled. */
static void test_noise_and_pool(void)
{
	struct report_ctx c;
	struct report_opts o;
	struct report_plan p;
	char *sql, *pooled;

	report_fixture(&c);
	report_opts_init(&o);
	o.metric = "noise";
	CHECK(!report_opts_split("--rows", "M", &o.rows, &o.nrows), "--rows M");
	report_plan_init(&p, &o, &c);
	CHECK(!report_plan_metric(&p) && p.metric_own, "noise is a metric of every result");
	sql = table_sql(&p);
	CHECK_STR(sql, "SELECT sweep_param(c.params, ?1), sweep_values(m.value), count(m.value), sum(NOT r.precise)"
		  " FROM results r JOIN cells c ON c.id = r.cell LEFT JOIN workers w ON w.id = r.worker"
		  " LEFT JOIN hosts h ON h.id = w.host JOIN (SELECT id AS result, value FROM (SELECT id, noise AS value"
		  " FROM results) WHERE value IS NOT NULL) m ON m.result = r.id WHERE r.status = 'ok'"
		  " AND c.state <> 'retired' AND c.sweep = ?2 AND r.id BETWEEN ?3 AND ?4"
		  " GROUP BY sweep_group(c.params, 1, ?5) | ?1=$.\"M\" ?2=s ?3=0 ?4=0 ?5=$.\"M\""
		  " || SELECT c1, sweep_stat('median', 0, c2), sum(c3), sum(c4) FROM temp.sweep_part GROUP BY 1 ORDER BY 1",
		  "noise joined as m.value, every result; the slices' median merged");
	free(sql);
	report_plan_release(&p);
	o.metric = "precision";
	report_plan_init(&p, &o, &c);
	CHECK(!report_plan_metric(&p) && p.metric_own && !strcmp(p.metric_base, "precision"),
	      "precision is a metric of every result");
	sql = table_sql(&p);
	CHECK(strstr(sql, " JOIN (SELECT id AS result, value FROM (SELECT id, ci_rel(ci_lo, ci_hi, median) AS"
		     " value FROM results) WHERE value IS NOT NULL) m ON m.result = r.id") != NULL,
	      "precision: the interval's half-width over the median, as m.value: %s", sql);
	free(sql);
	report_plan_release(&p);

	o.metric = "tflops";
	o.strict = 1;
	o.stat = "mean";
	o.where = "K > 2";
	report_plan_init(&p, &o, &c);
	CHECK(!report_plan_metric(&p) && !p.metric_own && !strcmp(p.metric_base, "gflops"), "tflops is gflops");
	sql = table_sql(&p);
	CHECK_STR(sql, "SELECT sweep_param(c.params, ?1), sweep_values((m.value * 0.001)), count(m.value),"
		  " sum(NOT r.precise) FROM results r JOIN cells c ON c.id = r.cell LEFT JOIN workers w"
		  " ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host JOIN metrics m ON m.result = r.id"
		  " AND m.name = ?2 WHERE r.status = 'ok' AND c.state <> 'retired' AND c.sweep = ?3"
		  " AND NOT (NOT r.precise) AND (sweep_param(c.params, ?4) > 2) AND r.id BETWEEN ?5 AND ?6"
		  " GROUP BY sweep_group(c.params, 1, ?7) | ?1=$.\"M\" ?2=gflops ?3=s ?4=$.\"K\" ?5=0 ?6=0 ?7=$.\"M\""
		  " || SELECT c1, sweep_stat('mean', 0, c2), sum(c3), sum(c4) FROM temp.sweep_part GROUP BY 1 ORDER BY 1",
		  "--strict leaves out the marked results; --where; the slices' mean merged");
	free(sql);
	report_plan_release(&p);

	/* report_query_trim drops the joins of workers and hosts that nothing reads, and only those */
	for (int host = 0; host < 2; host++) {
		struct report_query q = REPORT_QUERY_INIT;

		o.where = host ? "host = 'n1'" : "M > 2";
		report_plan_init(&p, &o, &c);
		CHECK(!report_plan_metric(&p) && report_query_table(&p, &q) == FAIL_OK, "a table");
		report_query_trim(&q);
		CHECK(!strstr(q.sql.buf, " LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host")
		      == !host, "joins %s: %s", host ? "kept for h.hostname" : "dropped", q.sql.buf);
		CHECK(strstr(q.sql.buf, "FROM results r JOIN cells c ON c.id = r.cell ") != NULL, "the rest kept: %s",
		      q.sql.buf);
		report_query_release(&q);
		report_plan_release(&p);
	}

	/* a key of the host is read once per group, by the worker each group is of, without the joins */
	{
		struct report_query q = REPORT_QUERY_INIT;

		o.where = NULL;
		for (int i = 0; i < o.nrows; i++)
			free(o.rows[i]);
		free(o.rows);
		o.rows = NULL;
		o.nrows = 0;
		CHECK(!report_opts_split("--rows", "host,M", &o.rows, &o.nrows), "--rows host,M");
		report_plan_init(&p, &o, &c);
		CHECK(!report_plan_metric(&p) && report_query_table(&p, &q) == FAIL_OK, "a table by host");
		report_query_trim(&q);
		CHECK(strstr(q.sql.buf, "SELECT (SELECT kh.hostname FROM workers kw JOIN hosts kh ON kh.id = kw.host"
			     " WHERE kw.id = r.worker), sweep_param(c.params, ?1), ") != NULL &&
		      strstr(q.sql.buf, " GROUP BY sweep_group(c.params, 1, ?6, r.worker)") != NULL &&
		      !strstr(q.sql.buf, "LEFT JOIN workers w"), "host by worker, no joins: %s", q.sql.buf);
		CHECK_STR(q.final.buf, "SELECT c1, c2, sweep_stat('mean', 0, c3), sum(c4), sum(c5) FROM temp.sweep_part"
			  " GROUP BY 1, 2 ORDER BY 1, 2", "the final merges a host's workers");
		report_query_release(&q);
		report_plan_release(&p);
	}

	/* a plot's points likewise: the spread's quantiles over the values the statistic reads */
	{
		struct report_query q = REPORT_QUERY_INIT;

		report_plan_init(&p, &o, &c);
		CHECK(!report_plan_metric(&p), "a plot's metric");
		p.look.x = "M";
		p.look.series = "host";
		p.look.errors = ERRORS_SPREAD;
		p.look.spread = 0.5;
		CHECK(report_query_plot(&p, &q) == FAIL_OK, "a plot");
		CHECK(strstr(q.sql.buf, "SELECT NULL, (SELECT kh.hostname FROM workers kw JOIN hosts kh ON kh.id = kw.host"
			     " WHERE kw.id = r.worker), sweep_param(c.params, ?1), sweep_values((m.value * 0.001)),"
			     " count(m.value) FROM ") != NULL, "the plot's part: %s", q.sql.buf);
		CHECK_STR(q.final.buf, "SELECT c1, c2, c3, sweep_stat('mean', 0, c4), sum(c5), sweep_stat('quantile', 0.25,"
			  " c4), sweep_stat('quantile', 0.75, c4) FROM temp.sweep_part GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
			  "the plot's final: the spread's quantiles of the values");
		report_query_release(&q);
		report_plan_release(&p);
	}

	pooled = report_print_pooled(o.pool, o.npool);
	CHECK_STR(pooled, "", "nothing pooled, nothing said");
	free(pooled);
	CHECK(!report_opts_split("--pool", "N,dtype", &o.pool, &o.npool), "--pool N,dtype");
	pooled = report_print_pooled(o.pool, o.npool);
	CHECK_STR(pooled, " and N, dtype", "the title names the pooled keys");
	free(pooled);
	report_opts_release(&o);
	report_ctx_release(&c);
}

int main(void)
{
	test_noise_and_pool();
	test_csv();
	test_expr();
	test_grammar();
	return test_done();
}
