/* spec.h: a sweep spec read from YAML (through ydoc.h, the only user of libyaml). */
#ifndef SWEEP_SPEC_H
#define SWEEP_SPEC_H

#include <math.h>
#include <stdint.h>
#include "better.h"
#include "json.h"

enum spec_order { ORDER_SEQUENTIAL, ORDER_INTERLEAVE, ORDER_SHUFFLE };
enum spec_per { PER_ANY, PER_HOST, PER_GPU };
/* How a command's output holds its metrics: none; JSON lines (metrics: json, every number of each line);
 * regexes; or JSON documents whose records and values are selected by path. */
enum spec_metrics { METRICS_NONE, METRICS_JSON, METRICS_REGEX, METRICS_SELECT };
/* Where metrics are read: the command's stdout or stderr, or a file it wrote. */
enum spec_from { FROM_STDOUT, FROM_STDERR, FROM_FILE };
/* What several matches of a regex in one run mean: an error (one), the first, the last, an item each. */
enum spec_matches { MATCH_ONE, MATCH_FIRST, MATCH_LAST, MATCH_EACH };
enum spec_gang { GANG_HOST, GANG_ANY };

/* A scalar as written, with where it was written (1-based line and column). */
struct spec_scalar {
	char *text;
	int is_num;            /* a plain YAML scalar that parses as a number: stored as a JSON number */
	int line, col;
};

/*
 * One axis of the grid. A list under a key is an axis of one key; a list of mappings is a zipped group
 * whose keys vary together; a mapping {from, to, factor|step} is a range expanded at parse time.
 */
struct spec_axis {
	char **keys;
	int nkeys;
	struct spec_scalar *vals;   /* npoints * nkeys, point-major: point p, key k is vals[p * nkeys + k] */
	int npoints;                /* > 0: an empty axis is a spec error */
	int line, col;
};

/* A set of key = value conditions (an exclude entry). */
struct spec_match {
	char **keys;
	struct spec_scalar *vals;
	int n;
	int line, col;
};

/* How a kernel cell is timed and when its sampling stops (criterion.h has the rule). */
struct spec_timing {
	double precision;      /* relative half-width of the median's 95 % interval to stop at, default 0.005 */
	int min_samples;       /* default 10 */
	double min_time;       /* seconds of samples, default 0.02 */
	double max_noise;      /* NVBench's rule: relative stdev of the samples to stop at, or converged; 0
				* (the default): off */
	double timeout;        /* seconds for one cell's sampling, default 15 */
	double warmup;         /* seconds of warm-up launches after the first, default 0.05 */
	double max_warmup;     /* seconds warm-up may go on while the SM clock settles, default 1 */
	int l2_hot;            /* 0: flush the L2 before each sample (default); 1: leave it warm */
	double throttle;       /* a sample under this share of the max SM clock is dropped, default 0.75 */
	int batch;             /* launches per sample: 0 (default) sizes batches of short launches itself */
	int max_samples;       /* samples a cell takes at most, default 10000 */
};

/* The noise target result_summarize holds a kernel's samples to: max_noise, or INFINITY (nothing to miss)
 * when the spec did not ask for NVBench's rule. */
static inline double spec_noise_target(const struct spec_timing *t)
{
	return t->max_noise > 0 ? t->max_noise : INFINITY;
}

struct spec_source {
	enum spec_from from;   /* default stdout */
	char *path;            /* FROM_FILE: the file, with placeholders */
};

struct spec_regex {
	char *name;
	char *pattern;         /* PCRE2 regex with one capture group (two with match: each: item, value) */
	struct spec_source src;
	enum spec_matches match;
	int groups;
	char *unit;            /* the unit values are converted into (unit.h); NULL: plain numbers */
	int unit_base;         /* unit_base: 1024 (k, M, G, T as powers of 1024), else 0 */
	char *scale;           /* scale: the unit of a value printed without one; NULL: none */
	int better;            /* better: enum better, BETTER_UNKNOWN when not given */
};

/* duplicate_keys: which value of a key a JSON object gives twice is read (error: none, the document is
 * refused). */
enum { SPEC_DUP_ERROR = 0, SPEC_DUP_LAST, SPEC_DUP_FIRST };

/* combine: what several records of one item and metric in one run make (fio's jobs of one name, Google
 * Benchmark's repetitions): their mean (the default), sum, largest, smallest, or an error. */
enum spec_combine { COMBINE_MEAN = 0, COMBINE_SUM, COMBINE_MAX, COMBINE_MIN, COMBINE_ERROR };

/* A metric of METRICS_SELECT: the value at path in each record. */
struct spec_jmetric {
	char *name;
	char *path;
	char *unit;            /* as spec_regex's: the value is a string with its unit, or unit_path gives it */
	char *unit_path;       /* the record's value naming the unit ("time_unit": "ns"); NULL: none */
	int unit_base;         /* as spec_regex's */
	char *scale;
	int better;            /* as spec_regex's */
};

struct spec {
	char *path;
	char *text;            /* the file's bytes, sent to workers verbatim */
	uint64_t hash;         /* hash64 of text */
	char *name;            /* sweep: */
	char *db;              /* results/<name>.db unless db: is given */

	char *kernel;          /* kernel: (NULL for a command sweep) */
	char **command;        /* command: argv template with {placeholders}; NULL for a kernel sweep */
	int ncommand;
	int command_line, command_col;

	struct spec_axis *axes;
	int naxes;
	struct spec_match *exclude;
	int nexclude;

	int repeat;            /* passes, default 1 */
	enum spec_order order; /* default sequential */
	uint64_t seed;         /* default 1 */
	struct spec_timing timing;

	enum spec_metrics metrics;
	struct spec_regex *regex;
	int nregex;
	struct spec_source json_src;   /* METRICS_SELECT: where the documents are */
	char *json_records;    /* METRICS_SELECT: the path of the records in each document ("." itself) */
	char *json_item;       /* METRICS_SELECT: the path of a record's item name; NULL: one record */
	int json_dups;         /* METRICS_SELECT: duplicate_keys: SPEC_DUP_ERROR (default), _LAST or _FIRST */
	struct spec_jmetric *jmetrics;
	int njmetrics;
	enum spec_combine combine;   /* the metrics block's combine: */
	int combine_said;      /* 1 when combine: was given (the default's averaging is noted in the result) */
	int runs;              /* command runs kept per cell (or item): 0, the default, is one run and no
				* stopping rule; N: exactly N when runs_exact (runs: N), else at least N, then
				* timing's rule with min_samples N (min_runs: N) */
	int runs_exact;
	int warmup_runs;       /* warmup: runs before, not kept */
	char **prepare, **cleanup;   /* prepare:, cleanup: argv templates run around every run; NULL: none */
	int nprepare, ncleanup;
	double timeout;        /* command cells: seconds before the process group is killed; default 600 */
	char **env_keys, **env_vals;   /* env: values may hold placeholders */
	int nenv;
	char **items;          /* items: a list, or n meaning 0..n-1; command runs once per item if it uses {item} */
	int nitems;
	char **inputs;         /* inputs: files the measurement reads, part of the sweep's identity (identity.h);
				* relative to the spec's folder; NULL: none */
	int ninputs;
	char *workdir;         /* workdir: the folder commands run in, relative to the spec's folder; NULL: the
				* spec's own folder (spec_folder) */

	enum spec_per per;     /* default any */
	char **hosts;          /* hosts: run only on these hostnames (NULL: all) */
	int nhosts;
	enum spec_gang gang;   /* default host */
	int max_attempts;      /* default 3 */

	struct json_obj control;   /* control: parameters of the control cell (n == 0: none) */
	int control_every;         /* control: every: N cells per worker, default 20 */

	/* clocks: the SM and memory clocks each worker locks its GPU at before its first cell (clocks.h; only
	 * with sweep run --lock-clocks): MHz, SPEC_CLOCK_BASE for sm: base, 0 where not asked. */
	int clock_sm, clock_mem;
	/* counters: hardware counters (Nsight Compute's metric names) read once a cell, untimed (counters.h);
	 * NULL: none. */
	char **counters;
	int ncounters;
};
#define SPEC_CLOCK_BASE (-1)
/* Whether the spec asks for locked clocks (clocks:). */
static inline int spec_clocks_asked(const struct spec *s)
{
	return s->clock_sm != 0 || s->clock_mem != 0;
}

/*
 * Read and validate a spec. On any problem prints one line "path:line:col: message" per problem
 * (suggesting the closest valid name where there is one) and returns -1; the caller exits 2.
 * Validation covers the kernel (registered), its parameters (declared, typed, required ones given),
 * placeholders (name a parameter or item/gpu/host/cell), exclude keys and zipped-group keys.
 * On success *out is filled; spec_release frees it.
 */
int spec_load(const char *path, struct spec *out);
/* The same from text already in memory; path is used in messages and for the spec's folder (a relative
 * db: means a file beside the spec). */
int spec_parse(const char *path, const char *text, size_t len, struct spec *out);
void spec_release(struct spec *s);
/* As far as text reads, problems dropped unsaid: for what a report wants of a stored spec (its axes'
 * order) where the spec may name a kernel this build lacks. spec_release frees *out. */
void spec_read_leniently(const char *text, size_t len, struct spec *out);

/* rel as a path beside the spec at spec_path (its folder joined, unless rel is absolute or spec_path has no
 * folder): a new string. */
char *spec_beside(const char *spec_path, const char *rel);
/* The folder a command sweep's commands run in, and against which the paths they use resolve: workdir:
 * against the spec's folder, or the spec's folder itself, made absolute (realpath). Caller frees; NULL
 * after error() when it does not exist here. */
char *spec_folder(const struct spec *s);

/* Which way the command metric name improves: its better:, else its declared unit (a time lower, a rate
 * per second higher); 0 when neither says (or no such metric is declared). */
int spec_metric_better(const struct spec *s, const char *name);

/* The grammar of a {placeholder}, one place for the spec that checks it and command.c that fills it in:
 * t at a '{', the length of the name of the placeholder there ({NAME}, NAME of letters, digits, '_', '.'
 * and '-'); 0 when the braces hold anything else, which is text (JSON in an argument, say). A name longer
 * than SPEC_PLACEHOLDER_MAX is refused in a spec (and kept as written by command_expand). */
#define SPEC_PLACEHOLDER_MAX 127
size_t spec_placeholder_len(const char *t);

/* What a command sweep's metrics read and how, as text: two specs whose texts differ measure differently. */
void spec_metrics_text(const struct spec *s, struct strbuf *sb);

#endif
