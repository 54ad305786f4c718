/* rx.h: the regexes of command cells' metrics, run with bounded time (PCRE2, which only rx.c includes): a
 * match that backtracks past its limits stops with an error, never runs for minutes. */
#ifndef SWEEP_RX_H
#define SWEEP_RX_H

#include <stddef.h>

struct rx;

/* pat compiled (PCRE2 syntax, bytes, no flags), its capture groups in *groups; or NULL with a one-line
 * reason in err ("missing closing parenthesis at offset 3"). rx_free frees it. */
struct rx *rx_compile(const char *pat, int *groups, char *err, size_t errlen);
/*
 * The first match of re in s[0, len) that starts at or after start (^ matches at 0 only): 1 with ov[2k]
 * and ov[2k + 1] the offsets of group k (group 0 the match; -1, -1 for a group that took no part), for k
 * up to nov / 2 - 1; 0 when there is none; -1 when the match stopped at its limits (the backtracking the
 * pattern needs on this text), with the reason in err.
 */
int rx_match(const struct rx *re, const char *s, size_t len, size_t start, long *ov, int nov, char *err,
	     size_t errlen);
void rx_free(struct rx *re);

#endif
