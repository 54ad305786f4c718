# probe_placement.py: where a clock probe sits under a power-limited GEMM, whether it changes the clock it
# reads: right after the GEMM or after an L2 flush (as sweep's gate sits), long spins (gpuclock.kclock's,
# 0.13 ms) or short (27 us, nearer the gate's 10 us); 30 interleaved rounds of each after 0.5 s of
# do_bench's loop, for 8192x28672x4096, 8192x8192x4096 and 1024x6144x4096 (bf16). Prints each placement's
# median and range. Reads the card's state only.
import statistics
import time

import torch
from triton.testing import do_bench

from gpuclock import probe

dev = torch.device("cuda")
buf = torch.empty(256 << 20, device=dev, dtype=torch.uint8)


def flush():
    """Write 256 MiB, then read it: the L2 left holding clean lines, as sweep's flush leaves it."""
    buf.zero_()
    buf.view(torch.int32).sum()


# A placement: its name, long spins or short, a GEMM before the probe, a flush before it (after the GEMM).
WAYS = (("gemm long", 1, 1, 0), ("flush long", 1, 1, 1), ("gemm short", 0, 1, 0), ("flush short", 0, 0, 1),
        ("gemm+flush short", 0, 1, 1))
for m, n, k in [(8192, 28672, 4096), (8192, 8192, 4096), (1024, 6144, 4096)]:
    a = torch.randn(k, m, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    fn = lambda: torch.matmul(b, a)
    time.sleep(1.0)
    do_bench(fn, warmup=1, rep=500)
    seen = {way: [] for way, *_ in WAYS}
    for _ in range(30):
        for way, long, gemm, flushed in WAYS:
            if gemm:
                fn()
            if flushed:
                flush()
            seen[way].append(probe(20000, 220000) if long else probe(4000, 44000))
    print(f"gemm {m}x{n}x{k}: " + "  ".join(f"{w} {statistics.median(v):.1f} [{min(v):.0f}-{max(v):.0f}]"
                                            for w, v in seen.items()), flush=True)
