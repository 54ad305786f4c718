/* topo.h: pinning a worker near its GPU, disjoint cores per local rank. topo.c alone includes hwloc.h. */
#ifndef SWEEP_TOPO_H
#define SWEEP_TOPO_H

struct strbuf;
/* hwloc's own types, named without its header: hwloc_topology_t is struct hwloc_topology *, and a
 * cpuset (hwloc_cpuset_t) is struct hwloc_bitmap_s *. */
struct hwloc_topology;
struct hwloc_bitmap_s;

/*
 * Bind this process (all its threads) and its memory near GPU gpu (-1: no GPU, the whole machine), to a
 * slice of the cores there that no other local rank sharing that locality gets. Local rank j is taken
 * to drive GPU j % (number of GPUs), as the worker (worker.c) assigns them; ranks whose GPUs have the same cpuset
 * split it among themselves in rank order. Memory is bound to the NUMA nodes of the slice; a machine
 * that refuses memory binding still gets the CPU binding (binding says so).
 *
 * binding is reset and gets a description: "cores 0-7 (cpus 0-7,32-39, numa 0)", with ", shared by N
 * ranks" when there are more ranks than hardware threads. Returns 0, or -1 after error() when the CPU
 * binding could not be set (binding then says "none: <why>").
 */
int topo_bind(int gpu, int local_rank, int local_size, struct strbuf *binding);

/*
 * Slice index of count of the processing units of set in topology topo, into out (a cpuset the caller
 * allocated): whole cores, contiguous in hwloc's logical order (so a slice stays within a package or NUMA
 * node when it can), the count of cores per slice differing by at most one. With fewer cores than
 * slices, hardware threads are split instead; with fewer hardware threads than slices, each gets one
 * and they are shared as evenly as possible. Returns how many slices share out's threads (1: this slice
 * is its own), or -1 when set holds no processing unit of topo or index is not in [0, count).
 */
int topo_split(struct hwloc_topology *topo, const struct hwloc_bitmap_s *set, int index, int count,
	       struct hwloc_bitmap_s *out);

#endif
