/* cuda_xfer.cu: host-device transfer bandwidth (h2d, d2h): cudaMemcpyAsync from or to pinned host memory. */
#include "cuda_common.h"

struct xfer_state {
	struct kout out;       /* first: the destination (device for h2d, pinned host for d2h), for tests */
	void *src;             /* pinned host for h2d, device for d2h */
	void *want;            /* malloc'd host copy of what the destination must hold */
	size_t bytes;
	int h2d;
};

static const struct param_def xfer_params[] = {
	{ "bytes", PARAM_BYTES, "256M", "bytes transferred per launch", NULL },
	{},
};

/*
 * The expected bytes come from the host generator (kfill_random) and reach the device by a synchronous
 * cudaMemcpy in setup, a different path from the timed cudaMemcpyAsync, so a wrong transfer cannot be
 * checked against itself.
 */
static int xfer_setup(struct kctx *ctx, int h2d)
{
	struct xfer_state *s = (struct xfer_state *)xcalloc(1, sizeof(*s));
	long bytes = kparam_long(ctx, "bytes");

	ctx->priv = s;
	s->h2d = h2d;
	if (bytes <= 0)
		return kfail(ctx, "bytes must be positive, not %ld", bytes);
	s->bytes = s->out.bytes = bytes;
	if (!(s->want = malloc(s->bytes)))
		return kfail(ctx, "cannot allocate %zu bytes of host memory", s->bytes);
	kfill_random(s->want, s->bytes, 1);
	if (h2d) {
		CUDA_CHECK(ctx, cudaHostAlloc(&s->src, s->bytes, cudaHostAllocDefault));
		CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->bytes));
		memcpy(s->src, s->want, s->bytes);
		if (cuda_fill_bytes(ctx, s->out.data, s->bytes, 2))
			return -1;
	} else {
		CUDA_CHECK(ctx, cudaMalloc(&s->src, s->bytes));
		CUDA_CHECK(ctx, cudaHostAlloc(&s->out.data, s->bytes, cudaHostAllocDefault));
		CUDA_CHECK(ctx, cudaMemcpy(s->src, s->want, s->bytes, cudaMemcpyHostToDevice));
		kfill_random(s->out.data, s->bytes, 2);
	}
	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	return 0;
}

static int h2d_setup(struct kctx *ctx)
{
	return xfer_setup(ctx, 1);
}

static int d2h_setup(struct kctx *ctx)
{
	return xfer_setup(ctx, 0);
}

static int xfer_launch(struct kctx *ctx)
{
	struct xfer_state *s = (struct xfer_state *)ctx->priv;

	CUDA_CHECK(ctx, cudaMemcpyAsync(s->out.data, s->src, s->bytes,
					s->h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
					cuda_stream(ctx)));
	return 0;
}

static int xfer_check(struct kctx *ctx)
{
	struct xfer_state *s = (struct xfer_state *)ctx->priv;
	const unsigned char *got, *want = (const unsigned char *)s->want;
	unsigned char *back = NULL;
	cudaError_t e;
	size_t i;

	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	if (s->h2d) {
		if (!(back = (unsigned char *)malloc(s->bytes)))
			return kfail(ctx, "cannot allocate %zu bytes of host memory", s->bytes);
		if ((e = cudaMemcpy(back, s->out.data, s->bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
			free(back);
			CUDA_CHECK(ctx, e);
		}
		got = back;
	} else {
		got = (const unsigned char *)s->out.data;
	}
	if (!memcmp(got, want, s->bytes)) {
		free(back);
		return 0;
	}
	for (i = 0; i < s->bytes && got[i] == want[i]; i++)
		;
	kfail(ctx, "%s differs at byte %zu: 0x%02x, want 0x%02x", s->h2d ? "h2d" : "d2h", i, got[i], want[i]);
	free(back);
	return -1;
}

static void xfer_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct xfer_state *s = (const struct xfer_state *)ctx->priv;

	*flops = 0;
	*bytes = (double)s->bytes;
}

static void xfer_teardown(struct kctx *ctx)
{
	struct xfer_state *s = (struct xfer_state *)ctx->priv;

	if (s) {
		cudaStreamSynchronize(cuda_stream(ctx));
		if (s->h2d) {
			cudaFreeHost(s->src);
			cudaFree(s->out.data);
		} else {
			cudaFree(s->src);
			cudaFreeHost(s->out.data);
		}
		free(s->want);
		free(s);
	}
	ctx->priv = NULL;
}

static struct kernel_ops h2d_ops(void)
{
	struct kernel_ops k = {};

	k.name = "h2d";
	k.doc = "host to device bandwidth: cudaMemcpyAsync from pinned memory";
	k.params = xfer_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = h2d_setup;
	k.launch = xfer_launch;
	k.check = xfer_check;
	k.counts = xfer_counts;
	k.teardown = xfer_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_h2d = h2d_ops();

static struct kernel_ops d2h_ops(void)
{
	struct kernel_ops k = {};

	k.name = "d2h";
	k.doc = "device to host bandwidth: cudaMemcpyAsync to pinned memory";
	k.params = xfer_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = d2h_setup;
	k.launch = xfer_launch;
	k.check = xfer_check;
	k.counts = xfer_counts;
	k.teardown = xfer_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_d2h = d2h_ops();
