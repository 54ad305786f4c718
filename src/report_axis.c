/* report_axis.c: the axes of figures: values labelled in the units plot uses (64 KiB, 16.4k), ticks on the
 * values a grid holds, thinned so that their labels never touch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_print.h"

/* The characters of s (UTF-8: a continuation byte is no character). */
size_t report_plot_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* A size as people read one: 512 B, 64 KiB, 1.5 MiB, 2 GiB. */
static void label_bytes(double v, char *buf, size_t n)
{
	static const char *const prefix[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int k = 0;

	while (k + 1 < (int)ARRAY_SIZE(prefix) && fabs(v) >= 1024) {
		v /= 1024;
		k++;
	}
	snprintf(buf, n, v == floor(v) ? "%.0f %s" : "%.3g %s", v, prefix[k]);
}

/* A count in SI: as it is below 10000, else 16.4k, 1M, 2.5G. */
static void label_si(double v, char *buf, size_t n)
{
	static const char *const prefix[] = { "", "k", "M", "G", "T", "P" };
	int k = 0;

	if (fabs(v) < 10000) {
		snprintf(buf, n, "%g", v);
		return;
	}
	while (k + 1 < (int)ARRAY_SIZE(prefix) && fabs(v) >= 1000) {
		v /= 1000;
		k++;
	}
	snprintf(buf, n, "%.3g%s", v, prefix[k]);
}

void report_plot_label(double v, int bytes, char *buf, size_t n)
{
	(bytes ? label_bytes : label_si)(v, buf, n);
}

/* Ticks at "nice" places of [min, max]: steps of 1, 2 or 5 times a power of ten, or of two for sizes. */
static double nice_step(double min, double max, int bytes)
{
	double raw = (max - min) / 6, step;

	if (!(raw > 0))
		return 1;
	if (bytes)
		return exp2(ceil(log2(raw)));
	step = pow(10, floor(log10(raw)));
	return raw <= step ? step : raw <= 2 * step ? 2 * step : raw <= 5 * step ? 5 * step : 10 * step;
}

/* Where v falls on the axis from min to max, in [0, 1] (with the 3 % margins the plots keep at both ends). */
static double tick_at(double v, double min, double max, int logscale)
{
	double f = logscale ? (log(v) - log(min)) / (log(max) - log(min)) : (v - min) / (max - min);

	return max > min ? (0.03 + f) / 1.06 : 0.5;
}

/* Whether the labels of the ticks at a and b (PLOT_CHAR_W of the font's size a character each, centred on
 * their places) on an axis from min to max, len font sizes long, come closer than a character. */
static int ticks_clash(double a, const char *la, double b, const char *lb, const double *range, double len,
		       int logscale)
{
	double wa = (double)report_plot_chars(la) * PLOT_CHAR_W, wb = (double)report_plot_chars(lb) * PLOT_CHAR_W;

	return (tick_at(b, range[0], range[1], logscale) - tick_at(a, range[0], range[1], logscale)) * len <
	       (wa + wb) / 2 + 1;
}

/* Keep the ticks whose labels do not clash with the previous one kept: the first, and the last in place of
 * those before it that it clashes with. Returns how many are kept, moved to the front. */
static size_t ticks_thin(double *v, char (*label)[48], size_t n, double len, int logscale)
{
	const double range[2] = { v[0], v[n - 1] };
	size_t k = 1;

	for (size_t i = 1; i < n; i++) {
		while (i + 1 == n && k > 1 && ticks_clash(v[k - 1], label[k - 1], v[i], label[i], range, len, logscale))
			k--;
		if (ticks_clash(v[k - 1], label[k - 1], v[i], label[i], range, len, logscale))
			continue;
		v[k] = v[i];
		memmove(label[k], label[i], sizeof(label[k]));
		k++;
	}
	return k;
}

void report_plot_ticks(struct strbuf *gp, const char *axis, const double *grid, size_t n, int bytes, int logscale,
		       double len)
{
	double min = INFINITY, max = -INFINITY, step, *v;
	char (*label)[48];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		min = grid[i] < min ? grid[i] : min;
		max = grid[i] > max ? grid[i] : max;
	}
	if (!n)
		return;
	step = logscale || n <= 10 ? 0 : nice_step(min, max, bytes);
	/* the values the grid holds on a log axis or a short grid; else nice steps */
	n = step ? (size_t)(floor(max / step) - ceil(min / step) + 2) : n;
	v = xcalloc(n, sizeof(*v));
	label = xcalloc(n, sizeof(*label));
	for (size_t i = 0; i < n; i++) {
		double x = step ? (ceil(min / step) + (double)i) * step : grid[i];

		if (step && x > max + step / 2)
			break;
		v[k] = x;
		(bytes ? label_bytes : label_si)(x, label[k++], sizeof(*label));
	}
	if (len > 0 && k > 1)
		k = ticks_thin(v, label, k, len, logscale);
	sb_addf(gp, "set %stics (", axis);
	for (size_t i = 0; i < k; i++)
		sb_addf(gp, "%s'%s' %.17g", i ? ", " : "", label[i], v[i]);
	sb_adds(gp, ")\n");
	free(v);
	free(label);
}
