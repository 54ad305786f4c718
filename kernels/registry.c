/* registry.c: the list of built-in kernels and their lookup by name. */
#include <string.h>
#include "kernel.h"

extern const struct kernel_ops kernel_sleep;
extern const struct kernel_ops kernel_cpu_copy;
extern const struct kernel_ops kernel_cpu_read;
extern const struct kernel_ops kernel_cpu_gemm;
extern const struct kernel_ops kernel_debug_fail;
extern const struct kernel_ops kernel_cpu_allreduce;
#ifdef SWEEP_CUDA
/* CUDA and NCCL kernels (kernels/cuda_*.cu, nccl.cu): declare them here, e.g.
 * extern const struct kernel_ops kernel_cuda_copy;
 * and define them in the .cu file as extern "C" const struct kernel_ops kernel_cuda_copy = copy_ops();
 * (C++ gives a const at file scope internal linkage without the extern; copy_ops() fills a zeroed struct
 * field by field, as kernels/cuda_common.h explains). */
extern const struct kernel_ops kernel_cuda_copy;
extern const struct kernel_ops kernel_cuda_h2d;
extern const struct kernel_ops kernel_cuda_d2h;
extern const struct kernel_ops kernel_cuda_gemm;
extern const struct kernel_ops kernel_cuda_decode_attn;
extern const struct kernel_ops kernel_cuda_debug;
extern const struct kernel_ops kernel_nccl_all_reduce;
extern const struct kernel_ops kernel_nccl_all_gather;
extern const struct kernel_ops kernel_nccl_reduce_scatter;
extern const struct kernel_ops kernel_nccl_alltoall;
extern const struct kernel_ops kernel_nccl_broadcast;
extern const struct kernel_ops kernel_nccl_sendrecv;
#endif

const struct kernel_ops *const kernel_registry[] = {
	&kernel_sleep,
	&kernel_cpu_copy,
	&kernel_cpu_read,
	&kernel_cpu_gemm,
	&kernel_debug_fail,
	&kernel_cpu_allreduce,
#ifdef SWEEP_CUDA
	/* CUDA and NCCL kernels go here, e.g. &kernel_cuda_copy, */
	&kernel_cuda_copy,
	&kernel_cuda_h2d,
	&kernel_cuda_d2h,
	&kernel_cuda_gemm,
	&kernel_cuda_decode_attn,
	&kernel_cuda_debug,
	&kernel_nccl_all_reduce,
	&kernel_nccl_all_gather,
	&kernel_nccl_reduce_scatter,
	&kernel_nccl_alltoall,
	&kernel_nccl_broadcast,
	&kernel_nccl_sendrecv,
#endif
	NULL
};

const struct kernel_ops *kernel_find(const char *name)
{
	const struct kernel_ops *const *k;

	for (k = kernel_registry; *k; k++)
		if (!strcmp((*k)->name, name))
			return *k;
	return NULL;
}
