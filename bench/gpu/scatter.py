# scatter.py: how far do_bench's time per probed clock scatters in one sustained power-limited state, against
# sweep's passes of the same shape: for 8192x28672x4096 and 8192x8192x4096 (bf16), after 1 s idle and 2 s of
# the GEMM back to back, eight do_bench runs of 45 ms (a ladder rung's length) back to back, each between two
# clock probes (gpuclock.kclock, as refs.py's rungs), then the same with 200 ms runs; then after 1 s idle
# and 2 s of load six passes through build/sweep with default timing. Prints each run's clocks,
# microseconds and cycles (microseconds x the probed clock) and each pass's median, gate clock and cycles.
# Run after build/sweep is built for sm_90 (tests/gpu/lib.sh's make_sweep). Reads the card's state only.
import sqlite3
import subprocess
import time

import torch
from triton.testing import do_bench

from gpuclock import heat, kclock


dev = torch.device("cuda")
for (m, n, k) in [(8192, 28672, 4096), (8192, 8192, 4096)]:
    a = torch.randn(k, m, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    fn = lambda: torch.matmul(b, a)  # noqa: E731
    for rep in (45, 200):
        time.sleep(1.0)
        heat(fn, 2.0)
        for i in range(8):
            before = kclock(fn)
            t = do_bench(fn, warmup=1, rep=rep, return_mode="median") * 1e3
            after = kclock(fn)
            print(f"rung {m}x{n}x{k} rep_ms {rep} {i} before {before:.1f} after {after:.1f} us {t:.2f}"
                  f" Mcycles {t * (before + after) / 2 / 1e6:.4f}", flush=True)
    spec = f"/tmp/sc-{n}.yaml"
    open(spec, "w").write(f"sweep: sc\nkernel: gemm\nparams: {{dtype: bf16, M: {m}, N: {n}, K: {k}}}\nrepeat: 6\n")
    time.sleep(1.0)
    heat(fn, 2.0)
    subprocess.run(["build/sweep", "run", spec, "--db", f"/tmp/sc-{n}.db"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    for med, mhz, wall in sqlite3.connect(f"/tmp/sc-{n}.db").execute(
            "SELECT median, sm_clock, wall FROM v_results WHERE status = 'ok' ORDER BY pass"):
        print(f"sweep {m}x{n}x{k} us {med * 1e6:.2f} mhz {mhz:.1f} Mcycles {med * mhz:.4f} wall {wall:.2f}",
              flush=True)
