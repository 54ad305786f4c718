#!/bin/bash
# counter_writes.sh: where CUPTI's and ncu's DRAM writes part (docs/measured.md, "The GPU's conditions":
# CUPTI counts about 20 MB more than ncu for a 2 GiB copy and a bf16 GEMM 8192^3, whatever clean precedes
# the pass). Copies of 1 MiB to 2 GiB and bf16 GEMMs M x 8192 x 8192 (output 16-128 MiB) with counters,
# through CUPTI (c.db) and through ncu (n.db: no CUPTI to load); each cell's bytes read and written by both
# and the difference. A kernel whose output fits in the L2 tells the two readings apart: ncu counting about
# none of a 1 MiB copy's writes where CUPTI counts 1 MiB says CUPTI's range ends with the kernel's lines
# written back; CUPTI counting ~20 MB says it is state before the pass. Needs ncu. Reads the card's state
# only. Run after bench/gpu/vendor.sh here, with vendor/ copied along.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=counter_writes
. tests/gpu/lib.sh
step build
[ -x build/sweep ] || build_sweep
nvidia-smi --query-gpu=name,driver_version --format=csv
find_cupti
command -v ncu >/dev/null && ncu --version | tail -1
cat >"$R/copy.yaml" <<Y
sweep: copy
kernel: copy
params: {bytes: [1M, 8M, 64M, 512M, 2G], method: kernel}
counters: [dram__bytes_read.sum, dram__bytes_write.sum]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
cat >"$R/gemm.yaml" <<Y
sweep: gemm
kernel: gemm
params: {M: [1024, 2048, 4096, 8192], N: 8192, K: 8192, dtype: bf16}
counters: [dram__bytes_read.sum, dram__bytes_write.sum]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
for s in copy gemm; do
	timeout 200 $S run "$R/$s.yaml" --db "$R/c.db" 2>&1 | grep -E '^sweep: '
	SWEEP_CUPTI_LIB="$R/no-libcupti.so" timeout 250 $S run "$R/$s.yaml" --db "$R/n.db" 2>&1 | grep '^sweep: '
done
python3 - "$R" <<'P'
import sqlite3, sys
R = sys.argv[1]
def read(p):
    """{(sweep, params, counter): value} of the DRAM counters in database p"""
    return {(s, pa, n): v for s, pa, n, v in sqlite3.connect(p).execute(
        "SELECT c.sweep, c.params, m.name, m.value FROM metrics m JOIN results r ON r.id = m.result"
        " JOIN cells c ON c.id = r.cell WHERE m.name LIKE 'dram%'")}
c, n = read(R + "/c.db"), read(R + "/n.db")
for k in sorted(c):
    m = n.get(k, float("nan"))
    print("%-60s %-22s CUPTI %14.0f ncu %14.0f  CUPTI - ncu %+.1f MB" % (k[1], k[2], c[k], m, (c[k] - m) / 1e6))
P
