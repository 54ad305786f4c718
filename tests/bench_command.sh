#!/bin/bash
# bench_command.sh (make bench): a command cell's wall time against hyperfine's on the same commands, in the
# same run. For each command, ROUNDS rounds run hyperfine (-N: no shell; --warmup 2 --runs RUNS), a sweep of
# one cell (runs: RUNS, exactly RUNS runs, warmup: 2) and a third timer (posix_spawn and waitpid between two
# clock readings) in a random order, so that load that comes and goes falls on each alike. The ratio is the
# median of all of sweep's runs over the median of all of hyperfine's (within 2 %: ok); beside it the ratio of
# the fastest runs (on a loaded machine the median carries the scheduler's delays, the fastest run the
# measuring alone) and the third timer's median. ROUNDS=5 RUNS=20 by default; the sysbench run is a fixed 500
# events. Needs hyperfine and sysbench (make deps); a command whose program is missing is skipped, said. On a
# machine busy with other work, running it under `nice -n -10` (root) lets the tools and their commands see
# less of that work.
set -u
ROOT=$(pwd)
SWEEP="$ROOT/build/sweep"
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-20}
B=$(mktemp -d "${TMPDIR:-/tmp}/sweep-bench-command.XXXXXX")
trap 'rm -rf "$B"' EXIT
cd "$B"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# A third opinion: the least a timer can do, posix_spawn then waitpid between two clock readings, N times.
cat >spawn_time.c <<'C'
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
extern char **environ;
int main(int argc, char **argv)
{
	for (int i = 0, n = atoi(argv[1]); i < n; i++) {
		struct timespec a, b;
		pid_t pid;
		int st;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) || waitpid(pid, &st, 0) != pid)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
		fprintf(stderr, "%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
	}
	return 0;
}
C
cc -O2 -o spawn_time spawn_time.c || exit 1

# name|argv as YAML flow items|the same command line for hyperfine
commands=(
	"sleep 0.05|sleep, \"0.05\"|sleep 0.05"
	"python3 -c pass|/usr/bin/python3, -c, pass|/usr/bin/python3 -c pass"
	"sysbench cpu (500 events)|sysbench, cpu, --cpu-max-prime=2000, --events=500, --time=0, --threads=1, run|sysbench cpu --cpu-max-prime=2000 --events=500 --time=0 --threads=1 run"
)

fail=0
echo "== command wall time: sweep (runs: $RUNS, warmup: 2) against hyperfine -N (--runs $RUNS --warmup 2), $ROUNDS rounds alternated"
printf '%-28s %12s %12s %8s %10s %10s\n' command "sweep ms" "hyperfine ms" ratio "min ratio" "spawn ms"
for c in "${commands[@]}"; do
	IFS='|' read -r name argv line <<<"$c"
	# A machine without one of the programs (a GPU host with no package access) says so and goes on.
	command -v "${line%% *}" >/dev/null || { printf '%-28s skipped: no %s here\n' "$name" "${line%% *}"; continue; }
	: >sweep.times
	: >hyperfine.times
	: >spawn.times
	for r in $(seq 1 "$ROUNDS"); do
		# The three in a random order each round: load that comes and goes falls on each alike.
		for who in $(printf '%s\n' hyperfine sweep spawn | shuf); do
			case $who in
			hyperfine)
				hyperfine -N --style none --warmup 2 --runs "$RUNS" --export-json "h$r.json" "$line" \
					>/dev/null 2>&1 || { echo "hyperfine failed on '$line'"; exit 1; }
				python3 -c "import json; print('\n'.join(map(str, json.load(open('h$r.json'))['results'][0]['times'])))" \
					>>hyperfine.times ;;
			sweep)
				printf 'sweep: b%s\ncommand: [%s]\nruns: %s\nwarmup: 2\n' "$r" "$argv" "$RUNS" >b.yaml
				rm -f b.db*
				"$SWEEP" run b.yaml --db b.db --quiet 2>/dev/null || { echo "sweep failed on '$line'"; exit 1; }
				"$SWEEP" sql b.db "SELECT seconds FROM samples" --csv | tail -n +2 >>sweep.times ;;
			spawn)
				read -r -a words <<<"$line"
				./spawn_time 2 "${words[@]}" >/dev/null 2>&1
				./spawn_time "$RUNS" "${words[@]}" 2>>spawn.times >/dev/null || { echo "spawn_time failed"; exit 1; } ;;
			esac
		done
	done
	read -r s h ratio mins p < <(python3 -c "
import statistics
s = [float(x) for x in open('sweep.times')]
h = [float(x) for x in open('hyperfine.times')]
p = [float(x) for x in open('spawn.times')]
print(statistics.median(s) * 1e3, statistics.median(h) * 1e3, statistics.median(s) / statistics.median(h),
      min(s) / min(h), statistics.median(p) * 1e3)")
	verdict=ok
	python3 -c "import sys; sys.exit(abs($ratio - 1) > 0.02)" || { verdict="OVER 2 %"; fail=1; }
	printf '%-28s %12.3f %12.3f %8.4f %10.4f %10.3f  %s (%d runs each)\n' "$name" "$s" "$h" "$ratio" "$mins" \
		"$p" "$verdict" "$(wc -l <sweep.times)"
done

# Reading a program's output is linear: 160,000 JSON lines (3.7 MB) and one object of 100,000 keys, each a
# cell whose command only prints a file, timed from `sweep run` to its exit (the run's start included: about
# 0.3 s here) and in CPU seconds of sweep and its executor (which a machine shared with other work inflates
# less). Over 2 s of wall time fails.
python3 -c "
import json
with open('lines.txt', 'w') as f:
    for i in range(160000):
        f.write(json.dumps({'item': 'i%d' % i, 'v': i * 0.5}) + '\n')
with open('obj.txt', 'w') as f:
    f.write(json.dumps({'k%d' % i: i for i in range(100000)}) + '\n')" || exit 1
echo "== reading a program's output: one cell each, wall and CPU seconds of the whole run (2 s at most; load average $(cut -d" " -f1 /proc/loadavg))"
printf '%-34s %10s %10s\n' output "wall s" "cpu s"
# values read: 160,000 items and the cell's v; 100,000 metrics
for c in "160,000 JSON lines|lines.txt|160001" "one object of 100,000 keys|obj.txt|100000"; do
	IFS='|' read -r name file want <<<"$c"
	printf 'sweep: read\ncommand: [cat, %s]\nmetrics: json\ntimeout: 120\n' "$B/$file" >read.yaml
	rm -f read.db*
	/usr/bin/time -f '%e %U %S' -o read.time "$SWEEP" run read.yaml --db read.db --quiet 2>/dev/null ||
		{ echo "sweep failed reading $file"; exit 1; }
	read -r wall user sys <read.time
	got=$("$SWEEP" sql read.db "SELECT (SELECT count(*) FROM items) + (SELECT count(*) FROM metrics
		WHERE name <> 'seconds')" --csv | tail -1)
	verdict=ok
	[ "$got" = "$want" ] || { verdict="$got values read, not $want"; fail=1; }
	python3 -c "import sys; sys.exit($wall > 2)" || { verdict="OVER 2 s"; fail=1; }
	printf '%-34s %10.2f %10.2f  %s\n' "$name" "$wall" "$(python3 -c "print($user + $sys)")" "$verdict"
done
exit $fail
