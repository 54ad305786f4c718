#!/bin/bash
# make bench: planning a million cells, dispatch throughput against mpi4py.futures, scheduling overhead on
# realistic cells, max_samples, and the CPU kernels' time per cell with default timing (and an A/A check).
# Figures and ratios against baselines measured in the same run (machines are noisy).
set -u
ROOT=$(pwd)
SWEEP="$ROOT/build/sweep"
B=$(mktemp -d "${TMPDIR:-/tmp}/sweep-bench.XXXXXX")
trap 'rm -rf "$B"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
cd "$B"

# need NAME VALUE...: each VALUE is a number read from what was measured; otherwise the figure could not be
# read (a message changed its words, a run failed) and make bench fails at the end, naming it.
unread=""
need() {
	local name=$1 v
	shift
	for v in "$@"; do
		[[ "$v" =~ ^-?[0-9]+([.][0-9]+)?$ ]] || { echo "bench: cannot read $name (got '$v')" >&2; unread="$unread $name"; }
	done
}
# The seconds a run's closing line gives ("... in 6.58 s", whatever follows it), from its stderr file.
run_seconds() { grep -o ' in [0-9.]* s' "$1" | tail -1 | tr -dc '0-9.'; }

# Wall seconds and peak RSS (MiB) of a command, as "SECONDS MIB".
measure() {
	python3 - "$@" <<'P'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
t = time.monotonic() - t
if rc:
    sys.exit("command failed: %s (exit %d)" % (" ".join(sys.argv[1:]), rc))
print("%.3f %.1f" % (t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
P
}

echo "== planning 1,000,000 cells (one transaction), against sqlite3 inserting the same rows"
cat >plan.yaml <<'Y'
sweep: million
command: ["true", "{a}", "{b}", "{c}"]
params:
  a: {from: 0, to: 99, step: 1}
  b: {from: 0, to: 99, step: 1}
  c: {from: 0, to: 99, step: 1}
Y
read -r t rss < <(measure "$SWEEP" plan plan.yaml --db plan.db)
n=$(sqlite3 plan.db "SELECT count(*) FROM cells")
"$SWEEP" plan plan.yaml --db plan.db >/dev/null  # schema for the baseline
# Without the triggers of cell_counts, which a plan's bulk mode drops too (it counts what it adds).
sqlite3 plan.db .schema | grep -v '^CREATE TRIGGER' >schema.sql
sqlite3 base.db <schema.sql
read -r tb _ < <(measure sqlite3 base.db "BEGIN; WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n
	WHERE i < 999999) INSERT INTO cells(sweep, key, params, pass, replica, ord, state)
	SELECT 'million', printf('%016x', i * 2654435761), printf('{\"a\":%d,\"b\":%d,\"c\":%d}', i / 10000,
	i / 100 % 100, i % 100), 0, '', i, 'planned' FROM n; COMMIT;")
need plan "$t" "$rss" "$n" "$tb"
echo "plan: $n cells in ${t} s, peak RSS ${rss} MiB; sqlite3 alone: ${tb} s; ratio sweep/sqlite3 $(echo "$t $tb" |
	awk '{ printf "%.2f", $1 / $2 }')  (targets: under 5 s, under 300 MiB)"

echo "== dispatch: zero-length cells on 3 ranks (master + 3 workers), against mpi4py.futures (same ranks)"
N=${BENCH_CELLS:-100000}
# debug.fail in mode ok does nothing: i only makes the cells distinct (N = 1000 i x N/1000 passes).
cat >null.yaml <<Y
sweep: null
kernel: debug.fail
params:
  mode: ok
  i: {from: 1, to: 1000, step: 1}
repeat: $((N / 1000))
timing: {min_samples: 1, min_time: 0, max_noise: 1e9, timeout: 1, warmup: 0, batch: 1}
Y
# null_rate BINARY: cells per second committed by BINARY on a fresh null.db.
null_rate() {
	rm -f null.db*
	"$1" plan null.yaml --db null.db >/dev/null
	mpirun --bind-to none -np 3 "$1" run null.yaml --db null.db 2>run.err
	s=$(run_seconds run.err)
	ok=$(sqlite3 null.db "SELECT count(*) FROM results WHERE status = 'ok'")
	[ -n "$s" ] && echo "$ok $s" | awk '{ printf "%.0f", $1 / $2 }'
}
sweep_rate=$(null_rate "$SWEEP")
need dispatch "$sweep_rate"
# BENCH_BASELINE=path/to/another/sweep: the same cells by that build, in turn with this one, BENCH_ROUNDS
# times (default 5), and the median of the ratios (one round on a shared VM can be off by a quarter).
if [ -n "${BENCH_BASELINE:-}" ]; then
	ratios=""
	for i in $(seq "${BENCH_ROUNDS:-5}"); do
		b=$(null_rate "$BENCH_BASELINE")
		n=$(null_rate "$SWEEP")
		need "dispatch of the baseline" "$b" "$n"
		r=$(echo "$n $b" | awk '{ printf "%.3f", $2 ? $1 / $2 : 0 }')
		ratios="$ratios $r"
		echo "dispatch against the baseline, round $i: this build $n cells/s, baseline $b cells/s, ratio $r"
	done
	echo "dispatch against the baseline: median ratio $(echo $ratios | tr ' ' '\n' | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')" \
	     "(target: at least 0.90)"
fi
cat >futures.py <<'P'
import sys, time
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor
def null(i):
    return i
n = int(sys.argv[1])
with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
    if ex is not None:
        t = time.monotonic()
        for _ in ex.map(null, range(n), chunksize=1):
            pass
        print("%.0f" % (n / (time.monotonic() - t)))
P
M=$((N / 10))
py_rate=$(mpirun --bind-to none -np 3 /usr/bin/python3 futures.py $M 2>/dev/null | tail -1)
need mpi4py.futures "$py_rate"
echo "dispatch: sweep $sweep_rate cells/s committed ($N cells); mpi4py.futures $py_rate tasks/s ($M null" \
     "tasks, nothing stored); ratio $(echo "$sweep_rate ${py_rate:-0}" | awk '{ printf "%.1f", $2 ? $1 / $2 : 0 }')x" \
     "(targets: 50000 cells/s, 10x)"

echo "== overhead: 2 ms sleep cells on 3 workers, against the time the workers spent sleeping"
cat >nap.yaml <<'Y'
sweep: nap
kernel: sleep
params:
  ms: 2
  jitter: {from: 0, to: 0.0005, step: 0.000001}
timing: {min_samples: 1, min_time: 0, max_noise: 1e9, timeout: 1, warmup: 0, batch: 1}
Y
"$SWEEP" plan nap.yaml --db nap.db >/dev/null
mpirun --bind-to none -np 3 "$SWEEP" run nap.yaml --db nap.db 2>nap.err
s=$(run_seconds nap.err)
# Each cell sleeps n + 2 times: the launch whose output is checked, one warm-up launch (warmup: 0) and
# the n timed ones (at least 2: the noise needs two). The ideal divides that sleep by the 3 workers.
ideal=$(sqlite3 nap.db "SELECT sum((n + 2) * median) / 3 FROM results WHERE status = 'ok'")
need overhead "$s" "$ideal"
echo "overhead: wall $s s, ideal $(printf '%.3f' "$ideal") s, ratio $(echo "$s $ideal" |
	awk '{ printf "%.3f", $1 / $2 }') (target: under 1.03)"

echo "== max_samples: a cell whose precision is out of reach (sleeps of up to 10 us one by one, precision 1e-6)"
cat >tight.yaml <<'Y'
sweep: tight
kernel: sleep
params: {ms: 0, jitter: [0.01, 0.011, 0.012]}
timing: {batch: 1, precision: 1e-6, timeout: 10}
Y
read -r t rss < <(measure "$SWEEP" run tight.yaml --db tight.db)
need max_samples "$t" "$rss"
echo "max_samples: 3 cells in $t s (timeout 10 s each), peak RSS $rss MiB;" \
     "$(sqlite3 tight.db "SELECT 'samples per cell ' || max(n) || ', stop ' || group_concat(DISTINCT stop) ||
	', longest cell ' || printf('%.3f', max(wall)) || ' s' FROM results"), database" \
     "$(($(stat -c %s tight.db) / 1024)) KiB (targets: within the timeout, at most 10000 samples, under 5 MB a cell)"

echo "== CPU kernels with default timing: wall per cell, and six passes of one cell (A/A: spread of medians)"
# One sweep per kernel, sizes from cache-resident to memory-bound; no timing key, so each build's defaults.
cat >cpu-gemm.yaml <<'Y'
sweep: cpu-gemm
kernel: cpu.gemm
params: {dtype: f32, threads: 1, shape: [{M: 128, N: 128, K: 128}, {M: 512, N: 512, K: 512}]}
Y
cat >cpu-copy.yaml <<'Y'
sweep: cpu-copy
kernel: cpu.copy
params: {bytes: [1M, 32M]}
Y
cat >cpu-read.yaml <<'Y'
sweep: cpu-read
kernel: cpu.read
params: {bytes: [1M, 64M]}
Y
cat >aa.yaml <<'Y'
sweep: aa
kernel: cpu.gemm
params: {dtype: f32, threads: 1, M: 256, N: 256, K: 256}
repeat: 6
Y
# cpu_cells BINARY NAME: the CPU kernels' cells and six passes of one cell by BINARY into NAME-*.db; prints
# "median wall per cell, max wall, A/A spread %" and, for a build that stores them, the stop rules and marks.
cpu_cells() {
	rm -f "$2"-*.db*
	for s in cpu-gemm cpu-copy cpu-read aa; do
		"$1" run $s.yaml --db "$2-$s.db" 2>/dev/null || return 1
	done
	python3 - "$2" <<'P'
import sqlite3, statistics, sys
walls, stops = [], {}
for s in ("cpu-gemm", "cpu-copy", "cpu-read"):
    db = sqlite3.connect(f"{sys.argv[1]}-{s}.db")
    cols = [r[1] for r in db.execute("PRAGMA table_info(results)")]
    for wall, stop, precise in db.execute("SELECT wall, stop, %s FROM results WHERE status = 'ok'"
                                          % ("precise" if "precise" in cols else "NULL")):
        walls.append(wall)
        key = f"{stop}{'' if precise is None else ' precise' if precise else ' marked'}"
        stops[key] = stops.get(key, 0) + 1
aa = [m for (m,) in sqlite3.connect(f"{sys.argv[1]}-aa.db").execute("SELECT median FROM results WHERE status = 'ok'")]
print("%.3f %.3f %.3f %s" % (statistics.median(walls), max(walls), (max(aa) - min(aa)) / min(aa) * 100,
                              ",".join(f"{k}:{v}" for k, v in sorted(stops.items()))))
P
}
rounds=${BENCH_ROUNDS:-3}
[ -n "${BENCH_BASELINE:-}" ] || rounds=1
for i in $(seq "$rounds"); do
	read -r w mw aa st < <(cpu_cells "$SWEEP" new)
	need "cpu cells" "$w" "$mw" "$aa"
	echo "cpu cells, round $i: this build: median wall per cell $w s (max $mw s), A/A six passes spread $aa %; $st"
	if [ -n "${BENCH_BASELINE:-}" ]; then
		read -r bw bmw baa bst < <(cpu_cells "$BENCH_BASELINE" old)
		need "cpu cells of the baseline" "$bw" "$bmw" "$baa"
		echo "cpu cells, round $i: baseline: median wall per cell $bw s (max $bmw s), A/A six passes spread" \
		     "$baa %; $bst; wall this/baseline $(echo "$w $bw" | awk '{ printf "%.3f", $1 / $2 }')"
	fi
done
if [ -n "$unread" ]; then
	echo "bench: figures that could not be read:$unread" >&2
	exit 1
fi
