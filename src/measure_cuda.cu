/* measure_cuda.cu: timer_cuda, how measure.c samples CUDA kernels: events, cold L2, batches of launches
 * (graphs when the L2 stays hot, flushed launches timed one by one when it is cold). */
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../kernels/cuda_common.h"
#include "nvml.h"

extern "C" {
#include "criterion.h"
#include "measure.h"
}

/* A graph holds at most this many launches; a larger batch replays it several times in one timed region. */
#define GRAPH_MAX_LAUNCHES 1024
/* Under a cold L2 a sample of several launches flushes before each one and times each alone, between a pair
 * of events: at most this many pairs are enqueued behind one gate. More read longer: an H200 decode step
 * read 12.2-12.7 us at 1 to 9 launches behind a gate, 12.8-13.4 us at 16 to 576. */
#define COLD_MAX_LAUNCHES 8
/* What CUDA's documentation gives as the events' resolution, at each end of a timed region. */
#define EVENT_RESOLUTION 0.5e-6
/* Waiting for the GPU: spin this long on the event, then poll with short sleeps so that a watchdog
 * cancel is seen and a long kernel does not burn a core. */
#define SPIN_SECONDS 2e-3
/* NVML's readings are asked for at most this often: a query is a call into the driver, which answers
 * it from the card's firmware. */
#define POWER_POLL 5e-3

/* The gate's page: the host opens it; the kernel writes the cycles and nanoseconds it spun, and the
 * largest step of the global timer it saw. */
struct gate {
	int open;
	unsigned long long cycles, ns, step;
};

/* Where one sample is timed: its gate's page and its pair of events. A timer has two, so that the next
 * sample can be enqueued while one runs (cuda_sample says why). */
struct slot {
	cudaEvent_t start, stop;
	volatile struct gate *gate;     /* pinned, mapped: the host opens it once a sample is enqueued */
	struct gate *gate_dev;
};

/* The card's power readings, for cuda_power. */
struct power_watch {
	double limit;                   /* W, 0 when NVML gives no limit */
	double polled;                  /* now_mono of the last reading */
	double watts;                   /* the last reading, NaN before the first */
	double fresh;                   /* when a reading other than the one before was first seen */
	int capped;                     /* a limit held the clocks back at the last reading */
};

/* The energy used, for cuda_energy: NVML's counter, else its power readings summed over time. */
struct energy_sum {
	int counter;                    /* 1: NVML's total energy counter answers */
	double joules;                  /* the readings' sum since the first */
	double at;                      /* now_mono of the last reading, 0 before the first */
	double watts;                   /* the last reading */
};

struct cuda_timer {
	int gpu;
	cudaStream_t stream;
	struct slot slot[2];
	int cur;                        /* the slot of the sample read next */
	int ahead;                      /* the batch of the sample already enqueued in slot cur, or 0 */
	void *flush;                    /* NULL when the L2 stays hot */
	size_t flush_bytes;
	unsigned flush_value;
	int flush_blocks;               /* of the flush's read: 4 per SM */
	void *nvml;                     /* NVML handle of this GPU, NULL without NVML */
	cudaGraphExec_t graph;          /* batch launches of graph_launches each, or NULL */
	cudaEvent_t marks[2 * COLD_MAX_LAUNCHES];   /* a cold batch's pairs, created on first use */
	int nmarks;
	int graph_launches;
	int sampled;                    /* a sample was taken: the kernel's code is loaded */
	struct power_watch power;
	struct energy_sum energy;
};

/* How long the blocking kernel waits for the host before it gives up (a host that died, say). */
#define GATE_TIMEOUT_NS 10000000000ULL
/* A sample's first gate holds at least this long, so that its count of SM cycles over nanoseconds reads
 * the clock to 0.3 % (the global timer steps by 32 ns on an H200, as the events do). A timer that steps
 * by more than GATE_STEP_NS would read it to worse than 1 %: NVML's clock is read instead. */
#define GATE_CLOCK_NS 10000ULL
#define GATE_STEP_NS 100ULL

/*
 * NVBench's blocking kernel: it holds the stream until the host has enqueued the whole sample, so the
 * timed region never includes the CPU's launch latency (the GPU would otherwise run each launch as soon
 * as it arrives, and idle between them). Meanwhile it counts its multiprocessor's cycles against the
 * global timer: the SM clock right before the sample, measured where it runs. NVML's clock is not that:
 * on a power-limited H200 it still read 1980 MHz while a GEMM slowed by 18 %, and one of its readings
 * can lag a falling clock by tens of milliseconds.
 */
static __global__ void gate_kernel(volatile struct gate *gate, unsigned long long min_ns,
				   unsigned long long timeout_ns)
{
	unsigned long long t0, t, c0;

	/* One step of the timer, from one change to the next. */
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	while (t0 == t);
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t == t0);
	if (t - t0 > gate->step)
		gate->step = t - t0;
	/* The timer and the cycles read together at each end: a read of the host's page takes about a
	 * microsecond, which one of them alone would count. */
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	c0 = clock64();
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while ((!gate->open || t - t0 < min_ns) && t - t0 < timeout_ns);
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	gate->cycles += clock64() - c0;
	gate->ns += t - t0;
}

/* Close the slot's gate and clear its count of cycles, before the first gate of a sample. */
static void gate_close(struct slot *p)
{
	p->gate->open = 0;
	p->gate->cycles = p->gate->ns = p->gate->step = 0;
}

/* Open the gate: what was enqueued behind it runs. */
static void gate_open(struct slot *p)
{
	__sync_synchronize();
	p->gate->open = 1;
}

/* The SM clock over the slot's gates in MHz, else NVML's reading now, else 0. */
static double gate_clock(struct cuda_timer *s, struct slot *p)
{
	unsigned mhz;

	if (p->gate->ns >= GATE_CLOCK_NS && p->gate->step <= GATE_STEP_NS)
		return 1e3 * (double)p->gate->cycles / (double)p->gate->ns;
	return s->nvml && !nvml_clock(s->nvml, NVML_SM, 0, &mhz) ? mhz : 0;
}

static void cuda_timer_free(struct cuda_timer *s)
{
	if (s->graph)
		cudaGraphExecDestroy(s->graph);
	if (s->flush)
		cudaFree(s->flush);
	for (int i = 0; i < 2; i++) {
		if (s->slot[i].start)
			cudaEventDestroy(s->slot[i].start);
		if (s->slot[i].stop)
			cudaEventDestroy(s->slot[i].stop);
	}
	for (int i = 0; i < s->nmarks; i++)
		cudaEventDestroy(s->marks[i]);
	if (s->stream)
		cudaStreamDestroy(s->stream);
	if (s->slot[0].gate)
		cudaFreeHost((void *)s->slot[0].gate);   /* both slots' pages */
	free(s);
}

static int cuda_init(struct kctx *ctx, const struct spec_timing *t, void **state)
{
	struct cuda_timer *s = (struct cuda_timer *)xcalloc(1, sizeof(*s));
	char pci[32] = "", uuid[48];
	cudaDeviceProp prop;
	int n = 0, l2 = 0;
	struct gate *pages = NULL, *pages_dev = NULL;
	cudaError_t e;

	*state = NULL;
	if (ctx->gpu < 0) {
		free(s);
		return kfail(ctx, "this worker has no GPU");
	}
	if ((e = cudaGetDeviceCount(&n)) != cudaSuccess || ctx->gpu >= n) {
		free(s);
		return kfail(ctx, "GPU %d: %s", ctx->gpu,
			     e != cudaSuccess ? cudaGetErrorString(e) : "no such device");
	}
	s->gpu = ctx->gpu;
	if ((e = cudaSetDevice(s->gpu)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, s->gpu)) != cudaSuccess ||
	    (e = cudaHostAlloc((void **)&pages, 2 * sizeof(*pages), cudaHostAllocMapped)) != cudaSuccess)
		goto fail;
	s->slot[0].gate = pages;   /* freed through slot 0 from here on */
	if ((e = cudaHostGetDevicePointer((void **)&pages_dev, pages, 0)) != cudaSuccess)
		goto fail;
	for (int i = 0; i < 2; i++) {
		s->slot[i].gate = pages + i;
		s->slot[i].gate_dev = pages_dev + i;
		if ((e = cudaEventCreate(&s->slot[i].start)) != cudaSuccess ||
		    (e = cudaEventCreate(&s->slot[i].stop)) != cudaSuccess)
			goto fail;
	}
	/* Cold by default: twice the L2 written, then read, before each sample evicts whatever the last
	 * launch left (cuda_l2_flush, kernels/cuda_common.h, says why the read and the 16 more bytes). */
	if (!t->l2_hot && l2 > 0) {
		s->flush_bytes = 2 * (size_t)l2;
		if ((e = cudaMalloc(&s->flush, s->flush_bytes + 16)) != cudaSuccess ||
		    (e = cudaDeviceGetAttribute(&s->flush_blocks, cudaDevAttrMultiProcessorCount, s->gpu)) !=
			    cudaSuccess)
			goto fail;
		s->flush_blocks *= 4;
	}
	if (cudaDeviceGetPCIBusId(pci, sizeof(pci), s->gpu) != cudaSuccess)
		pci[0] = '\0';
	if (cudaGetDeviceProperties(&prop, s->gpu) == cudaSuccess)
		cuda_uuid_string(&prop.uuid, uuid, sizeof(uuid));
	else
		uuid[0] = '\0';
	if (nvml_device(pci, uuid, &s->nvml))
		s->nvml = NULL;
	if (!s->nvml || nvml_power_limit(s->nvml, &s->power.limit))
		s->power.limit = 0;
	s->power.watts = NAN;
	s->power.fresh = -INFINITY;
	s->energy.counter = s->nvml && !nvml_energy(s->nvml, &s->energy.joules);
	s->energy.joules = 0;
	ctx->stream = s->stream;
	*state = s;
	return 0;
fail:
	cuda_timer_free(s);
	cudaGetLastError();   /* a failed allocation is not sticky: leave no error for the next cell */
	return kfail(ctx, "GPU %d: %s", ctx->gpu, cudaGetErrorString(e));
}

/* Wait for ev: 0, or -1 with the CUDA error or the cancel in ctx->err. */
static int cuda_wait(struct kctx *ctx, cudaEvent_t ev)
{
	double start = now_mono();
	struct timespec nap = { 0, 50000 };
	cudaError_t e;

	while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) {
		if (*ctx->cancel)
			return kfail(ctx, "cancelled while the GPU was still busy");
		if (now_mono() - start > SPIN_SECONDS)
			nanosleep(&nap, NULL);
	}
	CUDA_CHECK(ctx, e);
	return 0;
}

/*
 * Capture `launches` launches of k into a graph: launches too short to time one by one (measure.c batches
 * them) run back to back from one graph launch, without a CPU launch gap between them. A hook that fails
 * while capturing ends the capture and discards it.
 */
static int cuda_capture(struct cuda_timer *s, const struct kernel_ops *k, struct kctx *ctx, int launches)
{
	cudaGraph_t g = NULL;
	cudaError_t e;
	int i, ret = 0;

	if (s->graph) {
		cudaGraphExecDestroy(s->graph);
		s->graph = NULL;
	}
	CUDA_CHECK(ctx, cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
	for (i = 0; i < launches && !ret; i++)
		ret = k->launch(ctx);
	e = cudaStreamEndCapture(s->stream, &g);
	if (ret) {
		if (g)
			cudaGraphDestroy(g);
		cudaGetLastError();
		return -1;
	}
	CUDA_CHECK(ctx, e);
	e = cudaGraphInstantiate(&s->graph, g, 0);
	cudaGraphDestroy(g);
	if (e != cudaSuccess)
		s->graph = NULL;
	CUDA_CHECK(ctx, e);
	s->graph_launches = launches;
	return 0;
}

/* The launches of a sample of `batch`: one, or graphs of GRAPH_MAX_LAUNCHES at most, replayed `reps` times. */
static int cuda_per_graph(int batch, int *reps)
{
	int per_graph = batch < GRAPH_MAX_LAUNCHES ? batch : GRAPH_MAX_LAUNCHES;

	*reps = batch > 1 ? (batch + per_graph - 1) / per_graph : 1;
	return per_graph;
}

/* Behind the gate: the L2 flush, the start event, the launches (one, or graphs of a batch), the stop. */
static int cuda_enqueue(struct cuda_timer *s, const struct kernel_ops *k, struct kctx *ctx, int batch,
			struct slot *p)
{
	int reps;

	cuda_per_graph(batch, &reps);
	/* Outside the timed region: a different value each time, so no layer can skip a repeated fill. */
	if (s->flush)
		CUDA_CHECK(ctx,
			   cuda_l2_flush(s->flush, s->flush_bytes, ++s->flush_value, s->flush_blocks, s->stream));
	CUDA_CHECK(ctx, cudaEventRecord(p->start, s->stream));
	if (batch > 1) {
		for (int i = 0; i < reps; i++)
			CUDA_CHECK(ctx, cudaGraphLaunch(s->graph, s->stream));
	} else if (k->launch(ctx)) {
		return -1;
	}
	CUDA_CHECK(ctx, cudaEventRecord(p->stop, s->stream));
	return 0;
}

/* Enqueue a sample in slot p, behind a gate when `gated`, and open the gate. */
static int cuda_put(struct cuda_timer *s, const struct kernel_ops *k, struct kctx *ctx, int batch, struct slot *p,
		    int gated)
{
	int rc;

	gate_close(p);
	if (gated) {
		gate_kernel<<<1, 1, 0, s->stream>>>(p->gate_dev, GATE_CLOCK_NS, GATE_TIMEOUT_NS);
		LAUNCH_CHECK(ctx);
	}
	rc = cuda_enqueue(s, k, ctx, batch, p);
	gate_open(p);   /* even after an error, so that nothing waits behind the gate */
	return rc;
}

/* Wait for the sample enqueued ahead, if any, and forget it. */
static int cuda_drain(struct cuda_timer *s, struct kctx *ctx)
{
	if (!s->ahead)
		return 0;
	s->ahead = 0;
	return cuda_wait(ctx, s->slot[s->cur].stop);
}

/* Behind the gate, n launches of a cold batch: before each the flush, around each a pair of events. */
static int cuda_enqueue_cold(struct cuda_timer *s, const struct kernel_ops *k, struct kctx *ctx, int n)
{
	for (int i = 0; i < n; i++) {
		CUDA_CHECK(ctx,
			   cuda_l2_flush(s->flush, s->flush_bytes, ++s->flush_value, s->flush_blocks, s->stream));
		CUDA_CHECK(ctx, cudaEventRecord(s->marks[2 * i], s->stream));
		if (k->launch(ctx))
			return -1;
		CUDA_CHECK(ctx, cudaEventRecord(s->marks[2 * i + 1], s->stream));
	}
	return 0;
}

/*
 * A sample of `batch` launches under a cold L2: each launch finds the L2 flushed, as a single launch does,
 * and only the launches are timed (the flushes run between the pairs of events). The launches are
 * enqueued behind the gate COLD_MAX_LAUNCHES at a time; the sample is their summed time per launch.
 */
static int cuda_sample_cold(struct cuda_timer *s, const struct kernel_ops *k, struct kctx *ctx, int batch,
			    double *seconds)
{
	struct slot *p = &s->slot[s->cur];
	double total = 0;
	float ms;

	while (s->nmarks < 2 * COLD_MAX_LAUNCHES) {
		CUDA_CHECK(ctx, cudaEventCreate(&s->marks[s->nmarks]));
		s->nmarks++;
	}
	gate_close(p);
	for (int done = 0, n; done < batch; done += n) {
		int rc;

		n = batch - done < COLD_MAX_LAUNCHES ? batch - done : COLD_MAX_LAUNCHES;
		p->gate->open = 0;
		gate_kernel<<<1, 1, 0, s->stream>>>(p->gate_dev, done ? 0 : GATE_CLOCK_NS, GATE_TIMEOUT_NS);
		LAUNCH_CHECK(ctx);
		rc = cuda_enqueue_cold(s, k, ctx, n);
		gate_open(p);
		if (rc || cuda_wait(ctx, s->marks[2 * n - 1]))
			return -1;
		for (int i = 0; i < n; i++) {
			CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, s->marks[2 * i], s->marks[2 * i + 1]));
			total += ms * 1e-3;
		}
	}
	*seconds = total / batch;
	return 0;
}

/* NVML's power reading summed over time, at most every POWER_POLL (a reading holds until the next):
 * for a card without the energy counter. */
static void energy_poll(struct cuda_timer *s)
{
	struct energy_sum *e = &s->energy;
	double now = now_mono(), watts;

	if (e->counter || !s->nvml || (e->at > 0 && now - e->at < POWER_POLL) || nvml_power(s->nvml, &watts))
		return;
	if (e->at > 0)
		e->joules += e->watts * (now - e->at);
	e->at = now;
	e->watts = watts;
}

/*
 * Samples are enqueued one ahead: the next (same batch) goes in behind this one before the host waits for
 * it, so its gate starts as this sample ends and the GPU idles the gate's GATE_CLOCK_NS between samples,
 * whatever the host's latency. Serially (the host waking, reading the events, enqueueing the next) the idle
 * time between samples followed the host, and the kernel's time followed it: on an H200 a 68 us GEMM took
 * 0.6-1.5 % longer with 50 us more idle before each sample, and the medians of 0.6 s of its samples moved
 * by 0.4-0.65 % from one run to the next, one ahead by 0.05-0.09 % (docs/measured.md). A sample of
 * another batch drops the one ahead (batch sizing, warm-up again). Not for the first sample (the check
 * reads its output next), nor for collectives (each member must launch exactly as often as the others),
 * nor for cold batches (cuda_sample_cold).
 */
static int cuda_sample(void *state, const struct kernel_ops *k, struct kctx *ctx, int batch, double *seconds,
		       double *clock_mhz)
{
	struct cuda_timer *s = (struct cuda_timer *)state;
	int reps, per_graph = cuda_per_graph(batch, &reps), gated = s->sampled && !k->gang_open;
	int cold = batch > 1 && s->flush && !k->gang_open;
	struct slot *p;
	float ms;

	if ((s->ahead != batch || cold) && cuda_drain(s, ctx))
		return -1;
	if (cold) {
		if (cuda_sample_cold(s, k, ctx, batch, seconds))
			return -1;
		*clock_mhz = gate_clock(s, &s->slot[s->cur]);
		energy_poll(s);
		return 0;
	}
	if (batch > 1 && (!s->graph || s->graph_launches != per_graph) && cuda_capture(s, k, ctx, per_graph))
		return -1;
	/*
	 * Not behind a gate for the first sample: the first launch of a library's kernel loads its code (CUDA
	 * loads modules lazily), which synchronises the device and would wait for a gate that opens only
	 * afterwards. The first sample is the launch measure.c checks, never a timed one. Not for collectives
	 * either: NCCL may synchronise while it enqueues (its first operation on a communicator connects the
	 * peers).
	 */
	p = &s->slot[s->cur];
	s->sampled = 1;
	if (!s->ahead && cuda_put(s, k, ctx, batch, p, gated))
		return -1;
	s->ahead = 0;
	if (gated) {
		if (cuda_put(s, k, ctx, batch, &s->slot[1 - s->cur], 1))
			return -1;
		s->ahead = batch;
		s->cur = 1 - s->cur;   /* the one ahead is read next, or waited for by cuda_drain */
	}
	if (cuda_wait(ctx, p->stop))
		return -1;
	CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, p->start, p->stop));
	*seconds = ms * 1e-3 / (batch > 1 ? (double)reps * per_graph : 1.0);
	*clock_mhz = gate_clock(s, p);
	energy_poll(s);
	return 0;
}

/* The counter where there is one; else the readings' sum, which needs them taken while samples run
 * (cuda_sample polls). */
static int cuda_energy(void *state, double *joules)
{
	struct cuda_timer *s = (struct cuda_timer *)state;

	if (s->energy.counter)
		return nvml_energy(s->nvml, joules);
	energy_poll(s);
	if (!(s->energy.at > 0))
		return -1;
	*joules = s->energy.joules + s->energy.watts * (now_mono() - s->energy.at);
	return 0;
}

/* Wait for what is enqueued ahead, before the kernel's teardown frees what it uses. */
static int cuda_idle(void *state, struct kctx *ctx)
{
	return cuda_drain((struct cuda_timer *)state, ctx);
}

/* A graph's batch is one timed region; a cold batch is `batch` regions whose errors partly cancel. */
static double cuda_resolution(void *state, int batch)
{
	struct cuda_timer *s = (struct cuda_timer *)state;

	return EVENT_RESOLUTION * (batch > 1 && s->flush ? sqrt((double)batch) : 1.0) / batch;
}

static double cuda_max_clock(void *state)
{
	struct cuda_timer *s = (struct cuda_timer *)state;
	unsigned mhz;

	return s->nvml && !nvml_clock(s->nvml, NVML_SM, 1, &mhz) ? mhz : 0;
}


/*
 * A reading is the controller's own (an H200's refreshes every 100 ms, when the controller sets the
 * clock), so a new one shows as a change of the value: the verdict comes from the latest one, its power against the limit and the
 * clock event reasons with it, judged by when it was first seen (none yet, or one from before warm-up
 * began: criterion_power_judge says pending).
 */
static int cuda_power(void *state, double warm_start)
{
	struct cuda_timer *s = (struct cuda_timer *)state;
	struct power_watch *w = &s->power;
	double now = now_mono(), watts;

	if (w->limit <= 0)
		return POWER_NONE;
	if (now - w->polled >= POWER_POLL) {
		w->polled = now;
		if (nvml_power(s->nvml, &watts) || watts <= 0)
			return POWER_NONE;   /* no reading, or none worth the name: no verdict to wait for */
		if (!isnan(w->watts) && watts != w->watts)
			w->fresh = now;
		w->watts = watts;
		if (nvml_capped(s->nvml, &w->capped))
			w->capped = 0;
	}
	return criterion_power_judge(w->watts, w->limit, w->capped, w->fresh - warm_start);
}

/*
 * Before a launch that counters are read over (measure_clean): the device synchronized, so that nothing
 * queued before is still writing, then the flush's read alone (cuda_l2_read) over twice the L2, waited for.
 * Meant to leave the L2 holding clean lines of the flush's buffer only: a line left dirty, by the launches
 * before or by a memset (the cold samples' flush starts with one), would be written back during the launch
 * and counted as its DRAM writes. CUPTI's count then holds the launch's own writes (a 1 MiB copy 1.6 MB), with
 * the lines still in the L2 at its end, which ncu leaves out (about 20 MB less; docs/measured.md).
 * The buffer is the cold samples' one, or one made for this call when the L2 stays hot (l2_hot).
 */
static int cuda_clean(void *state, struct kctx *ctx)
{
	struct cuda_timer *s = (struct cuda_timer *)state;
	void *buf = s->flush;
	size_t bytes = s->flush_bytes;
	int blocks = s->flush_blocks, l2 = 0;
	cudaError_t e;

	if ((e = cudaDeviceSynchronize()) != cudaSuccess)
		goto out;
	if (!buf) {
		if ((e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, s->gpu)) != cudaSuccess ||
		    (e = cudaDeviceGetAttribute(&blocks, cudaDevAttrMultiProcessorCount, s->gpu)) != cudaSuccess)
			goto out;
		if (l2 <= 0)
			return 0;
		bytes = 2 * (size_t)l2;
		blocks *= 4;
		if ((e = cudaMalloc(&buf, bytes + 16)) != cudaSuccess)
			goto out;
	}
	if ((e = cuda_l2_read(buf, bytes, (unsigned)blocks, s->stream)) == cudaSuccess)
		e = cudaStreamSynchronize(s->stream);
	if (buf != s->flush)
		cudaFree(buf);
out:
	if (e != cudaSuccess) {
		cudaGetLastError();
		return kfail(ctx, "the L2 left clean: %s", cudaGetErrorString(e));
	}
	return 0;
}

/* Teardown has run by now (measure.c), so nothing is queued on the stream any more that needs it. */
static void cuda_fini(void *state)
{
	struct cuda_timer *s = (struct cuda_timer *)state;

	cudaStreamSynchronize(s->stream);
	cuda_timer_free(s);
}

/* The device's context, created by cudaSetDevice on CUDA 12 and by the first call that needs it before
 * (cudaFree(0)); in a process's first cell otherwise (an H200 copied 256 MiB in 0.213 s of wall as a
 * process's first cell, 2 GiB in 0.10 s right after). */
static int cuda_open(struct kctx *ctx)
{
	cudaError_t e;

	if (ctx->gpu < 0)
		return kfail(ctx, "this worker has no GPU");
	if ((e = cudaSetDevice(ctx->gpu)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) {
		cudaGetLastError();
		return kfail(ctx, "GPU %d: %s", ctx->gpu, cudaGetErrorString(e));
	}
	return 0;
}

/* Field by field, as the CUDA kernels do (kernels/cuda_common.h says why). */
static struct timer_ops cuda_timer_ops(void)
{
	struct timer_ops t = {};

	t.init = cuda_init;
	t.sample = cuda_sample;
	t.max_clock = cuda_max_clock;
	t.resolution = cuda_resolution;
	t.idle = cuda_idle;
	t.fini = cuda_fini;
	t.power = cuda_power;
	t.grows = 1;
	t.open = cuda_open;
	t.energy = cuda_energy;
	t.clean = cuda_clean;
	return t;
}

extern "C" const struct timer_ops timer_cuda = cuda_timer_ops();

extern "C" void measure_profile(int on)
{
	if (on ? cudaProfilerStart() : cudaProfilerStop())
		cudaGetLastError();
}

/* cuCtxGetCurrent through the runtime's table of driver entry points: the binary links no libcuda. */
extern "C" void *measure_context(void)
{
	typedef CUresult (*current_fn)(CUcontext *);
	cudaDriverEntryPointQueryResult found;
	void *fn = NULL;
	CUcontext c = NULL;

	if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
	    found != cudaDriverEntryPointSuccess || !fn) {
		cudaGetLastError();
		return NULL;
	}
	return ((current_fn)fn)(&c) == CUDA_SUCCESS ? (void *)c : NULL;
}

extern "C" int measure_sync(struct kctx *ctx)
{
	cudaError_t e;

	if (ctx->gpu < 0 || !ctx->stream)
		return 0;
	if ((e = cudaStreamSynchronize((cudaStream_t)ctx->stream)) != cudaSuccess)
		return kfail(ctx, "%s", cudaGetErrorString(e));
	return 0;
}
