/* spec_int.h: the parse in progress, shared by spec.c and spec_*.c (private to them: spec.h is the API). */
#ifndef SWEEP_SPEC_INT_H
#define SWEEP_SPEC_INT_H

#include <stddef.h>
#include <string.h>

#include "spec.h"
#include "util.h"
#include "ydoc.h"

/*
 * Who calls whom: spec.c (the top-level keys) calls spec_params.c, spec_command.c and spec_metrics.c, and
 * all of them call spec_node.c (problems, values read at a node), which calls none of them;
 * spec_metrics.c calls spec_command_placeholders too.
 */

/* Values stored in all (axes, excludes, items). A range like {from: 0, to: 8G, step: 1} is a typo to
 * report, not gigabytes to allocate. */
#define SPEC_MAX_VALUES 100000
/* A quoted name or value in a message is cut to this many bytes, control bytes shown as '?'. */
#define SHOW_MAX 64
#define SHOW_BUF (SHOW_MAX + 4)
#define HINT_BUF (SHOW_BUF + 32)

struct kernel_ops;
struct spec_problem;

/*
 * The parse in progress, on spec_parse's stack. names, phnames, sorted and knames are arrays of pointers
 * into p->s or into static tables: spec_parse frees the arrays only. spec_node_flush frees the problems.
 */
struct sp {
	const char *path;
	struct spec *s;
	struct spec_problem *probs; /* the first problems (spec_node.c keeps them) */
	size_t nprobs, probs_alloc;
	int nproblems;              /* all problems, kept or not */
	const struct kernel_ops *kernel;   /* the sweep's kernel once found, else NULL */
	size_t nvalues;             /* scalars stored so far */
	int values_reported;
	size_t axes_alloc, exclude_alloc, env_alloc, regex_alloc, jmetric_alloc;
	const char **names;         /* every parameter (axis key), NULL-terminated, for suggestions */
	const char **phnames;       /* the same plus item, gpu, host, cell: what a placeholder may name */
	const char **sorted;        /* the parameters sorted, for spec_params_has */
	size_t nsorted;
	const char **knames;        /* the kernel's declared parameters, NULL-terminated */
};

/* s made fit for a one-line message: control bytes as '?', cut after SHOW_MAX bytes. */
static inline const char *spec_shown(char buf[SHOW_BUF], const char *s)
{
	return printable(buf, s, SHOW_MAX);
}

/* qsort and bsearch order of an array of strings. */
static inline int spec_cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* spec_node.c: problems. A problem is kept with where it is (node n, or line and col) and printed later,
 * in file order, by spec_node_flush; past the first hundred only their count is kept. */
__attribute__((format(printf, 3, 4)))
void spec_node_problem(struct sp *p, const struct ynode *n, const char *fmt, ...);
__attribute__((format(printf, 4, 5)))
void spec_node_problem_at(struct sp *p, int line, int col, const char *fmt, ...);
/* Print the problems in file order and free them; -1 when there was any. */
/* quiet: the problems are dropped unsaid (spec_read_leniently); the return value is the same. */
int spec_node_flush(struct sp *p, int quiet);
/* " (did you mean 'x'?)" when a candidate (NULL-terminated; cands may be NULL) is close to s, else "". */
const char *spec_node_hint(struct sp *p, char buf[HINT_BUF], const char *s, const char *const *cands);
/* What n is, for messages: "a scalar", "a list", "a mapping". */
const char *spec_node_kind(const struct ynode *n);

/*
 * spec_node.c: values read at a node. Each reports its own problem (what names the value in it) and
 * returns NULL or -1 after it; on success the out argument is set, else left as it was.
 */
/* The text of scalar node n. */
const char *spec_node_scalar(struct sp *p, const struct ynode *n, const char *what);
/* The text of a mapping key. */
const char *spec_node_key(struct sp *p, const struct ynode *k);
/* A plain (unquoted) scalar that reads as a finite number: a JSON number, not a string (*v, if v). */
int spec_node_is_num(const struct ynode *n, double *v);
/* A plain empty, ~ or null: YAML's null, which as a parameter value means nothing was written. */
int spec_node_is_null(const struct ynode *n);
/*
 * Match the keys of mapping n against names (NULL-terminated): vals[i] and keys[i] become the value and
 * key nodes of names[i] (left NULL when absent). Unknown and repeated keys are problems. where names the
 * mapping in messages ("'timing'"; NULL at the top level). -1 when n is not a mapping.
 */
int spec_node_fields(struct sp *p, const struct ynode *n, const char *where, const char *const *names,
		     const struct ynode **vals, const struct ynode **keys);
/* Count n more stored values; -1 (after one problem for the whole spec) past SPEC_MAX_VALUES. */
int spec_node_reserve(struct sp *p, const struct ynode *at, size_t n);
/* An integer in [min, max]. */
int spec_node_long(struct sp *p, const struct ynode *n, const char *what, long min, long max, long *out);
/* An integer >= min. */
int spec_node_int(struct sp *p, const struct ynode *n, const char *what, int min, int *out);
/* A finite number >= min (> min when above), <= max. */
int spec_node_double(struct sp *p, const struct ynode *n, const char *what, double min, int above,
		     double max, double *out);
/* The index of n's text in names (NULL-terminated), or -1 after a problem. */
int spec_node_enum(struct sp *p, const struct ynode *n, const char *what, const char *const *names);
/* A newly allocated copy of every scalar of list n, or NULL after problems; *count gets the length. */
char **spec_node_strings(struct sp *p, const struct ynode *n, const char *what, int *count);

/* spec_gpu.c: what a sweep asks of the GPU's conditions: clocks: {sm: MHz or base, memory: MHz}. */
void spec_gpu_clocks(struct sp *p, const struct ynode *n);
/* counters: a list of Nsight Compute metric names (letters, digits, '_' and '.'). */
void spec_gpu_counters(struct sp *p, const struct ynode *n);

/* spec_params.c: the grid (params: axes, ranges, zipped groups) and what names its parameters. */
/* Each key of mapping n (params:) becomes an axis; a wrong one is kept without points, for its name. */
void spec_params_parse(struct sp *p, const struct ynode *n);
/* Each parameter in one axis only (a key in two would make the grid ambiguous); then p->names, p->phnames
 * and p->sorted. Called once, after spec_params_parse (even without params:), before the functions below
 * and spec_command_placeholders. */
void spec_params_check(struct sp *p);
/* Whether name is a parameter (an axis key). */
int spec_params_has(struct sp *p, const char *name);
/* exclude: a list of mappings of parameter = value. */
void spec_params_exclude(struct sp *p, const struct ynode *n);
/* control: {params, every}: the control cell, a full set of parameters. */
void spec_params_control(struct sp *p, const struct ynode *n);
/* A kernel's declared parameters that the spec leaves to their defaults become axes of one point, after
 * the spec's own: a cell's params then name every parameter its kernel uses, so a changed default is a
 * changed cell (another key) and reports can pick a defaulted parameter as a row. Call last. */
void spec_params_defaults(struct sp *p);

/* spec_command.c: what only command sweeps have. spec_command_placeholders and spec_command_env read
 * p->phnames: call them after spec_params_check. */
/* Every {name} in t names a parameter or item/gpu/host/cell; *uses_item is set when {item} is used. */
void spec_command_placeholders(struct sp *p, const char *t, const struct ynode *n, int *uses_item);
/* command: the argv template (its placeholders are checked by the caller, once parameters are known). */
void spec_command_parse(struct sp *p, const struct ynode *n);
/* prepare: or cleanup: (what): an argv template run around every run, its placeholders checked. */
char **spec_command_argv(struct sp *p, const struct ynode *n, const char *what, int *count, int *uses_item);
/* env: a mapping of variable names to values that may hold placeholders. */
void spec_command_env(struct sp *p, const struct ynode *n, int *uses_item);
/* spec_metrics.c: metrics: json (JSON lines), a mapping of name: regex (or {regex, from, match, unit}), or a
 * mapping {from, json: RECORDS, item: PATH, name: PATH or {path, unit, unit_path}}. Placeholders in from and
 * in paths are checked (call after spec_params_check); *uses_item is set when a from path uses {item}. */
void spec_metrics_parse(struct sp *p, const struct ynode *n, int *uses_item);
/* items: a list of distinct names, or a count n meaning 0..n-1. */
void spec_command_items(struct sp *p, const struct ynode *n);

#endif
