/* test_report.c: the pure parts of the reports: SHA-256, the CSV reader, expressions into SQL. */
#include <stdlib.h>

#include "report.h"
#include "test.h"

/*
 * SHA-256 digests from GNU coreutils' sha256sum (printf 'abc' | sha256sum, and so on); the first three are
 * also the FIPS 180-2 appendix examples. The 55/56/64-byte messages cross the padding boundaries: 55 bytes
 * leave room for the length in the last block, 56 do not.
 */
static void test_sha256(void)
{
	static const struct {
		const char *text;
		size_t repeat;
		const char *hex;
	} v[] = {
		{ "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
		{ "x", 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
		{ "x", 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
		{ "x", 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		size_t len = strlen(v[i].text) * v[i].repeat;
		char *buf = xmalloc(len + 1), hex[65];

		for (size_t k = 0; k < v[i].repeat; k++)
			memcpy(buf + k * strlen(v[i].text), v[i].text, strlen(v[i].text));
		report_sha256(buf, len, hex);
		CHECK_STR(hex, v[i].hex, "sha256");
		free(buf);
	}
}

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

int main(void)
{
	test_sha256();
	test_csv();
	test_expr();
	return test_done();
}
