#!/bin/bash
# t0306-interrupt: SIGINT, SIGTERM and SIGUSR1 (one process, mpirun, rank 0 of mpirun) stop a run
# without charging an attempt: cells in flight go back to planned, the run is recorded interrupted,
# exit 5, and the same command finishes the sweep.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

cp "$ROOT/tests/data/sweeps/slow.yaml" "$T/"

# An interrupted run: the cells in flight go back to planned uncharged (max_attempts: 1 would quarantine
# a charged one), the run says so once and is recorded as interrupted; the next run finishes the sweep.
check_interrupted() { # check_interrupted DB ERRFILE SIGNAME
	test "$(last_run "$1")" = interrupted &&
	test "$(state_n "$1" running)" = 0 && test "$(state_n "$1" quarantined)" = 0 &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'planned' AND (attempts <> 0 OR flight = 1)")" = 0 &&
	test "$(state_n "$1" planned)" -ge 1 &&
	test "$(grep -c "run the same command again" "$2")" = 1 &&
	grep -q "interrupted by $3: .* cells in flight went back to planned (no attempt charged)" "$2"
}

for sig in INT TERM USR1; do
	test_expect_success "SIG$sig charges no attempt (one process)" '
		run_bg "$SWEEP" run slow.yaml --db "$T/i'$sig'.db" 2>err'$sig' &&
		wait_running i'$sig'.db &&
		kill -'$sig' $BG_PID &&
		test_expect_code 5 wait_gone $BG_PID &&
		check_interrupted i'$sig'.db err'$sig' SIG'$sig' &&
		"$SWEEP" run slow.yaml --db i'$sig'.db &&
		test "$(state_n i'$sig'.db ok)" = 8
	'
done

test_expect_success 'SIGINT to mpirun and SIGTERM to rank 0 of mpirun -np 3 charge no attempt' '
	run_bg mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m1.db" 2>err1 &&
	wait_running m1.db &&
	kill -INT $BG_PID &&
	test_must_fail wait_gone $BG_PID &&
	check_interrupted m1.db err1 "SIGINT or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM)" &&
	run_bg mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m2.db" 2>err2 &&
	mp=$BG_PID &&
	wait_running m2.db &&
	r0=$(rank_pid "$T/m2.db" 0) && test -n "$r0" &&
	kill -TERM $r0 &&
	test_must_fail wait_gone $mp &&
	check_interrupted m2.db err2 SIGTERM &&
	mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m2.db" &&
	test "$(state_n m2.db ok)" = 8
'
