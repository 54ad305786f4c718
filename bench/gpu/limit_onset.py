# limit_onset.py: when a power limit acts. From an idle second, each shape runs back to back (torch.matmul
# GEMMs, SDPA decode) while NVML is polled every 2 ms (energy counter, power usage, instant power, SM clock,
# clock event reasons); prints, per 25 ms window, the median launch time and what NVML said meanwhile, and
# how often the energy counter changed. Reads the card's state only. Run on the GPU machine:
# python3 bench/gpu/limit_onset.py
import threading, time, statistics, sys
import pynvml, torch
pynvml.nvmlInit()
H = pynvml.nvmlDeviceGetHandleByIndex(0)
print("limit W", pynvml.nvmlDeviceGetEnforcedPowerLimit(H) / 1e3)
INSTANT = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", 186)
def poll(seen, done):
    while not done.is_set():
        t = time.perf_counter()
        e = pynvml.nvmlDeviceGetTotalEnergyConsumption(H)
        p = pynvml.nvmlDeviceGetPowerUsage(H)
        try:
            fv = pynvml.nvmlDeviceGetFieldValues(H, [INSTANT])[0]
            pi = fv.value.uiVal if fv.nvmlReturn == 0 else -1
        except Exception:
            pi = -2
        c = pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM)
        r = pynvml.nvmlDeviceGetCurrentClocksEventReasons(H)
        seen.append((t, e, p, pi, c, r))
        time.sleep(0.002)
def run(name, fn, seconds, idle=1.0):
    time.sleep(idle)
    seen, done = [], threading.Event()
    th = threading.Thread(target=poll, args=(seen, done)); th.start()
    time.sleep(0.05)
    t0 = time.perf_counter(); ev = []
    while time.perf_counter() - t0 < seconds:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); ev.append((time.perf_counter() - t0, a, b))
        if len(ev) % 16 == 0: b.synchronize()
    torch.cuda.synchronize(); done.set(); th.join()
    ts = [(w, a.elapsed_time(b) * 1e3) for w, a, b in ev]
    # energy counter update steps
    es = [(t - t0, e) for t, e, *_ in seen]
    ch = [es[i][0] for i in range(1, len(es)) if es[i][1] != es[i-1][1]]
    gaps = [b - a for a, b in zip(ch, ch[1:])]
    print(f"== {name}: {len(seen)} polls, energy changed {len(ch)} times, median gap {statistics.median(gaps)*1e3 if gaps else -1:.1f} ms")
    for w0 in [x * 0.025 for x in range(int(seconds / 0.025))]:
        win = [u for w, u in ts if w0 <= w < w0 + 0.025]
        pw = [s for s in seen if w0 <= s[0] - t0 < w0 + 0.025]
        if not win or len(pw) < 2: continue
        de = (pw[-1][1] - pw[0][1]) / 1e3 / (pw[-1][0] - pw[0][0])
        print(f"{w0:5.3f} s: {statistics.median(win):8.2f} us  energyW {de:6.0f}  usageW {statistics.median(p[2] for p in pw)/1e3:5.0f}  instW {statistics.median(p[3] for p in pw)/1e3:5.0f}  MHz {statistics.median(p[4] for p in pw):5.0f}  reasons {'/'.join(hex(x) for x in sorted(set(p[5] for p in pw)))}")
dev = torch.device("cuda")
for m, n, k, secs in [(8192, 8192, 4096, 1.2), (1024, 6144, 4096, 0.8)]:
    a = torch.randn(k, m, device=dev, dtype=torch.bfloat16); b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    torch.matmul(b, a); torch.cuda.synchronize()
    run(f"gemm {m}x{n}x{k}", lambda: torch.matmul(b, a), secs)
q = torch.randn(1, 32, 1, 128, device=dev, dtype=torch.bfloat16)
kc = torch.randn(1, 8, 65536, 128, device=dev, dtype=torch.bfloat16); vc = torch.randn_like(kc)
import torch.nn.functional as F
run("decode 1x65536", lambda: F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True), 0.4)
