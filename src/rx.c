/* rx.c: metric regexes run by PCRE2 under match limits (rx.h). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include "util.h"
#include "rx.h"

/*
 * The limits one match runs under: steps of the matcher (PCRE2's "match limit", 10 million by default,
 * about a tenth of a second) and the memory its backtracking may hold. A pattern that needs more on a line
 * (nested repeats such as (a+a+)+b on text that almost matches) stops at them in well under a second, where
 * a backtracking matcher without limits runs for hours.
 */
#define RX_MATCH_LIMIT 10000000
#define RX_HEAP_LIMIT_KIB (64 * 1024)

struct rx {
	pcre2_code *code;
	pcre2_match_context *mctx;
	pcre2_match_data *md;
};

struct rx *rx_compile(const char *pat, int *groups, char *err, size_t errlen)
{
	struct rx *re;
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE off;
	uint32_t n;
	int code;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);

	if (!c) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		snprintf(err, errlen, "%s at offset %zu", (const char *)msg, (size_t)off);
		return NULL;
	}
	pcre2_pattern_info(c, PCRE2_INFO_CAPTURECOUNT, &n);
	*groups = (int)n;
	re = xcalloc(1, sizeof(*re));
	re->code = c;
	re->mctx = pcre2_match_context_create(NULL);
	re->md = pcre2_match_data_create_from_pattern(c, NULL);
	if (!re->mctx || !re->md)
		die("out of memory");
	pcre2_set_match_limit(re->mctx, RX_MATCH_LIMIT);
	pcre2_set_heap_limit(re->mctx, RX_HEAP_LIMIT_KIB);
	return re;
}

int rx_match(const struct rx *re, const char *s, size_t len, size_t start, long *ov, int nov, char *err,
	     size_t errlen)
{
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE *v;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, start, 0, re->md, re->mctx);
	uint32_t have;

	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc < 0) {
		pcre2_get_error_message(rc, msg, sizeof(msg));
		snprintf(err, errlen, "%s", (const char *)msg);
		return -1;
	}
	v = pcre2_get_ovector_pointer(re->md);
	have = pcre2_get_ovector_count(re->md);
	for (int k = 0; k < nov / 2; k++) {
		int set = (uint32_t)k < have && (uint32_t)k < (uint32_t)rc && v[2 * k] != PCRE2_UNSET;

		ov[2 * k] = set ? (long)v[2 * k] : -1;
		ov[2 * k + 1] = set ? (long)v[2 * k + 1] : -1;
	}
	return 1;
}

void rx_free(struct rx *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re);
}
