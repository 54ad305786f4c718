/* topo.h: pinning a worker near its GPU, disjoint cores per local rank; the same binding worked out for a
 * machine described by an hwloc XML file. topo.c alone includes hwloc.h. */
#ifndef SWEEP_TOPO_H
#define SWEEP_TOPO_H

#include "util.h"

/* hwloc's own types, named without its header: hwloc_topology_t is struct hwloc_topology *, and a
 * cpuset (hwloc_cpuset_t) is struct hwloc_bitmap_s *. */
struct hwloc_topology;
struct hwloc_bitmap_s;

/*
 * Where a GPU's cpus come from, in a live run and in topo_plan alike: the machine's topology is loaded
 * with its important I/O objects (GPUs, NICs and the bridges above them), the GPU's PCI device is found
 * by its bus id, and its first ancestor that is not an I/O object gives the cpus. On this machine, when
 * the topology has no such device (a VM without PCI detail), cudart's reading of the device's local cpus
 * in sysfs stands in. A GPU found neither way has no locality: its ranks split the whole machine.
 */

/*
 * Bind this process (all its threads) and its memory near GPU gpu (a CUDA device; -1: no GPU, the whole
 * machine), to a slice of the cores there that no other local rank sharing that locality gets. Local
 * rank j is taken to drive GPU j % (number of GPUs), as the executor (executor_loop.c) assigns them;
 * ranks whose GPUs have the same cpuset split it among themselves in rank order. Memory is bound to the
 * NUMA nodes of the slice; a machine that refuses memory binding still gets the CPU binding (binding
 * says so).
 *
 * binding is reset and gets a description: "cores 0-7 (cpus 0-7,32-39, numa 0)", with ", shared by N
 * ranks" when the slices of N ranks (this one included) meet this one's (more ranks than hardware
 * threads, or a GPU without locality whose ranks split the whole machine) and ", GPU locality unknown"
 * when the GPU's cpus could not be found. Returns 0, or -1 after error() when the CPU binding could not
 * be set (binding then says "none: <why>").
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

/* Room for a PCI bus id as hwloc writes it, "0000:1b:00.0" (a domain of up to 8 digits), and its NUL. */
#define TOPO_BUSID_LEN 20

/* Which GPUs the ranks of a plan drive, rank k the GPU k % (their number). */
enum topo_gpus {
	TOPO_GPUS_RUN,         /* those sweep run drives: CUDA's devices here, TOPO_GPUS_AUTO's in a file */
	TOPO_GPUS_AUTO,        /* the topology's NVIDIA display and 3D controllers (PCI vendor 0x10de, class
				* 0x0300 or 0x0302) in PCI bus order: CUDA's order under CUDA_DEVICE_ORDER=PCI_BUS_ID */
	TOPO_GPUS_LIST         /* the bus ids given */
};

/* What one local rank is bound to. */
struct topo_rank {
	char *gpu;             /* its GPU's PCI bus id; NULL: no GPU */
	char *cpus;            /* PU os indexes in hwloc's list syntax ("0-13,112-125") */
	char *numa;            /* the NUMA nodes (os indexes) of those cpus, same syntax */
	int shared;            /* how many ranks' cpus meet these, its own included (1: they are its own) */
};

/* The binding of every local rank of a machine. Owns everything; topo_plan_release frees it. */
struct topo_plan {
	struct topo_rank *rank;
	int nranks;
	int bound;             /* 0: more ranks than cpus, so sweep run leaves them unbound (each rank's cpus
				* are then all the machine's, shared by every rank) */
	struct strbuf notes;   /* what the numbers alone would hide, one line each: no GPU, a GPU without
				* locality, ranks sharing cpus, ranks left unbound */
};

/*
 * The binding that sweep run gives each of nranks (>= 1) ranks on one machine: the machine described
 * by xml (an hwloc XML file, as `lstopo --of xml` writes it), or this one (xml NULL). which says where
 * the GPUs come from; for TOPO_GPUS_LIST, busid holds nbusid (>= 1) bus ids as topo_busid writes them.
 * It is exactly what topo_bind does on that machine, after worker.c's rule that ranks are pinned only
 * when there are no more of them than online cpus. Returns 0, or -1 after error() when the topology
 * cannot be loaded (for a file: bad input).
 */
int topo_plan(const char *xml, enum topo_gpus which, char *const *busid, int nbusid, int nranks,
	      struct topo_plan *plan);
void topo_plan_release(struct topo_plan *plan);

/* s ("1b:00.0", "0000:1B:00.0", NVML's "00000000:1b:00.0") as hwloc writes a PCI bus id, into out of
 * TOPO_BUSID_LEN bytes; -1 (no message) when s is not a bus id. */
int topo_busid(const char *s, char *out);

#endif
