/* kernel.h: the interface every benchmark kernel fills, and the registry that lists them. */
#ifndef SWEEP_KERNEL_H
#define SWEEP_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "../src/json.h"

enum param_type { PARAM_INT, PARAM_FLOAT, PARAM_STR, PARAM_BYTES };

/* One declared axis of a kernel. A kernel's params array ends with an entry whose name is NULL. */
struct param_def {
	const char *name;
	enum param_type type;
	const char *def;       /* default as text; NULL means the spec must give it */
	const char *doc;
	const char *choices;   /* for PARAM_STR: "f32|f64", or NULL for free text */
};

/* Where a kernel runs, which decides how measure.c times it. */
enum kernel_place { KERNEL_CPU, KERNEL_CUDA };

/* Per-cell state handed to every hook. measure.c and worker.c own it; a kernel keeps its own data in priv. */
struct kctx {
	const struct json_obj *params;  /* the cell's parameters, kernel defaults filled in */
	int gpu;                        /* device index for CUDA kernels, -1 on CPU */
	void *priv;                     /* the kernel's own state, set by setup, freed by teardown */
	void *stream;                   /* cudaStream_t for CUDA kernels (measure.c creates it) */
	volatile int *cancel;           /* set non-zero when the cell's timeout passes: a long launch polls it */
	struct json_obj *metrics;       /* extra per-cell metrics a kernel may add (name -> number) */
	/* Gang cells (a collective over several workers); gang_size is 1 for every other cell. */
	int gang_rank, gang_size;
	const int *gang_ranks;          /* world ranks of the members, in gang order */
	void *gang_comm;                /* the communicator gang_open made (cached by the worker) */
	char err[256];                  /* a hook that returns -1 writes why here */
};

/*
 * A kernel. Hooks return 0, or -1 with the reason in ctx->err. A kernel owns no timing code: measure.c
 * times launch() identically for every kernel. setup() allocates and fills inputs with random data;
 * check() compares one launch's output with a reference; counts() gives the work of one launch so that
 * throughput (GFLOP/s, GB/s) is derived the same way everywhere. teardown() frees what setup made and is
 * called even when setup failed halfway (priv may be partly filled). open(), when a kernel has one, runs
 * once in each process that will run its cells, before the first one (measure_open): what every process
 * would otherwise pay in its first cell, such as a library to load; a failure there is left for the cells
 * to report (ctx has only gpu set).
 */
struct kernel_ops {
	const char *name;               /* "cpu.gemm", "copy", "nccl.all_reduce", ... */
	const char *doc;                /* one line */
	const struct param_def *params;
	enum kernel_place place;
	int gpus;                       /* GPUs one cell needs; 1 for all but collectives */
	int (*setup)(struct kctx *);
	int (*launch)(struct kctx *);
	int (*check)(struct kctx *);    /* may be NULL: nothing to check (sleep) */
	void (*counts)(const struct kctx *, double *flops, double *bytes);   /* may be NULL */
	/* may be NULL: the tokens one launch makes (a decode step: one a sequence), for the metrics tok_s and,
	 * with the launch's energy, tok_per_j */
	double (*tokens)(const struct kctx *);
	void (*teardown)(struct kctx *);                                      /* may be NULL */
	int (*open)(struct kctx *);                                           /* may be NULL */

	/*
	 * Gang kernels only (collectives: a cell runs on gang_size workers in lockstep; the size is the cell's
	 * `gpus` parameter). The leader (gang rank 0) makes a bootstrap blob (an NCCL unique id, a TCP
	 * address; NULL hook: none), the master hands it to every member, and each opens the communicator
	 * with it. The executor caches communicators per set of members, closing them at the end (abort:
	 * after an error or a timeout). gang_max replaces *v by its maximum over the gang: measure.c agrees on counts with it so
	 * that every member launches the same number of times. derive adds the per-cell metrics (bus
	 * bandwidth, ...) from the gang's time per launch (the slowest member's), on the master.
	 */
	int (*gang_blob)(struct kctx *, void *blob, size_t *len);   /* blob has GANG_BLOB_MAX bytes */
	int (*gang_open)(struct kctx *, const void *blob, size_t len, void **comm);
	void (*gang_close)(void *comm, int abort);
	int (*gang_max)(struct kctx *, double *v);
	void (*derive)(const struct json_obj *params, int nranks, double seconds, struct json_obj *metrics);
};
#define GANG_BLOB_MAX 256

/* Workers one cell of k needs: its `gpus` parameter when it declares one, else k->gpus (at least 1). */
int kernel_gang_size(const struct kernel_ops *k, const struct json_obj *params);

/* The NULL-terminated list of every kernel built into this binary. */
extern const struct kernel_ops *const kernel_registry[];
/* The kernel called name, or NULL. */
const struct kernel_ops *kernel_find(const char *name);
/* The declared parameter called name, or NULL. */
const struct param_def *kernel_param(const struct kernel_ops *k, const char *name);

/* Typed access to a cell's parameters (defaults already merged). Missing or malformed is a BUG: spec.c
 * checks types before a cell is ever run. */
long kparam_long(const struct kctx *ctx, const char *name);
double kparam_double(const struct kctx *ctx, const char *name);
const char *kparam_str(const struct kctx *ctx, const char *name);
/* Format into ctx->err and return -1. */
int kfail(struct kctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The next number of a splitmix64 stream: random inputs for kernels, the same for the same seed. */
uint64_t krand(uint64_t *state);
/* Fill n bytes at p with random bytes from seed (never all zeros). */
void kfill_random(void *p, size_t n, uint64_t seed);
/* Sleep ms milliseconds (nothing at all for ms <= 0), waking every 10 ms to poll *ctx->cancel.
 * Returns 0, or -1 when cancelled before the time was up. */
int ksleep(const struct kctx *ctx, double ms);

/*
 * A CPU kernel whose check() compares an output buffer starts its priv with this struct, so a test can
 * corrupt one launch's output and see check() fail without knowing the rest of the kernel's state.
 */
struct kout {
	void *data;
	size_t bytes;
};

#endif
