/* test.h: a tiny unit-test helper. Each CHECK prints "ok - ..." or "not ok - ..." (file:line and the
 * values); tests/run.sh counts those lines. main() ends with `return test_done();`. */
#ifndef SWEEP_TEST_H
#define SWEEP_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int test_failed_count;

#define CHECK(cond, ...) do { \
	if (cond) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); } \
	else { test_failed_count++; printf("not ok - %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		printf(__VA_ARGS__); printf("\n"); } } while (0)
#define CHECK_INT(a, b, name) do { long long a_ = (a), b_ = (b); \
	CHECK(a_ == b_, "%s: got %lld, want %lld", name, a_, b_); } while (0)
#define CHECK_STR(a, b, name) do { const char *a_ = (a), *b_ = (b); \
	CHECK(a_ && b_ && !strcmp(a_, b_), "%s: got '%s', want '%s'", name, a_ ? a_ : "(null)", \
	      b_ ? b_ : "(null)"); } while (0)
/* |a - b| <= tol * max(1, |b|) */
#define CHECK_NEAR(a, b, tol, name) do { double a_ = (a), b_ = (b); \
	CHECK(fabs(a_ - b_) <= (tol) * fmax(1.0, fabs(b_)), "%s: got %.17g, want %.17g", name, a_, b_); \
	} while (0)

/* s shown on one line into buf (cut to fit): newlines as \n, other control and non-ASCII bytes as \xNN. */
static inline const char *test_shown(char *buf, size_t n, const char *s)
{
	size_t k = 0;

	if (!s)
		return "(null)";
	for (; *s && k + 5 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			k += (size_t)snprintf(buf + k, n - k, "\\n");
		else if (c >= 0x20 && c < 0x7f)
			buf[k++] = (char)c;
		else
			k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
	}
	buf[k] = '\0';
	return buf;
}

/* CHECK_STR for texts of several lines or with control bytes: on a difference both are printed whole,
 * escaped, as comments. */
#define CHECK_TEXT(got, want, name) do { const char *g_ = (got), *w_ = (want); char e_[8192]; \
	int same_ = g_ && w_ && !strcmp(g_, w_); \
	CHECK(same_, "%s", name); \
	if (!same_) { printf("# got:  %s\n", test_shown(e_, sizeof(e_), g_)); \
		printf("# want: %s\n", test_shown(e_, sizeof(e_), w_)); } } while (0)

/* What is printed on stderr (error(), warning()) between test_capture_start() and test_capture_end(),
 * which returns it (malloc'd, NUL-terminated; the caller frees it). Not nested. */
struct test_capture {
	FILE *file;
	int saved;
};

static inline struct test_capture *test_capture_state(void)
{
	static struct test_capture c = { NULL, -1 };

	return &c;
}

static inline void test_capture_start(void)
{
	struct test_capture *c = test_capture_state();

	fflush(stderr);
	c->file = tmpfile();
	c->saved = dup(2);
	dup2(fileno(c->file), 2);
}

static inline char *test_capture_end(void)
{
	struct test_capture *c = test_capture_state();
	long n;
	char *s;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	n = ftell(c->file);
	s = malloc((size_t)(n > 0 ? n : 0) + 1);
	rewind(c->file);
	s[n > 0 ? fread(s, 1, (size_t)n, c->file) : 0] = '\0';
	fclose(c->file);
	return s;
}

/* test_capture_end() into buf (cut to n - 1 bytes). */
static inline void capture_into(char *buf, size_t n)
{
	char *s = test_capture_end();

	snprintf(buf, n, "%s", s);
	free(s);
}

static inline int test_done(void)
{
	fflush(stdout);
	return test_failed_count ? 1 : 0;
}

#endif
