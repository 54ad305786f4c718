/* unit.h: numbers with units as tools print them ("158 ns", "11.9 us", "IOPS=16.1k", "62.9MiB/s"), converted
 * into the unit a metric declares. Pure: no allocation, nothing printed. */
#ifndef SWEEP_UNIT_H
#define SWEEP_UNIT_H

#include <stddef.h>

/*
 * A unit is a base with an optional prefix: n, u (or µ), m, k or K, M, G, T (powers of 1000, or of 1024 where
 * a metric says unit_base: 1024) or Ki, Mi, Gi, Ti (powers of 1024). Time units are the base s: ns, us, µs,
 * ms, s, also spelt nsec, usec, msec, sec and secs (GNU time, timeit, pyperf, perf stat), and "/sec" is
 * "/s" (K/sec). The declared unit "1" is a count: a value with no unit or with a prefix alone (16.1k). A
 * value converts into a declared unit when both have the same base; a value without a unit converts only
 * into a count, unless a scale gives it one.
 */

/* How a metric reads its values: base 1024 makes k, K, M, G and T powers of 1024 (0 or 1000: of 1000);
 * scale is the unit of a value printed without one (openssl speed -mr's bytes per second), NULL: none. */
struct unit_how {
	int base;
	const char *scale;
};

/* Whether unit may be declared (not empty, no blank or control character, at most 32 bytes). 0, or -1 with
 * a reason in err. */
int unit_check(const char *unit, char *err, size_t errlen);
/* v given in unit from (as printed: "ns", "KiB/s", "k", or "" for none) into unit to: *out. 0, or -1 with
 * the reason in err ("'ms' is not a unit of 'B/s'", "no unit: 's' was declared"). */
int unit_convert(double v, const char *from, const char *to, double *out, char *err, size_t errlen);
/* text: a number in JSON's syntax, blanks, then its unit (nothing, or a prefix alone for a count), into
 * unit to (NULL: none declared, and text must be the number alone). 0, or -1 with the reason in err. */
int unit_parse(const char *text, const char *to, double *out, char *err, size_t errlen);
/* unit_convert and unit_parse read as how says (NULL: the defaults). */
int unit_convert_how(double v, const char *from, const char *to, const struct unit_how *how, double *out,
		     char *err, size_t errlen);
int unit_parse_how(const char *text, const char *to, const struct unit_how *how, double *out, char *err,
		   size_t errlen);

#endif
