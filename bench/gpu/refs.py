# refs.py: the issue grid's shapes timed by triton's do_bench in this process, as independent references
# for sweep's medians: GEMM (torch.matmul, operands ordered so that cuBLAS solves the same column-major
# M x N x K problem as sweep's gemm), decode (SDPA with GQA) and copy (Tensor.copy_), three ways: "burst"
# (do_bench's defaults: 25 ms warm-up, 100 ms of repetitions), "matched" (from an idle second, 50 ms of
# warm-up and 500 ms of repetitions: the clock path of a sweep cell with default timing) and "sustained"
# (1 s of the same work first, then 500 ms). The median SM clock during each is read through NVML, and the
# wall seconds each do_bench call took. Prints one line per shape; with --passes N, then N do_bench calls
# back to back on the 67 us GEMM (1024x6144x4096), one "refpass" line each. Shapes of 0.5 ms and more,
# whose clock a power limit moves, also get a "ladder" line: from an idle second, LADDER seconds of the
# same work, then do_bench over 20 ms or RUNG_LAUNCHES launches (short, so that the clock moves little
# meanwhile), at each rung a lower clock; (MHz, us) pairs, so that a median taken at any clock in between
# can be compared with do_bench at that clock. A rung's clock is measured on the GPU right before and right
# after do_bench (kclock: cycles over event time, as sweep's gate counts them), not read through NVML, whose
# reading lags a falling clock; rungs whose clock moved meanwhile are printed ("rung") but left out. With
# --pairs SWEEP DIR, such shapes also get five "pair" rounds (tests/gpu/precision.py's pair_round): from an
# idle second, the shape's cell through SWEEP alone (its spec and database in DIR), which precision.py
# compares with the ladder at the cell's clock (the grid's cell, after the cells before it, may run at a
# clock no rung reaches from idle); then from another idle second do_bench along the same timeline (its
# timed loop as long as the cell's warm-up, then timed for the rest of the cell's wall) and a clock probe:
# how the two tools' own loops lead the clock, printed. Reads the card's state only.
import os
import statistics
import sys
import threading
import time

import pynvml
import torch
import torch.nn.functional as F
from triton.testing import do_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/gpu"))
from precision import pair_round  # noqa: E402
from gpuclock import heat, kclock  # noqa: E402

pynvml.nvmlInit()
NV = pynvml.nvmlDeviceGetHandleByIndex(0)


def clocked(fn):
    """fn() with the SM clock sampled every 5 ms meanwhile: (fn's result, median MHz, wall seconds)."""
    seen, done = [], threading.Event()

    def poll():
        while not done.is_set():
            seen.append(pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))
            time.sleep(0.005)

    t = threading.Thread(target=poll)
    t.start()
    start = time.monotonic()
    try:
        out = fn()
    finally:
        wall = time.monotonic() - start
        done.set()
        t.join()
    return out, statistics.median(seen) if seen else 0, wall


# A rung whose clock moved more than this between its two probes is left out of the ladder.
RUNG_MOVED = 0.01


LADDER = (0, 0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3, 0.5, 0.8, 1.2, 2.0)


# A rung's do_bench times 20 ms or this many launches, whichever is longer: 20 ms held 7 launches of
# 8192x28672x4096, whose rungs then read 2696-2752 us at 1508-1517 MHz (2 %).
RUNG_LAUNCHES = 16


def ladder(name, fn, burst_ms):
    rungs = []
    for h in LADDER:
        time.sleep(1.0)
        heat(fn, h)
        before = kclock(fn)
        rep = max(20, RUNG_LAUNCHES * burst_ms)
        t, c, _ = clocked(lambda: do_bench(fn, warmup=1, rep=rep, return_mode="median"))
        after = kclock(fn)
        if abs(after - before) <= RUNG_MOVED * before:
            rungs.append(((before + after) / 2, t * 1e3))
        print(f"rung {name} heat_s {h} nvml_mhz {c:.0f} kclock_before {before:.1f} kclock_after {after:.1f}"
              f" us {t * 1e3:.2f}", flush=True)
    print(f"ladder {name} " + " ".join(f"{c:.1f} {us:.2f}" for c, us in rungs), flush=True)


PAIRS = sys.argv[sys.argv.index("--pairs") + 1:][:2] if "--pairs" in sys.argv else None


def pair(name, fn, spec):
    def reference(warmup, span):
        # The cell's warm-up is samples too (each behind an L2 flush, waited for): do_bench's timed loop
        # stands for it, not its warm-up, whose calls run back to back (heavier: after the same seconds of
        # back-to-back calls 8192x8192x4096 ran 1.5-3 % under the cell's clock).
        time.sleep(1.0)
        start = time.monotonic()
        do_bench(fn, warmup=1, rep=max(1, warmup * 1e3))
        t = do_bench(fn, warmup=1, rep=max(20, span * 1e3), return_mode="median")
        wall = time.monotonic() - start
        return t * 1e-3, wall, kclock(fn)
    for i in range(5):
        time.sleep(1.0)
        pair_round(name, i, PAIRS[0], spec, f"{PAIRS[1]}/pair-{name.replace(' ', '-')}-{i}.db", reference)


def bench(name, fn, spec):
    out = []
    time.sleep(1.0)
    out.append(("burst",) + clocked(lambda: do_bench(fn, return_mode="median")))
    time.sleep(1.0)
    out.append(("matched",) + clocked(lambda: do_bench(fn, warmup=50, rep=500, return_mode="median")))
    heat(fn, 1.0)
    out.append(("sustained",) + clocked(lambda: do_bench(fn, warmup=100, rep=500, return_mode="median")))
    print(f"ref {name} " + " ".join(f"{m}_us {t * 1e3:.2f} {m}_mhz {c:.0f} {m}_wall_s {w:.3f}"
                                    for m, t, c, w in out), flush=True)
    if out[0][1] >= 0.5:
        ladder(name, fn, out[0][1])
        if PAIRS:
            pair(name, fn, spec)


dev = torch.device("cuda")
for m, n, k in [(1, 6144, 4096), (32, 6144, 4096), (128, 6144, 4096), (1024, 6144, 4096), (4096, 4096, 4096),
                (8192, 8192, 4096), (8192, 28672, 4096)]:
    # Row-major B (n x k) times A (k x m) is column-major A (m x k) times B (k x n): cuBLAS sees m, n, k.
    a = torch.randn(k, m, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    bench(f"gemm {m}x{n}x{k}", lambda: torch.matmul(b, a),
          f"sweep: pair\nkernel: gemm\nparams: {{dtype: bf16, M: {m}, N: {n}, K: {k}}}\n")
for batch in (1, 8):
    for keys in (1024, 4096, 16384, 65536):
        q = torch.randn(batch, 32, 1, 128, device=dev, dtype=torch.bfloat16)
        kc = torch.randn(batch, 8, keys, 128, device=dev, dtype=torch.bfloat16)
        vc = torch.randn(batch, 8, keys, 128, device=dev, dtype=torch.bfloat16)
        bench(f"decode {batch}x{keys}", lambda: F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True),
              f"sweep: pair\nkernel: decode_attn\nparams: {{batch: {batch}, kv_len: {keys}}}\n")
for mib in (256, 2048):
    src = torch.empty(mib << 20, device=dev, dtype=torch.uint8).random_()
    dst = torch.empty_like(src)
    bench(f"copy {mib}MiB", lambda: dst.copy_(src), f"sweep: pair\nkernel: copy\nparams: {{bytes: {mib}M}}\n")
passes = int(sys.argv[sys.argv.index("--passes") + 1]) if "--passes" in sys.argv else 0
if passes:
    a = torch.randn(4096, 1024, device=dev, dtype=torch.bfloat16)
    b = torch.randn(6144, 4096, device=dev, dtype=torch.bfloat16)
    for i in range(passes):
        t, c, w = clocked(lambda: do_bench(lambda: torch.matmul(b, a), return_mode="median"))
        print(f"refpass {i + 1} us {t * 1e3:.3f} mhz {c:.0f} wall_s {w:.3f}", flush=True)
