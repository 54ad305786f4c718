/* util.c: errors, allocation that dies on failure, growable strings, hashing, time, parsing. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "sweep: %s%s\n", prefix, msg);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(1);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sweep: BUG: %s:%d: %s\n", file, line, msg);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory reallocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	return sb_detach(&sb);
}

void sb_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

void sb_release(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 > sb->alloc) {
		size_t want = sb->len + extra + 1;

		sb->alloc = want > 2 * sb->alloc + 32 ? want : 2 * sb->alloc + 32;
		sb->buf = xrealloc(sb->buf, sb->alloc);
	}
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_add(struct strbuf *sb, const void *data, size_t n)
{
	sb_grow(sb, n);
	if (n)   /* data may be NULL then (an empty blob), which memcpy may not be given */
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_addc(struct strbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

static char printable_char(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
}

void sb_add_word(struct strbuf *sb, const char *s)
{
	const char *p;

	for (p = s; *p && (isalnum((unsigned char)*p) || strchr("_./:=@%+-,", *p)); p++)
		;
	if (*s && !*p) {
		sb_adds(sb, s);
		return;
	}
	sb_addc(sb, '\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, *p);
	}
	sb_addc(sb, '\'');
}

void sb_set_terminal(struct strbuf *sb, const char *line, size_t len)
{
	const char *p = line, *end = line + len, *cr;
	size_t col, n;

	sb_reset(sb);
	for (; p <= end; p = cr + 1) {
		cr = memchr(p, '\r', (size_t)(end - p));
		if (!cr)
			cr = end;
		n = (size_t)(cr - p);
		col = n < sb->len ? n : sb->len;
		if (col)
			memcpy(sb->buf, p, col);
		sb_add(sb, p + col, n - col);
	}
}

void sb_add_printable(struct strbuf *sb, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		sb_addc(sb, printable_char(s[i]));
}

const char *printable(char *buf, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++)
		buf[i] = printable_char(s[i]);
	if (s[i])
		memcpy(buf + i, "...", 4);
	else
		buf[i] = '\0';
	return buf;
}

const char *printable_line(char *buf, const char *s, size_t max)
{
	size_t n = strcspn(s, "\n"), cut;
	int more = s[n] && s[n + 1 + strspn(s + n + 1, " \t\r\n")];   /* another line with text */

	while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	cut = n;
	if (n > max) {
		for (cut = max; cut > max / 2 && s[cut] != ' '; cut--)
			;
		if (s[cut] != ' ')
			cut = max;   /* one long word: cut it rather than lose the line */
		while (cut && s[cut - 1] == ' ')
			cut--;
	}
	for (size_t i = 0; i < cut; i++)
		buf[i] = printable_char(s[i]);
	strcpy(buf + cut, cut < n || more ? "..." : "");
	return buf;
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	sb_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed for '%s'", fmt);
	if ((size_t)n >= sb->alloc - sb->len) {
		sb_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *sb_detach(struct strbuf *sb)
{
	char *p;

	sb_grow(sb, 0);
	sb->buf[sb->len] = '\0';
	p = sb->buf;
	sb_init(sb);
	return p;
}

int mkdir_parent(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0777) && errno != EEXIST)
			ret = error("cannot create '%s': %s", dir, strerror(errno));
	}
	free(dir);
	return ret;
}

int sb_read_file(struct strbuf *sb, const char *path)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;

	if (!f)
		return error("cannot open '%s': %s", path, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(sb, buf, n);
	if (ferror(f)) {
		fclose(f);
		return error("cannot read '%s': %s", path, strerror(errno));
	}
	fclose(f);
	sb_grow(sb, 0);
	return 0;
}

uint64_t hash64(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void iso_time(double wall, char *buf, size_t n)
{
	/* The date and time to the second as this thread last formatted them: results come many a second,
	 * and gmtime_r with a formatted print was a few percent of the master's time for a short cell. Only
	 * the milliseconds are written each call, after them. */
	static _Thread_local time_t last = (time_t)-1;
	static _Thread_local char line[64];
	static _Thread_local size_t at;
	time_t t = (time_t)wall;
	int ms = (int)((wall - (double)t) * 1000.0);
	size_t len;

	if (t != last) {
		struct tm tm;

		gmtime_r(&t, &tm);
		snprintf(line, sizeof(line) - 6, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		at = strlen(line);
		last = t;
	}
	ms = ms < 0 ? 0 : ms > 999 ? 999 : ms;
	memcpy(line + at, ".000Z", 6);
	line[at + 1] = (char)('0' + ms / 100);
	line[at + 2] = (char)('0' + ms / 10 % 10);
	line[at + 3] = (char)('0' + ms % 10);
	if (!n)
		return;
	len = strnlen(line, n - 1);   /* truncated to the buffer */
	memcpy(buf, line, len);
	buf[len] = '\0';
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || isnan(v))
		return -1;
	*out = v;
	return 0;
}

int parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

int parse_bytes(const char *s, double *out)
{
	static const char units[] = "KMGTPE";
	char *end;
	double v, mult = 1;
	const char *u;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || isnan(v) || isinf(v))
		return -1;
	while (*end == ' ')
		end++;
	if (*end && (u = strchr(units, toupper((unsigned char)*end)))) {
		mult = pow(1024.0, (double)(u - units + 1));
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v * mult;
	return 0;
}

int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *row = xmalloc((lb + 1) * sizeof(*row));
	int d;

	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

const char *closest_name(const char *s, const char *const *candidates)
{
	const char *best = NULL;
	int best_d = 0;

	for (size_t i = 0; candidates[i]; i++) {
		int d = edit_distance(s, candidates[i]);

		if (!best || d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	/* Close means at most a third of the name changed (and at least one edit allowed). */
	if (best && best_d <= (int)(strlen(s) / 3 > 1 ? strlen(s) / 3 : 2))
		return best;
	return NULL;
}
