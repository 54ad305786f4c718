# torch_nccl.py: an independent measurement of NCCL all-reduce and all-gather bus bandwidth through
# torch.distributed, timed with CUDA events (nccl-tests' formulas), to compare with sweep's nccl cells.
# Run: torchrun --nproc_per_node 2 bench/gpu/torch_nccl.py
import os
import torch
import torch.distributed as dist

ITERS = 20
dist.init_process_group("nccl")
rank, n = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(rank)
for name in ("all_reduce", "all_gather"):
    for size in [256 << 20, 512 << 20, 1 << 30, 2 << 30, 4 << 30]:
        count = size // 4
        if name == "all_reduce":
            x = torch.ones(count, dtype=torch.float32, device="cuda")
            op = lambda: dist.all_reduce(x)
            factor = 2 * (n - 1) / n
        else:
            out = torch.empty(count, dtype=torch.float32, device="cuda")
            x = torch.ones(count // n, dtype=torch.float32, device="cuda")
            op = lambda: dist.all_gather_into_tensor(out, x)
            factor = (n - 1) / n
        for _ in range(5):
            op()
        torch.cuda.synchronize()
        # nccl-tests' way: ITERS operations back to back between two events, so that the host's launch
        # latency (large from Python) is not part of each operation's time; five such samples.
        times = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(ITERS):
                op()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 1e3 / ITERS)
        t = torch.tensor([sorted(times)[len(times) // 2]], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if rank == 0:
            alg = size / t.item() / 1e9
            print("torch %s %d %.6f %.1f %.1f" % (name, size, t.item(), alg, alg * factor), flush=True)
dist.destroy_process_group()
