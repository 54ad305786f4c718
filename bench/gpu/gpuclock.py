# gpuclock.py: the SM clock measured on the GPU, and load held on it, for refs.py, scatter.py and
# probe_placement.py (refs.py runs its benchmark on import, so they share this instead). Reads the card's
# state only.
import statistics
import time

import torch

# The probes a clock reading takes the median of (kclock).
PROBES = 3


def probe(a, b):
    """MHz from spins of a and b cycles of one SM (torch.cuda._sleep) timed by events: the difference of
    the two cancels a launch's own time."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    ev[0].record()
    torch.cuda._sleep(a)
    ev[1].record()
    torch.cuda._sleep(b)
    ev[2].record()
    ev[2].synchronize()
    return (b - a) / ((ev[1].elapsed_time(ev[2]) - ev[0].elapsed_time(ev[1])) * 1e3)


def kclock(fn):
    """The SM clock in MHz measured on the GPU now: the median of PROBES probes of 20000 and 220000 cycles,
    each behind one call of fn (which keeps the GPU busy while the probe is enqueued, so that no launch gap
    falls inside it). One probe of a power-limited GEMM's clock scatters by about 1 % (0.13 ms of spinning,
    where the controller moves the clock at millisecond scale: rungs at 1485 and 1515 MHz gave the same
    2781 us for 8192x28672x4096), and a process's first read 35919 MHz once."""
    seen = []
    for _ in range(PROBES):
        fn()
        seen.append(probe(20000, 220000))
    return statistics.median(seen)


def heat(fn, seconds):
    """fn() back to back for `seconds` of GPU time: waited for each time, or the CPU would queue far more
    work than `seconds` before the loop ends (0.02 s of launches held 1.5 s of an 8192^2 GEMM)."""
    end = time.time() + seconds
    while time.time() < end:
        fn()
        torch.cuda.synchronize()
