/* test_plan.c: grid expansion, excludes, orders and stable keys, on specs built by hand. */
#include <stdlib.h>

#include "plan.h"
#include "test.h"

static struct spec_scalar num(const char *t) { struct spec_scalar s = { (char *)t, 1, 0, 0 }; return s; }
static struct spec_scalar str(const char *t) { struct spec_scalar s = { (char *)t, 0, 0, 0 }; return s; }

/* dtype: [f32, f64]; M: [64, 256, 1024]; zipped {N, K}: (1024, 1024), (4096, 1024) */
static char *k_dtype[] = { "dtype" }, *k_m[] = { "M" }, *k_nk[] = { "N", "K" };
static struct spec_scalar v_dtype[2], v_m[3], v_nk[4], x_vals[2];
static char *x_keys[] = { "dtype", "M" };
static struct spec_axis axes[3];
static struct spec_match excl;

static void make_spec(struct spec *s, int repeat, enum spec_order order)
{
	memset(s, 0, sizeof(*s));
	v_dtype[0] = str("f32"); v_dtype[1] = str("f64");
	v_m[0] = num("64"); v_m[1] = num("256"); v_m[2] = num("1024");
	v_nk[0] = num("1024"); v_nk[1] = num("1024"); v_nk[2] = num("4096"); v_nk[3] = num("1024");
	axes[0] = (struct spec_axis){ k_dtype, 1, v_dtype, 2, 0, 0 };
	axes[1] = (struct spec_axis){ k_m, 1, v_m, 3, 0, 0 };
	axes[2] = (struct spec_axis){ k_nk, 2, v_nk, 2, 0, 0 };
	x_vals[0] = str("f64"); x_vals[1] = num("1024.0");
	excl = (struct spec_match){ x_keys, x_vals, 2, 0, 0 };
	s->name = "cpu-gemm";
	s->axes = axes;
	s->naxes = 3;
	s->exclude = &excl;
	s->nexclude = 1;
	s->repeat = repeat;
	s->order = order;
	s->seed = 1;
}

struct seen {
	int n;
	char params[64][96];
	char key[64][17];
	int pass[64];
	unsigned long long ord[64];
};

static int record(const struct plan_cell *c, void *data)
{
	struct seen *s = data;

	if (s->n >= 64)
		return 1;
	snprintf(s->params[s->n], sizeof(s->params[0]), "%s", c->params);
	memcpy(s->key[s->n], c->key, 17);
	s->pass[s->n] = c->pass;
	s->ord[s->n] = c->ord;
	s->n++;
	return 0;
}

/*
 * Many excludes over mixed sets of keys, against a count made by matching every exclude at every point:
 * a (5) x b (4) x zipped {K, N} (5000 points, K mostly 0: an exclude of K = 0 matches 4,500 points, more
 * than an indexed set takes, so K = 0 with a = 1 is matched axis by axis), with values that match nothing, entries
 * that name the same axis twice, and a key no axis has.
 */
#define XN 5000
#define XE 60
static char *xk_a[] = { "a" }, *xk_b[] = { "b" }, *xk_kn[] = { "K", "N" };
static char *xe_names[] = { "a", "b", "K", "N", "zz" };

static int xe_value(int key, int p, int q, int r)
{
	return key == 0 ? p : key == 1 ? q : key == 2 ? (r < 4500 ? 0 : r % 7) : key == 3 ? r : -1;
}

static void test_exclude_sets(void)
{
	static struct spec_scalar va[5], vb[4], vkn[2 * XN], xv[XE][3];
	static char *xkeys[XE][3], text[XN + 20][12];
	static struct spec_match ex[XE];
	struct spec_axis ax[3];
	struct spec s;
	int xkey[XE][3], xval[XE][3];
	uint64_t points, cells, want = 0, seed = 12345;

	for (int i = 0; i < XN + 20; i++)
		snprintf(text[i], sizeof(text[i]), "%d", i);
	for (int i = 0; i < 5; i++)
		va[i] = num(text[i]);
	for (int i = 0; i < 4; i++)
		vb[i] = num(text[i]);
	for (int r = 0; r < XN; r++) {
		vkn[2 * r] = num(text[xe_value(2, 0, 0, r)]);
		vkn[2 * r + 1] = num(text[r]);
	}
	for (int e = 0; e < XE; e++) {
		int n = 2 + (int)((seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33) % 2;

		for (int i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* Keys a, b, K, N mostly; zz in one exclude of 30. */
			xkey[e][i] = e % 30 == 29 && !i ? 4 : (int)(seed >> 33) % 4;
			xval[e][i] = xkey[e][i] == 2 ? (int)(seed >> 40) % 4 : xkey[e][i] == 3 ? (int)(seed >> 40) % XN :
				     (int)(seed >> 40) % 6;
			xkeys[e][i] = xe_names[xkey[e][i]];
			xv[e][i] = num(text[xval[e][i] < 0 ? 0 : xval[e][i]]);
		}
		ex[e] = (struct spec_match){ xkeys[e], xv[e], n, 0, 0 };
	}
	/* Exclude 0 is K = 0 and a = 1: 4,500 of the zipped axis's points times one of a's. */
	xkey[0][0] = 2, xval[0][0] = 0, xv[0][0] = num("0"), xkeys[0][0] = "K";
	xkey[0][1] = 0, xval[0][1] = 1, xv[0][1] = num("1"), xkeys[0][1] = "a", ex[0].n = 2;
	for (int p = 0; p < 5; p++)
		for (int q = 0; q < 4; q++)
			for (int r = 0; r < XN; r++) {
				int out = 0;

				for (int e = 0; e < XE && !out; e++) {
					int all = 1;

					for (int i = 0; i < ex[e].n && all; i++)
						all = xe_value(xkey[e][i], p, q, r) == xval[e][i];
					out = all;
				}
				want += !out;
			}
	memset(&s, 0, sizeof(s));
	ax[0] = (struct spec_axis){ xk_a, 1, va, 5, 0, 0 };
	ax[1] = (struct spec_axis){ xk_b, 1, vb, 4, 0, 0 };
	ax[2] = (struct spec_axis){ xk_kn, 2, vkn, XN, 0, 0 };
	s.name = "x";
	s.axes = ax;
	s.naxes = 3;
	s.exclude = ex;
	s.nexclude = XE;
	s.repeat = 1;
	s.seed = 1;
	plan_count(&s, &points, &cells);
	CHECK(want > 10000 && want < 82000, "the excludes keep some points and drop some (%llu)",
	      (unsigned long long)want);
	CHECK_INT((long long)points, (long long)want, "indexed excludes keep what matching each keeps");
}

int main(void)
{
	struct spec s;
	struct seen a = { 0 }, b = { 0 }, sh = { 0 }, sh2 = { 0 };
	uint64_t points, cells;
	char key[17];
	int distinct = 1, same_set = 1, moved = 0;

	make_spec(&s, 2, ORDER_SEQUENTIAL);
	plan_count(&s, &points, &cells);
	/* 2 * 3 * 2 = 12 points; the exclude drops f64 x M=1024 (2 points, written 1024.0): 10 left. */
	CHECK_INT(points, 10, "points after excludes");
	CHECK_INT(cells, 20, "cells with repeat 2");

	plan_each(&s, record, &a);
	CHECK_INT(a.n, 20, "sequential visits every cell");
	CHECK_STR(a.params[0], "{\"dtype\":\"f32\",\"M\":64,\"N\":1024,\"K\":1024}", "first cell's params");
	CHECK_STR(a.params[2], "{\"dtype\":\"f32\",\"M\":64,\"N\":4096,\"K\":1024}", "zipped group varies last");
	CHECK_INT(a.pass[0], 0, "sequential: pass 0 first");
	CHECK_INT(a.pass[1], 1, "sequential: a point's passes together");
	CHECK_STR(a.params[1], a.params[0], "sequential: same point twice");
	CHECK_INT(a.ord[19], 19, "ord is dense");
	for (int i = 0; i < a.n; i++)
		for (int j = i + 1; j < a.n; j++)
			distinct &= strcmp(a.key[i], a.key[j]) != 0;
	CHECK(distinct, "all 20 keys distinct");
	for (int i = 0; i < a.n; i++)
		CHECK(!strstr(a.params[i], "\"f64\",\"M\":1024"), "excluded point absent (%s)", a.params[i]);

	make_spec(&s, 2, ORDER_INTERLEAVE);
	plan_each(&s, record, &b);
	CHECK_INT(b.pass[9], 0, "interleave: pass 0 of every point first");
	CHECK_INT(b.pass[10], 1, "interleave: then pass 1");
	CHECK_STR(b.params[10], b.params[0], "interleave: pass 1 starts again at the first point");
	CHECK_STR(b.key[0], a.key[0], "the order does not change a cell's key");

	make_spec(&s, 2, ORDER_SHUFFLE);
	plan_each(&s, record, &sh);
	plan_each(&s, record, &sh2);
	for (int i = 0; i < 20; i++) {
		int found = 0;

		for (int j = 0; j < 20; j++)
			found |= !strcmp(sh.key[i], a.key[j]);
		same_set &= found;
		moved += strcmp(sh.key[i], a.key[i]) != 0;
		CHECK_STR(sh2.key[i], sh.key[i], "shuffle is repeatable for a seed");
	}
	CHECK(same_set, "shuffle visits the same cells");
	CHECK(moved > 10, "shuffle moves most cells (%d of 20)", moved);

	/* plan_key from JSON in another key order and spelling gives the fast path's key. */
	plan_key("cpu-gemm", "{\"K\":1024,\"N\":1024,\"M\":64.0,\"dtype\":\"f32\"}", 0, "", key);
	CHECK_STR(key, a.key[0], "plan_key matches plan_each's key whatever the key order");
	plan_key("cpu-gemm", a.params[0], 1, "", key);
	CHECK_STR(key, a.key[1], "pass 1's key");
	plan_key("cpu-gemm", a.params[0], 0, "hostA", key);
	CHECK(strcmp(key, a.key[0]) != 0, "a replica has its own key");
	plan_key("other", a.params[0], 0, "", key);
	CHECK(strcmp(key, a.key[0]) != 0, "another sweep name gives another key");
	/* Pinned value: keys must never change across versions, or resumes would rerun everything. */
	plan_key("s", "{\"a\":1}", 0, "", key);
	CHECK_STR(key, "816e85220a8d7a46", "a key is stable across versions");

	/* The cap on cells: the product of the axes and repeat first, the exact count (excludes) only
	 * when the product is over. 2 * 3 * 2 = 12 points, 2 excluded, repeat 2: 20 cells. */
	{
		uint64_t n;

		make_spec(&s, 2, ORDER_SEQUENTIAL);
		CHECK_INT(plan_check_size(&s, 24, &n), 0, "24 within 24");
		CHECK_INT((int)n, 24, "the product, an upper bound");
		CHECK_INT(plan_check_size(&s, 20, &n), 0, "20 after excludes is within 20");
		CHECK_INT((int)n, 20, "the exact count");
		CHECK_INT(plan_check_size(&s, 19, &n), -1, "over 19");
		CHECK_INT((int)n, 20, "counted");
		s.repeat = 2000000000;
		axes[1].npoints = 2000000000;
		CHECK_INT(plan_check_size(&s, 10000000, &n), -1, "2 * 2e9 * 2 * 2e9 is over");
		s.nexclude = 0;
		CHECK(plan_check_size(&s, 10000000, &n) == -1 && n == 16000000000000000000ull, "no wrap: %llu",
		      (unsigned long long)n);
		axes[0].npoints = 1000000000;
		CHECK(plan_check_size(&s, 10000000, &n) == -1 && n == UINT64_MAX, "beyond 2^64 saturates");
		axes[0].npoints = 2;
		axes[1].npoints = 3;
	}
	test_exclude_sets();
	return test_done();
}
