/* test_table.c: every table format byte for byte on awkward values, read back where a reader exists. */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "json.h"
#include "table.h"
#include "util.h"

static char shown_buf[8192];   /* test_shown output for messages */



/* What table_print writes for fmt, captured through a memory stream. Caller frees. */
static char *print(const struct table *t, const struct table_format *fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	table_print(t, f, fmt);
	fclose(f);
	return buf;
}

#define NCOL 3
static const char *const head[NCOL] = { "name", "note", "n_%" };
/* A comma, a quote, a newline, '|', '&', '%', '_', '#', '\', an empty value, a blank one, a NULL,
 * non-ASCII text (2- and 3-byte characters), LaTeX's other specials, and numbers of several forms. */
static const char *const rows[][NCOL] = {
	{ "a,b", "say \"hi\"", "1.5" },
	{ "two\nlines", "a|b", "-2" },
	{ "R&D 100%", "x_y #1", "1e3" },
	{ "C:\\dir\\", "", "" },
	{ "  ", NULL, "-" },
	{ "caf\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "42" },
	{ "~^{}$<>", "\\|", "0x10" },
};
#define NROWS ARRAY_SIZE(rows)

static void make(struct table *t)
{
	table_init(t, NCOL, head);
	for (size_t r = 0; r < NROWS; r++)
		table_add(t, rows[r]);
}

static void check_format(const struct table *t, const struct table_format *fmt, const char *want,
			 const char *name)
{
	char *got = print(t, fmt);

	CHECK_TEXT(got, want, name);
	free(got);
}

static void test_formats(void)
{
	struct table t;

	make(&t);
	CHECK(t.nrows == NROWS && t.ncol == NCOL, "%zu rows of %d columns", t.nrows, t.ncol);
	CHECK(!t.numeric[0] && !t.numeric[1] && t.numeric[2],
	      "numeric columns: only the third (empty, '-' and 0x10 are allowed in one)");

	/* Two spaces between columns; text left-aligned, numbers right-aligned (their heading not);
	 * widths in characters (café is 4, 中文 is 2); a control character as '?'. */
	check_format(&t, &table_text,
		     "name       note      n_% \n"
		     "a,b        say \"hi\"   1.5\n"
		     "two?lines  a|b         -2\n"
		     "R&D 100%   x_y #1     1e3\n"
		     "C:\\dir\\                  \n"
		     "                        -\n"
		     "caf\xc3\xa9       \xe4\xb8\xad\xe6\x96\x87          42\n"
		     "~^{}$<>    \\|        0x10\n",
		     "aligned text");

	/* GitHub Markdown: '|' and '\' escaped, a newline as <br>; widths of what is written. */
	check_format(&t, &table_md,
		     "| name         | note     | n_%  |\n"
		     "|:------------ |:-------- | ----:|\n"
		     "| a,b          | say \"hi\" |  1.5 |\n"
		     "| two<br>lines | a\\|b     |   -2 |\n"
		     "| R&D 100%     | x_y #1   |  1e3 |\n"
		     "| C:\\\\dir\\\\    |          |      |\n"
		     "|              |          |    - |\n"
		     "| caf\xc3\xa9         | \xe4\xb8\xad\xe6\x96\x87       |   42 |\n"
		     "| ~^{}$<>      | \\\\\\|     | 0x10 |\n",
		     "Markdown");

	/* RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; no
	 * other field is (spaces are part of a field). */
	check_format(&t, &table_csv,
		     "name,note,n_%\n"
		     "\"a,b\",\"say \"\"hi\"\"\",1.5\n"
		     "\"two\nlines\",a|b,-2\n"
		     "R&D 100%,x_y #1,1e3\n"
		     "C:\\dir\\,,\n"
		     "  ,,-\n"
		     "caf\xc3\xa9,\xe4\xb8\xad\xe6\x96\x87,42\n"
		     "~^{}$<>,\\|,0x10\n",
		     "CSV");

	/* booktabs; & % $ # _ { } escaped, ~ ^ \ < > | by name, a newline as a space. */
	check_format(&t, &table_latex,
		     "\\begin{tabular}{llr}\n"
		     "\\toprule\n"
		     "name & note & n\\_\\% \\\\\n"
		     "\\midrule\n"
		     "a,b & say \"hi\" & 1.5 \\\\\n"
		     "two lines & a\\textbar{}b & -2 \\\\\n"
		     "R\\&D 100\\% & x\\_y \\#1 & 1e3 \\\\\n"
		     "C:\\textbackslash{}dir\\textbackslash{} &  &  \\\\\n"
		     "   &  & - \\\\\n"
		     "caf\xc3\xa9 & \xe4\xb8\xad\xe6\x96\x87 & 42 \\\\\n"
		     "\\textasciitilde{}\\textasciicircum{}\\{\\}\\$\\textless{}\\textgreater{} & "
		     "\\textbackslash{}\\textbar{} & 0x10 \\\\\n"
		     "\\bottomrule\n"
		     "\\end{tabular}\n",
		     "LaTeX");

	/* An array of objects, one a line; a NULL cell and a numeric column's empty or '-' are null; a
	 * number not in JSON's form (0x10) is written as JSON writes it. */
	check_format(&t, &table_json,
		     "[{\"name\":\"a,b\",\"note\":\"say \\\"hi\\\"\",\"n_%\":1.5},\n"
		     " {\"name\":\"two\\nlines\",\"note\":\"a|b\",\"n_%\":-2},\n"
		     " {\"name\":\"R&D 100%\",\"note\":\"x_y #1\",\"n_%\":1e3},\n"
		     " {\"name\":\"C:\\\\dir\\\\\",\"note\":\"\",\"n_%\":null},\n"
		     " {\"name\":\"  \",\"note\":null,\"n_%\":null},\n"
		     " {\"name\":\"caf\xc3\xa9\",\"note\":\"\xe4\xb8\xad\xe6\x96\x87\",\"n_%\":42},\n"
		     " {\"name\":\"~^{}$<>\",\"note\":\"\\\\|\",\"n_%\":16}]\n",
		     "JSON");
	table_release(&t);
	CHECK(t.cell == NULL && t.head == NULL && t.nrows == 0, "release empties the table");
}

/* Read one RFC 4180 field at *p into sb; returns the character that ended it (',' '\n' or NUL). */
static char csv_field(const char **p, struct strbuf *sb)
{
	const char *s = *p;

	sb_reset(sb);
	sb_add(sb, "", 0);
	if (*s == '"') {
		for (s++; *s; s++) {
			if (*s == '"' && s[1] == '"')
				sb_addc(sb, *s++);
			else if (*s == '"')
				break;
			else
				sb_addc(sb, *s);
		}
		if (*s == '"')
			s++;
	} else {
		while (*s && *s != ',' && *s != '\n')
			sb_addc(sb, *s++);
	}
	*p = *s ? s + 1 : s;
	return *s;
}

/* The CSV and JSON read back give every cell as it was (NULL as empty in CSV, null in JSON). */
static void test_read_back(void)
{
	struct strbuf field = STRBUF_INIT;
	struct table t;
	char *csv, *json, *line, *save = NULL;
	const char *p;
	int csv_ok = 1, nrec = 0;
	size_t nobj = 0;

	make(&t);
	csv = print(&t, &table_csv);
	p = csv;
	for (long r = -1; *p; r++, nrec++) {
		for (int c = 0; c < NCOL; c++) {
			const char *want = r < 0 ? head[c] : rows[r][c] ? rows[r][c] : "";
			char end = csv_field(&p, &field);

			if (r >= (long)NROWS || strcmp(field.buf, want) || end != (c + 1 < NCOL ? ',' : '\n')) {
				struct strbuf e = STRBUF_INIT;

				printf("# CSV record %ld field %d: '%s'\n", r + 1, c, test_shown(shown_buf, sizeof(shown_buf), field.buf));
				sb_release(&e);
				csv_ok = 0;
			}
		}
	}
	CHECK(csv_ok && nrec == (int)NROWS + 1, "CSV reads back as the cells (%d records)", nrec);
	free(csv);

	json = print(&t, &table_json);
	for (line = strtok_r(json, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nobj++) {
		struct json_obj o;
		char err[128];
		size_t len = strlen(line);
		const struct json_pair *pr;
		int ok;

		line[len - 1] = '\0';            /* the ',' or ']' after the object */
		if (!nobj)
			line++;                  /* the '[' before the first */
		ok = !json_parse_flat(line, &o, 0, err, sizeof(err)) && nobj < NROWS && o.n == NCOL;
		for (int c = 0; ok && c < NCOL; c++) {
			const char *want = rows[nobj][c];

			pr = json_obj_find(&o, head[c]);
			if (c == 2)     /* the numbers: checked byte for byte above */
				ok = pr && (pr->type == JSON_NUM || pr->type == JSON_NULL);
			else
				ok = pr && (want ? pr->type == JSON_STR && !strcmp(pr->val, want) : pr->type == JSON_NULL);
		}
		CHECK(ok, "JSON row %zu is a valid object of the cells (%s)", nobj, ok ? "ok" : err);
		json_obj_release(&o);
	}
	CHECK(nobj == NROWS, "one JSON object per row (%zu)", nobj);
	free(json);
	table_release(&t);
	sb_release(&field);
}

/* A numeric column: right-aligned; in JSON, numbers as JSON writes them whatever their form. */
static void test_numbers(void)
{
	static const char *const h[] = { "k", "v" };
	static const char *const r[][2] = {
		{ "json", "-1.25e+03" }, { "hex", "0x10" }, { "inf", "inf" }, { "-inf", "-inf" },
		{ "point", ".5" }, { "zeros", "007" }, { "plus", "+1" }, { "zero", "-0" }, { "none", "-" },
	};
	struct table t;

	table_init(&t, 2, h);
	for (size_t i = 0; i < ARRAY_SIZE(r); i++)
		table_add(&t, r[i]);
	CHECK(!t.numeric[0] && t.numeric[1], "the column of numbers is numeric");
	check_format(&t, &table_json,
		     "[{\"k\":\"json\",\"v\":-1.25e+03},\n"
		     " {\"k\":\"hex\",\"v\":16},\n"
		     " {\"k\":\"inf\",\"v\":null},\n"
		     " {\"k\":\"-inf\",\"v\":null},\n"
		     " {\"k\":\"point\",\"v\":0.5},\n"
		     " {\"k\":\"zeros\",\"v\":7},\n"
		     " {\"k\":\"plus\",\"v\":1},\n"
		     " {\"k\":\"zero\",\"v\":-0},\n"
		     " {\"k\":\"none\",\"v\":null}]\n",
		     "JSON numbers always in JSON's form");
	check_format(&t, &table_text,
		     "k      v        \n"
		     "json   -1.25e+03\n"
		     "hex         0x10\n"
		     "inf          inf\n"
		     "-inf        -inf\n"
		     "point         .5\n"
		     "zeros        007\n"
		     "plus          +1\n"
		     "zero          -0\n"
		     "none           -\n",
		     "text: numbers right-aligned as written");
	check_format(&t, &table_md,
		     "| k     | v         |\n"
		     "|:----- | ---------:|\n"
		     "| json  | -1.25e+03 |\n"
		     "| hex   |      0x10 |\n"
		     "| inf   |       inf |\n"
		     "| -inf  |      -inf |\n"
		     "| point |        .5 |\n"
		     "| zeros |       007 |\n"
		     "| plus  |        +1 |\n"
		     "| zero  |        -0 |\n"
		     "| none  |         - |\n",
		     "Markdown: numbers right-aligned, ':' on the right");
	table_release(&t);

	/* One word in a column makes it text: quoted in JSON, left-aligned, 'l' in LaTeX. */
	table_init(&t, 2, h);
	table_add(&t, (const char *const[]){ "a", "1" });
	table_add(&t, (const char *const[]){ "b", "n/a" });
	CHECK(!t.numeric[1], "a word makes a column text");
	check_format(&t, &table_json, "[{\"k\":\"a\",\"v\":\"1\"},\n {\"k\":\"b\",\"v\":\"n/a\"}]\n",
		     "JSON: a text column's numbers are strings");
	check_format(&t, &table_text, "k  v  \na  1  \nb  n/a\n", "text: a text column is left-aligned");
	check_format(&t, &table_latex,
		     "\\begin{tabular}{ll}\n\\toprule\nk & v \\\\\n\\midrule\na & 1 \\\\\nb & n/a \\\\\n"
		     "\\bottomrule\n\\end{tabular}\n",
		     "LaTeX: a text column is 'l'");
	table_release(&t);
}

/* No rows: the heading alone, and an empty JSON array. */
static void test_empty(void)
{
	static const char *const h[] = { "a", "long heading" };
	struct table t;

	table_init(&t, 2, h);
	check_format(&t, &table_text, "a  long heading\n", "text with no rows");
	check_format(&t, &table_md, "| a   | long heading |\n| ---:| ------------:|\n", "Markdown with no rows");
	check_format(&t, &table_csv, "a,long heading\n", "CSV with no rows");
	check_format(&t, &table_latex,
		     "\\begin{tabular}{rr}\n\\toprule\na & long heading \\\\\n\\midrule\n\\bottomrule\n"
		     "\\end{tabular}\n", "LaTeX with no rows");
	check_format(&t, &table_json, "[]\n", "JSON with no rows");
	table_release(&t);
}

/* The formats by name: the registry, and one message naming them for another name. */
static void test_format_parse(void)
{
	static const char *const names[] = { "text", "md", "csv", "latex", "json", "html" };
	static const struct table_format *const want[] = { &table_text, &table_md, &table_csv, &table_latex,
							    &table_json, &table_html };
	const struct table_format *f;
	char errs[512];
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		f = table_format_find(names[i]);
		CHECK(f == want[i] && !strcmp(f->name, names[i]), "format '%s' found", names[i]);
	}
	while (table_formats[n])
		n++;
	CHECK_INT(n, 6, "six formats in the registry");
	test_capture_start();
	f = table_format_find("JSON");
	CHECK(!f && !table_format_find(""), "unknown names (case counts) are not found");
	capture_into(errs, sizeof(errs));
	CHECK_TEXT(errs, "sweep: unknown format 'JSON' (expected text, md, csv, latex, json or html)\n"
		   "sweep: unknown format '' (expected text, md, csv, latex, json or html)\n", "the message");
}

/* The methods around a table: the reading formats title it, LaTeX keeps a method as a comment, and the
 * footnote of a mark is said the format's way; CSV and JSON say nothing but the table. */
static void test_format_methods(void)
{
	static const struct {
		const struct table_format *fmt;
		const char *heading, *method, *footnote;
	} want[] = {
		{ &table_text, "T\n\n", "M\n\n", "\n\xe2\x80\xa0 holds x; hint\n" },
		{ &table_md, "T\n\n", "M\n\n", "\n\xe2\x80\xa0 holds x; hint\n" },
		{ &table_latex, "", "% M\n",
		  "% $^\\dagger$: holds x; hint\n\\par{\\footnotesize $^\\dagger$ holds x.}\n" },
		{ &table_csv, "", "", "" },
		{ &table_json, "", "", "" },
		{ &table_html, "<p class=\"caption\">T</p>\n", "<p class=\"method\">M</p>\n",
		  "<p class=\"footnote\"><sup>\xe2\x80\xa0</sup> holds x; hint</p>\n" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct table_format *f = want[i].fmt;
		char *buf[3] = { NULL, NULL, NULL };
		size_t len;
		FILE *m;

		for (int k = 0; k < 3; k++) {
			m = open_memstream(&buf[k], &len);
			if (k == 0 && f->heading)
				f->heading("T", m);
			if (k == 1 && f->method)
				f->method("M", m);
			if (k == 2 && f->footnote)
				f->footnote(0, "holds x", "; hint", m);
			fclose(m);
		}
		CHECK_TEXT(buf[0], want[i].heading, f->name);
		CHECK_TEXT(buf[1], want[i].method, f->name);
		CHECK_TEXT(buf[2], want[i].footnote, f->name);
		CHECK(f->reading == (f != &table_csv && f != &table_json), "%s: for reading or programs", f->name);
		for (int k = 0; k < 3; k++)
			free(buf[k]);
	}
	CHECK(table_latex.equal_decimals && !table_md.equal_decimals, "only LaTeX lines up by decimals");
	CHECK(table_html.page && !table_md.page && !table_latex.page, "only HTML is a page");
}

/* Terminal text: an escape sequence and bytes that are not UTF-8 never reach the output raw; marks. */
static void test_safe(void)
{
	static const char *const h[] = { "k", "v" };
	static const char *const r1[] = { "\x1b[31mred\x1b[0m", "1.5" };
	static const char *const r2[] = { "bad\xff\xc3(", "Inf" };
	static const char *const r3[] = { "\xe2\x82\xac ok \xed\xa0\x80", "12.25" };
	struct table t;

	table_init(&t, 2, h);
	table_add(&t, r1);
	table_mark(&t, 1, 0);
	table_add(&t, r2);
	table_add(&t, r3);
	check_format(&t, &table_text,
		     "k             v     \n"
		     "?[31mred?[0m    1.5\xe2\x80\xa0\n"
		     "bad\xef\xbf\xbd\xef\xbf\xbd(          Inf \n"
		     "\xe2\x82\xac ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd      12.25 \n",
		     "text: ESC as ?, invalid UTF-8 as U+FFFD, a mark keeps digits lined up");
	check_format(&t, &table_md,
		     "| k            | v      |\n"
		     "|:------------ | ------:|\n"
		     "| ?[31mred?[0m |   1.5\xe2\x80\xa0 |\n"
		     "| bad\xef\xbf\xbd\xef\xbf\xbd(       |   Inf  |\n"
		     "| \xe2\x82\xac ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd     | 12.25  |\n",
		     "Markdown: the same");
	check_format(&t, &table_json,
		     "[{\"k\":\"\\u001b[31mred\\u001b[0m\",\"v\":1.5},\n"
		     " {\"k\":\"bad\xef\xbf\xbd\xef\xbf\xbd(\",\"v\":null},\n"
		     " {\"k\":\"\xe2\x82\xac ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"v\":12.25}]\n",
		     "JSON: Inf is null");
	check_format(&t, &table_html,
		     "<table>\n<thead><tr><th>k</th><th class=\"num\">v</th></tr></thead>\n<tbody>\n"
		     "<tr><td>?[31mred?[0m</td><td class=\"num\">1.5<sup class=\"mark\">\xe2\x80\xa0</sup></td></tr>\n"
		     "<tr><td>bad\xef\xbf\xbd\xef\xbf\xbd(</td><td class=\"num\">Inf</td></tr>\n"
		     "<tr><td>\xe2\x82\xac ok \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd</td><td class=\"num\">12.25</td></tr>\n"
		     "</tbody>\n</table>\n",
		     "HTML: the same text, a mark after its value");
	table_release(&t);
	/* both kinds of mark on one cell, and the footnote of the second */
	{
		static const char *const a[] = { "x", "2" };
		char *buf = NULL;
		size_t len;
		FILE *m;

		table_init(&t, 2, h);
		table_add(&t, a);
		table_mark(&t, 1, 0);
		table_mark(&t, 1, 1);
		check_format(&t, &table_html,
			     "<table>\n<thead><tr><th>k</th><th class=\"num\">v</th></tr></thead>\n<tbody>\n"
			     "<tr><td>x</td><td class=\"num\">2<sup class=\"mark\">\xe2\x80\xa0</sup>"
			     "<sup class=\"mark\">\xe2\x80\xa1</sup></td></tr>\n</tbody>\n</table>\n",
			     "HTML: a cell's two marks, \u2020 then \u2021");
		table_release(&t);
		m = open_memstream(&buf, &len);
		table_html.footnote(1, "rests on few", " (see)", m);
		fclose(m);
		CHECK_TEXT(buf, "<p class=\"footnote\"><sup>\xe2\x80\xa1</sup> rests on few (see)</p>\n",
			   "HTML: the footnote of mark 1");
		free(buf);
	}
	/* HTML's own characters are text */
	{
		static const char *const a[] = { "<b>&\"'", "1" };

		table_init(&t, 2, h);
		table_add(&t, a);
		check_format(&t, &table_html,
			     "<table>\n<thead><tr><th>k</th><th class=\"num\">v</th></tr></thead>\n<tbody>\n"
			     "<tr><td>&lt;b&gt;&amp;&quot;&#39;</td><td class=\"num\">1</td></tr>\n</tbody>\n</table>\n",
			     "HTML: markup in a value is escaped");
		table_release(&t);
	}
	/* an infinity in a text column is null too */
	{
		static const char *const a[] = { "Inf", "x" }, *const b[] = { "y", "2" };

		table_init(&t, 2, h);
		table_add(&t, a);
		table_add(&t, b);
		check_format(&t, &table_json, "[{\"k\":null,\"v\":\"x\"},\n {\"k\":\"y\",\"v\":\"2\"}]\n",
			     "JSON: SQLite's Inf in a text column is null");
		table_release(&t);
	}
	CHECK(table_format_of_path("a/t.CSV") == &table_csv, "t.CSV is csv");
	CHECK(table_format_of_path("t.tex") == &table_latex, "t.tex is latex");
	CHECK(table_format_of_path("t.txt") == &table_text, "t.txt is text");
	CHECK(table_format_of_path("r.md") == &table_md && table_format_of_path("r.json") == &table_json,
	      "t.md is md, t.json is json");
	CHECK(table_format_of_path("r.HTML") == &table_html, "r.HTML is html");
	CHECK(!table_format_of_path("t.db") && !table_format_of_path("dir.md/t"), "other names have no format");
}

/* Column names are unique in every format: a name an earlier column has takes _2 (or the first free
 * suffix), so a reader keyed by name gets every column; unique names are kept as they are. */
static void test_unique_names(void)
{
	static const char *const h[] = { "n", "ratio", "n", "n_2", "n", "ratio" };
	static const char *const r[] = { "16384", "3", "10", "7", "1", "0.5" };
	static const char *const want[] = { "n", "ratio", "n_3", "n_2", "n_4", "ratio_2" };
	struct table t;
	char *got;

	table_init(&t, 6, h);
	table_add(&t, r);
	for (int c = 0; c < 6; c++)
		CHECK_STR(t.head[c], want[c], "column name");
	got = print(&t, &table_json);
	CHECK_TEXT(got, "[{\"n\":16384,\"ratio\":3,\"n_3\":10,\"n_2\":7,\"n_4\":1,\"ratio_2\":0.5}]\n", "json keeps every value");
	free(got);
	got = print(&t, &table_csv);
	CHECK_TEXT(got, "n,ratio,n_3,n_2,n_4,ratio_2\n16384,3,10,7,1,0.5\n", "csv names each column once");
	free(got);
	got = print(&t, &table_md);
	CHECK(got && strstr(got, "| n     | ratio | n_3 | n_2 | n_4 | ratio_2 |\n"), "markdown heading: %s",
	      test_shown(shown_buf, sizeof(shown_buf), got));
	free(got);
	table_release(&t);
}

/* Two kinds of mark: each prints its own sign after the cell, a cell with fewer marks than another of its
 * column is padded so the digits line up, LaTeX superscripts both, each footnote names its own. */
static void test_two_marks(void)
{
	static const char *const h[] = { "k", "v" };
	static const char *const r1[] = { "a", "1.5" }, *const r2[] = { "b", "2.5" }, *const r3[] = { "c", "3.5" };
	char *buf;
	size_t len;
	FILE *m;
	struct table t;

	table_init(&t, 2, h);
	table_add(&t, r1);
	table_mark(&t, 1, 0);
	table_mark(&t, 1, 1);
	table_add(&t, r2);
	table_mark(&t, 1, 1);
	table_add(&t, r3);
	check_format(&t, &table_text,
		     "k  v    \n"
		     "a  1.5\xe2\x80\xa0\xe2\x80\xa1\n"
		     "b  2.5\xe2\x80\xa1 \n"
		     "c  3.5  \n", "text: both signs, the digits lined up");
	check_format(&t, &table_latex,
		     "\\begin{tabular}{lr}\n\\toprule\nk & v \\\\\n\\midrule\n"
		     "a & 1.5\\rlap{$^{\\dagger\\ddagger}$} \\\\\nb & 2.5\\rlap{$^\\ddagger$} \\\\\nc & 3.5 \\\\\n"
		     "\\bottomrule\n\\end{tabular}\n", "LaTeX: one superscript of both marks");
	table_release(&t);
	m = open_memstream(&buf, &len);
	table_md.footnote(1, "rests on 3 pairs", "", m);
	table_latex.footnote(1, "rests on 3 pairs", "", m);
	fclose(m);
	CHECK_TEXT(buf, "\n\xe2\x80\xa1 rests on 3 pairs\n% $^\\ddagger$: rests on 3 pairs\n"
		   "\\par{\\footnotesize $^\\ddagger$ rests on 3 pairs.}\n", "the footnote of mark 1");
	free(buf);
}

int main(void)
{
	test_unique_names();
	test_safe();
	test_formats();
	test_read_back();
	test_numbers();
	test_empty();
	test_format_parse();
	test_format_methods();
	test_two_marks();
	return test_done();
}
