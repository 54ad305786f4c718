/* unit.c: numbers with units as tools print them, converted into the unit a metric declares (unit.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#define UNIT_MAX 32

/* power: the factor is base^power for k, K, M, G and T (1000, or 1024 with unit_base: 1024); 0: factor. */
static const struct {
	const char *text;
	double factor;
	int power;
} prefixes[] = {
	{ "", 1, 0 }, { "n", 1e-9, 0 }, { "u", 1e-6, 0 }, { "\xc2\xb5", 1e-6, 0 } /* µ, micro sign */,
	{ "\xce\xbc", 1e-6, 0 } /* μ, Greek mu */, { "m", 1e-3, 0 }, { "k", 0, 1 }, { "K", 0, 1 } /* perf stat */,
	{ "M", 0, 2 }, { "G", 0, 3 }, { "T", 0, 4 }, { "Ki", 1024.0, 0 }, { "Mi", 1048576.0, 0 },
	{ "Gi", 1073741824.0, 0 }, { "Ti", 1099511627776.0, 0 },
};

/* The seconds as GNU time, python -m timeit, pyperf and perf stat spell them: read as s, ms, us, ns. */
static const struct {
	const char *word, *as;
} time_words[] = {
	{ "sec", "s" }, { "secs", "s" }, { "msec", "ms" }, { "msecs", "ms" }, { "usec", "us" }, { "usecs", "us" },
	{ "nsec", "ns" }, { "nsecs", "ns" },
};

static double prefix_factor(size_t i, int base)
{
	return prefixes[i].power ? pow(base, prefixes[i].power) : prefixes[i].factor;
}

/* unit as unit_ratio reads it into out (n bytes): "K/sec" is "K/s", "msec" is "ms". */
static void unit_normal(const char *unit, char *out, size_t n)
{
	size_t len = strlen(unit), word = strcspn(unit, "/");

	snprintf(out, n, "%s", unit);
	if (len >= 4 && !strcmp(unit + len - 4, "/sec"))
		out[len - 2] = '\0';   /* "/sec" -> "/s" */
	for (size_t i = 0; i < sizeof(time_words) / sizeof(time_words[0]); i++)
		if (strlen(time_words[i].word) == word && !strncmp(unit, time_words[i].word, word)) {
			snprintf(out, n, "%s%s", time_words[i].as, unit + word);
			if (len >= 4 && !strcmp(unit + len - 4, "/sec") && word < len)
				out[strlen(out) - 2] = '\0';
			return;
		}
}

int unit_check(const char *unit, char *err, size_t errlen)
{
	size_t n = strlen(unit);

	if (!n || n > UNIT_MAX) {
		snprintf(err, errlen, n ? "a unit is at most %d bytes" : "an empty unit", UNIT_MAX);
		return -1;
	}
	for (const char *c = unit; *c; c++) {
		if ((unsigned char)*c <= ' ' || *c == 0x7f) {
			snprintf(err, errlen, "a unit has no blank or control character");
			return -1;
		}
	}
	return 0;
}

/*
 * The factor of from over to where both read as a prefix and one base: every way of reading each is
 * tried (ms is m + s, or the base ms), since a base may begin with a prefix's letter. A count ("1")
 * has the empty base. k, K, M, G and T are powers of base. 0 when they share no base.
 */
static double unit_ratio(const char *from_text, const char *to_text, int base)
{
	char from[2 * UNIT_MAX], to[2 * UNIT_MAX];
	int count = !strcmp(to_text, "1");

	unit_normal(from_text, from, sizeof(from));
	unit_normal(to_text, to, sizeof(to));
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t fl = strlen(prefixes[i].text);

		if (strncmp(from, prefixes[i].text, fl))
			continue;
		if (count && !from[fl])
			return prefix_factor(i, base);
		for (size_t j = 0; !count && j < sizeof(prefixes) / sizeof(prefixes[0]); j++) {
			size_t tl = strlen(prefixes[j].text);

			if (!strncmp(to, prefixes[j].text, tl) && to[tl] && !strcmp(from + fl, to + tl))
				return prefix_factor(i, base) / prefix_factor(j, base);
		}
	}
	return 0;
}

int unit_convert(double v, const char *from, const char *to, double *out, char *err, size_t errlen)
{
	return unit_convert_how(v, from, to, NULL, out, err, errlen);
}

int unit_convert_how(double v, const char *from, const char *to, const struct unit_how *how, double *out,
		     char *err, size_t errlen)
{
	int base = how && how->base ? how->base : 1000;
	double f;

	if (!*from && how && how->scale)
		from = how->scale;
	if (!*from && strcmp(to, "1")) {
		snprintf(err, errlen, "no unit, and '%s' was declared", to);
		return -1;
	}
	if (strlen(from) > UNIT_MAX || !(f = unit_ratio(from, to, base))) {
		snprintf(err, errlen, "'%.*s' is not a unit of '%s'", UNIT_MAX, from, to);
		return -1;
	}
	/* 1e308 GB is no number of bytes a double holds: said, never stored as inf (or left out). */
	if (!isfinite(v * f)) {
		snprintf(err, errlen, "out of range in '%s' (over 1.8e308)", to);
		return -1;
	}
	*out = v * f;
	return 0;
}

/* The length of the JSON number at s (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), 0 if none. */
static size_t number_len(const char *s)
{
	const char *p = s;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return 0;
	if (*p == '.' && isdigit((unsigned char)p[1]))
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if ((*p == 'e' || *p == 'E') &&
	    (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2]))))
		for (p += 2; isdigit((unsigned char)*p); p++)
			;
	return (size_t)(p - s);
}

int unit_parse(const char *text, const char *to, double *out, char *err, size_t errlen)
{
	return unit_parse_how(text, to, NULL, out, err, errlen);
}

int unit_parse_how(const char *text, const char *to, const struct unit_how *how, double *out, char *err,
		   size_t errlen)
{
	size_t n, len;
	char num[64], from[UNIT_MAX + 2];
	const char *u;
	double v;

	while (*text == ' ' || *text == '\t')
		text++;
	n = number_len(text);
	if (!n || n >= sizeof(num)) {
		snprintf(err, errlen, "not a number");
		return -1;
	}
	memcpy(num, text, n);
	num[n] = '\0';
	/* A subnormal (4.9e-324) is a number; one past the largest double (1.8e308) is not. */
	v = strtod(num, NULL);
	if (!isfinite(v)) {
		snprintf(err, errlen, "out of range (over 1.8e308)");
		return -1;
	}
	for (u = text + n; *u == ' ' || *u == '\t'; u++)
		;
	for (len = strlen(u); len && (u[len - 1] == ' ' || u[len - 1] == '\t'); len--)
		;
	if (!to) {
		if (len) {
			/* Text that reads as a unit (no digit in it) is one the spec did not declare. */
			snprintf(err, errlen, "not a number%s", strcspn(u, "0123456789") >= len ?
				 " (declare its unit: unit: ...)" : "");
			return -1;
		}
		*out = v;
		return 0;
	}
	if (len > UNIT_MAX) {
		snprintf(err, errlen, "'%.*s...' is not a unit of '%s'", UNIT_MAX, u, to);
		return -1;
	}
	memcpy(from, u, len);
	from[len] = '\0';
	return unit_convert_how(v, from, to, how, out, err, errlen);
}
