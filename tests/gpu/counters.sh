#!/bin/bash
# counters.sh: on a GPU host, a spec's counters: read through ncu (src/counters.c) for a command cell (a
# program of one 2 GiB copy, tests/gpu/copy_once.cu) and for a kernel cell (the copy kernel, 2 GiB: its one
# launch in sweep __counters): each must read and write 2 GiB of DRAM, within 1 %; and a bf16 GEMM 8192^3 must
# read at least its operands (A and B, 256 MiB). When the
# driver refuses counters, prints what it answered (the result's one line) and exits 2: blocked, not
# failed. The CPU twin is tests/e2e/t0460-counters.sh (a fake ncu). Run after bench/gpu/vendor.sh here, with
# vendor/ copied along. Exits 1 when a figure is off. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=counters
. tests/gpu/lib.sh
step build
[ -x build/sweep ] || make_sweep . "$R/build.log" || { tail -30 "$R/build.log"; exit 1; }
nvcc -O3 -arch=sm_90 tests/gpu/copy_once.cu -o "$R/copy_once" || exit 1
command -v ncu || { echo "counters: no ncu here: nothing to check"; exit 2; }
ncu --version | tail -1

cat >"$R/counters.yaml" <<Y
sweep: counters
command: [$R/copy_once, "{gib}"]
params: {gib: [2]}
metrics: {bytes: "bytes=([0-9]+)"}
counters: [dram__bytes_read.sum, dram__bytes_write.sum, lts__t_sector_hit_rate.pct]
Y
# The kernel cell's own pass: one launch of the copy kernel in sweep __counters, only it profiled.
cat >"$R/counters-kernel.yaml" <<Y
sweep: counters-kernel
kernel: copy
params: {bytes: 2G, method: kernel}
counters: [dram__bytes_read.sum, dram__bytes_write.sum, lts__t_sector_hit_rate.pct]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
# A GEMM reads at least its operands: bf16 A (M x K) and B (K x N), 2 bytes each.
cat >"$R/counters-gemm.yaml" <<Y
sweep: counters-gemm
kernel: gemm
params: {M: 8192, N: 8192, K: 8192, dtype: bf16}
counters: [dram__bytes_read.sum, dram__bytes_write.sum]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
step "a 2 GiB copy's DRAM bytes through ncu: a command cell, then a kernel cell; a GEMM's reads"
timeout 300 $S run "$R/counters.yaml" --db "$R/c.db" 2>&1 | grep '^sweep: '
timeout 300 $S run "$R/counters-kernel.yaml" --db "$R/c.db" 2>&1 | grep '^sweep: '
timeout 300 $S run "$R/counters-gemm.yaml" --db "$R/c.db" 2>&1 | grep '^sweep: '
q "$R/c.db" "SELECT c.sweep, m.name, m.value FROM metrics m JOIN results r ON r.id = m.result
	JOIN cells c ON c.id = r.cell ORDER BY 1, 2"
q "$R/c.db" "SELECT c.sweep, r.stderr FROM results r JOIN cells c ON c.id = r.cell WHERE r.stderr IS NOT NULL"
python3 - "$R/c.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want, bad, read = 2 * 2**30, 0, 0
for sweep in ("counters", "counters-kernel"):
    m = dict(db.execute("SELECT m.name, m.value FROM metrics m JOIN results r ON r.id = m.result JOIN cells c"
                        " ON c.id = r.cell WHERE c.sweep = ?", (sweep,)))
    if "dram__bytes_read.sum" not in m:
        print("%s: no counter was read (the result's line above says why)" % sweep)
        continue
    read += 1
    for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        got = m.get(name, float("nan"))
        ok = abs(got / want - 1) <= 0.01
        bad += not ok
        print("%s %s: %.0f bytes, %.4f of 2 GiB: %s" % (sweep, name, got, got / want,
              "ok" if ok else "FAILED: over 1 %"))
m = dict(db.execute("SELECT m.name, m.value FROM metrics m JOIN results r ON r.id = m.result JOIN cells c"
                    " ON c.id = r.cell WHERE c.sweep = 'counters-gemm'"))
operands = 2 * (8192 * 8192 + 8192 * 8192)
if "dram__bytes_read.sum" in m:
    got = m["dram__bytes_read.sum"]
    bad += got < operands
    print("counters-gemm dram__bytes_read.sum: %.0f bytes, %.3f of its operands' %d: %s" % (
          got, got / operands, operands, "ok" if got >= operands else "FAILED: under its operands"))
else:
    print("counters-gemm: no counter was read (the result's line above says why)")
sys.exit(1 if bad else 2 if not read else 0)
P
