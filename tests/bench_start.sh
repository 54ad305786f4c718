#!/bin/bash
# bench_start.sh: the start of a run of a large plan. For 2,000,000 cells (and with --big 10,000,000 too):
# `sweep plan` (seconds, peak RSS), the time from `sweep run` to its first committed result, the master's
# peak RSS two seconds later (then it is interrupted), and `sweep status` on that database. With
# BENCH_BASELINE=path/to/another/sweep the same by that build, on a database of its own, in the same run,
# with the ratios this/baseline (a shared machine is noisy: compare within one run only).
# Targets: 2M: first result within 3 s, master under 200 MB; 10M: plan within 30 s and under 300 MB,
# first result within 10 s, master under 300 MB, status under 1 s.
# Usage: tests/bench_start.sh [--big]; BENCH_START_CELLS=N replaces the 2,000,000 (a multiple of 1000);
# SWEEP=path/to/sweep measures another build than build/sweep; BENCH_START_COMMAND=1 makes the cells command
# cells (sh prog.sh {i} {ms}), whose run's start also hashes the files the command names (identity.c).
set -u
ROOT=$(pwd)
SWEEP=${SWEEP:-$ROOT/build/sweep}
SIZES=${BENCH_START_CELLS:-2000000}
[ "${1:-}" = --big ] && SIZES="$SIZES 10000000"
B=$(mktemp -d "${TMPDIR:-/tmp}/sweep-bench-start.XXXXXX")
trap 'rm -rf "$B"' EXIT
cd "$B"

# spec N: a sweep of N null cells (N/1000 values of i times 1000 of ms, a sleep of at most 1 ns).
spec() {
	if [ -n "${BENCH_START_COMMAND:-}" ]; then
		echo : >prog.sh
		printf '%s\n' "sweep: start" "command: [sh, prog.sh, '{i}', '{ms}']" "params:"
	else
		printf '%s\n' "sweep: start" "kernel: debug.fail" "params:" "  mode: ok"
	fi
	cat <<Y
  i: {from: 1, to: $(($1 / 1000)), step: 1}
  ms: {from: 0, to: 0.000999, step: 0.000001}
Y
	[ -n "${BENCH_START_COMMAND:-}" ] ||
		echo "timing: {min_samples: 1, min_time: 0, max_noise: 1e9, timeout: 1, warmup: 0, batch: 1}"
}

# figures BINARY SPEC DB: "PLAN_S PLAN_MIB FIRST_S MASTER_MIB STATUS_S" for that build.
figures() {
	python3 - "$@" <<'P'
import os, resource, signal, sqlite3, subprocess, sys, time
sweep, spec, db = sys.argv[1:4]
t = time.monotonic()
subprocess.run([sweep, "plan", spec, "--db", db], check=True, stdout=subprocess.DEVNULL)
plan = time.monotonic() - t
plan_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
def hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")
t = time.monotonic()
run = subprocess.Popen([sweep, "run", spec, "--db", db, "--quiet"], stderr=subprocess.DEVNULL)
first = float("nan")
con = None
while run.poll() is None and time.monotonic() - t < 900:
    try:
        con = con or sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.1)
        if con.execute("SELECT EXISTS (SELECT 1 FROM results)").fetchone()[0]:
            first = time.monotonic() - t
            break
    except sqlite3.Error:
        con = None
    time.sleep(0.01)
if con:
    con.close()
time.sleep(2)
master = hwm(run.pid) if run.poll() is None else float("nan")
run.send_signal(signal.SIGINT)
try:
    run.wait(120)
except subprocess.TimeoutExpired:
    run.kill()
    run.wait()
t = time.monotonic()
subprocess.run([sweep, "status", db], check=True, stdout=subprocess.DEVNULL)
print("%.2f %.0f %.2f %.0f %.3f" % (plan, plan_mib, first, master, time.monotonic() - t))
P
}

for n in $SIZES; do
	spec "$n" >"s$n.yaml"
	echo "== the start of a run of $n cells (plan, first result, master, status)"
	read -r p pm f m st < <(figures "$SWEEP" "s$n.yaml" "new$n.db") || { echo "failed"; continue; }
	rm -f new$n.db*
	echo "this build: plan ${p} s, ${pm} MiB; first result ${f} s; master ${m} MiB; status ${st} s"
	if [ -n "${BENCH_BASELINE:-}" ]; then
		read -r bp bpm bf bm bst < <(figures "$BENCH_BASELINE" "s$n.yaml" "base$n.db") ||
			{ echo "baseline failed"; continue; }
		rm -f base$n.db*
		echo "baseline:   plan ${bp} s, ${bpm} MiB; first result ${bf} s; master ${bm} MiB; status ${bst} s"
		echo "$p $bp $pm $bpm $f $bf $m $bm $st $bst" | awk '{ printf "ratios this/baseline: plan %.2f, " \
			"plan RSS %.2f, first result %.3f, master RSS %.3f, status %.3f\n", $1 / $2, $3 / $4, $5 / $6,
			$7 / $8, $9 / $10 }'
	fi
done
