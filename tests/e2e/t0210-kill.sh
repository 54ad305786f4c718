#!/bin/bash
# t0210-kill: kill -9 the master, a worker or mpirun at random moments, 20 times; resume; nothing lost,
# no cell with two successful results, integrity ok, quarantined cells exactly the failing ones.
. tests/e2e/lib.sh

cat >"$T/kill.yaml" <<'Y'
sweep: kill
kernel: debug.fail
params:
  mode: error
  on: "i=7"
  i: {from: 0, to: 99, step: 1}
  ms: [1, 3, 5]
repeat: 2
order: interleave
# A cell that is running when its job is killed is charged an attempt (it may be what killed the job),
# so innocent cells need room for a few kills: the failing ones fail every attempt anyway.
max_attempts: 6
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

rank_pid() { # rank_pid RANK: pid of that rank of the running job, if any
	for p in $(pgrep -f "build/sweep run kill.yaml"); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return; }
	done
}

test_expect_success '20 kills at random moments, then a resume, lose nothing' '
	RANDOM=7
	for round in $(seq 1 20); do
		timeout 120 mpirun --bind-to none -np 3 "$SWEEP" run kill.yaml --db k.db >/dev/null 2>&1 &
		job=$!
		sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
		case $((round % 3)) in
		0) victim=$(rank_pid 0) ;;
		1) victim=$(rank_pid $((1 + RANDOM % 2))) ;;
		2) victim=$(pgrep -P $job -x mpirun || echo $job) ;;
		esac
		[ -n "$victim" ] && kill -9 $victim 2>/dev/null
		wait $job 2>/dev/null || true
		pkill -9 -f "build/sweep run kill.yaml" 2>/dev/null || true
		echo "round $round: killed ${victim:-nothing}; ok cells now $(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''" 2>/dev/null)"
	done
	set +e; timeout 300 mpirun --bind-to none -np 3 "$SWEEP" run kill.yaml --db k.db 2>err; rc=$?; set -e
	cat err | tail -3
	test $rc = 3 &&
	test "$(sql k.db "PRAGMA integrity_check")" = ok &&
	test "$(sql k.db "SELECT count(*) FROM cells")" = 600 &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 594 &&
	test "$(sql k.db "SELECT count(*) FROM cells c WHERE (SELECT count(*) FROM results r
		WHERE r.cell = c.id AND r.status = '\''ok'\'') != (c.state = '\''ok'\'')")" = 0 &&
	test "$(sql k.db "SELECT group_concat(DISTINCT json_extract(params, '\''$.i'\'')) FROM cells
		WHERE state = '\''quarantined'\''")" = 7 &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''quarantined'\''")" = 6
'

cat >"$T/segv.yaml" <<'Y'
sweep: segv
kernel: debug.fail
params:
  mode: segv
  on: "i=3"
  i: [0, 1, 2, 3, 4, 5]
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'a cell that crashes its worker is quarantined after max_attempts runs' '
	for n in 1 2 3 4 5; do
		timeout 120 mpirun --bind-to none -np 2 "$SWEEP" run segv.yaml --db s.db >/dev/null 2>&1 && break
		state=$(sql s.db "SELECT state FROM cells WHERE json_extract(params, '\''$.i'\'') = 3")
		echo "run $n: crashed cell is $state"
		[ "$state" = quarantined ] && break
	done
	set +e; timeout 120 mpirun --bind-to none -np 2 "$SWEEP" run segv.yaml --db s.db 2>/dev/null; rc=$?; set -e
	test $rc = 3 &&
	test "$(sql s.db "SELECT state, attempts FROM cells WHERE json_extract(params, '\''$.i'\'') = 3")" = "quarantined|3" &&
	test "$(sql s.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 5
'
