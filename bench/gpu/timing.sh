#!/bin/bash
# timing.sh: on one H200, the GPU timing issue's grid through `sweep run` with default timing (wall per cell,
# samples, stop rule, median, SM clock), six passes of one cell, triton's do_bench on the same shapes
# (bench/gpu/refs.py), the executor's cost against the build before it (old/: `git archive` of that
# commit, built the same way), and a GPU cell with an illegal address among good ones. Run after
# bench/gpu/vendor.sh here, with vendor/ and old/ copied along. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=timing
. tests/gpu/lib.sh
step machine
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
step build
build
build_old

debug_gpu

step "the grid with default timing"
for s in gemm decode copy; do
	timeout 400 $S run tests/gpu/specs/timing-$s.yaml --db "$R/$s.db" 2>&1 | tail -2
	q "$R/$s.db" "SELECT params, printf('%.3f', wall) AS wall_s, n, stop, printf('%.2f', median * 1e6) AS us,
		printf('%.2f%%', noise * 100) AS noise, noise_ok, printf('%.0f', sm_clock) AS mhz,
		launches, printf('%.3f', warmup) AS warmup,
		(SELECT CAST(value AS INT) FROM metrics WHERE result = v.id AND name = 'splits') AS splits, status
		FROM v_results v ORDER BY id"
	q "$R/$s.db" "SELECT '$s' AS grid, count(*) AS cells, printf('%.3f', median(wall)) AS median_wall_s,
		printf('%.3f', max(wall)) AS max_wall_s, sum(stop = 'timeout') AS at_timeout FROM v_results"
done

step "six passes of one cell"
timeout 200 $S run tests/gpu/specs/timing-passes.yaml --db "$R/passes.db" 2>&1 | tail -1
q "$R/passes.db" "SELECT pass, printf('%.3f', median * 1e6) AS us, n, stop, printf('%.0f', sm_clock) AS mhz,
	printf('%.3f', wall) AS wall FROM v_results ORDER BY pass"
q "$R/passes.db" "SELECT printf('%.3f%%', (max(median) - min(median)) / min(median) * 100) AS spread FROM v_results"

step "the executor's cost: the build before it and this one, in turn (old, new, old, new)"
if [ -x old/build/sweep ]; then
	for i in 1 2; do
		timeout 100 old/build/sweep run tests/gpu/specs/timing-oldnew.yaml --db "$R/old$i.db" 2>&1 | tail -1
		timeout 100 $S run tests/gpu/specs/timing-oldnew.yaml --db "$R/new$i.db" 2>&1 | tail -1
	done
	for i in 1 2; do for b in old new; do
		[ $b = old ] && S=old/build/sweep || S=build/sweep
		q "$R/$b$i.db" "SELECT '$b$i' AS run, params, printf('%.3f', median * 1e6) AS us, n,
			printf('%.0f', sm_clock) AS mhz FROM v_results ORDER BY id"
	done; done
	S=build/sweep
fi

step "do_bench references"
PYTHONUNBUFFERED=1 timeout 300 python3 bench/gpu/refs.py 2>&1 | grep -v Warning
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
tar -C "$R" -czf "$OUT/timing-dbs.tgz" $(cd "$R" && ls *.db build.log 2>/dev/null)
