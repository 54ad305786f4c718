#!/bin/bash
# t0700-gang: cells that need several workers at once (cpu.allreduce over MPI, the CPU twin of NCCL gangs):
# gang formation, lockstep runs, bus bandwidth, mixed grids, unrunnable sizes, hangs, resume.
. tests/e2e/lib.sh
MPIRUN="timeout 300 mpirun --bind-to none"

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
	# rank 0 (the master'\''s own thread) never joins an MPI gang; results name the gang leader
	test "$(sql ar.db "SELECT count(*) FROM results r JOIN workers w ON w.id = r.worker WHERE w.rank = 0")" = 0
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
	set +e; $MPIRUN -np 3 "$SWEEP" run big.yaml --db big.db 2>err; rc=$?; set -e
	cat err | grep -v "^\[" | tail -5
	test $rc = 3 && grep -q "needs 5 workers on one host; this run has at most 2" err &&
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
	set +e; $MPIRUN -np 3 "$SWEEP" run hang.yaml --db hang.db 2>err; rc=$?; set -e
	test $rc = 3 &&
	test "$(sql hang.db "SELECT count(*) FROM results WHERE status = '\''timeout'\''")" = 2 &&
	test "$(sql hang.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 2 &&
	sql hang.db "SELECT error FROM results WHERE status = '\''timeout'\''" | grep -q "hung until the timeout"
'

test_expect_success 'a killed gang run resumes with every gang cell exactly once' '
	timeout 60 mpirun --bind-to none -np 3 "$SWEEP" run mixed.yaml --db k.db >/dev/null 2>&1 &
	job=$!; sleep 1.5; pkill -9 -f "sweep run mixed.yaml --db k.db" || true; wait $job || true
	$MPIRUN -np 3 "$SWEEP" run mixed.yaml --db k.db 2>/dev/null &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 14 &&
	test "$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 14 &&
	test "$(sql k.db "PRAGMA integrity_check")" = ok
'
