/* cuda_debug.cu: debug.gpu, a GPU kernel that fails on purpose, to test what a broken CUDA context costs. */
#include "cuda_common.h"

struct dbg_state {
	struct kout out;       /* first, as every CUDA kernel's (cuda_common.h) */
	int mode;              /* 0 ok, 1 oob, 2 trap */
};

static const char *const dbg_modes[] = { "ok", "oob", "trap", NULL };

static const struct param_def dbg_params[] = {
	{ "mode", PARAM_STR, "ok",
	  "what the launch does: ok writes its buffer, oob writes 1 TiB past it (an illegal address, a sticky "
	  "error), trap stops the kernel with a trap", "ok|oob|trap" },
	{ "i", PARAM_INT, "0", "a free axis, to make many cells", NULL },
	{},
};

/* Each thread writes one word of out; with oob one thread writes far past it instead. */
static __global__ void dbg_kernel(unsigned *out, int mode)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (mode == 1 && i == 0)
		*(volatile unsigned *)((char *)out + (1ULL << 40)) = 1;
	else if (mode == 2 && i == 0)
		__trap();
	out[i] = i;
}

static int dbg_setup(struct kctx *ctx)
{
	struct dbg_state *s = (struct dbg_state *)xcalloc(1, sizeof(*s));
	const char *m = kparam_str(ctx, "mode");

	ctx->priv = s;
	for (s->mode = 0; dbg_modes[s->mode] && strcmp(dbg_modes[s->mode], m); s->mode++)
		;
	if (!dbg_modes[s->mode])
		return kfail(ctx, "mode must be ok, oob or trap, not '%s'", m);
	s->out.bytes = 256 * sizeof(unsigned);
	CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->out.bytes));
	return 0;
}

static int dbg_launch(struct kctx *ctx)
{
	struct dbg_state *s = (struct dbg_state *)ctx->priv;

	dbg_kernel<<<1, 256, 0, cuda_stream(ctx)>>>((unsigned *)s->out.data, s->mode);
	LAUNCH_CHECK(ctx);
	return 0;
}

/* The launch's error shows here at the latest: the stream's synchronisation returns it. */
static int dbg_check(struct kctx *ctx)
{
	struct dbg_state *s = (struct dbg_state *)ctx->priv;
	unsigned got[256];

	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	CUDA_CHECK(ctx, cudaMemcpy(got, s->out.data, sizeof(got), cudaMemcpyDeviceToHost));
	for (unsigned i = 0; i < 256; i++)
		if (got[i] != i)
			return kfail(ctx, "word %u is %u, not %u", i, got[i], i);
	return 0;
}

static void dbg_teardown(struct kctx *ctx)
{
	struct dbg_state *s = (struct dbg_state *)ctx->priv;

	if (!s)
		return;
	cudaFree(s->out.data);
	free(s);
	ctx->priv = NULL;
}

static struct kernel_ops dbg_ops(void)
{
	struct kernel_ops k = {};

	k.name = "debug.gpu";
	k.doc = "a GPU kernel that works or fails on purpose (an illegal address, a trap): tests quarantine on GPUs";
	k.params = dbg_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = dbg_setup;
	k.launch = dbg_launch;
	k.check = dbg_check;
	k.teardown = dbg_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_debug = dbg_ops();
