/* test_topo.c: splitting cpusets among local ranks (synthetic and XML topologies), and binding this process.
 * tests/data/topo-dev.xml is hwloc's export of a 2-core development VM; topo-asym.xml is the export of
 * the synthetic "pack:2 [numa] core:6 pu:2" restricted to PUs 0-19: 6 cores in package 0, 4 in package 1. */
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#include "util.h"
#include "topo.h"
#include "test.h"

static hwloc_topology_t topo_synthetic(const char *desc)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t) || hwloc_topology_set_synthetic(t, desc) || hwloc_topology_load(t))
		BUG("cannot build the synthetic topology '%s'", desc);
	return t;
}

static hwloc_topology_t topo_xml(const char *path)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t) || hwloc_topology_set_xml(t, path) || hwloc_topology_load(t))
		BUG("cannot load the topology '%s'", path);
	return t;
}

/* How many whole cores of t are inside set. */
static int cores_in(hwloc_topology_t t, hwloc_const_cpuset_t set)
{
	return hwloc_get_nbobjs_inside_cpuset_by_type(t, set, HWLOC_OBJ_CORE);
}

/*
 * Split set into count slices and check the properties every split must have: each slice non-empty and
 * inside set, the union is set; when there are at least as many threads as slices the slices are
 * disjoint and topo_split says 1; when there are at least as many cores, slices are whole cores whose
 * counts differ by at most one; otherwise each thread is used by floor or ceil(count / threads) slices
 * and topo_split returns that number for it.
 */
static void check_split(hwloc_topology_t t, hwloc_const_cpuset_t set, int count, const char *what)
{
	hwloc_bitmap_t *s = calloc(count, sizeof(*s)), all = hwloc_bitmap_alloc(), tmp = hwloc_bitmap_alloc();
	int ncores = cores_in(t, set), npus = hwloc_bitmap_weight(set), i, j, ret, lo = 1 << 30, hi = 0;
	int disjoint = 1, inside = 1, whole = 1, shares_ok = 1, *use = calloc(npus, sizeof(int)), ok_ret = 1;
	int *rets = calloc(count, sizeof(int));

	for (i = 0; i < count; i++) {
		s[i] = hwloc_bitmap_alloc();
		rets[i] = ret = topo_split(t, set, i, count, s[i]);
		if (ret < 1 || hwloc_bitmap_iszero(s[i]))
			ok_ret = 0;
		if (!hwloc_bitmap_isincluded(s[i], set))
			inside = 0;
		hwloc_bitmap_or(all, all, s[i]);
		if (count <= ncores) {
			int c = cores_in(t, s[i]);

			/* whole cores: the slice has exactly the threads of its cores */
			hwloc_bitmap_zero(tmp);
			for (j = 0; j < hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE); j++) {
				hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, j);

				if (hwloc_bitmap_intersects(core->cpuset, s[i]))
					hwloc_bitmap_or(tmp, tmp, core->cpuset);
			}
			hwloc_bitmap_and(tmp, tmp, set);
			if (!hwloc_bitmap_isequal(tmp, s[i]))
				whole = 0;
			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
		}
		for (j = 0; j < i; j++)
			if (hwloc_bitmap_intersects(s[i], s[j]))
				disjoint = 0;
	}
	CHECK(ok_ret, "%s: %d slices: every slice non-empty, topo_split >= 1", what, count);
	CHECK(inside, "%s: %d slices: every slice inside the set", what, count);
	CHECK(hwloc_bitmap_isequal(all, set), "%s: %d slices cover the set", what, count);
	if (count <= npus) {
		CHECK(disjoint, "%s: %d slices are disjoint", what, count);
		for (i = 0; i < count; i++)
			if (rets[i] != 1)
				ok_ret = 0;
		CHECK(ok_ret, "%s: %d slices: none shared (topo_split returns 1)", what, count);
	}
	if (count <= ncores) {
		CHECK(whole, "%s: %d slices are whole cores", what, count);
		CHECK(hi - lo <= 1 && lo >= 1, "%s: %d slices balanced: %d to %d cores", what, count, lo, hi);
	} else if (count > npus) {
		/* each slice is one thread; count how many slices use each */
		unsigned id;
		int k = 0, fl = count / npus, cl = (count + npus - 1) / npus;

		hwloc_bitmap_foreach_begin(id, set) {
			for (i = 0; i < count; i++)
				if (hwloc_bitmap_isset(s[i], id))
					use[k]++;
			if (use[k] < fl || use[k] > cl)
				shares_ok = 0;
			k++;
		} hwloc_bitmap_foreach_end();
		for (i = 0; i < count; i++) {
			if (hwloc_bitmap_weight(s[i]) != 1)
				shares_ok = 0;
			/* the return value is the number of slices on the same thread */
			for (j = 0, k = 0; j < count; j++)
				k += hwloc_bitmap_isequal(s[i], s[j]);
			if (rets[i] != k)
				shares_ok = 0;
		}
		CHECK(shares_ok, "%s: %d slices on %d threads: one thread each, each used %d..%d times, and "
		      "topo_split says how many share it", what, count, npus, fl, cl);
	}
	for (i = 0; i < count; i++)
		hwloc_bitmap_free(s[i]);
	free(s);
	free(use);
	free(rets);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(tmp);
}

static void test_synthetic_smt(void)
{
	hwloc_topology_t t = topo_synthetic("pack:2 core:16 pu:2");
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
	hwloc_obj_t p0 = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
	hwloc_obj_t p1 = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 1);
	hwloc_bitmap_t s = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
	static const int counts[] = { 1, 2, 3, 5, 7, 8, 16, 31, 32, 33, 40, 64, 65, 100, 200 };
	size_t i;

	CHECK_INT(hwloc_bitmap_weight(all), 64, "pack:2 core:16 pu:2 has 64 threads");
	for (i = 0; i < ARRAY_SIZE(counts); i++)
		check_split(t, all, counts[i], "pack:2 core:16 pu:2");

	/* two ranks: one package each, so each stays on its own socket */
	CHECK_INT(topo_split(t, all, 0, 2, s), 1, "2 slices: not shared");
	CHECK(hwloc_bitmap_isequal(s, p0->cpuset), "slice 0 of 2 is package 0");
	topo_split(t, all, 1, 2, s);
	CHECK(hwloc_bitmap_isequal(s, p1->cpuset), "slice 1 of 2 is package 1");

	/* 33 ranks on 32 cores: threads, not cores, and still disjoint */
	CHECK_INT(topo_split(t, all, 32, 33, s), 1, "33 slices: the last is its own");
	CHECK_INT(hwloc_bitmap_weight(s), 2, "33 slices of 64 threads: the last has 2 threads");
	/* 128 ranks on 64 threads: exactly 2 per thread */
	CHECK_INT(topo_split(t, all, 5, 128, s), 2, "128 slices on 64 threads: each shared by 2");
	CHECK_INT(hwloc_bitmap_weight(s), 1, "128 slices: one thread each");

	/* a set restricted to package 1 is split within it */
	for (i = 0; i < 4; i++) {
		topo_split(t, p1->cpuset, (int)i, 4, s);
		CHECK(hwloc_bitmap_isincluded(s, p1->cpuset) && cores_in(t, s) == 4,
		      "slice %zu of 4 of package 1: 4 cores inside package 1", i);
	}
	check_split(t, p1->cpuset, 6, "package 1");

	/* a set cutting cores: threads 0 (core 0), 2 (core 1), 4 and 5 (core 2) */
	hwloc_bitmap_zero(set);
	hwloc_bitmap_set(set, 0);
	hwloc_bitmap_set(set, 2);
	hwloc_bitmap_set_range(set, 4, 5);
	topo_split(t, set, 2, 3, s);
	CHECK_INT(hwloc_bitmap_weight(s), 2, "a core cut by the set: its threads in the set only (2)");
	CHECK(hwloc_bitmap_isset(s, 4) && hwloc_bitmap_isset(s, 5), "slice 2 of 3 is threads 4 and 5");
	check_split(t, set, 3, "cut cores");
	check_split(t, set, 4, "cut cores");
	check_split(t, set, 9, "cut cores");

	/* errors */
	CHECK_INT(topo_split(t, all, 2, 2, s), -1, "index == count is refused");
	CHECK_INT(topo_split(t, all, -1, 2, s), -1, "negative index is refused");
	CHECK_INT(topo_split(t, all, 0, 0, s), -1, "count 0 is refused");
	hwloc_bitmap_zero(set);
	CHECK_INT(topo_split(t, set, 0, 1, s), -1, "an empty set is refused");
	hwloc_bitmap_set(set, 1000);
	CHECK_INT(topo_split(t, set, 0, 1, s), -1, "a set of no thread of the topology is refused");
	hwloc_bitmap_free(s);
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(t);
}

static void test_synthetic_numa(void)
{
	hwloc_topology_t t = topo_synthetic("node:2 core:8 pu:1");
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
	hwloc_bitmap_t s = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	int i;

	CHECK_INT(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), 2, "node:2 core:8 pu:1 has 2 NUMA nodes");
	for (i = 1; i <= 20; i++)
		check_split(t, all, i, "node:2 core:8 pu:1");
	for (i = 0; i < 4; i++) {
		topo_split(t, all, i, 4, s);
		hwloc_cpuset_to_nodeset(t, s, nodes);
		CHECK_INT(hwloc_bitmap_weight(nodes), 1, "slice of 4 ranks on 2 nodes: within one NUMA node");
		CHECK_INT(hwloc_bitmap_first(nodes), i / 2, "slices 0-1 on node 0, 2-3 on node 1");
	}
	hwloc_bitmap_free(s);
	hwloc_bitmap_free(nodes);
	hwloc_topology_destroy(t);
}

static void test_xml(void)
{
	hwloc_topology_t t = topo_xml("tests/data/topo-asym.xml");
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
	hwloc_bitmap_t s = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	int i;

	CHECK_INT(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), 10, "topo-asym.xml: 10 cores");
	CHECK_INT(hwloc_bitmap_weight(all), 20, "topo-asym.xml: 20 threads");
	for (i = 1; i <= 45; i += (i < 12 ? 1 : 4))
		check_split(t, all, i, "topo-asym.xml");
	/* 2 ranks: 5 cores each; the first all in package 0 (cores 0-4), the second spanning both */
	topo_split(t, all, 0, 2, s);
	hwloc_cpuset_to_nodeset(t, s, nodes);
	CHECK(cores_in(t, s) == 5 && hwloc_bitmap_weight(nodes) == 1, "slice 0 of 2: 5 cores on one node");
	topo_split(t, all, 1, 2, s);
	hwloc_cpuset_to_nodeset(t, s, nodes);
	CHECK(cores_in(t, s) == 5 && hwloc_bitmap_weight(nodes) == 2,
	      "slice 1 of 2: 5 cores across both nodes");
	/* 3 ranks: 3, 3 and 4 cores */
	topo_split(t, all, 2, 3, s);
	CHECK_INT(cores_in(t, s), 4, "slice 2 of 3 of 10 cores has 4");
	hwloc_topology_destroy(t);

	t = topo_xml("tests/data/topo-dev.xml");
	all = hwloc_topology_get_topology_cpuset(t);
	CHECK_INT(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), 2, "topo-dev.xml: 2 cores");
	for (i = 1; i <= 5; i++)
		check_split(t, all, i, "topo-dev.xml");
	CHECK_INT(topo_split(t, all, 0, 3, s), 2, "3 ranks on 2 cores: the first thread is shared by 2");
	hwloc_bitmap_free(s);
	hwloc_bitmap_free(nodes);
	hwloc_topology_destroy(t);
}

/* topo_bind on this machine: the process ends up bound to exactly the slice topo_split gives. */
static void test_bind(void)
{
	hwloc_topology_t t;
	hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
	struct strbuf sb = STRBUF_INIT;
	int n;

	if (hwloc_topology_init(&t) || hwloc_topology_load(t))
		BUG("cannot load this machine's topology");
	n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);

	CHECK_INT(topo_bind(-1, 0, 1, &sb), 0, "bind one rank without a GPU");
	CHECK(!hwloc_get_cpubind(t, got, HWLOC_CPUBIND_PROCESS) &&
	      hwloc_bitmap_isequal(got, hwloc_topology_get_allowed_cpuset(t)),
	      "one rank: bound to the whole machine (%s)", sb.buf);
	CHECK(!strncmp(sb.buf, "cores ", 6) && strstr(sb.buf, "numa "), "binding text: '%s'", sb.buf);

	topo_split(t, hwloc_topology_get_allowed_cpuset(t), 1, 2, want);
	CHECK_INT(topo_bind(-1, 1, 2, &sb), 0, "bind rank 1 of 2");
	CHECK(!hwloc_get_cpubind(t, got, HWLOC_CPUBIND_PROCESS) && hwloc_bitmap_isequal(got, want),
	      "rank 1 of 2: bound to its slice (%s)", sb.buf);
	CHECK(n < 2 || !strstr(sb.buf, "shared"), "with %d cores, 2 ranks share nothing: '%s'", n, sb.buf);

	/* A GPU index on a machine without that GPU (or without CUDA) falls back to the whole machine. */
	topo_split(t, hwloc_topology_get_allowed_cpuset(t), 0, 2, want);
	CHECK_INT(topo_bind(1000, 0, 2, &sb), 0, "bind near a GPU that does not exist");
	CHECK(!hwloc_get_cpubind(t, got, HWLOC_CPUBIND_PROCESS) && hwloc_bitmap_isequal(got, want),
	      "absent GPU: slice 0 of 2 of the machine (%s)", sb.buf);

	/* More ranks than threads: the text says the slice is shared. */
	n = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(t));
	CHECK_INT(topo_bind(-1, 0, 2 * n, &sb), 0, "bind rank 0 of twice as many ranks as threads");
	CHECK(strstr(sb.buf, "shared by 2 ranks") != NULL, "rank 0 of 2 per thread: '%s'", sb.buf);

	topo_bind(-1, 0, 1, &sb);   /* leave the process as it was */
	sb_release(&sb);
	hwloc_bitmap_free(want);
	hwloc_bitmap_free(got);
	hwloc_topology_destroy(t);
}

int main(void)
{
	test_synthetic_smt();
	test_synthetic_numa();
	test_xml();
	test_bind();
	return test_done();
}
