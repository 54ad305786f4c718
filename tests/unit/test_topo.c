/* test_topo.c: splitting cpusets among local ranks (synthetic and XML topologies), binding this process,
 * and the binding worked out for servers described by XML files.
 * tests/data/topo-dev.xml is hwloc's export of a 2-core development VM; topo-asym.xml is the export of
 * the synthetic "pack:2 [numa] core:6 pu:2" restricted to PUs 0-19: 6 cores in package 0, 4 in package 1.
 * The server files were written for this project and exported again by lstopo 2.9 (as `lstopo --of xml`
 * writes them), with the PCI trees of real machines:
 *  - topo-2s8g.xml: an HGX H100 (two 56-core Xeon 8480C, SMT on: core c of package p has PUs 56p+c and
 *    112+56p+c; one NUMA node a package). Four H100 (10de:2330, 3D controller) a package at 18, 2a, 3a, 5d
 *    and 9a, ab, ba, db:00.0, each behind a PCIe switch (root port, switch upstream port, downstream port:
 *    the GPU's parent bridge is three deep) beside a ConnectX-7; the BMC's VGA (1a03:2000) at 02:00.0.
 *  - topo-2s8g-nosmt.xml: the same server with SMT off (PUs 56p+c).
 *  - topo-1s4g.xml: two 32-core Xeon 6338, SMT off; four A100 PCIe at 4d-50:00.0 all on package 0, behind
 *    one PCIe switch; only a NIC on package 1.
 *  - topo-epyc4g.xml: one 64-core EPYC 7763 in NPS4 (four NUMA nodes of 16 cores, core c has PUs c and
 *    c+64), four A100: 01:00.0 on NUMA node 1, 41:00.0 on node 0, 81:00.0 on node 3 (each on a root port),
 *    c3:00.0 on node 2 behind a PCIe switch two bridges below its root port. */
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

/* What one rank should get: GPU, cpus, NUMA nodes, shared. */
struct want {
	const char *gpu, *cpus, *numa;
	int shared;
};

/* Every rank of plan p, by value. */
static void check_ranks(const struct topo_plan *p, const struct want *w, int n, const char *what)
{
	CHECK_INT(p->nranks, n, what);
	for (int r = 0; r < n && r < p->nranks; r++) {
		const struct topo_rank *k = &p->rank[r];
		int ok = (w[r].gpu ? k->gpu && !strcmp(k->gpu, w[r].gpu) : !k->gpu) && !strcmp(k->cpus, w[r].cpus) &&
			 !strcmp(k->numa, w[r].numa) && k->shared == w[r].shared;

		CHECK(ok, "%s: rank %d: GPU %s, cpus %s, numa %s, shared %d (want %s, %s, %s, %d)", what, r,
		      k->gpu ? k->gpu : "-", k->cpus, k->numa, k->shared, w[r].gpu ? w[r].gpu : "-", w[r].cpus,
		      w[r].numa, w[r].shared);
	}
}

static int plan_file(const char *xml, int nranks, struct topo_plan *p)
{
	return topo_plan(xml, TOPO_GPUS_RUN, NULL, 0, nranks, p);
}

static const char *const h100[] = { "0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
				    "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0" };

/* Two sockets, four GPUs each, SMT on: 8 ranks get 14 cores of their GPU's package, 16 ranks 7. */
static void test_plan_2s8g(void)
{
	static const struct want w8[] = {
		{ h100[0], "0-13,112-125", "0", 1 }, { h100[1], "14-27,126-139", "0", 1 },
		{ h100[2], "28-41,140-153", "0", 1 }, { h100[3], "42-55,154-167", "0", 1 },
		{ h100[4], "56-69,168-181", "1", 1 }, { h100[5], "70-83,182-195", "1", 1 },
		{ h100[6], "84-97,196-209", "1", 1 }, { h100[7], "98-111,210-223", "1", 1 },
	};
	/* package 0 holds ranks 0-3 and 8-11 (GPU k mod 8), in rank order */
	static const struct want w16[] = {
		{ h100[0], "0-6,112-118", "0", 1 }, { h100[1], "7-13,119-125", "0", 1 },
		{ h100[2], "14-20,126-132", "0", 1 }, { h100[3], "21-27,133-139", "0", 1 },
		{ h100[4], "56-62,168-174", "1", 1 }, { h100[5], "63-69,175-181", "1", 1 },
		{ h100[6], "70-76,182-188", "1", 1 }, { h100[7], "77-83,189-195", "1", 1 },
		{ h100[0], "28-34,140-146", "0", 1 }, { h100[1], "35-41,147-153", "0", 1 },
		{ h100[2], "42-48,154-160", "0", 1 }, { h100[3], "49-55,161-167", "0", 1 },
		{ h100[4], "84-90,196-202", "1", 1 }, { h100[5], "91-97,203-209", "1", 1 },
		{ h100[6], "98-104,210-216", "1", 1 }, { h100[7], "105-111,217-223", "1", 1 },
	};
	struct topo_plan p;

	CHECK_INT(plan_file("tests/data/topo-2s8g.xml", 8, &p), 0, "2s8g: 8 ranks");
	check_ranks(&p, w8, 8, "2s8g, 8 ranks");
	CHECK(p.bound && !p.notes.len, "2s8g, 8 ranks: bound, no note ('%s')", p.notes.buf ? p.notes.buf : "");
	topo_plan_release(&p);
	CHECK_INT(topo_plan("tests/data/topo-2s8g.xml", TOPO_GPUS_AUTO, NULL, 0, 16, &p), 0, "2s8g: 16 ranks");
	check_ranks(&p, w16, 16, "2s8g, 16 ranks");
	topo_plan_release(&p);

	/* 128 ranks, 64 a package of 56 cores: hardware threads, one or two each, never one twice */
	CHECK_INT(plan_file("tests/data/topo-2s8g.xml", 128, &p), 0, "2s8g: 128 ranks");
	CHECK_STR(p.rank[0].cpus, "0", "128 ranks: rank 0 gets PU 0 alone");
	CHECK_STR(p.rank[1].cpus, "1,112", "128 ranks: rank 1 gets the rest of core 0 and PU 1");
	CHECK_STR(p.rank[127].cpus, "111,223", "128 ranks: rank 127 the last core of package 1");
	{
		hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
		int ok = 1, sum = 0;

		for (int r = 0; r < 128; r++) {
			hwloc_bitmap_list_sscanf(one, p.rank[r].cpus);
			ok &= !hwloc_bitmap_intersects(all, one) && p.rank[r].shared == 1 &&
			      hwloc_bitmap_weight(one) >= 1 && hwloc_bitmap_weight(one) <= 2 &&
			      !strcmp(p.rank[r].numa, r % 8 < 4 ? "0" : "1");
			sum += hwloc_bitmap_weight(one);
			hwloc_bitmap_or(all, all, one);
		}
		CHECK(ok && sum == 224, "128 ranks: disjoint slices of 1-2 PUs on their GPU's package, all 224 used");
		hwloc_bitmap_free(all);
		hwloc_bitmap_free(one);
	}
	topo_plan_release(&p);

	/* more ranks than cpus: sweep run binds none, and says so */
	CHECK_INT(plan_file("tests/data/topo-2s8g.xml", 225, &p), 0, "2s8g: 225 ranks");
	CHECK(!p.bound && p.rank[224].shared == 225 && !strcmp(p.rank[224].cpus, "0-223") &&
	      !strcmp(p.rank[224].numa, "0-1"), "225 ranks on 224 cpus: unbound, all cpus, shared by all");
	CHECK_TEXT(p.notes.buf, "225 ranks on 224 online cpus: sweep run leaves them unbound (it pins ranks only "
		   "when each can have a cpu of its own)\n", "225 ranks: the note");
	topo_plan_release(&p);
}

/* The same server with SMT off: whole cores, one PU each. */
static void test_plan_2s8g_nosmt(void)
{
	static const struct want w8[] = {
		{ h100[0], "0-13", "0", 1 }, { h100[1], "14-27", "0", 1 }, { h100[2], "28-41", "0", 1 },
		{ h100[3], "42-55", "0", 1 }, { h100[4], "56-69", "1", 1 }, { h100[5], "70-83", "1", 1 },
		{ h100[6], "84-97", "1", 1 }, { h100[7], "98-111", "1", 1 },
	};
	static const struct want w16[] = {
		{ h100[0], "0-6", "0", 1 }, { h100[1], "7-13", "0", 1 }, { h100[2], "14-20", "0", 1 },
		{ h100[3], "21-27", "0", 1 }, { h100[4], "56-62", "1", 1 }, { h100[5], "63-69", "1", 1 },
		{ h100[6], "70-76", "1", 1 }, { h100[7], "77-83", "1", 1 }, { h100[0], "28-34", "0", 1 },
		{ h100[1], "35-41", "0", 1 }, { h100[2], "42-48", "0", 1 }, { h100[3], "49-55", "0", 1 },
		{ h100[4], "84-90", "1", 1 }, { h100[5], "91-97", "1", 1 }, { h100[6], "98-104", "1", 1 },
		{ h100[7], "105-111", "1", 1 },
	};
	struct topo_plan p;

	CHECK_INT(plan_file("tests/data/topo-2s8g-nosmt.xml", 8, &p), 0, "2s8g-nosmt: 8 ranks");
	check_ranks(&p, w8, 8, "2s8g-nosmt, 8 ranks");
	topo_plan_release(&p);
	CHECK_INT(plan_file("tests/data/topo-2s8g-nosmt.xml", 16, &p), 0, "2s8g-nosmt: 16 ranks");
	check_ranks(&p, w16, 16, "2s8g-nosmt, 16 ranks");
	topo_plan_release(&p);
	/* as many ranks as cpus: pinned, a core each (rank 111 is the 56th of package 1) */
	CHECK_INT(plan_file("tests/data/topo-2s8g-nosmt.xml", 112, &p), 0, "2s8g-nosmt: 112 ranks");
	CHECK(p.bound && !strcmp(p.rank[111].cpus, "111") && !strcmp(p.rank[0].cpus, "0") && !p.notes.len,
	      "112 ranks on 112 cpus: bound, one each (%s, %s)", p.rank[0].cpus, p.rank[111].cpus);
	topo_plan_release(&p);
	CHECK_INT(plan_file("tests/data/topo-2s8g-nosmt.xml", 113, &p), 0, "2s8g-nosmt: 113 ranks");
	CHECK(!p.bound && !strcmp(p.rank[0].cpus, "0-111"), "113 ranks on 112 cpus: unbound (%s)", p.rank[0].cpus);
	topo_plan_release(&p);
}

/* All four GPUs on package 0: every rank there, package 1 idle; more ranks than its cpus share them. */
static void test_plan_1s4g(void)
{
	static const char *const a100[] = { "0000:4d:00.0", "0000:4e:00.0", "0000:4f:00.0", "0000:50:00.0" };
	static const struct want w4[] = {
		{ a100[0], "0-7", "0", 1 }, { a100[1], "8-15", "0", 1 }, { a100[2], "16-23", "0", 1 },
		{ a100[3], "24-31", "0", 1 },
	};
	static const struct want w8[] = {
		{ a100[0], "0-3", "0", 1 }, { a100[1], "4-7", "0", 1 }, { a100[2], "8-11", "0", 1 },
		{ a100[3], "12-15", "0", 1 }, { a100[0], "16-19", "0", 1 }, { a100[1], "20-23", "0", 1 },
		{ a100[2], "24-27", "0", 1 }, { a100[3], "28-31", "0", 1 },
	};
	struct topo_plan p;
	int ok = 1;

	CHECK_INT(plan_file("tests/data/topo-1s4g.xml", 4, &p), 0, "1s4g: 4 ranks");
	check_ranks(&p, w4, 4, "1s4g, 4 ranks");
	topo_plan_release(&p);
	CHECK_INT(plan_file("tests/data/topo-1s4g.xml", 8, &p), 0, "1s4g: 8 ranks");
	check_ranks(&p, w8, 8, "1s4g, 8 ranks");
	topo_plan_release(&p);
	/* 40 ranks on the 32 cpus of package 0 (64 online, so sweep run pins them): rank i gets cpu
	 * floor(32 i / 40), which ranks 5k and 5k + 1 share */
	CHECK_INT(plan_file("tests/data/topo-1s4g.xml", 40, &p), 0, "1s4g: 40 ranks");
	for (int r = 0; r < 40; r++) {
		char want[16];

		snprintf(want, sizeof(want), "%d", 32 * r / 40);
		ok &= !strcmp(p.rank[r].cpus, want) && p.rank[r].shared == (r % 5 < 2 ? 2 : 1) &&
		      !strcmp(p.rank[r].gpu, a100[r % 4]);
	}
	CHECK(p.bound && ok, "40 ranks: rank i on cpu 32i/40 of package 0, ranks 5k and 5k+1 sharing one");
	CHECK_TEXT(p.notes.buf, "ranks 0-39: 40 ranks on 32 cpus, up to 2 on one\n", "40 ranks: the note");
	topo_plan_release(&p);
}

/* NPS4: each GPU's locality is its NUMA node's 16 cores; GPUs in bus order are not in NUMA order, and the
 * one behind the switch is found through its bridges. */
static void test_plan_epyc4g(void)
{
	static const char *const g[] = { "0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c3:00.0" };
	static const struct want w4[] = {
		{ g[0], "16-31,80-95", "1", 1 }, { g[1], "0-15,64-79", "0", 1 }, { g[2], "48-63,112-127", "3", 1 },
		{ g[3], "32-47,96-111", "2", 1 },
	};
	static const struct want w8[] = {
		{ g[0], "16-23,80-87", "1", 1 }, { g[1], "0-7,64-71", "0", 1 }, { g[2], "48-55,112-119", "3", 1 },
		{ g[3], "32-39,96-103", "2", 1 }, { g[0], "24-31,88-95", "1", 1 }, { g[1], "8-15,72-79", "0", 1 },
		{ g[2], "56-63,120-127", "3", 1 }, { g[3], "40-47,104-111", "2", 1 },
	};
	struct topo_plan p;

	CHECK_INT(plan_file("tests/data/topo-epyc4g.xml", 4, &p), 0, "epyc4g: 4 ranks");
	check_ranks(&p, w4, 4, "epyc4g, 4 ranks");
	topo_plan_release(&p);
	CHECK_INT(plan_file("tests/data/topo-epyc4g.xml", 8, &p), 0, "epyc4g: 8 ranks");
	check_ranks(&p, w8, 8, "epyc4g, 8 ranks");
	topo_plan_release(&p);
}

/* GPUs given by bus id, one the topology lacks; a topology without GPUs; files that are not topologies. */
static void test_plan_said(void)
{
	char *ids[] = { "0000:18:00.0", "0000:77:00.0" };
	/* ranks 1 and 3 split the whole machine: rank 1's half meets ranks 0 and 2, rank 3's half nobody's */
	static const struct want w[] = {
		{ "0000:18:00.0", "0-27,112-139", "0", 2 }, { "0000:77:00.0", "0-55,112-167", "0", 3 },
		{ "0000:18:00.0", "28-55,140-167", "0", 2 }, { "0000:77:00.0", "56-111,168-223", "1", 1 },
	};
	static const struct want none[] = {
		{ NULL, "0-5", "0", 1 }, { NULL, "6-11", "0", 1 }, { NULL, "12-19", "1", 1 },
	};
	struct topo_plan p;
	char *err;

	CHECK_INT(topo_plan("tests/data/topo-2s8g.xml", TOPO_GPUS_LIST, ids, 2, 4, &p), 0, "2 GPUs by bus id");
	check_ranks(&p, w, 4, "a GPU not in the topology");
	CHECK_TEXT(p.notes.buf, "GPU 0000:77:00.0 has no locality in the topology: its ranks (1,3) split the "
		   "whole machine\n", "a GPU not in the topology: the note");
	topo_plan_release(&p);

	CHECK_INT(plan_file("tests/data/topo-asym.xml", 3, &p), 0, "no GPU");
	check_ranks(&p, none, 3, "topo-asym.xml: no GPU");
	CHECK_TEXT(p.notes.buf, "no GPU (the topology has no NVIDIA display or 3D controller): the ranks split "
		   "the whole machine\n", "no GPU: the note");
	topo_plan_release(&p);

	test_capture_start();
	CHECK_INT(plan_file("tests/data/no-such-topology.xml", 2, &p), -1, "a missing file");
	CHECK_INT(plan_file("tests/unit/test_topo.c", 2, &p), -1, "a file that is not XML");
	err = test_capture_end();
	CHECK(strstr(err, "sweep: cannot read the topology 'tests/data/no-such-topology.xml': No such file") &&
	      strstr(err, "sweep: cannot load the topology 'tests/unit/test_topo.c': not an hwloc XML file"),
	      "the errors name the files and what is wrong with them");
	free(err);
}

static void test_busid(void)
{
	static const char *const good[][2] = {
		{ "0000:1b:00.0", "0000:1b:00.0" }, { "1B:00.0", "0000:1b:00.0" }, { "00000000:DB:00.0", "0000:db:00.0" },
		{ "0001:02:1f.7", "0001:02:1f.7" }, { "abcd1234:ff:00.1", "abcd1234:ff:00.1" },
	};
	static const char *const bad[] = { "", "1b:00", "1b.00.0", "0000:1b:20.0", "0000:1b:00.8", "0000:100:00.0",
					   " 1b:00.0", "0x1b:00.0", "0:0:1b:00.0", "1b:00.0,", "123456789:1b:00.0",
					   "1b::00.0", "1b:00.0." };
	char out[TOPO_BUSID_LEN];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		strcpy(out, "?");
		CHECK(!topo_busid(good[i][0], out) && !strcmp(out, good[i][1]), "bus id '%s' is '%s' (got '%s')",
		      good[i][0], good[i][1], out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_INT(topo_busid(bad[i], out), -1, bad[i]);
}

/* This machine's plan is what topo_bind does: each rank ends up bound to the cpus the plan gives it. */
static void test_plan_here(void)
{
	hwloc_topology_t t;
	hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
	struct strbuf sb = STRBUF_INIT;
	struct topo_plan p;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (hwloc_topology_init(&t) || hwloc_topology_load(t))
		BUG("cannot load this machine's topology");
	for (int n = 1; n <= 2 && n <= online; n++) {
		CHECK_INT(topo_plan(NULL, TOPO_GPUS_RUN, NULL, 0, n, &p), 0, "this machine's plan");
		for (int r = 0; r < n; r++) {
			hwloc_bitmap_list_sscanf(want, p.rank[r].cpus);
			CHECK(!topo_bind(-1, r, n, &sb) && !hwloc_get_cpubind(t, got, HWLOC_CPUBIND_PROCESS) &&
			      hwloc_bitmap_isequal(got, want), "%d ranks: rank %d bound to the plan's cpus %s (%s)", n,
			      r, p.rank[r].cpus, sb.buf);
		}
		CHECK(!p.rank[0].gpu && strstr(p.notes.buf, "no GPU (CUDA sees none)"), "no GPU here, and said");
		topo_plan_release(&p);
	}
	CHECK_INT(topo_plan(NULL, TOPO_GPUS_RUN, NULL, 0, (int)online + 1, &p), 0, "one rank more than cpus");
	CHECK(!p.bound && p.rank[0].shared == online + 1, "%ld ranks here: unbound", online + 1);
	topo_plan_release(&p);
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
	test_busid();
	test_plan_2s8g();
	test_plan_2s8g_nosmt();
	test_plan_1s4g();
	test_plan_epyc4g();
	test_plan_said();
	test_plan_here();
	return test_done();
}
