/* nccl.cu: NCCL collectives as gang cells (nccl-tests' six), with nccl-tests' bandwidth formulas. */
#include <nccl.h>
#include "cuda_common.h"


enum coll { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALLTOALL, BROADCAST, SENDRECV };

/* A gang's communicator, cached by the worker across cells of the same members. */
struct nccl_gang {
	ncclComm_t comm;
	int aborted;
	double *scratch;       /* one double on the device, for gang_max */
};

struct nccl_state {
	struct kout out;       /* first: the receive buffer, for tests */
	void *send;
	size_t count;          /* elements per rank as nccl-tests counts them (see sizes()) */
	size_t sendcount, recvcount;
	int dt;                /* enum cuda_dtype or 4 for f64 */
	ncclDataType_t nt;
	ncclRedOp_t op;
	int opi;               /* 0 sum, 1 max, 2 min, 3 prod */
	unsigned long long *wrong;
	struct nccl_gang solo; /* a cell of one GPU (gpus: 1) has a one-rank communicator of its own */
};

/* The communicator of this cell: the gang's, or the cell's own for a gang of one. */
static struct nccl_gang *gang_of(struct kctx *ctx)
{
	struct nccl_state *s = (struct nccl_state *)ctx->priv;

	return ctx->gang_comm ? (struct nccl_gang *)ctx->gang_comm : &s->solo;
}

static const struct param_def nccl_params[] = {
	{ "bytes", PARAM_BYTES, "1M", "message size as nccl-tests counts it (per rank)", NULL },
	{ "dtype", PARAM_STR, "f32", "element type", "f32|f16|bf16|f64" },
	{ "op", PARAM_STR, "sum", "reduction (all_reduce, reduce_scatter)", "sum|max|min|prod" },
	{ "gpus", PARAM_INT, "2", "GPUs (workers) one cell uses", NULL },
	{ "hang", PARAM_INT, "-1", "gang rank that never launches, to test timeouts and aborts; -1 none", NULL },
	{},
};

static size_t elem_size(int dt)
{
	return dt == 4 ? 8 : cuda_dtype_size((enum cuda_dtype)dt);
}

/* Member r's element i, exact in every type for the sums and products of a few members. */
__device__ __forceinline__ float nccl_value(int rank, size_t i)
{
	return (float)(rank + 1) + (float)(i % 5);
}

template <typename T> __device__ __forceinline__ T to_t(float x) { return cuda_from_float<T>(x); }
template <> __device__ __forceinline__ double to_t<double>(float x) { return x; }
template <typename T> __device__ __forceinline__ float from_t(T x) { return cuda_to_float(x); }
template <> __device__ __forceinline__ float from_t<double>(double x) { return (float)x; }

template <typename T>
__global__ void fill_kernel(T *p, size_t n, int rank)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = to_t<T>(nccl_value(rank, i));
}

__device__ float reduce_all(int op, int n, size_t i)
{
	float v = nccl_value(0, i);

	for (int r = 1; r < n; r++) {
		float x = nccl_value(r, i);

		v = op == 0 ? v + x : op == 1 ? fmaxf(v, x) : op == 2 ? fminf(v, x) : v * x;
	}
	return v;
}

/* What recv[i] must hold on member rank of n after the collective. */
__device__ float expected(int coll, int op, int rank, int n, size_t i, size_t chunk)
{
	switch (coll) {
	case ALL_REDUCE: return reduce_all(op, n, i);
	case ALL_GATHER: return nccl_value((int)(i / chunk), i % chunk);
	case REDUCE_SCATTER: return reduce_all(op, n, (size_t)rank * chunk + i);
	case ALLTOALL: return nccl_value((int)(i / chunk), (size_t)rank * chunk + i % chunk);
	case BROADCAST: return nccl_value(0, i);
	default: return nccl_value((rank + n - 1) % n, i);
	}
}

template <typename T>
__global__ void check_kernel(const T *p, size_t n, int coll, int op, int rank, int size, size_t chunk,
			     unsigned long long *wrong)
{
	unsigned long long bad = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		bad += from_t<T>(p[i]) != from_t<T>(to_t<T>(expected(coll, op, rank, size, i, chunk)));
	if (bad)
		atomicAdd(wrong, bad);
}

static int dtype_of(const char *s)
{
	return !strcmp(s, "f64") ? 4 : cuda_dtype_parse(s);
}

/* nccl-tests' sizes: count is bytes / element size; all_gather receives and reduce_scatter and alltoall
 * send the whole count, one chunk (count / n) per member. */
static void sizes(int coll, size_t count, int n, size_t *send, size_t *recv)
{
	switch (coll) {
	case ALL_GATHER: *send = count / n; *recv = *send * n; break;
	case REDUCE_SCATTER: *recv = count / n; *send = *recv * n; break;
	case ALLTOALL: *send = *recv = count / n * n; break;
	default: *send = *recv = count; break;
	}
}

static int wait_nccl(struct kctx *ctx, ncclComm_t comm, ncclResult_t rc, const char *what)
{
	ncclResult_t st = rc;

	while (st == ncclInProgress) {
		if (ncclCommGetAsyncError(comm, &st) != ncclSuccess)
			break;
		if (*ctx->cancel)
			return kfail(ctx, "%s: cancelled while NCCL was busy", what);
	}
	if (st != ncclSuccess)
		return kfail(ctx, "%s: %s (%s)", what, ncclGetErrorString(st), ncclGetLastError(comm));
	return 0;
}

template <int C>
static int nccl_setup(struct kctx *ctx)
{
	struct nccl_state *s = (struct nccl_state *)calloc(1, sizeof(*s));
	const char *op = kparam_str(ctx, "op");
	size_t es;
	int n = ctx->gang_size;
	unsigned g;

	if (!s)
		return kfail(ctx, "out of memory");
	ctx->priv = s;
	if (n > 1 && !ctx->gang_comm)
		return kfail(ctx, "the gang has no NCCL communicator");
	if (n == 1) {
		ncclResult_t rc = ncclCommInitAll(&s->solo.comm, 1, &ctx->gpu);

		if (rc != ncclSuccess)
			return kfail(ctx, "ncclCommInitAll: %s", ncclGetErrorString(rc));
	}
	s->dt = dtype_of(kparam_str(ctx, "dtype"));
	s->nt = s->dt == 4 ? ncclFloat64 : s->dt == CUDA_F32 ? ncclFloat32 : s->dt == CUDA_F16 ? ncclFloat16
											       : ncclBfloat16;
	s->opi = !strcmp(op, "max") ? 1 : !strcmp(op, "min") ? 2 : !strcmp(op, "prod") ? 3 : 0;
	s->op = s->opi == 1 ? ncclMax : s->opi == 2 ? ncclMin : s->opi == 3 ? ncclProd : ncclSum;
	es = elem_size(s->dt);
	s->count = (size_t)kparam_long(ctx, "bytes") / es;
	sizes(C, s->count, n, &s->sendcount, &s->recvcount);
	if (!s->sendcount || !s->recvcount)
		return kfail(ctx, "bytes too small for %d members of %zu-byte elements", n, es);
	CUDA_CHECK(ctx, cudaMalloc(&s->send, s->sendcount * es));
	CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->recvcount * es));
	CUDA_CHECK(ctx, cudaMalloc(&s->wrong, sizeof(*s->wrong)));
	s->out.bytes = s->recvcount * es;
	g = cuda_fill_grid(s->sendcount);
	switch (s->dt) {
	case CUDA_F32: fill_kernel<<<g, 256, 0, cuda_stream(ctx)>>>((float *)s->send, s->sendcount, ctx->gang_rank); break;
	case CUDA_F16: fill_kernel<<<g, 256, 0, cuda_stream(ctx)>>>((__half *)s->send, s->sendcount, ctx->gang_rank); break;
	case CUDA_BF16:
		fill_kernel<<<g, 256, 0, cuda_stream(ctx)>>>((__nv_bfloat16 *)s->send, s->sendcount, ctx->gang_rank);
		break;
	default: fill_kernel<<<g, 256, 0, cuda_stream(ctx)>>>((double *)s->send, s->sendcount, ctx->gang_rank); break;
	}
	LAUNCH_CHECK(ctx);
	CUDA_CHECK(ctx, cudaMemsetAsync(s->out.data, 0, s->out.bytes, cuda_stream(ctx)));
	return 0;
}

template <int C>
static int nccl_launch(struct kctx *ctx)
{
	struct nccl_state *s = (struct nccl_state *)ctx->priv;
	struct nccl_gang *g = gang_of(ctx);
	cudaStream_t st = cuda_stream(ctx);
	int n = ctx->gang_size, r = ctx->gang_rank;
	size_t chunk = s->sendcount / n, es = elem_size(s->dt);
	ncclResult_t rc = ncclSuccess;

	/* A member that never joins: the others' collective hangs until their timeout aborts it. */
	if (r == kparam_long(ctx, "hang") && n > 1) {
		while (!*ctx->cancel)
			ksleep(ctx, 50);
		return kfail(ctx, "gang rank %d never launched (hang = %d)", r, r);
	}
	switch (C) {
	case ALL_REDUCE: rc = ncclAllReduce(s->send, s->out.data, s->count, s->nt, s->op, g->comm, st); break;
	case ALL_GATHER: rc = ncclAllGather(s->send, s->out.data, s->sendcount, s->nt, g->comm, st); break;
	case REDUCE_SCATTER:
		rc = ncclReduceScatter(s->send, s->out.data, s->recvcount, s->nt, s->op, g->comm, st);
		break;
	case BROADCAST: rc = ncclBroadcast(s->send, s->out.data, s->count, s->nt, 0, g->comm, st); break;
	case ALLTOALL:
		/* Grouped point-to-point, as nccl-tests does it: chunk q of the send buffer goes to member q. */
		ncclGroupStart();
		for (int q = 0; q < n; q++) {
			ncclSend((char *)s->send + q * chunk * es, chunk, s->nt, q, g->comm, st);
			ncclRecv((char *)s->out.data + q * chunk * es, chunk, s->nt, q, g->comm, st);
		}
		rc = ncclGroupEnd();
		break;
	default:
		ncclGroupStart();
		ncclSend(s->send, s->count, s->nt, (r + 1) % n, g->comm, st);
		ncclRecv(s->out.data, s->count, s->nt, (r + n - 1) % n, g->comm, st);
		rc = ncclGroupEnd();
		break;
	}
	return wait_nccl(ctx, g->comm, rc, "collective");
}

/* Count the wrong elements on the GPU (metric errors); any is a failed check. */
template <int C>
static int nccl_check(struct kctx *ctx)
{
	struct nccl_state *s = (struct nccl_state *)ctx->priv;
	cudaStream_t st = cuda_stream(ctx);
	unsigned long long wrong = 0;
	size_t chunk = C == REDUCE_SCATTER ? s->recvcount : s->sendcount / ctx->gang_size;
	unsigned g = cuda_fill_grid(s->recvcount);
	char buf[32];

	if (C == ALL_GATHER)
		chunk = s->sendcount;
	CUDA_CHECK(ctx, cudaMemsetAsync(s->wrong, 0, sizeof(*s->wrong), st));
	switch (s->dt) {
	case CUDA_F32:
		check_kernel<<<g, 256, 0, st>>>((float *)s->out.data, s->recvcount, C, s->opi, ctx->gang_rank,
						ctx->gang_size, chunk, s->wrong);
		break;
	case CUDA_F16:
		check_kernel<<<g, 256, 0, st>>>((__half *)s->out.data, s->recvcount, C, s->opi, ctx->gang_rank,
						ctx->gang_size, chunk, s->wrong);
		break;
	case CUDA_BF16:
		check_kernel<<<g, 256, 0, st>>>((__nv_bfloat16 *)s->out.data, s->recvcount, C, s->opi,
						ctx->gang_rank, ctx->gang_size, chunk, s->wrong);
		break;
	default:
		check_kernel<<<g, 256, 0, st>>>((double *)s->out.data, s->recvcount, C, s->opi, ctx->gang_rank,
						ctx->gang_size, chunk, s->wrong);
		break;
	}
	LAUNCH_CHECK(ctx);
	CUDA_CHECK(ctx, cudaMemcpyAsync(&wrong, s->wrong, sizeof(wrong), cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(ctx, cudaStreamSynchronize(st));
	snprintf(buf, sizeof(buf), "%llu", wrong);
	json_obj_add(ctx->metrics, "errors", buf, JSON_NUM);
	if (wrong)
		return kfail(ctx, "%llu of %zu received elements wrong", wrong, s->recvcount);
	return 0;
}

static void nccl_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	*flops = 0;
	*bytes = (double)kparam_long(ctx, "bytes");
}

static void nccl_teardown(struct kctx *ctx)
{
	struct nccl_state *s = (struct nccl_state *)ctx->priv;
	struct nccl_gang *g = s ? gang_of(ctx) : (struct nccl_gang *)ctx->gang_comm;

	/* A cancelled collective may never finish: abort the communicator first, which frees the stream. */
	if (*ctx->cancel && g && g->comm && !g->aborted) {
		ncclCommAbort(g->comm);
		g->aborted = 1;
	}
	if (s) {
		cudaStreamSynchronize(cuda_stream(ctx));
		if (s->solo.comm && !s->solo.aborted)
			ncclCommDestroy(s->solo.comm);
		cudaFree(s->send);
		cudaFree(s->out.data);
		cudaFree(s->wrong);
		free(s);
	}
	ctx->priv = NULL;
}

static int nccl_blob(struct kctx *ctx, void *blob, size_t *len)
{
	ncclUniqueId id;
	ncclResult_t rc;

	if (*len < sizeof(id))
		return kfail(ctx, "bootstrap buffer too small");
	rc = ncclGetUniqueId(&id);
	if (rc != ncclSuccess)
		return kfail(ctx, "ncclGetUniqueId: %s", ncclGetErrorString(rc));
	memcpy(blob, &id, sizeof(id));
	*len = sizeof(id);
	return 0;
}

static int nccl_open(struct kctx *ctx, const void *blob, size_t len, void **comm)
{
	struct nccl_gang *g;
	ncclUniqueId id;
	ncclResult_t rc;

	if (len != sizeof(id))
		return kfail(ctx, "bootstrap of %zu bytes, expected an NCCL unique id", len);
	memcpy(&id, blob, sizeof(id));
	/* NVLink multicast (NVLS) can take a host's GPUs out of service: off unless the user asks. */
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	CUDA_CHECK(ctx, cudaSetDevice(ctx->gpu));
	g = (struct nccl_gang *)calloc(1, sizeof(*g));
	if (!g)
		return kfail(ctx, "out of memory");
	if (cudaMalloc(&g->scratch, sizeof(double)) != cudaSuccess) {
		free(g);
		return kfail(ctx, "cudaMalloc of the gang's scratch failed");
	}
	/* Blocking: every member was dispatched together, so all of them are coming; a collective that
	 * hangs later is aborted from teardown (ncclCommAbort), which a blocking communicator allows. */
	rc = ncclCommInitRank(&g->comm, ctx->gang_size, id, ctx->gang_rank);
	if (rc != ncclSuccess) {
		cudaFree(g->scratch);
		free(g);
		return kfail(ctx, "ncclCommInitRank: %s", ncclGetErrorString(rc));
	}
	*comm = g;
	return 0;
}

static void nccl_close(void *comm, int abort)
{
	struct nccl_gang *g = (struct nccl_gang *)comm;

	if (!g->aborted) {
		if (abort)
			ncclCommAbort(g->comm);
		else
			ncclCommDestroy(g->comm);
	}
	cudaFree(g->scratch);
	free(g);
}

static int nccl_max(struct kctx *ctx, double *v)
{
	struct nccl_gang *g = (struct nccl_gang *)ctx->gang_comm;
	cudaStream_t st = cuda_stream(ctx);
	cudaError_t e;

	CUDA_CHECK(ctx, cudaMemcpyAsync(g->scratch, v, sizeof(*v), cudaMemcpyHostToDevice, st));
	if (wait_nccl(ctx, g->comm, ncclAllReduce(g->scratch, g->scratch, 1, ncclFloat64, ncclMax, g->comm, st),
		      "agreeing on counts"))
		return -1;
	CUDA_CHECK(ctx, cudaMemcpyAsync(v, g->scratch, sizeof(*v), cudaMemcpyDeviceToHost, st));
	while ((e = cudaStreamQuery(st)) == cudaErrorNotReady)
		if (*ctx->cancel)
			return kfail(ctx, "cancelled while agreeing on counts");
	CUDA_CHECK(ctx, e);
	return 0;
}

/* nccl-tests' bus bandwidth factors: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n;
 * broadcast and sendrecv 1. */
template <int C>
static void nccl_derive(const struct json_obj *params, int n, double seconds, struct json_obj *metrics)
{
	double bytes = 0, alg, factor = C == ALL_REDUCE ? 2.0 * (n - 1) / n
				       : C == BROADCAST || C == SENDRECV ? 1.0 : (double)(n - 1) / n;
	char buf[64];

	parse_double(json_obj_get(params, "bytes") ? json_obj_get(params, "bytes") : "0", &bytes);
	alg = bytes / seconds / 1e9;
	snprintf(buf, sizeof(buf), "%.17g", alg);
	json_obj_add(metrics, "algbw_gbs", buf, JSON_NUM);
	snprintf(buf, sizeof(buf), "%.17g", alg * factor);
	json_obj_add(metrics, "busbw_gbs", buf, JSON_NUM);
}

template <int C>
static struct kernel_ops nccl_ops(const char *name, const char *doc)
{
	struct kernel_ops k = {};

	k.name = name;
	k.doc = doc;
	k.params = nccl_params;
	k.place = KERNEL_CUDA;
	k.gpus = 2;
	k.setup = nccl_setup<C>;
	k.launch = nccl_launch<C>;
	k.check = nccl_check<C>;
	k.counts = nccl_counts;
	k.teardown = nccl_teardown;
	k.gang_blob = nccl_blob;
	k.gang_open = nccl_open;
	k.gang_close = nccl_close;
	k.gang_max = nccl_max;
	k.derive = nccl_derive<C>;
	return k;
}

extern "C" const struct kernel_ops kernel_nccl_all_reduce =
	nccl_ops<ALL_REDUCE>("nccl.all_reduce", "NCCL all-reduce across a gang of GPUs");
extern "C" const struct kernel_ops kernel_nccl_all_gather =
	nccl_ops<ALL_GATHER>("nccl.all_gather", "NCCL all-gather across a gang of GPUs");
extern "C" const struct kernel_ops kernel_nccl_reduce_scatter =
	nccl_ops<REDUCE_SCATTER>("nccl.reduce_scatter", "NCCL reduce-scatter across a gang of GPUs");
extern "C" const struct kernel_ops kernel_nccl_alltoall =
	nccl_ops<ALLTOALL>("nccl.alltoall", "all-to-all through grouped NCCL send/receive");
extern "C" const struct kernel_ops kernel_nccl_broadcast =
	nccl_ops<BROADCAST>("nccl.broadcast", "NCCL broadcast from gang rank 0");
extern "C" const struct kernel_ops kernel_nccl_sendrecv =
	nccl_ops<SENDRECV>("nccl.sendrecv", "NCCL send to the next member, receive from the previous");
