/* store_functions.c: the SQL functions median, quantile, geomean, stdev, ratio_ci, median_ci, ci_rel,
 * sweep_key, sweep_param_defaults, sweep_values and sweep_stat; and the guard on SQL a person types: the
 * functions it may call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "store_int.h"
#include "../kernels/kernel.h"
#include "json.h"
#include "plan.h"
#include "stats.h"
#include "util.h"

/* The rows an aggregate has seen: x (and y for paired functions), NULLs left out. */
struct store_agg {
	double *x, *y;
	size_t n, alloc_x, alloc_y;
	int have_args;         /* the constant arguments below were read from the first row */
	double q, ci;
	int boot;
	uint64_t seed;
	const struct stats_def *def;   /* sweep_stat's statistic; NULL: the quantile at q */
};

static void agg_push(struct store_agg *a, double x, double y, int paired)
{
	ALLOC_GROW(a->x, a->n + 1, a->alloc_x);
	a->x[a->n] = x;
	if (paired) {
		ALLOC_GROW(a->y, a->n + 1, a->alloc_y);
		a->y[a->n] = y;
	}
	a->n++;
}

/* The aggregate's state, or NULL (and a NOMEM error) when SQLite cannot allocate it. */
static struct store_agg *agg_get(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, sizeof(*a));

	if (!a)
		sqlite3_result_error_nomem(ctx);
	return a;
}

static void agg_step_x(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || !(a = agg_get(ctx)))
		return;
	agg_push(a, sqlite3_value_double(argv[0]), 0, 0);
}

static void agg_step_quantile(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || !(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		a->q = sqlite3_value_double(argv[1]);
		if (sqlite3_value_type(argv[1]) == SQLITE_NULL || !(a->q >= 0 && a->q <= 1)) {
			sqlite3_result_error(ctx, "quantile(x, q): q must be a number in [0, 1]", -1);
			return;
		}
		a->have_args = 1;
	}
	agg_push(a, sqlite3_value_double(argv[0]), 0, 0);
}

/* median_ci(x [, level]): level 0.95 unless given, read from the first row. */
static void agg_step_median_ci(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || !(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		a->ci = argc > 1 ? sqlite3_value_double(argv[1]) : STATS_CI;
		if (!(a->ci > 0 && a->ci < 1)) {
			sqlite3_result_error(ctx, "median_ci(x, level): level must be in (0, 1)", -1);
			return;
		}
		a->have_args = 1;
	}
	agg_push(a, sqlite3_value_double(argv[0]), 0, 0);
}

static void agg_step_ratio(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL ||
	    !(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		sqlite3_int64 boot = argc > 3 ? sqlite3_value_int64(argv[3]) : 10000;
		sqlite3_int64 seed = argc > 4 ? sqlite3_value_int64(argv[4]) : 1;

		a->ci = argc > 2 ? sqlite3_value_double(argv[2]) : 0.95;
		if (!(a->ci > 0 && a->ci < 1)) {
			sqlite3_result_error(ctx, "ratio_ci: ci must be in (0, 1)", -1);
			return;
		}
		if (boot < 1 || boot > 100000000) {
			sqlite3_result_error(ctx, "ratio_ci: boot must be in [1, 100000000]", -1);
			return;
		}
		a->boot = (int)boot;
		a->seed = (uint64_t)seed;
		a->have_args = 1;
	}
	agg_push(a, sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1]), 1);
}

static void agg_free(struct store_agg *a)
{
	free(a->x);
	free(a->y);
	a->x = a->y = NULL;
	a->n = 0;
}

/* NaN (no answer: too few rows, a non-positive value for geomean) is SQL NULL. */
static void result_num(sqlite3_context *ctx, double v)
{
	if (isnan(v))
		sqlite3_result_null(ctx);
	else
		sqlite3_result_double(ctx, v);
}

/* A statistic of stats_defs (the function's user data) over the values. */
static void agg_final_stat(sqlite3_context *ctx)
{
	const struct stats_def *def = sqlite3_user_data(ctx);
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? def->of(a->x, a->n) : NAN);
	if (a)
		agg_free(a);
}

static void agg_final_quantile(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	result_num(ctx, a && a->n ? stats_quantile(a->x, a->n, a->q) : NAN);
	if (a)
		agg_free(a);
}

/*
 * sweep_values(x): the values that are not NULL, in the order they came, as a blob of doubles (NULL for
 * none): a slice's share of a statistic (store_query_split). sweep_pairs(x, y): every row's x and y, NaN
 * for NULL, one after the other, as such a blob. sweep_stat(name, q, blob) over sweep_values' blobs: the
 * statistic name of stats_defs (mean: the running sum over the count, as SQLite's avg), or quantile at q,
 * of all their values in order: what name(x) gives over the rows of every slice. sweep_stat(name, q, blob,
 * k) over sweep_pairs' blobs: of x (k 0), of y (1), of x where y is not NULL (2), of y where x is not (3).
 */
static void agg_final_values(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);

	if (a && a->n)
		sqlite3_result_blob(ctx, a->x, (int)(a->n * sizeof(double)), SQLITE_TRANSIENT);
	else
		sqlite3_result_null(ctx);
	if (a)
		agg_free(a);
}

static void agg_step_pairs(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store_agg *a;

	(void)argc;
	if (!(a = agg_get(ctx)))
		return;
	for (int i = 0; i < 2; i++)
		agg_push(a, sqlite3_value_type(argv[i]) == SQLITE_NULL ? NAN : sqlite3_value_double(argv[i]), 0, 0);
}

static void agg_step_stat(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *b = sqlite3_value_blob(argv[2]);
	size_t n = (size_t)sqlite3_value_bytes(argv[2]) / sizeof(double);
	int k = argc == 4 ? sqlite3_value_int(argv[3]) : -1;
	struct store_agg *a;
	double x[2];

	if (!(a = agg_get(ctx)))
		return;
	if (!a->have_args) {
		const char *name = (const char *)sqlite3_value_text(argv[0]);

		a->def = stats_def_find(name);
		a->q = sqlite3_value_double(argv[1]);
		if (!a->def && !(name && !strcmp(name, "quantile") && a->q >= 0 && a->q <= 1)) {
			sqlite3_result_error(ctx, "sweep_stat(name, q, values): no such statistic", -1);
			return;
		}
		a->have_args = 1;
	}
	/* values one by one; pairs two by two, the k-th selection of each */
	for (size_t i = 0; b && i + (k >= 0) < n; i += 1 + (k >= 0)) {
		memcpy(x, b + i * sizeof(double), (k >= 0 ? 2 : 1) * sizeof(double));
		if (k < 0)
			agg_push(a, x[0], 0, 0);
		else if (!isnan(x[k % 2]) && (k < 2 || !isnan(x[1 - k % 2])))
			agg_push(a, x[k % 2], 0, 0);
	}
}

static void agg_final_stat_of(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);
	const struct stats_def *def = a ? a->def : NULL;
	double v = NAN, sum = 0;

	if (a && a->n && !def) {
		v = stats_quantile(a->x, a->n, a->q);
	} else if (a && a->n && def->of) {
		v = def->of(a->x, a->n);
	} else if (a && a->n) {
		/* SQLite's own: min, max, and mean as its avg (a running sum over the count) */
		v = a->x[0];
		for (size_t i = 0; i < a->n; i++) {
			sum += a->x[i];
			if (!strcmp(def->name, "min") ? a->x[i] < v : a->x[i] > v)
				v = a->x[i];
		}
		if (!strcmp(def->name, "mean"))
			v = sum / (double)a->n;
	}
	result_num(ctx, v);
	if (a)
		agg_free(a);
}

/* The JSON array [v0,v1,...] of n numbers as the function's text result. */
static void result_json_array(sqlite3_context *ctx, const double *v, int n)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addc(&sb, '[');
	for (int i = 0; i < n; i++) {
		if (i)
			sb_addc(&sb, ',');
		json_add_num(&sb, v[i]);
	}
	sb_addc(&sb, ']');
	sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
	sb_release(&sb);
}

static void agg_final_ratio(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);
	double v[3];

	if (!a || !a->n || stats_ratio_ci(a->x, a->y, a->n, a->ci, a->boot, a->seed, &v[0], &v[1], &v[2]))
		sqlite3_result_null(ctx);
	else
		result_json_array(ctx, v, 3);
	if (a)
		agg_free(a);
}

/* median_ci: the JSON [lo, hi] of the median's interval (stats_median_ci), NULL when there is none. */
static void agg_final_median_ci(sqlite3_context *ctx)
{
	struct store_agg *a = sqlite3_aggregate_context(ctx, 0);
	double m, v[2] = { NAN, NAN };

	if (a && a->n)
		stats_median_ci(a->x, a->n, a->ci, &m, &v[0], &v[1]);
	if (isnan(v[0]))
		sqlite3_result_null(ctx);
	else
		result_json_array(ctx, v, 2);
	if (a)
		agg_free(a);
}

/* ci_rel(lo, hi, median): an interval's relative half-width (stats_ci_rel), NULL when undefined. */
static void fn_ci_rel(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	for (int i = 0; i < 3; i++) {
		if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
			sqlite3_result_null(ctx);
			return;
		}
	}
	result_num(ctx, stats_ci_rel(sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1]),
				     sqlite3_value_double(argv[2])));
}

/* sweep_key(sweep, params, pass, replica): plan_key in SQL, for store_replicate. */
static void fn_sweep_key(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *sweep = (const char *)sqlite3_value_text(argv[0]);
	const char *params = (const char *)sqlite3_value_text(argv[1]);
	const char *replica = (const char *)sqlite3_value_text(argv[3]);
	struct json_obj o = JSON_OBJ_INIT;
	char key[17], err[128];

	(void)argc;
	if (!sweep || !params) {
		sqlite3_result_null(ctx);
		return;
	}
	/* plan_key treats bad params as a programmer error; from SQL they are the user's. */
	if (json_parse_flat(params, &o, 0, err, sizeof(err))) {
		sqlite3_result_error(ctx, "sweep_key: params are not a flat JSON object", -1);
		return;
	}
	json_obj_release(&o);
	plan_key(sweep, params, sqlite3_value_int(argv[2]), replica ? replica : "", key);
	sqlite3_result_text(ctx, key, 16, SQLITE_TRANSIENT);
}

/*
 * sweep_param_defaults(kernel, params): params with every declared parameter of kernel that has a default
 * and is not in params appended, valued as the spec parser values a default (spec_params_defaults: a
 * string as a string, a number or byte size as its number). params unchanged when kernel is NULL or not
 * known. For the schema migration that brings old cells to what planning makes now.
 */
static void fn_param_defaults(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *kernel = (const char *)sqlite3_value_text(argv[0]);
	const char *params = (const char *)sqlite3_value_text(argv[1]);
	const struct kernel_ops *k = kernel ? kernel_find(kernel) : NULL;
	struct json_obj o = JSON_OBJ_INIT;
	struct strbuf sb = STRBUF_INIT;
	char err[128];
	size_t len, n;

	(void)argc;
	if (!params || !k || json_parse_flat(params, &o, 0, err, sizeof(err))) {
		sqlite3_result_value(ctx, argv[1]);
		return;
	}
	len = strlen(params);
	while (len && params[len - 1] != '}')
		len--;
	sb_add(&sb, params, len ? len - 1 : 0);
	n = o.n;
	for (const struct param_def *d = k->params; d && d->name; d++) {
		double v;

		if (!d->def || json_obj_find(&o, d->name))
			continue;
		if (n++)
			sb_addc(&sb, ',');
		json_add_str(&sb, d->name);
		sb_addc(&sb, ':');
		if (d->type == PARAM_STR)
			json_add_str(&sb, d->def);
		else if (!(d->type == PARAM_BYTES ? parse_bytes(d->def, &v) : parse_double(d->def, &v)))
			json_add_num(&sb, v);
		else
			json_add_str(&sb, d->def);
	}
	sb_addc(&sb, '}');
	json_obj_release(&o);
	sqlite3_result_text(ctx, sb.buf, (int)sb.len, SQLITE_TRANSIENT);
	sb_release(&sb);
}

int store_functions_register(sqlite3 *db)
{
	static const struct {
		const char *name;
		int nargs;
		void (*step)(sqlite3_context *, int, sqlite3_value **);
		void (*final)(sqlite3_context *);
	} aggs[] = {
		{ "quantile", 2, agg_step_quantile, agg_final_quantile },
		{ "ratio_ci", 2, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 3, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 4, agg_step_ratio, agg_final_ratio },
		{ "ratio_ci", 5, agg_step_ratio, agg_final_ratio },
		{ "median_ci", 1, agg_step_median_ci, agg_final_median_ci },
		{ "median_ci", 2, agg_step_median_ci, agg_final_median_ci },
		{ "sweep_values", 1, agg_step_x, agg_final_values },
		{ "sweep_pairs", 2, agg_step_pairs, agg_final_values },
		{ "sweep_stat", 3, agg_step_stat, agg_final_stat_of },
		{ "sweep_stat", 4, agg_step_stat, agg_final_stat_of },
	};
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

	for (size_t i = 0; i < ARRAY_SIZE(aggs); i++)
		if (sqlite3_create_function_v2(db, aggs[i].name, aggs[i].nargs, flags, NULL, NULL,
					       aggs[i].step, aggs[i].final, NULL))
			return error("sql error: %s", sqlite3_errmsg(db));
	/* the statistics computed here (stats_defs: median, geomean, stdev, cv, ...) */
	for (size_t i = 0; i < stats_ndefs; i++)
		if (stats_defs[i].of &&
		    sqlite3_create_function_v2(db, stats_defs[i].sql, 1, flags, (void *)&stats_defs[i], NULL,
					       agg_step_x, agg_final_stat, NULL))
			return error("sql error: %s", sqlite3_errmsg(db));
	if (sqlite3_create_function_v2(db, "sweep_key", 4, flags, NULL, fn_sweep_key, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "ci_rel", 3, flags, NULL, fn_ci_rel, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "sweep_param_defaults", 2, flags, NULL, fn_param_defaults, NULL, NULL,
				       NULL))
		return error("sql error: %s", sqlite3_errmsg(db));
	return 0;
}

/* ---- a collation that orders text as a spec lists it (store_order_text) ---- */

/* A listed value and its place; the list is kept sorted by bytes, so that a comparison (the hot path of a
 * sort) finds each side's place by binary search, not by reading the list. */
struct text_place {
	char *v;
	size_t len, place;
};

struct text_order {
	struct text_place *p;
	size_t n;
};

static int bytes_cmp(const void *a, size_t na, const void *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : na < nb ? -1 : na > nb;
}

static int place_cmp(const void *a, const void *b)
{
	const struct text_place *x = a, *y = b;

	return bytes_cmp(x->v, x->len, y->v, y->len);
}

/* The place of s (len bytes) among the listed values; n (after them all) when it is not listed. */
static size_t text_rank(const struct text_order *o, int len, const void *s)
{
	size_t lo = 0, hi = o->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = bytes_cmp(s, (size_t)len, o->p[mid].v, o->p[mid].len);

		if (!c)
			return o->p[mid].place;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return o->n;
}

/* Listed values by their place, before any other; others by bytes (SQLite's BINARY), so that only equal
 * text compares equal and GROUP BY groups exactly as without the collation. */
static int text_order_cmp(void *arg, int na, const void *a, int nb, const void *b)
{
	size_t ra = text_rank(arg, na, a), rb = text_rank(arg, nb, b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return bytes_cmp(a, (size_t)na, b, (size_t)nb);
}

static void text_order_free(void *arg)
{
	struct text_order *o = arg;

	for (size_t i = 0; i < o->n; i++)
		free(o->p[i].v);
	free(o->p);
	free(o);
}

int store_order_text(struct store *st, const char *name, const char *const *values, size_t n)
{
	struct text_order *o = xcalloc(1, sizeof(*o));

	o->p = xcalloc(n + 1, sizeof(*o->p));
	for (; o->n < n; o->n++)
		o->p[o->n] = (struct text_place){ xstrdup(values[o->n]), strlen(values[o->n]), o->n };
	qsort(o->p, o->n, sizeof(*o->p), place_cmp);
	/* On failure SQLite calls text_order_free itself. */
	if (sqlite3_create_collation_v2(st->db, name, SQLITE_UTF8, o, text_order_cmp, text_order_free))
		return error("sql error: %s", sqlite3_errmsg(st->db));
	st->orders = xrealloc(st->orders, (st->norders + 1) * sizeof(*st->orders));
	st->orders[st->norders].name = xstrdup(name);
	st->orders[st->norders].v = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		st->orders[st->norders].v[i] = xstrdup(values[i]);
	st->orders[st->norders++].n = n;
	return 0;
}

/* ---- the guard of typed SQL (sweep sql) ---- */

/*
 * The functions typed SQL may call: an allow list, not a deny list. What SQLite offers depends on its
 * version and compile options (this build's fts3_tokenizer hands out a pointer, load_extension runs a
 * library; others add readfile, writefile, sqlite_dbpage...), and a deny list is only as good as our
 * knowledge of every build, while a function missing here is refused by name. Each one listed computes a
 * value from its arguments or the connection's counters, and touches no memory by address and no file.
 */
static const char *const guard_functions[] = {
	"abs", "changes", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif",
	"instr", "last_insert_rowid", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min",
	"nullif", "octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign",
	"soundex", "sqlite_compileoption_get", "sqlite_compileoption_used", "sqlite_source_id", "sqlite_version",
	"substr", "substring", "total_changes", "trim", "typeof", "unhex", "unicode", "unlikely", "upper",
	"zeroblob",
	/* aggregates and windows */
	"avg", "count", "group_concat", "string_agg", "sum", "total", "cume_dist", "dense_rank", "first_value",
	"lag", "last_value", "lead", "nth_value", "ntile", "percent_rank", "rank", "row_number",
	/* dates and times */
	"current_date", "current_time", "current_timestamp", "date", "datetime", "julianday", "strftime", "time",
	"timediff", "unixepoch",
	/* mathematics */
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees",
	"exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh",
	"sqrt", "tan", "tanh", "trunc",
	/* JSON (json_each and json_tree are tables, read as such) */
	"->", "->>", "json", "json_array", "json_array_length", "json_error_position", "json_extract",
	"json_group_array", "json_group_object", "json_insert", "json_object", "json_patch", "json_pretty",
	"json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
	/* sweep's own (store_functions_register; and the statistics of stats_defs) */
	"quantile", "ratio_ci", "median_ci", "ci_rel", "sweep_key", "sweep_param_defaults",
};
/* PRAGMAs that only read, with any argument (a table, an index) or with none (a value would set it). */
static const char *const guard_pragmas_any[] = {
	"foreign_key_check", "foreign_key_list", "index_info", "index_list", "index_xinfo", "integrity_check",
	"quick_check", "table_info", "table_list", "table_xinfo",
};
static const char *const guard_pragmas_read[] = {
	"application_id", "collation_list", "compile_options", "data_version", "database_list", "encoding",
	"foreign_keys", "freelist_count", "function_list", "journal_mode", "module_list", "page_count",
	"page_size", "pragma_list", "schema_version", "user_version",
};

/* Whether name is a statistic of stats_defs that store_functions_register registered. */
static int stats_computed(const char *name)
{
	for (size_t i = 0; name && i < stats_ndefs; i++)
		if (stats_defs[i].of && !strcasecmp(name, stats_defs[i].sql))
			return 1;
	return 0;
}

static int guard_listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcasecmp(name, list[i]))
			return 1;
	return 0;
}

/*
 * The connection is read-only and store_query refuses a statement that would write, so what a read can
 * still reach is left to check: functions, PRAGMAs (which may change the connection) and other files
 * (ATTACH). A refusal is noted for the message (store_sqlerr).
 */
static int guard_authorizer(void *data, int action, const char *a, const char *b, const char *c, const char *d)
{
	struct store_denied *den = data;

	(void)c, (void)d;
	switch (action) {
	case SQLITE_FUNCTION:
		if (guard_listed(b, guard_functions, ARRAY_SIZE(guard_functions)) || stats_computed(b))
			return SQLITE_OK;
		snprintf(den->what, sizeof(den->what), "the function %.60s()", b ? b : "?");
		return SQLITE_DENY;
	case SQLITE_PRAGMA:
		if (guard_listed(a, guard_pragmas_any, ARRAY_SIZE(guard_pragmas_any)) ||
		    (!b && guard_listed(a, guard_pragmas_read, ARRAY_SIZE(guard_pragmas_read))))
			return SQLITE_OK;
		snprintf(den->what, sizeof(den->what), "PRAGMA %.60s%s", a ? a : "?", b ? " with a value" : "");
		return SQLITE_DENY;
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		snprintf(den->what, sizeof(den->what), "%s", action == SQLITE_ATTACH ? "ATTACH" : "DETACH");
		return SQLITE_DENY;
	default:
		return SQLITE_OK;
	}
}

int store_functions_guard(sqlite3 *db, struct store_denied *den)
{
	/* Defensive (no writable schema, no shadow tables), the schema's own functions only innocuous ones,
	 * no extension loading, fts3_tokenizer's two-argument form off, and nothing to attach. */
	if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL))
		return error("cannot guard the query (SQLite %s; 3.31 or newer is needed): %s",
			     sqlite3_libversion(), sqlite3_errmsg(db));
	sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
	den->what[0] = '\0';
	return sqlite3_set_authorizer(db, guard_authorizer, den) ? error("cannot guard the query: %s",
									sqlite3_errmsg(db)) : 0;
}
