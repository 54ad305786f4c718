/* table.c: printing a table of text cells in the formats reports use. */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

void table_init(struct table *t, int ncol, const char *const *head)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	t->head = xcalloc((size_t)ncol, sizeof(*t->head));
	t->numeric = xcalloc((size_t)ncol, sizeof(*t->numeric));
	for (int c = 0; c < ncol; c++) {
		t->head[c] = xstrdup(head[c]);
		t->numeric[c] = 1;
	}
}

static int is_number(const char *s)
{
	double v;

	return s && !parse_double(s, &v);
}

void table_add(struct table *t, const char *const *row)
{
	ALLOC_GROW(t->cell, (t->nrows + 1) * (size_t)t->ncol, t->alloc);
	for (int c = 0; c < t->ncol; c++) {
		t->cell[t->nrows * (size_t)t->ncol + (size_t)c] = row[c] ? xstrdup(row[c]) : NULL;
		if (row[c] && *row[c] && !is_number(row[c]) && strcmp(row[c], "-"))
			t->numeric[c] = 0;
	}
	t->nrows++;
}

void table_release(struct table *t)
{
	for (size_t i = 0; i < t->nrows * (size_t)t->ncol; i++)
		free(t->cell[i]);
	for (int c = 0; c < t->ncol; c++)
		free(t->head[c]);
	free(t->cell);
	free(t->head);
	free(t->numeric);
	memset(t, 0, sizeof(*t));
}

int table_format_parse(const char *name, enum table_format *out)
{
	static const char *const names[] = { "text", "md", "csv", "latex", "json", NULL };

	for (int i = 0; names[i]; i++)
		if (!strcmp(name, names[i])) {
			*out = (enum table_format)i;
			return 0;
		}
	return error("unknown format '%s' (expected text, md, csv, latex or json)", name);
}

static const char *at(const struct table *t, size_t r, int c)
{
	const char *s = t->cell[r * (size_t)t->ncol + (size_t)c];

	return s ? s : "";
}

static void print_aligned(const struct table *t, FILE *f, int md)
{
	size_t *w = xcalloc((size_t)t->ncol, sizeof(*w));

	for (int c = 0; c < t->ncol; c++) {
		w[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++)
			if (strlen(at(t, r, c)) > w[c])
				w[c] = strlen(at(t, r, c));
		if (md && w[c] < 3)
			w[c] = 3;
	}
	for (long r = -1; r < (long)t->nrows; r++) {
		if (md)
			fputs("| ", f);
		for (int c = 0; c < t->ncol; c++) {
			const char *s = r < 0 ? t->head[c] : at(t, (size_t)r, c);
			int right = t->numeric[c] && r >= 0;

			fprintf(f, right ? "%*s" : "%-*s", (int)w[c], s);
			if (c + 1 < t->ncol)
				fputs(md ? " | " : "  ", f);
		}
		fputs(md ? " |\n" : "\n", f);
		if (r < 0 && md) {
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
		else
			fputc(*s, f);
	}
}

void table_print(const struct table *t, FILE *f, enum table_format fmt)
{
	struct strbuf sb = STRBUF_INIT;

	switch (fmt) {
	case TABLE_TEXT:
	case TABLE_MD:
		print_aligned(t, f, fmt == TABLE_MD);
		break;
	case TABLE_CSV:
		for (long r = -1; r < (long)t->nrows; r++)
			for (int c = 0; c < t->ncol; c++) {
				csv_cell(f, r < 0 ? t->head[c] : at(t, (size_t)r, c));
				fputc(c + 1 < t->ncol ? ',' : '\n', f);
			}
		break;
	case TABLE_LATEX:
		fputs("\\begin{tabular}{", f);
		for (int c = 0; c < t->ncol; c++)
			fputc(t->numeric[c] ? 'r' : 'l', f);
		fputs("}\n\\toprule\n", f);
		for (long r = -1; r < (long)t->nrows; r++) {
			for (int c = 0; c < t->ncol; c++) {
				latex_cell(f, r < 0 ? t->head[c] : at(t, (size_t)r, c));
				fputs(c + 1 < t->ncol ? " & " : " \\\\\n", f);
			}
			if (r < 0)
				fputs("\\midrule\n", f);
		}
		fputs("\\bottomrule\n\\end{tabular}\n", f);
		break;
	case TABLE_JSON:
		sb_addc(&sb, '[');
		for (size_t r = 0; r < t->nrows; r++) {
			sb_adds(&sb, r ? ",\n {" : "{");
			for (int c = 0; c < t->ncol; c++) {
				const char *s = t->cell[r * (size_t)t->ncol + (size_t)c];

				if (c)
					sb_addc(&sb, ',');
				json_add_str(&sb, t->head[c]);
				sb_addc(&sb, ':');
				if (!s || (t->numeric[c] && !is_number(s)))
					sb_adds(&sb, "null");
				else if (t->numeric[c])
					sb_adds(&sb, s);
				else
					json_add_str(&sb, s);
			}
			sb_addc(&sb, '}');
		}
		sb_adds(&sb, "]\n");
		fputs(sb.buf, f);
		break;
	}
	sb_release(&sb);
}
