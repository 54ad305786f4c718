/* test.h: a tiny unit-test helper. Each CHECK prints "ok - ..." or "not ok - ..." (file:line and the
 * values); tests/run.sh counts those lines. main() ends with `return test_done();`. */
#ifndef SWEEP_TEST_H
#define SWEEP_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static inline int test_done(void)
{
	fflush(stdout);
	return test_failed_count ? 1 : 0;
}

#endif
