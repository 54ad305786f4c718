#!/bin/bash
# t0700-gang: cells that need several workers at once (cpu.allreduce over TCP, the CPU twin of NCCL gangs):
# gang formation, lockstep runs, bus bandwidth, mixed grids, unrunnable sizes, hangs, resume.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
MPIRUN="timeout -k 10 300 mpirun --bind-to none"


cat >"$T/ar.yaml" <<'Y'
sweep: ar
kernel: cpu.allreduce
params:
  bytes: [8, 4K, 256K]
  dtype: [f32, f64]
  op: [sum, max, min]
  gpus: [2, 3]
timing: {min_samples: 5, min_time: 0.02, max_noise: 1, timeout: 5, warmup: 0.01}
Y

test_expect_success 'gangs of 2 and 3 workers run every collective correctly' '
	$MPIRUN -np 4 "$SWEEP" run ar.yaml --db ar.db 2>err &&
	test "$(sql ar.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 36 &&
	test "$(sql ar.db "SELECT count(*) FROM metrics WHERE name = '\''errors'\'' AND value = 0")" = 36 &&
	# rank 0'\''s own worker is a worker like the others: it joins gangs, and leads those it is in (results
	# name the gang leader, the lowest world rank)
	test "$(sql ar.db "SELECT count(*) > 0 FROM results r JOIN workers w ON w.id = r.worker WHERE w.rank = 0")" = 1
'

test_expect_success 'bus bandwidth follows nccl-tests: algbw * 2(n-1)/n' '
	test "$(sql ar.db "SELECT count(*) FROM v_results v
		JOIN metrics a ON a.result = v.id AND a.name = '\''algbw_gbs'\''
		JOIN metrics b ON b.result = v.id AND b.name = '\''busbw_gbs'\''
		WHERE abs(b.value - a.value * 2.0 * (json_extract(params, '\''$.gpus'\'') - 1)
			/ json_extract(params, '\''$.gpus'\'')) > 1e-9 * a.value")" = 0 &&
	test "$(sql ar.db "SELECT count(*) FROM v_results v JOIN metrics a ON a.result = v.id
		AND a.name = '\''algbw_gbs'\'' WHERE abs(a.value - json_extract(params, '\''$.bytes'\'') / v.median / 1e9)
		> 1e-6 * a.value")" = 0
'

cat >"$T/mixed.yaml" <<'Y'
sweep: mixed
kernel: cpu.allreduce
params:
  bytes: {from: 1K, to: 64K, factor: 2}
  gpus: [1, 2]
order: shuffle
timing: {min_samples: 3, min_time: 0.01, max_noise: 1, timeout: 5, warmup: 0}
Y

test_expect_success 'a mixed grid of 1- and 2-worker cells runs to completion, all workers busy' '
	$MPIRUN -np 4 "$SWEEP" run mixed.yaml --db mixed.db 2>err &&
	test "$(sql mixed.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 14 &&
	test "$(sql mixed.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''
		AND json_extract(params, '\''$.gpus'\'') = 2")" = 7 &&
	test "$(sql mixed.db "SELECT count(DISTINCT worker) FROM results")" -ge 2
'

cat >"$T/big.yaml" <<'Y'
sweep: big
kernel: cpu.allreduce
params:
  bytes: 1K
  gpus: [2, 5]
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 5, warmup: 0}
Y

test_expect_success 'a gang larger than the run is reported and waits; the rest runs; exit 3' '
	test_expect_code 3 $MPIRUN -np 3 "$SWEEP" run big.yaml --db big.db 2>err &&
	grep -v "^\[" err | tail -5 &&
	grep -q "needs 5 workers on one host; this run has at most 3" err &&
	grep -q "^sweep: big: 1 cells ok, 0 quarantined, 1 not run;" err &&
	grep -q "^sweep: big: 1 cells wait for hosts, GPUs or gangs that were not in this run: gangs larger than a host here (1); run again with them to measure those$" err &&
	test "$(sql big.db "SELECT json_extract(params, '\''$.gpus'\'') FROM cells WHERE state = '\''ok'\''")" = 2 &&
	test "$(sql big.db "SELECT state FROM cells WHERE json_extract(params, '\''$.gpus'\'') = 5")" = planned
'

cat >"$T/hang.yaml" <<'Y'
sweep: hang
kernel: cpu.allreduce
params:
  bytes: 1K
  hang: [-1, 1]
  dtype: [f32, f64]
max_attempts: 1
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 1, warmup: 0}
Y

test_expect_success 'a gang member that hangs times the cell out; the gang recovers and runs the rest' '
	test_expect_code 3 $MPIRUN -np 3 "$SWEEP" run hang.yaml --db hang.db 2>err &&
	test "$(sql hang.db "SELECT count(*) FROM results WHERE status = '\''timeout'\''")" = 2 &&
	test "$(sql hang.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 2 &&
	sql hang.db "SELECT error FROM results WHERE status = '\''timeout'\''" | grep -q "hung until the timeout" &&
	# the cells that hang time out (and, at max_attempts 1, are quarantined); the others are ok
	test "$(sql hang.db "SELECT group_concat(h, '\'' '\'') FROM (SELECT json_extract(params, '\''$.hang'\'')
		|| '\'':'\'' || status AS h FROM v_results ORDER BY 1)")" = "-1:ok -1:ok 1:timeout 1:timeout" &&
	test "$(sql hang.db "SELECT count(*) FROM cells WHERE state = '\''quarantined'\''
		AND json_extract(params, '\''$.hang'\'') = 1")" = 2
'

# The mixed grid with slower cells (0.05 to 1 s each, a few seconds in all), so that a kill lands mid-run.
cat >"$T/slowmix.yaml" <<'Y'
sweep: slowmix
kernel: cpu.allreduce
params:
  bytes: {from: 1K, to: 64K, factor: 2}
  gpus: [1, 2]
order: shuffle
timing: {min_samples: 3, min_time: 0.2, max_noise: 1, timeout: 1, warmup: 0}
Y

test_expect_success 'a killed gang run resumes with every gang cell exactly once' '
	# the run in a session of its own, so that every process of it (mpirun, its ranks) can be killed at once
	run_bg setsid timeout -k 10 60 mpirun --bind-to none -np 3 "$SWEEP" run slowmix.yaml --db k.db >/dev/null 2>&1 &&
	sid=$BG_PID &&
	# wait (bounded: 600 x 0.1 s) until two cells are done, then kill the run
	for i in $(seq 1 600); do
		n=$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\''" 2>/dev/null || echo 0) &&
		if test "${n:-0}" -ge 2; then break; fi &&
		sleep 0.1 || return 1
	done &&
	pkill -9 -s "$sid" &&
	test_expect_code 137 wait "$sid" &&
	before=$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''") &&
	echo "ok cells when killed: $before" &&
	test "$before" -ge 2 && test "$before" -lt 14 &&
	$MPIRUN -np 3 "$SWEEP" run slowmix.yaml --db k.db 2>err &&
	tail -1 err &&
	db_sound k.db &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 14 &&
	test "$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 14 &&
	test "$(sql k.db "SELECT count(*) FROM cells c WHERE (SELECT count(*) FROM results r
		WHERE r.cell = c.id AND r.status = '\''ok'\'') != 1")" = 0 &&
	# what the killed run finished is kept; the resume ran only the rest, gangs of 2 included
	test "$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND run = 1")" = "$before" &&
	test "$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND run = 2")" = $((14 - before)) &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''
		AND json_extract(params, '\''$.gpus'\'') = 2")" = 7
'

cat >"$T/one.yaml" <<'Y'
sweep: one
kernel: cpu.allreduce
params: {bytes: 64K, gpus: 8}
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 10, warmup: 0}
Y
cat >"$T/eight.yaml" <<'Y'
sweep: eight
kernel: cpu.allreduce
params:
  bytes: [4K, 1M]
  gpus: [2, 4, 8]
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 10, warmup: 0}
Y

# The most common NCCL benchmark: every GPU of an 8-GPU node in one gang, under mpirun -np 8.
test_expect_success 'mpirun -np 8: gangs of 2, 4 and 8 run; a 1-cell sweep counts 1 cell' '
	$MPIRUN -np 8 "$SWEEP" run one.yaml --db one.db 2>err1 &&
	grep "^sweep: one: 1 cells ok, 0 quarantined, 0 not run; this run: 1 results ok, 0 failed attempts" err1 &&
	test "$(sql one.db "SELECT count(*), min(n) >= 3 FROM results WHERE status = '\''ok'\''")" = "1|1" &&
	$MPIRUN -np 8 "$SWEEP" run eight.yaml --db eight.db 2>err8 &&
	grep -q "^sweep: eight: 6 cells ok, 0 quarantined, 0 not run" err8 &&
	test "$(sql eight.db "SELECT group_concat(json_extract(params, '\''$.gpus'\''), '\'','\'') FROM
		(SELECT params FROM v_results WHERE status = '\''ok'\'' ORDER BY json_extract(params, '\''$.gpus'\''),
		json_extract(params, '\''$.bytes'\''))")" = "2,2,4,4,8,8" &&
	test "$(sql eight.db "SELECT count(*) FROM metrics WHERE name = '\''errors'\'' AND value = 0")" = 6
'

