#!/bin/bash
# t0305-writer-lock: one writer at a time: a second run, plan or merge is refused naming the first
# (readers are not), a killed run's lock is taken over and its run recorded killed, its cells healed.
. tests/e2e/lib.sh

cp "$ROOT/tests/data/sweeps/a.yaml" "$ROOT/tests/data/sweeps/slow.yaml" "$T/"

test_expect_success 'a second writer is refused at once, naming the first; readers are not' '
	run_bg "$SWEEP" run slow.yaml --db "$T/c.db" &&
	first=$BG_PID &&
	wait_running c.db &&
	test_expect_code 1 "$SWEEP" run slow.yaml --db c.db 2>err1 &&
	grep -q "is being written by another sweep (host $(hostname) pid $first since 20.*: sweep run)" err1 &&
	test_expect_code 1 "$SWEEP" plan slow.yaml --db c.db 2>err2 &&
	grep -q "pid $first" err2 &&
	"$SWEEP" run a.yaml --db other.db &&
	test_expect_code 1 "$SWEEP" merge c.db other.db 2>err3 &&
	grep -q "pid $first" err3 &&
	"$SWEEP" status c.db >status &&
	grep -q slow status &&
	wait_gone $first &&
	test "$(state_n c.db ok)" = 8 && test "$(status_n c.db ok)" = 8 &&
	test "$(sql c.db "SELECT count(*) FROM cells WHERE state <> '\''ok'\''")" = 0 &&
	test "$(sql c.db "SELECT count(*) FROM runs")" = 1 && test "$(last_run c.db)" = ok
'

test_expect_success 'the lock of a killed run is taken over; its run is recorded killed, not left running' '
	sed "s/max_attempts: 1/max_attempts: 3/" slow.yaml >slow3.yaml &&
	run_bg "$SWEEP" run slow3.yaml --db "$T/d.db" &&
	dead=$BG_PID &&
	wait_running d.db &&
	kill -9 $dead &&
	test_expect_code 137 wait_gone $dead &&
	test "$(last_run d.db)" = running &&
	"$SWEEP" status d.db >st &&
	grep -Eq "^ *1 +slow +[0-9T:.Z-]+ +- +gone \(was running\)" st &&
	"$SWEEP" status d.db --json | grep -q "\"run_status\":\"gone (was running)\"" &&
	sql d.db ".backup copy.db" && "$SWEEP" status copy.db | grep -Eq "^ *1 +slow .* running *$" &&
	"$SWEEP" run slow3.yaml --db d.db 2>err &&
	grep -q "taking over the writer lock of a sweep that is gone (host $(hostname) pid $dead since" err &&
	grep -q "1 run (from run 1) left .running. by a sweep that is gone: recorded as .killed." err &&
	test "$(sql d.db "SELECT group_concat(status) FROM runs")" = "killed,ok" &&
	test "$(state_n d.db ok)" = 8
'

test_expect_success 'cells with an ok result left running or planned by an older sweep are healed on open' '
	cp c.db e.db &&
	sql e.db "UPDATE cells SET state = '\''running'\'' WHERE id <= 3;
		UPDATE cells SET state = '\''planned'\'' WHERE id = 4" &&
	"$SWEEP" run slow.yaml --db e.db 2>err &&
	grep -q "4 cells with an ok result were not marked ok" err &&
	grep -q "this run: 0 results ok" err &&
	test "$(state_n e.db ok)" = 8 && test "$(status_n e.db ok)" = 8
'
