/* topo.c: pinning workers near their GPU, disjoint cores for the local ranks that share one locality. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#ifdef SWEEP_CUDA
#include <hwloc/cudart.h>
#endif
#include "util.h"
#include "topo.h"

/* The units a cpuset is split into: cores (each restricted to set), or hardware threads. */
struct topo_units {
	hwloc_bitmap_t *v;
	int n;
};

static void topo_units_release(struct topo_units *u)
{
	for (int i = 0; i < u->n; i++)
		hwloc_bitmap_free(u->v[i]);
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

/* The objects of type whose cpuset meets set, in logical order, each cut down to set. */
static void topo_units_of(hwloc_topology_t topo, hwloc_const_cpuset_t set, hwloc_obj_type_t type,
			  struct topo_units *u)
{
	int n = hwloc_get_nbobjs_by_type(topo, type);
	hwloc_obj_t o = NULL;

	u->v = xcalloc(n > 0 ? n : 1, sizeof(*u->v));
	u->n = 0;
	while ((o = hwloc_get_next_obj_by_type(topo, type, o)) != NULL) {
		if (!o->cpuset || !hwloc_bitmap_intersects(o->cpuset, set))
			continue;
		u->v[u->n] = hwloc_bitmap_dup(o->cpuset);
		hwloc_bitmap_and(u->v[u->n], u->v[u->n], set);
		u->n++;
	}
}

/* topo_split, also saying whether the slice is hardware threads rather than whole cores. */
static int topo_split_units(hwloc_topology_t topo, hwloc_const_cpuset_t set, int index, int count,
			    hwloc_cpuset_t out, int *by_thread)
{
	struct topo_units u;
	int i, lo, hi, shared = 1;

	hwloc_bitmap_zero(out);
	*by_thread = 0;
	if (count <= 0 || index < 0 || index >= count)
		return -1;
	topo_units_of(topo, set, HWLOC_OBJ_CORE, &u);
	if (u.n < count) {
		/* Fewer cores than slices (or a topology without cores): split hardware threads. */
		topo_units_release(&u);
		topo_units_of(topo, set, HWLOC_OBJ_PU, &u);
		*by_thread = 1;
	}
	if (!u.n) {
		topo_units_release(&u);
		return -1;
	}
	if (u.n >= count) {
		/* Slice i is units [i n / count, (i + 1) n / count): sizes differ by at most one. */
		lo = (int)((long)index * u.n / count);
		hi = (int)((long)(index + 1) * u.n / count);
		for (i = lo; i < hi; i++)
			hwloc_bitmap_or(out, out, u.v[i]);
	} else {
		/* More slices than threads: slice i gets thread i n / count, so each thread serves
		 * floor(count / n) or ceil(count / n) consecutive slices. */
		lo = (int)((long)index * u.n / count);
		hwloc_bitmap_copy(out, u.v[lo]);
		shared = 0;
		for (i = 0; i < count; i++)
			shared += (int)((long)i * u.n / count) == lo;
	}
	topo_units_release(&u);
	return shared;
}

int topo_split(struct hwloc_topology *topo, const struct hwloc_bitmap_s *set, int index, int count,
	       struct hwloc_bitmap_s *out)
{
	int by_thread;

	return topo_split_units(topo, set, index, count, out, &by_thread);
}

static int topo_gpu_count(void)
{
#ifdef SWEEP_CUDA
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
#else
	return 0;
#endif
}

/* The cpus near GPU gpu that this process may use; all it may use for gpu -1, when the GPU's locality is
 * unknown, or when it shares no cpu with what is allowed. */
static void topo_locality(hwloc_topology_t topo, int gpu, hwloc_cpuset_t set)
{
	hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);

	hwloc_bitmap_copy(set, allowed);
#ifdef SWEEP_CUDA
	if (gpu >= 0 && !hwloc_cudart_get_device_cpuset(topo, gpu, set)) {
		hwloc_bitmap_and(set, set, allowed);
		if (hwloc_bitmap_iszero(set))
			hwloc_bitmap_copy(set, allowed);
	} else {
		cudaGetLastError();   /* no such device: leave no error behind for the next CUDA call */
		hwloc_bitmap_copy(set, allowed);
	}
#endif
}

static void topo_describe(hwloc_topology_t topo, hwloc_const_cpuset_t slice, int by_thread, int shared,
			  struct strbuf *sb)
{
	hwloc_bitmap_t cores = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	hwloc_obj_t o = NULL;
	char *c = NULL, *p = NULL, *n = NULL;

	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o)) != NULL)
		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, slice))
			hwloc_bitmap_set(cores, o->logical_index);
	hwloc_cpuset_to_nodeset(topo, slice, nodes);
	hwloc_bitmap_list_asprintf(&c, cores);
	hwloc_bitmap_list_asprintf(&p, slice);
	hwloc_bitmap_list_asprintf(&n, nodes);
	if (hwloc_bitmap_iszero(cores))
		sb_addf(sb, "cpus %s (numa %s", p, n);
	else if (by_thread)
		sb_addf(sb, "cpus %s (core %s, numa %s", p, c, n);
	else
		sb_addf(sb, "cores %s (cpus %s, numa %s", c, p, n);
	if (shared > 1)
		sb_addf(sb, ", shared by %d ranks", shared);
	sb_addc(sb, ')');
	free(c);
	free(p);
	free(n);
	hwloc_bitmap_free(cores);
	hwloc_bitmap_free(nodes);
}

int topo_bind(int gpu, int local_rank, int local_size, struct strbuf *binding)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t mine, other, slice;
	int j, gj, ngpu, index = -1, count = 0, shared, by_thread, ret = -1;
	char *p = NULL;

	sb_reset(binding);
	if (hwloc_topology_init(&topo)) {
		sb_adds(binding, "none: cannot read the topology");
		return error("hwloc: cannot initialise a topology");
	}
	if (hwloc_topology_load(topo)) {
		hwloc_topology_destroy(topo);
		sb_adds(binding, "none: cannot read the topology");
		return error("hwloc: cannot load the topology: %s", strerror(errno));
	}
	mine = hwloc_bitmap_alloc();
	other = hwloc_bitmap_alloc();
	slice = hwloc_bitmap_alloc();
	ngpu = gpu >= 0 ? topo_gpu_count() : 0;
	topo_locality(topo, gpu, mine);
	/* The local ranks that share this locality, in rank order: this one is number index of count. */
	if (local_size < 1)
		local_size = 1;
	for (j = 0; j < local_size; j++) {
		gj = j == local_rank ? gpu : ngpu > 0 ? j % ngpu : -1;
		topo_locality(topo, gj, other);
		if (!hwloc_bitmap_isequal(other, mine))
			continue;
		if (j == local_rank)
			index = count;
		count++;
	}
	if (index < 0)
		index = count++; /* local_rank outside [0, local_size): a slice of its own after the others */
	shared = topo_split_units(topo, mine, index, count, slice, &by_thread);
	if (shared < 0) {
		sb_adds(binding, "none: no cpu to bind to");
		error("hwloc: no cpu to bind rank %d to", local_rank);
		goto out;
	}
	if (hwloc_set_cpubind(topo, slice, HWLOC_CPUBIND_PROCESS)) {
		hwloc_bitmap_list_asprintf(&p, slice);
		sb_addf(binding, "none: cannot bind to cpus %s: %s", p, strerror(errno));
		error("hwloc: cannot bind rank %d to cpus %s: %s", local_rank, p, strerror(errno));
		free(p);
		goto out;
	}
	topo_describe(topo, slice, by_thread, shared, binding);
	/* Neither PROCESS nor THREAD: hwloc may use a per-thread policy (Linux), which the threads this
	 * process starts afterwards inherit. */
	if (hwloc_set_membind(topo, slice, HWLOC_MEMBIND_BIND, 0))
		sb_addf(binding, ", memory not bound: %s", strerror(errno));
	ret = 0;
out:
	hwloc_bitmap_free(mine);
	hwloc_bitmap_free(other);
	hwloc_bitmap_free(slice);
	hwloc_topology_destroy(topo);
	return ret;
}
