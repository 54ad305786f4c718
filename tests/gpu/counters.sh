#!/bin/bash
# counters.sh: on a GPU host, a spec's counters: for kernel cells read in process through CUPTI
# (src/counters_cupti.cu) and, with no CUPTI to load, through ncu (sweep __counters); and for a command cell
# through ncu. Checks: the copy kernel's 2 GiB cell reads and writes 2 GiB of DRAM through CUPTI, within 1 %;
# a bf16 GEMM 8192^3 reads at least its operands (A and B, 256 MiB); where ncu is, its figures for the same
# kernels agree with CUPTI's within 2 %, and the command cell's copy (tests/gpu/copy_once.cu) reads and writes
# 2 GiB within 1 %. When the driver refuses counters, prints what it answered (the result's one line) and
# exits 2: blocked, not failed. The CPU twins: tests/e2e/t0461-cupti.sh (a fake CUPTI) and
# tests/e2e/t0460-counters.sh (a fake ncu). Run after bench/gpu/vendor.sh here, with vendor/ copied along.
# Exits 1 when a figure is off: on an H100 the GEMM's writes through CUPTI read 1.17 x ncu's and fail, as they
# must: ncu leaves out the ~20 MB a kernel's output still has in the L2 when it ends, CUPTI counts them
# (docs/measured.md; bench/gpu/counter_writes.sh). Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=counters
. tests/gpu/lib.sh
step build
[ -x build/sweep ] || build_sweep
nvcc -O3 -arch=sm_90 tests/gpu/copy_once.cu -o "$R/copy_once" || exit 1
# The CUPTI sweep loads: SWEEP_CUPTI_LIB when set, else libcupti.so.13 on the loader's path, else find_cupti's.
find_cupti
NCU=0
command -v ncu && ncu --version | tail -1 && NCU=1

cat >"$R/copy.yaml" <<Y
sweep: copy
kernel: copy
params: {bytes: 2G, method: kernel}
counters: [dram__bytes_read.sum, dram__bytes_write.sum, lts__t_sector_hit_rate.pct]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
cat >"$R/gemm.yaml" <<Y
sweep: gemm
kernel: gemm
params: {M: 8192, N: 8192, K: 8192, dtype: bf16}
counters: [dram__bytes_read.sum, dram__bytes_write.sum]
timing: {min_samples: 10, min_time: 0.05, max_noise: 1, timeout: 10}
Y
# The same copy without counters: its time beside the one with them (the pass is after the samples).
sed -e 's/^sweep: copy/sweep: plain/' -e '/^counters:/d' "$R/copy.yaml" >"$R/plain.yaml"
cat >"$R/command.yaml" <<Y
sweep: command
command: [$R/copy_once, "{gib}"]
params: {gib: [2]}
metrics: {bytes: "bytes=([0-9]+)"}
counters: [dram__bytes_read.sum, dram__bytes_write.sum, lts__t_sector_hit_rate.pct]
Y
step "kernel cells through CUPTI (c.db): a 2 GiB copy, a GEMM; the copy without counters"
for s in copy gemm plain; do
	timeout 150 $S run "$R/$s.yaml" --db "$R/c.db" 2>&1 | grep '^sweep: '
done
if [ "$NCU" = 1 ]; then
	step "the same kernel cells through ncu (n.db: no CUPTI to load), and a command cell"
	for s in copy gemm command; do
		SWEEP_CUPTI_LIB="$R/no-libcupti.so" timeout 150 $S run "$R/$s.yaml" --db "$R/n.db" 2>&1 | grep '^sweep: '
	done
fi
for db in c n; do
	[ -e "$R/$db.db" ] || continue
	q "$R/$db.db" "SELECT c.sweep, m.name, m.value FROM metrics m JOIN results r ON r.id = m.result
		JOIN cells c ON c.id = r.cell WHERE m.name NOT IN ('gflops') ORDER BY 1, 2"
	q "$R/$db.db" "SELECT c.sweep, r.wall, r.stderr FROM results r JOIN cells c ON c.id = r.cell ORDER BY 1"
done
python3 - "$R/c.db" "$R/n.db" <<'P'
import os, sqlite3, sys

def read(path):
    """{sweep: {metric: value}} of a database, {} when there is none."""
    if not os.path.exists(path):
        return {}
    out = {}
    for sweep, name, value in sqlite3.connect(path).execute(
            "SELECT c.sweep, m.name, m.value FROM metrics m JOIN results r ON r.id = m.result"
            " JOIN cells c ON c.id = r.cell"):
        out.setdefault(sweep, {})[name] = value
    return out

cupti, ncu = read(sys.argv[1]), read(sys.argv[2])
bad, want, operands = 0, 2 * 2**30, 2 * (8192 * 8192 + 8192 * 8192)

def within(what, got, ref, tol):
    global bad
    ok = abs(got / ref - 1) <= tol
    bad += not ok
    print("%s: %.0f against %.0f: %.4f: %s" % (what, got, ref, got / ref,
          "ok" if ok else "FAILED: over %g %%" % (tol * 100)))

if "dram__bytes_read.sum" not in cupti.get("copy", {}):
    print("CUPTI read no counter (the result's line above says why): blocked")
    sys.exit(2)
for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
    within("CUPTI copy %s, of 2 GiB" % name, cupti["copy"][name], want, 0.01)
g = cupti.get("gemm", {}).get("dram__bytes_read.sum")
if g is None:
    bad += 1
    print("CUPTI gemm: no dram__bytes_read.sum: FAILED")
else:
    bad += g < operands
    print("CUPTI gemm dram__bytes_read.sum: %.0f, %.3f of its operands' %d: %s" % (
          g, g / operands, operands, "ok" if g >= operands else "FAILED: under its operands"))
p, c = cupti["plain"]["seconds"], cupti["copy"]["seconds"]
print("copy's median with counters %.6f s, without %.6f s: %.4f" % (c, p, c / p))
if ncu:
    for sweep, names in (("copy", ("dram__bytes_read.sum", "dram__bytes_write.sum")),
                         ("gemm", ("dram__bytes_read.sum", "dram__bytes_write.sum"))):
        for name in names:
            if name not in ncu.get(sweep, {}) or name not in cupti.get(sweep, {}):
                bad += 1
                print("%s %s: missing from ncu's or CUPTI's: FAILED" % (sweep, name))
                continue
            within("%s %s, CUPTI against ncu" % (sweep, name), cupti[sweep][name], ncu[sweep][name], 0.02)
    for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
        within("ncu command copy %s, of 2 GiB" % name, ncu.get("command", {}).get(name, float("nan")), want, 0.01)
    for sweep in ("copy",):
        print("%s lts__t_sector_hit_rate.pct: CUPTI %.2f, ncu %.2f (ncu flushes the caches first; not checked)" % (
              sweep, cupti[sweep].get("lts__t_sector_hit_rate.pct", float("nan")),
              ncu.get(sweep, {}).get("lts__t_sector_hit_rate.pct", float("nan"))))
else:
    print("no ncu here: CUPTI's figures not compared with ncu's")
sys.exit(1 if bad else 0)
P
