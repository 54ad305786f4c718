/* table.c: printing a table of text cells in the formats reports use. */
#include "table.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "util.h"

static int in_heads(const char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (v[i] && !strcmp(v[i], s))
			return 1;
	return 0;
}

/* Column c's name: head[c], or, when an earlier column has it, head[c] with the first suffix _2, _3, ...
 * that no other column has. Owned. */
static char *unique_head(const struct table *t, int c, const char *const *head)
{
	const char *const *before = (const char *const *)t->head;
	char *name;

	if (!in_heads(before, c, head[c]))
		return xstrdup(head[c]);
	for (int k = 2;; k++) {
		name = xasprintf("%s_%d", head[c], k);
		if (!in_heads(before, c, name) && !in_heads(head + c + 1, t->ncol - c - 1, name))
			return name;
		free(name);
	}
}

void table_init(struct table *t, int ncol, const char *const *head)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	t->head = xcalloc((size_t)ncol, sizeof(*t->head));
	t->numeric = xcalloc((size_t)ncol, sizeof(*t->numeric));
	for (int c = 0; c < ncol; c++) {
		t->head[c] = unique_head(t, c, head);
		t->numeric[c] = 1;
	}
}

static int is_number(const char *s)
{
	double v;

	return s && !parse_double(s, &v);
}

/* An infinity as SQLite prints one ("Inf", "-Inf"), which a text column of JSON must not carry on as
 * text; other spellings are the user's text ("inf" as a parameter value). */
static int nonfinite(const char *s)
{
	return s && (!strcmp(s, "Inf") || !strcmp(s, "-Inf"));
}

void table_add(struct table *t, const char *const *row)
{
	ALLOC_GROW(t->cell, (t->nrows + 1) * (size_t)t->ncol, t->alloc);
	ALLOC_GROW(t->mark, (t->nrows + 1) * (size_t)t->ncol, t->alloc_mark);
	memset(t->mark + t->nrows * (size_t)t->ncol, 0, (size_t)t->ncol);
	for (int c = 0; c < t->ncol; c++) {
		t->cell[t->nrows * (size_t)t->ncol + (size_t)c] = row[c] ? xstrdup(row[c]) : NULL;
		if (row[c] && *row[c] && !is_number(row[c]) && strcmp(row[c], "-"))
			t->numeric[c] = 0;
	}
	t->nrows++;
}

static const char *const mark_text[TABLE_NMARKS] = { TABLE_MARK, TABLE_MARK2 };
static const char *const mark_latex[TABLE_NMARKS] = { "\\dagger", "\\ddagger" };

void table_mark(struct table *t, int c, int k)
{
	if (!t->nrows || c < 0 || c >= t->ncol || k < 0 || k >= TABLE_NMARKS)
		BUG("table_mark: no cell %d in the last row, or no mark %d", c, k);
	t->mark[(t->nrows - 1) * (size_t)t->ncol + (size_t)c] |= (unsigned char)(1u << k);
}

/* The marks of a cell, bit k for mark k. */
static unsigned marked(const struct table *t, size_t r, int c)
{
	return t->mark ? t->mark[r * (size_t)t->ncol + (size_t)c] : 0;
}

/* How many marks a cell carries. */
static int nmarks(const struct table *t, size_t r, int c)
{
	int n = 0;

	for (int k = 0; k < TABLE_NMARKS; k++)
		n += (marked(t, r, c) >> k) & 1;
	return n;
}

void table_release(struct table *t)
{
	free(t->mark);
	for (size_t i = 0; i < t->nrows * (size_t)t->ncol; i++)
		free(t->cell[i]);
	for (int c = 0; c < t->ncol; c++)
		free(t->head[c]);
	free(t->cell);
	free(t->head);
	free(t->numeric);
	memset(t, 0, sizeof(*t));
}

static const char *at(const struct table *t, size_t r, int c)
{
	const char *s = t->cell[r * (size_t)t->ncol + (size_t)c];

	return s ? s : "";
}

/* Characters, not bytes, line text up: a UTF-8 continuation byte adds nothing to the width. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when s does not start one (a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, a sequence cut short). */
static int utf8_len(const unsigned char *s)
{
	int n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void table_add_safe(struct strbuf *sb, const char *s)
{
	while (*s) {
		int n = utf8_len((const unsigned char *)s);

		if (!n) {
			sb_adds(sb, "\xef\xbf\xbd");      /* U+FFFD for each byte that is not UTF-8 */
			s++;
		} else if (n == 1 && ((unsigned char)*s < 0x20 || *s == 0x7f)) {
			sb_addc(sb, '?');
			s++;
		} else {
			sb_add(sb, s, (size_t)n);
			s += n;
		}
	}
}

/*
 * A cell as aligned text or Markdown shows it. A control character would break the row (a newline) or
 * reach the terminal (an escape): it shows as '?', except that Markdown writes a newline as <br>; bytes
 * that are not UTF-8 show as U+FFFD. Markdown splits cells at '|' unless escaped as \|, and reads \
 * before punctuation as an escape: both are escaped.
 */
static char *shown_cell(const char *s, int md, unsigned mark)
{
	struct strbuf sb = STRBUF_INIT, safe = STRBUF_INIT;
	char *p;

	sb_add(&sb, "", 0);
	sb_add(&safe, "", 0);
	for (; *s; s++) {
		if (md && *s == '\n')
			sb_adds(&sb, "<br>");
		else if (md && (*s == '|' || *s == '\\'))
			sb_addf(&sb, "\\%c", *s);
		else
			sb_addc(&sb, *s);
	}
	table_add_safe(&safe, sb.buf);
	for (int k = 0; k < TABLE_NMARKS; k++)
		if ((mark >> k) & 1)
			sb_adds(&safe, mark_text[k]);
	sb_release(&sb);
	p = sb_detach(&safe);
	return p;
}

static void print_aligned(const struct table *t, FILE *f, int md)
{
	size_t *w = xcalloc((size_t)t->ncol, sizeof(*w));
	size_t ncells = (t->nrows + 1) * (size_t)t->ncol;
	char **shown = xcalloc(ncells, sizeof(*shown));   /* the header row, then the rows */

	for (int c = 0; c < t->ncol; c++) {
		shown[c] = shown_cell(t->head[c], md, 0);
		for (size_t r = 0; r < t->nrows; r++)
			shown[(r + 1) * (size_t)t->ncol + (size_t)c] = shown_cell(at(t, r, c), md, marked(t, r, c));
		/* a column with marks keeps its digits lined up: a cell with fewer gets a space for each */
		for (size_t r = 0, most = 0; r <= t->nrows && t->numeric[c]; r++) {
			if (r < t->nrows) {
				most = (size_t)nmarks(t, r, c) > most ? (size_t)nmarks(t, r, c) : most;
				continue;
			}
			for (size_t q = 0; q < t->nrows; q++) {
				char **sh = &shown[(q + 1) * (size_t)t->ncol + (size_t)c];
				char *p = xasprintf("%s%*s", *sh, (int)(most - (size_t)nmarks(t, q, c)), "");

				free(*sh);
				*sh = p;
			}
		}
		w[c] = md ? 3 : 0;
		for (size_t r = 0; r <= t->nrows; r++)
			if (text_width(shown[r * (size_t)t->ncol + (size_t)c]) > w[c])
				w[c] = text_width(shown[r * (size_t)t->ncol + (size_t)c]);
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		if (md)
			fputs("| ", f);
		for (int c = 0; c < t->ncol; c++) {
			const char *s = shown[r * (size_t)t->ncol + (size_t)c];
			int right = t->numeric[c] && r > 0;

			if (!right)
				fputs(s, f);
			for (size_t i = text_width(s); i < w[c]; i++)
				fputc(' ', f);
			if (right)
				fputs(s, f);
			if (c + 1 < t->ncol)
				fputs(md ? " | " : "  ", f);
		}
		fputs(md ? " |\n" : "\n", f);
		if (r == 0 && md) {
			fputs("|", f);
			for (int c = 0; c < t->ncol; c++) {
				fputc(t->numeric[c] ? ' ' : ':', f);
				for (size_t i = 0; i < w[c]; i++)
					fputc('-', f);
				fputs(t->numeric[c] ? ":|" : " |", f);
			}
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < ncells; i++)
		free(shown[i]);
	free(shown);
	free(w);
}

static void csv_cell(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* LaTeX's ten special characters escaped; '<', '>' and '|' by name, since its default (OT1) fonts
 * print them as inverted marks and a dash; a control character as a space (a blank line would end the
 * paragraph inside the tabular). */
static void latex_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("&%$#_{}", *s))
			fprintf(f, "\\%c", *s);
		else if (*s == '~')
			fputs("\\textasciitilde{}", f);
		else if (*s == '^')
			fputs("\\textasciicircum{}", f);
		else if (*s == '\\')
			fputs("\\textbackslash{}", f);
		else if (*s == '<')
			fputs("\\textless{}", f);
		else if (*s == '>')
			fputs("\\textgreater{}", f);
		else if (*s == '|')
			fputs("\\textbar{}", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

static void print_text(const struct table *t, FILE *f)
{
	print_aligned(t, f, 0);
}

static void print_md(const struct table *t, FILE *f)
{
	print_aligned(t, f, 1);
}

static void print_csv(const struct table *t, FILE *f)
{
	for (long r = -1; r < (long)t->nrows; r++)
		for (int c = 0; c < t->ncol; c++) {
			csv_cell(f, r < 0 ? t->head[c] : at(t, (size_t)r, c));
			fputc(c + 1 < t->ncol ? ',' : '\n', f);
		}
}

static void print_latex(const struct table *t, FILE *f)
{
	fputs("\\begin{tabular}{", f);
	for (int c = 0; c < t->ncol; c++)
		fputc(t->numeric[c] ? 'r' : 'l', f);
	fputs("}\n\\toprule\n", f);
	for (long r = -1; r < (long)t->nrows; r++) {
		for (int c = 0; c < t->ncol; c++) {
			latex_cell(f, r < 0 ? t->head[c] : at(t, (size_t)r, c));
			if (r >= 0 && marked(t, (size_t)r, c)) {
				/* takes no width: digits line up */
				fputs(nmarks(t, (size_t)r, c) > 1 ? "\\rlap{$^{" : "\\rlap{$^", f);
				for (int k = 0; k < TABLE_NMARKS; k++)
					if ((marked(t, (size_t)r, c) >> k) & 1)
						fputs(mark_latex[k], f);
				fputs(nmarks(t, (size_t)r, c) > 1 ? "}$}" : "$}", f);
			}
			fputs(c + 1 < t->ncol ? " & " : " \\\\\n", f);
		}
		if (r < 0)
			fputs("\\midrule\n", f);
	}
	fputs("\\bottomrule\n\\end{tabular}\n", f);
}

static void print_json(const struct table *t, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addc(&sb, '[');
	for (size_t r = 0; r < t->nrows; r++) {
		sb_adds(&sb, r ? ",\n {" : "{");
		for (int c = 0; c < t->ncol; c++) {
			const char *s = t->cell[r * (size_t)t->ncol + (size_t)c];

			if (c)
				sb_addc(&sb, ',');
			json_add_str(&sb, t->head[c]);
			sb_addc(&sb, ':');
			if (!s || (t->numeric[c] && !is_number(s)) || nonfinite(s))
				sb_adds(&sb, "null");   /* JSON has no inf: SQLite's Inf, in any column */
			else if (t->numeric[c])
				json_add_num_text(&sb, s);   /* 0x10 and inf are not JSON */
			else
				json_add_str(&sb, s);
		}
		sb_addc(&sb, '}');
	}
	sb_adds(&sb, "]\n");
	fputs(sb.buf, f);
	sb_release(&sb);
}

/* Text and Markdown: the title, then a blank line. */
static void heading_line(const char *text, FILE *f)
{
	fprintf(f, "%s\n\n", text);
}

/* What leads footnote k: its mark, or "Note:" (TABLE_NOTE). */
static const char *lead(int k, const char *const *marks)
{
	return k == TABLE_NOTE ? "Note:" : marks[k];
}

static void footnote_line(int k, const char *meaning, const char *hint, FILE *f)
{
	fprintf(f, "\n%s %s%s\n", lead(k, mark_text), meaning, hint);
}

/* A LaTeX comment: one line, whatever the text holds. */
static void latex_comment(const char *text, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	table_add_safe(&sb, text);
	fprintf(f, "%% %s\n", sb.buf);
	sb_release(&sb);
}

static void latex_footnote(int k, const char *meaning, const char *hint, FILE *f)
{
	if (k == TABLE_NOTE) {
		latex_comment(meaning, f);
		fputs("\\par{\\footnotesize Note: ", f);
		latex_cell(f, meaning);
		fputs(".}\n", f);
		return;
	}
	fprintf(f, "%% $^%s$: %s%s\n\\par{\\footnotesize $^%s$ %s.}\n", mark_latex[k], meaning, hint, mark_latex[k],
		meaning);
}

void table_add_html(struct strbuf *sb, const char *s)
{
	struct strbuf safe = STRBUF_INIT;

	sb_add(&safe, "", 0);
	table_add_safe(&safe, s);
	for (const char *p = safe.buf; *p; p++) {
		switch (*p) {
		case '&': sb_adds(sb, "&amp;"); break;
		case '<': sb_adds(sb, "&lt;"); break;
		case '>': sb_adds(sb, "&gt;"); break;
		case '"': sb_adds(sb, "&quot;"); break;
		case '\'': sb_adds(sb, "&#39;"); break;
		default: sb_addc(sb, *p);
		}
	}
	sb_release(&safe);
}

static void html_cell(FILE *f, const char *tag, int num, const char *s, unsigned mark)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addf(&sb, "<%s%s>", tag, num ? " class=\"num\"" : "");
	table_add_html(&sb, s);
	for (int k = 0; k < TABLE_NMARKS; k++)
		if ((mark >> k) & 1)
			sb_addf(&sb, "<sup class=\"mark\">%s</sup>", mark_text[k]);
	sb_addf(&sb, "</%s>", tag);
	fputs(sb.buf, f);
	sb_release(&sb);
}

static void print_html(const struct table *t, FILE *f)
{
	fputs("<table>\n<thead><tr>", f);
	for (int c = 0; c < t->ncol; c++)
		html_cell(f, "th", t->numeric[c], t->head[c], 0);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (int c = 0; c < t->ncol; c++)
			html_cell(f, "td", t->numeric[c], at(t, r, c), marked(t, r, c));
		fputs("</tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* A paragraph of class cls holding text. */
static void html_par(const char *cls, const char *text, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addf(&sb, "<p class=\"%s\">", cls);
	table_add_html(&sb, text);
	sb_adds(&sb, "</p>\n");
	fputs(sb.buf, f);
	sb_release(&sb);
}

static void html_heading(const char *text, FILE *f)
{
	html_par("caption", text, f);
}

static void html_method(const char *text, FILE *f)
{
	html_par("method", text, f);
}

static void html_footnote(int k, const char *meaning, const char *hint, FILE *f)
{
	struct strbuf sb = STRBUF_INIT;

	if (k == TABLE_NOTE)
		sb_adds(&sb, "<p class=\"footnote\">Note: ");
	else
		sb_addf(&sb, "<p class=\"footnote\"><sup>%s</sup> ", mark_text[k]);
	table_add_html(&sb, meaning);
	table_add_html(&sb, hint);
	sb_adds(&sb, "</p>\n");
	fputs(sb.buf, f);
	sb_release(&sb);
}

const struct table_format table_text = {
	.name = "text", .ext = ".txt", .reading = 1, .print = print_text,
	.heading = heading_line, .method = heading_line, .footnote = footnote_line,
};
const struct table_format table_md = {
	.name = "md", .ext = ".md", .reading = 1, .print = print_md,
	.heading = heading_line, .method = heading_line, .footnote = footnote_line,
};
const struct table_format table_csv = { .name = "csv", .ext = ".csv", .print = print_csv };
const struct table_format table_latex = {
	.name = "latex", .ext = ".tex", .reading = 1, .equal_decimals = 1, .print = print_latex,
	.method = latex_comment, .footnote = latex_footnote,
};
const struct table_format table_json = { .name = "json", .ext = ".json", .print = print_json };
const struct table_format table_html = {
	.name = "html", .ext = ".html", .reading = 1, .page = 1, .print = print_html,
	.heading = html_heading, .method = html_method, .footnote = html_footnote,
};

const struct table_format *const table_formats[] = {
	&table_text, &table_md, &table_csv, &table_latex, &table_json, &table_html, NULL,
};

const struct table_format *table_format_find(const char *name)
{
	struct strbuf known = STRBUF_INIT;

	for (int i = 0; table_formats[i]; i++)
		if (!strcmp(name, table_formats[i]->name))
			return table_formats[i];
	for (int i = 0; table_formats[i]; i++)
		sb_addf(&known, "%s%s", !i ? "" : table_formats[i + 1] ? ", " : " or ", table_formats[i]->name);
	error("unknown format '%s' (expected %s)", name, known.buf);
	sb_release(&known);
	return NULL;
}

const struct table_format *table_format_of_path(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return NULL;
	for (int i = 0; table_formats[i]; i++)
		if (!strcasecmp(dot, table_formats[i]->ext))
			return table_formats[i];
	return NULL;
}

void table_print(const struct table *t, FILE *f, const struct table_format *fmt)
{
	fmt->print(t, f);
}
