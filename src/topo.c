/* topo.c: pinning workers near their GPU, disjoint cores for the local ranks that share one locality; the
 * same binding worked out for a machine described by an hwloc XML file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwloc.h>
#ifdef SWEEP_CUDA
#include <hwloc/cudart.h>
#endif
#include "hostinfo.h"
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


/* A machine's topology, with its important I/O objects, and the GPUs its local ranks drive. */
struct topo_machine {
	hwloc_topology_t topo;
	int ngpu;
	char (*busid)[TOPO_BUSID_LEN];
	hwloc_bitmap_t *near;  /* GPU i's allowed cpus; NULL: its locality is unknown */
	int *cls;              /* the ranks of GPUs i and j share cpus iff cls[i] == cls[j]; -1: the whole machine */
};

static void topo_machine_release(struct topo_machine *m)
{
	for (int i = 0; i < m->ngpu && m->near; i++)
		hwloc_bitmap_free(m->near[i]);
	free(m->near);
	free(m->cls);
	free(m->busid);
	hwloc_topology_destroy(m->topo);
}

/* The topology of the machine xml describes (NULL: this one), with its GPUs, NICs and the bridges above
 * them: a GPU's locality is where its PCI device hangs. */
static int topo_machine_load(struct topo_machine *m, const char *xml)
{
	memset(m, 0, sizeof(*m));
	if (hwloc_topology_init(&m->topo))
		return error("hwloc: cannot initialise a topology");
	hwloc_topology_set_io_types_filter(m->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* PCI devices and bridges are all it takes, and Linux's sysfs gives them: not the I/O phase (OS
	 * devices, through OpenCL, GL, CUDA or NVML plugins that would start GPU runtimes in every executor),
	 * nor the libpciaccess plugin (it reads config space again, and leaks). */
	hwloc_topology_set_components(m->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "all:io");
	hwloc_topology_set_components(m->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
	/* hwloc reads the file at one step or the other (libxml2 or its own parser): EINVAL is a file it
	 * cannot parse */
	if ((xml && hwloc_topology_set_xml(m->topo, xml)) || hwloc_topology_load(m->topo)) {
		if (!xml)
			error("hwloc: cannot load the topology: %s", strerror(errno));
		else if (errno == EINVAL)
			error("cannot load the topology '%s': not an hwloc XML file (as 'lstopo --of xml' writes)",
			      xml);
		else
			error("cannot read the topology '%s': %s", xml, strerror(errno));
		hwloc_topology_destroy(m->topo);
		return -1;
	}
	return 0;
}

static void topo_busid_of(const struct hwloc_pcidev_attr_s *p, char *out)
{
	snprintf(out, TOPO_BUSID_LEN, "%04x:%02x:%02x.%x", (unsigned)p->domain, (unsigned)p->bus,
		 (unsigned)p->dev, (unsigned)p->func);
}

int topo_busid(const char *s, char *out)
{
	unsigned long v[4];
	char sep[5] = "", *e;
	int n = 0;

	if (strspn(s, "0123456789abcdefABCDEF:.") != strlen(s))
		return -1;
	/* [domain:]bus:device.function: numbers, each ended by ':', ':', '.' or the end */
	while (n < 4 && *s) {
		v[n] = strtoul(s, &e, 16);
		if (e == s)
			return -1;
		sep[n++] = *e;
		s = *e ? e + 1 : e;
	}
	if (n == 3 && !strcmp(sep, ":.")) {
		v[3] = v[2], v[2] = v[1], v[1] = v[0], v[0] = 0;
	} else if (n != 4 || strcmp(sep, "::.")) {
		return -1;
	}
	if (v[0] > 0xffffffffUL || v[1] > 0xff || v[2] > 0x1f || v[3] > 7)
		return -1;
	snprintf(out, TOPO_BUSID_LEN, "%04lx:%02lx:%02lx.%lx", v[0], v[1], v[2], v[3]);
	return 0;
}

/* Bus ids in PCI bus order: all fields but the domain have fixed widths, so longer is a larger domain. */
static int topo_busid_cmp(const void *a, const void *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/* The GPUs of TOPO_GPUS_AUTO: NVIDIA's display and 3D controllers, in PCI bus order. NVSwitches (class
 * 0x0680) and a server's own VGA chip (another vendor's 0x0300) are not GPUs CUDA numbers. */
static void topo_machine_auto(struct topo_machine *m)
{
	hwloc_obj_t o = NULL;
	int n = 0;

	while ((o = hwloc_get_next_pcidev(m->topo, o)) != NULL)
		n++;
	m->busid = xcalloc(n ? (size_t)n : 1, sizeof(*m->busid));
	while ((o = hwloc_get_next_pcidev(m->topo, o)) != NULL)
		if (o->attr->pcidev.vendor_id == 0x10de &&
		    (o->attr->pcidev.class_id == 0x0300 || o->attr->pcidev.class_id == 0x0302))
			topo_busid_of(&o->attr->pcidev, m->busid[m->ngpu++]);
	qsort(m->busid, (size_t)m->ngpu, sizeof(*m->busid), topo_busid_cmp);
}

/* The GPUs sweep run drives here: CUDA's devices in CUDA's order ("" when CUDA gives no bus id). */
static void topo_machine_cuda(struct topo_machine *m)
{
	int n = hostinfo_gpu_count();
	char buf[64];

	m->busid = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*m->busid));
	for (m->ngpu = 0; m->ngpu < n; m->ngpu++)
		if (hostinfo_gpu_pci(m->ngpu, buf, sizeof(buf)) || topo_busid(buf, m->busid[m->ngpu]))
			m->busid[m->ngpu][0] = '\0';
}

/* The cpus of the first non-I/O ancestor of the PCI device busid; -1 when the topology has no such device. */
static int topo_pci_near(hwloc_topology_t topo, const char *busid, hwloc_cpuset_t set)
{
	hwloc_obj_t o = NULL;
	char id[TOPO_BUSID_LEN];

	while ((o = hwloc_get_next_pcidev(topo, o)) != NULL) {
		topo_busid_of(&o->attr->pcidev, id);
		if (!strcmp(id, busid))
			break;
	}
	if (!o || !(o = hwloc_get_non_io_ancestor_obj(topo, o)) || !o->cpuset)
		return -1;
	hwloc_bitmap_copy(set, o->cpuset);
	return 0;
}

/* The local cpus of CUDA device cuda as cudart reads them in sysfs; -1 without CUDA or that device. */
static int topo_cuda_near(hwloc_topology_t topo, int cuda, hwloc_cpuset_t set)
{
#ifdef SWEEP_CUDA
	if (!hwloc_cudart_get_device_cpuset(topo, cuda, set))
		return 0;
	cudaGetLastError();   /* no such device: leave no error behind for the next CUDA call */
#endif
	return -1;
}

/* Each GPU's cpus, and which GPUs' ranks share them. cuda: GPU i is CUDA's device i, so cudart stands in
 * when the topology has no PCI device of its bus id. */
static void topo_machine_locate(struct topo_machine *m, int cuda)
{
	hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(m->topo);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	m->near = xcalloc((size_t)m->ngpu + 1, sizeof(*m->near));
	m->cls = xcalloc((size_t)m->ngpu + 1, sizeof(*m->cls));
	for (int i = 0; i < m->ngpu; i++) {
		m->cls[i] = -1;
		if (topo_pci_near(m->topo, m->busid[i], set) && (!cuda || topo_cuda_near(m->topo, i, set)))
			continue;
		hwloc_bitmap_and(set, set, allowed);
		if (hwloc_bitmap_iszero(set))
			continue;
		m->near[i] = hwloc_bitmap_dup(set);
		if (hwloc_bitmap_isequal(set, allowed))
			continue;   /* the whole machine: its ranks split it with those of no GPU */
		for (int j = 0; m->cls[i] < 0; j++)   /* ends at j == i */
			if (m->near[j] && hwloc_bitmap_isequal(m->near[j], set))
				m->cls[i] = j;
	}
	hwloc_bitmap_free(set);
}

/* The cpus of the ranks of GPU g (any index: -1 or one past the GPUs is no GPU): near it, else all. */
static hwloc_const_cpuset_t topo_near(const struct topo_machine *m, int g)
{
	return g >= 0 && g < m->ngpu && m->near[g] ? m->near[g] : hwloc_topology_get_allowed_cpuset(m->topo);
}

static int topo_cls(const struct topo_machine *m, int g)
{
	return g >= 0 && g < m->ngpu ? m->cls[g] : -1;
}

/* The slice of rank r of the n ranks whose GPUs are gpu_of[]: its share of the cpus near its GPU, split
 * in rank order among the ranks whose GPUs have the same cpus. Returns topo_split's answer. */
static int topo_rank_slice(const struct topo_machine *m, const int *gpu_of, int n, int r,
			   hwloc_cpuset_t slice, int *by_thread)
{
	int index = 0, count = 0, c = topo_cls(m, gpu_of[r]);

	for (int j = 0; j < n; j++)
		if (topo_cls(m, gpu_of[j]) == c) {
			index += j < r;
			count++;
		}
	return topo_split_units(m->topo, topo_near(m, gpu_of[r]), index, count, slice, by_thread);
}

/* Every rank's slice, and how many ranks' slices meet it (itself included: 1 when its cpus are its own).
 * Counting overlaps rather than trusting the split keeps ranks of nested localities honest: the ranks of a
 * GPU without locality split the whole machine, over the slices of the others. */
struct topo_slices {
	hwloc_bitmap_t *set;
	int *shared, *by_thread, n;
};

static void topo_slices_release(struct topo_slices *s)
{
	for (int r = 0; r < s->n; r++)
		hwloc_bitmap_free(s->set[r]);
	free(s->set);
	free(s->shared);
	free(s->by_thread);
	memset(s, 0, sizeof(*s));
}

/* The slices of the n ranks whose GPUs are gpu_of[]; -1 (s released) when a locality has no cpu. */
static int topo_slices_make(const struct topo_machine *m, const int *gpu_of, int n, struct topo_slices *s)
{
	int r, j;

	s->n = n;
	s->set = xcalloc((size_t)n, sizeof(*s->set));
	s->shared = xcalloc((size_t)n, sizeof(*s->shared));
	s->by_thread = xcalloc((size_t)n, sizeof(*s->by_thread));
	for (r = 0; r < n; r++) {
		s->set[r] = hwloc_bitmap_alloc();
		if (topo_rank_slice(m, gpu_of, n, r, s->set[r], &s->by_thread[r]) < 0) {
			topo_slices_release(s);
			return -1;
		}
	}
	for (r = 0; r < n; r++)
		for (j = 0; j < n; j++)
			s->shared[r] += hwloc_bitmap_intersects(s->set[r], s->set[j]);
	return 0;
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
	struct topo_machine m;
	struct topo_slices s;
	hwloc_const_cpuset_t slice;
	int j, *gpu_of, ret = -1;
	char *p = NULL;

	sb_reset(binding);
	if (local_size < 1)
		local_size = 1;
	if (local_rank < 0 || local_rank >= local_size)
		BUG("topo_bind: local rank %d of %d", local_rank, local_size);
	if (topo_machine_load(&m, NULL)) {
		sb_adds(binding, "none: cannot read the topology");
		return -1;
	}
	if (gpu >= 0)
		topo_machine_cuda(&m);
	topo_machine_locate(&m, 1);
	gpu_of = xcalloc((size_t)local_size, sizeof(*gpu_of));
	for (j = 0; j < local_size; j++)
		gpu_of[j] = j == local_rank ? gpu : m.ngpu > 0 ? j % m.ngpu : -1;
	if (topo_slices_make(&m, gpu_of, local_size, &s)) {
		sb_adds(binding, "none: no cpu to bind to");
		error("hwloc: no cpu to bind rank %d to", local_rank);
		goto out;
	}
	slice = s.set[local_rank];
	if (hwloc_set_cpubind(m.topo, slice, HWLOC_CPUBIND_PROCESS)) {
		hwloc_bitmap_list_asprintf(&p, slice);
		sb_addf(binding, "none: cannot bind to cpus %s: %s", p, strerror(errno));
		error("hwloc: cannot bind rank %d to cpus %s: %s", local_rank, p, strerror(errno));
		free(p);
	} else {
		topo_describe(m.topo, slice, s.by_thread[local_rank], s.shared[local_rank], binding);
		if (gpu >= 0 && (gpu >= m.ngpu || !m.near[gpu]))
			sb_adds(binding, ", GPU locality unknown");
		/* Neither PROCESS nor THREAD: hwloc may use a per-thread policy (Linux), which the threads
		 * this process starts afterwards inherit. */
		if (hwloc_set_membind(m.topo, slice, HWLOC_MEMBIND_BIND, 0))
			sb_addf(binding, ", memory not bound: %s", strerror(errno));
		ret = 0;
	}
	topo_slices_release(&s);
out:
	free(gpu_of);
	topo_machine_release(&m);
	return ret;
}

/* The ranks of gpu_of[0..n) that drive GPU g (same_gpu), or that split the same cpus as its ranks, as a
 * list ("0,8" or "0-3"). */
static char *topo_ranks_like(const struct topo_machine *m, const int *gpu_of, int n, int g, int same_gpu)
{
	hwloc_bitmap_t ranks = hwloc_bitmap_alloc();
	char *s = NULL;

	for (int r = 0; r < n; r++)
		if (same_gpu ? gpu_of[r] == g : topo_cls(m, gpu_of[r]) == topo_cls(m, g))
			hwloc_bitmap_set(ranks, (unsigned)r);
	hwloc_bitmap_list_asprintf(&s, ranks);
	hwloc_bitmap_free(ranks);
	return s;
}

/* What plan's numbers would not say aloud: no GPU, a GPU without locality, cpus shared, no binding. */
static void topo_plan_notes(const struct topo_machine *m, const int *gpu_of, int cuda, int online,
			    struct topo_plan *plan)
{
	int n = plan->nranks, g, r, j, cpus, count;
	char *s;

	if (!m->ngpu)
		sb_addf(&plan->notes, "no GPU (%s): the ranks split the whole machine\n",
			cuda ? "CUDA sees none" : "the topology has no NVIDIA display or 3D controller");
	if (!plan->bound) {
		sb_addf(&plan->notes, "%d ranks on %d online cpus: sweep run leaves them unbound (it pins ranks only "
			"when each can have a cpu of its own)\n", n, online);
		return;
	}
	for (g = 0; g < m->ngpu && g < n; g++)
		if (!m->near[g]) {
			s = topo_ranks_like(m, gpu_of, n, g, 1);
			sb_addf(&plan->notes, "GPU %s has no locality in the topology: its ranks (%s) split the "
				"whole machine\n", m->busid[g][0] ? m->busid[g] : "(no bus id)", s);
			free(s);
		}
	/* ranks sharing cpus: once per locality, at its first rank */
	for (r = 0; r < n; r++) {
		int c = topo_cls(m, gpu_of[r]), first = 1;

		for (j = 0, count = 0; j < n; j++)
			if (topo_cls(m, gpu_of[j]) == c) {
				first &= j >= r;
				count++;
			}
		cpus = hwloc_bitmap_weight(topo_near(m, gpu_of[r]));
		if (!first || count <= cpus)
			continue;
		s = topo_ranks_like(m, gpu_of, n, gpu_of[r], 0);
		sb_addf(&plan->notes, "ranks %s: %d ranks on %d cpus, up to %d on one\n", s, count, cpus,
			(count + cpus - 1) / cpus);
		free(s);
	}
}

int topo_plan(const char *xml, enum topo_gpus which, char *const *busid, int nbusid, int nranks,
	      struct topo_plan *plan)
{
	struct topo_machine m;
	struct topo_slices s;
	hwloc_bitmap_t nodes;
	int r, online, *gpu_of, cuda = which == TOPO_GPUS_RUN && !xml, ret = 0;

	memset(plan, 0, sizeof(*plan));
	if (nranks < 1 || (which == TOPO_GPUS_LIST && nbusid < 1))
		BUG("topo_plan: %d ranks, %d bus ids", nranks, nbusid);
	if (topo_machine_load(&m, xml))
		return -1;
	if (which == TOPO_GPUS_LIST) {
		m.busid = xcalloc((size_t)nbusid, sizeof(*m.busid));
		for (m.ngpu = 0; m.ngpu < nbusid; m.ngpu++)
			snprintf(m.busid[m.ngpu], TOPO_BUSID_LEN, "%s", busid[m.ngpu]);
	} else if (cuda) {
		topo_machine_cuda(&m);
	} else {
		topo_machine_auto(&m);
	}
	topo_machine_locate(&m, cuda);
	/* worker.c's rule: ranks are pinned only when there are no more of them than online cpus */
	online = xml ? hwloc_bitmap_weight(hwloc_topology_get_topology_cpuset(m.topo))
		     : (int)sysconf(_SC_NPROCESSORS_ONLN);
	plan->bound = nranks <= online;
	plan->nranks = nranks;
	plan->rank = xcalloc((size_t)nranks, sizeof(*plan->rank));
	gpu_of = xcalloc((size_t)nranks, sizeof(*gpu_of));
	for (r = 0; r < nranks; r++)
		gpu_of[r] = m.ngpu > 0 ? r % m.ngpu : -1;
	memset(&s, 0, sizeof(s));
	if (plan->bound && topo_slices_make(&m, gpu_of, nranks, &s)) {
		ret = error("the topology has no cpu to bind the ranks to");
		topo_plan_release(plan);
		goto out;
	}
	nodes = hwloc_bitmap_alloc();
	for (r = 0; r < nranks; r++) {
		struct topo_rank *k = &plan->rank[r];
		/* unbound, a rank may run anywhere it is allowed, as may every other rank */
		hwloc_const_cpuset_t set = plan->bound ? s.set[r] : hwloc_topology_get_allowed_cpuset(m.topo);

		k->gpu = gpu_of[r] >= 0 ? xstrdup(m.busid[gpu_of[r]]) : NULL;
		k->shared = plan->bound ? s.shared[r] : nranks;
		hwloc_cpuset_to_nodeset(m.topo, set, nodes);
		hwloc_bitmap_list_asprintf(&k->cpus, set);
		hwloc_bitmap_list_asprintf(&k->numa, nodes);
	}
	hwloc_bitmap_free(nodes);
	topo_plan_notes(&m, gpu_of, cuda, online, plan);
out:
	topo_slices_release(&s);
	free(gpu_of);
	topo_machine_release(&m);
	return ret;
}

void topo_plan_release(struct topo_plan *plan)
{
	for (int r = 0; r < plan->nranks; r++) {
		free(plan->rank[r].gpu);
		free(plan->rank[r].cpus);
		free(plan->rank[r].numa);
	}
	free(plan->rank);
	sb_release(&plan->notes);
	memset(plan, 0, sizeof(*plan));
}
