# power_readings.py: what sweep's power verdict (src/measure_cuda.cu, cuda_power) reads. From 2 s of idle,
# each workload runs back to back for 0.45 s while NVML is polled every 0.2 ms; prints every change of the
# instant power field, the 1 s average power field, the clock event reasons and the SM clock, with its time
# in ms since the load began ("ms:instantW/averageW/reasons/MHz"). Reads the card's state only. Run on the
# GPU machine: python3 bench/gpu/power_readings.py
import sys, threading, time
import pynvml, torch
import torch.nn.functional as F
pynvml.nvmlInit()
NV = pynvml.nvmlDeviceGetHandleByIndex(0)
REASONS = (getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or
           pynvml.nvmlDeviceGetCurrentClocksThrottleReasons)

def read():
    v = pynvml.nvmlDeviceGetFieldValues(NV, [186, 185])
    watts = [f.value.uiVal if f.nvmlReturn == 0 else -1 for f in v]
    return (watts[0], watts[1],
            REASONS(NV), pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM))

def sample(stop, out):
    last = None
    while not stop.is_set():
        t = time.monotonic(); r = read()
        if r != last:
            out.append((t, r)); last = r
        time.sleep(0.0002)

def run(name, fn, secs=0.45):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    time.sleep(2.0)
    out, stop = [], threading.Event()
    th = threading.Thread(target=sample, args=(stop, out)); th.start()
    time.sleep(0.01)
    t0 = time.monotonic(); n = 0
    while time.monotonic() < t0 + secs:
        fn(); torch.cuda.synchronize(); n += 1
    t1 = time.monotonic()
    stop.set(); th.join()
    print(f"== {name}: {n} launches, {(t1-t0)/n*1e3:.3f} ms each", flush=True)
    print("   " + "  ".join(f"{(t - t0) * 1e3:.0f}:{r[0] / 1e3:.0f}W/{r[1] / 1e3:.0f}W/{r[2]:#x}/{r[3]}"
                          for t, r in out), flush=True)

dev = torch.device("cuda")
def gemm(m, n, k):
    a = torch.randn(k, m, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    return lambda: torch.matmul(b, a)
run("gemm 8192x28672x4096", gemm(8192, 28672, 4096))
run("gemm 8192x8192x4096", gemm(8192, 8192, 4096))
run("gemm 1024x6144x4096", gemm(1024, 6144, 4096))
run("gemm 1x6144x4096", gemm(1, 6144, 4096))
q = torch.randn(8, 32, 1, 128, device=dev, dtype=torch.bfloat16)
kc = torch.randn(8, 8, 65536, 128, device=dev, dtype=torch.bfloat16); vc = torch.randn_like(kc)
run("decode 8x65536", lambda: F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True))
src = torch.empty(2048 << 20, device=dev, dtype=torch.uint8).random_(); dst = torch.empty_like(src)
run("copy 2GiB", lambda: dst.copy_(src))
run("gemm 8192x8192x4096 again", gemm(8192, 8192, 4096))
run("gemm 4096x4096x4096", gemm(4096, 4096, 4096))
