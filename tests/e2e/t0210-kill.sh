#!/bin/bash
# t0210-kill: kill -9 the master, a worker or mpirun at random moments, 20 times; resume; nothing lost,
# no cell with two successful results, integrity ok, quarantined cells exactly the failing ones.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

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

# The job's processes are found by the database's path, which is this test's own ($T): a job of another
# test script, or of another checkout, is never touched.
job_pids() { # job_pids: pids of this test's sweep processes (their timeout and mpirun included)
	pgrep -f "run kill.yaml --db $T/k.db" || :
}

start_job() { # start_job: the sweep on 3 ranks in the background; job is the pid of its timeout
	timeout -k 10 120 mpirun --bind-to none -np 3 "$SWEEP" run kill.yaml --db "$T/k.db" >/dev/null 2>&1 &
	job=$!
}

test_expect_success '20 kills at random moments, then a resume, lose nothing' '
	RANDOM=7 &&
	for round in $(seq 1 20); do
		start_job &&
		sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))" &&
		case $((round % 3)) in
		0) victim=$(rank_pid "$T/k.db" 0) ;;
		1) victim=$(rank_pid "$T/k.db" $((1 + RANDOM % 2))) ;;
		2) victim=$(pgrep -P $job -x mpirun || echo $job) ;;
		esac &&
		{ test -z "$victim" || kill -9 $victim 2>/dev/null || :; } &&
		{ wait $job 2>/dev/null || :; } &&
		# killing mpirun leaves its ranks behind
		{ kill -9 $(job_pids) 2>/dev/null || :; } &&
		echo "round $round: killed ${victim:-nothing}; ok cells now $(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''" 2>/dev/null)" ||
		return 1
	done &&
	test_expect_code 3 timeout -k 10 300 mpirun --bind-to none -np 3 "$SWEEP" run kill.yaml --db "$T/k.db" 2>err &&
	tail -3 err &&
	grep -q "^sweep: kill: 594 cells ok, 6 quarantined, 0 not run;" err &&
	db_sound k.db &&
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

# A crashing cell takes its executor process with it, not the run: one run charges each of its attempts.
test_expect_success 'a cell that crashes its executor is quarantined in one run, the rest ok, exit 3' '
	test_expect_code 3 timeout -k 10 120 mpirun --bind-to none -np 2 "$SWEEP" run segv.yaml --db s.db 2>err &&
	grep -q "^sweep: segv: 5 cells ok, 1 quarantined, 0 not run; this run: 5 results ok, 3 failed attempts" err &&
	test "$(sql s.db "SELECT state, attempts, error FROM cells WHERE json_extract(params, '\''$.i'\'') = 3")" = \
		"quarantined|3|signal 11 (SIGSEGV)" &&
	test "$(sql s.db "SELECT count(*), min(error) FROM results WHERE status = '\''error'\''")" = "3|signal 11 (SIGSEGV)" &&
	test "$(sql s.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 5
'
