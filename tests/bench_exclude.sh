#!/bin/bash
# bench_exclude.sh: planning 1,000,000 cells with no exclude, with 2,000 and with 20,000 (each naming both
# keys of a point): the CPU seconds of `sweep plan` (user and system: a shared machine's load moves its
# wall time more than the work), its wall seconds, and the ratios of CPU seconds to none. With BENCH_BASELINE=path/to/another/sweep the same by that build
# in the same run (a shared machine is noisy: compare within one run only).
# Target: 20,000 excludes plan within 1.5x of none.
# Usage: tests/bench_exclude.sh; SWEEP=path/to/sweep measures another build than build/sweep.
set -u
ROOT=$(pwd)
SWEEP=${SWEEP:-$ROOT/build/sweep}
B=$(mktemp -d "${TMPDIR:-/tmp}/sweep-bench-exclude.XXXXXX")
trap 'rm -rf "$B"' EXIT
cd "$B"

# spec N: 1000 x 1000 points, N excludes spread over them (distinct points, both keys named).
spec() {
	printf '%s\n' "sweep: excl" "command: [\"true\", \"{i}\", \"{j}\"]" "params:" \
		"  i: {from: 1, to: 1000, step: 1}" "  j: {from: 1, to: 1000, step: 1}"
	[ "$1" -gt 0 ] || return 0
	echo "exclude:"
	awk -v n="$1" 'BEGIN { for (e = 0; e < n; e++) printf "  - {i: %d, j: %d}\n", e % 1000 + 1,
		(int(e / 1000) * 47 + e) % 1000 + 1 }'
}

# plan_s BINARY SPEC: "CPU WALL" seconds of `sweep plan` on a new database.
plan_s() {
	rm -f plan.db*
	python3 - "$1" "$2" <<'P'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run([sys.argv[1], "plan", sys.argv[2], "--db", "plan.db"], check=True, stdout=subprocess.DEVNULL)
t = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f %.2f" % (r.ru_utime + r.ru_stime, t))
P
}

for who in this ${BENCH_BASELINE:+baseline}; do
	bin=$SWEEP
	[ "$who" = baseline ] && bin=$BENCH_BASELINE
	line=""
	for n in 0 2000 20000; do
		spec "$n" >"x$n.yaml"
		read -r cpu wall < <(plan_s "$bin" x$n.yaml)
		eval "t$n=$cpu"
		line="$line, $n excludes $cpu s CPU ($wall s wall)"
	done
	cells=$(sqlite3 plan.db "SELECT count(*) FROM cells")
	echo "== exclude ($who build): 1,000,000 points${line#,}; $cells cells with 20,000;" \
	     "CPU ratios to none: 2,000 $(echo "$t2000 $t0" | awk '{ printf "%.2f", $1 / $2 }')," \
	     "20,000 $(echo "$t20000 $t0" | awk '{ printf "%.2f", $1 / $2 }') (target: 20,000 within 1.5)"
done
