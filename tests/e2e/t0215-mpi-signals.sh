#!/bin/bash
# t0215-mpi-signals: what rank 0 says when mpirun ends the job. mpirun passes SIGINT (and SIGTERM, SIGHUP)
# on to the ranks as SIGTERM, and sends SIGTERM too when a rank ended: rank 0 knows the SIGTERM came from
# mpirun, and asks the workers which are still there. So SIGINT to mpirun is said as an interrupt that
# names SIGINT, a rank killed is named, and neither charges an attempt. mpirun's own exit status is Open
# MPI's: 1 once it is signalled (set before any rank ends), 128+N when a rank died of signal N.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

# 30 cells of about 0.3 s: about 5 s of work on 2 ranks.
cat >"$T/sig.yaml" <<'Y'
sweep: sig
kernel: sleep
params:
  ms: {from: 300, to: 329, step: 1}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# has_ok DB N: DB has N ok results or more.
has_ok() { test "$(sql "$1" "SELECT count(*) FROM results WHERE status = 'ok'" 2>/dev/null || echo 0)" -ge "$2"; }

# uncharged DB STATUS: the run ended STATUS, nothing in flight, no attempt without its result.
uncharged() {
	db_sound "$1" &&
	test "$(last_run "$1")" = "$2" &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'running' OR flight != 0")" = 0 &&
	test "$(sql "$1" "SELECT count(*) FROM cells c WHERE c.attempts !=
		(SELECT count(*) FROM results r WHERE r.cell = c.id)")" = 0 &&
	test "$(state_n "$1" planned)" -ge 1
}

# no_ranks DB: no process of the job writing DB is left.
no_ranks() { test -z "$(pgrep -f "db $1" || :)"; }

test_expect_success 'SIGINT to mpirun -np 2: the closing line names SIGINT, nothing charged' '
	run_bg mpirun --bind-to none -np 2 "$SWEEP" run sig.yaml --db "$T/i.db" 2>i.err &&
	job=$BG_PID &&
	wait_for 30 has_ok i.db 2 &&
	kill -INT $job &&
	test_expect_code 1 wait_gone $job &&
	wait_for 10 no_ranks "$T/i.db" &&
	grep "^sweep: sig: " i.err &&
	grep -q "^sweep: sig: interrupted by SIGINT or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM): [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume: mpirun .* run sig.yaml --db .*i.db$" i.err &&
	uncharged i.db interrupted &&
	mpirun --bind-to none -np 2 "$SWEEP" run sig.yaml --db "$T/i.db" &&
	test "$(state_n i.db ok)" = 30
'

test_expect_success 'a rank killed (SIGKILL) under mpirun -np 2: the closing line names it, nothing charged' '
	run_bg mpirun --bind-to none -np 2 "$SWEEP" run sig.yaml --db "$T/k.db" 2>k.err &&
	job=$BG_PID &&
	wait_for 30 has_ok k.db 2 &&
	r1=$(rank_pid "$T/k.db" 1) && test -n "$r1" &&
	kill -KILL $r1 &&
	test_expect_code 137 wait_gone $job &&
	wait_for 10 no_ranks "$T/k.db" &&
	grep "^sweep: sig: " k.err &&
	grep -q "^sweep: sig: rank 1 on .$(hostname). ended (killed, or exited) and mpirun ended the job: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume: mpirun .* run sig.yaml --db .*k.db$" k.err &&
	uncharged k.db failed
'
