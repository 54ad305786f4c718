#!/bin/bash
# t0311-lock-inode: the writer lock belongs to the database file itself, not to a name: renaming the file
# or removing its -writer note lets no second writer in, and a run whose file is moved, replaced or
# deleted under it stops within a second, keeping what it committed in a file that opens (the moved file,
# checkpointed; a copy beside the old name of one deleted or replaced), says so and exits 1.
. tests/e2e/lib.sh

# 30 cells of 0.2 s (about 25 s here): a run that ends early was stopped.
cat >"$T/s30.yaml" <<'Y'
sweep: slow
kernel: sleep
params:
  ms: [200]
  jitter: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.01, 0.011, 0.012, 0.013, 0.014, 0.015, 0.016, 0.017, 0.018, 0.019, 0.02, 0.021, 0.022, 0.023, 0.024, 0.025, 0.026, 0.027, 0.028, 0.029]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
max_attempts: 1
Y
cp "$ROOT/tests/data/sweeps/slow.yaml" "$T/"

# has_ok DB: DB holds an ok result (what was committed before the file moved is what the run must keep).
has_ok() { test "$(status_n "$1" ok 2>/dev/null)" -ge 1 2>/dev/null; }

# stopped_within PID MS: the background job PID ends with exit status 1 within MS milliseconds.
stopped_within() {
	local t0 rc=0
	t0=$(date +%s%N)
	wait_gone "$1" || rc=$?
	test "$rc" = 1 && test $((($(date +%s%N) - t0) / 1000000)) -lt "$2"
}

test_expect_success 'a database renamed during a run: no second writer; the run stops, its results in the new name' '
	run_bg "$SWEEP" run s30.yaml --db "$T/x.db" 2>err &&
	first=$BG_PID &&
	wait_running x.db && wait_for 30 has_ok x.db &&
	kill -STOP $first &&
	kept=$(sql x.db "SELECT count(*) FROM results WHERE status = '\''ok'\''") &&
	mv x.db y.db &&
	test_expect_code 1 "$SWEEP" plan s30.yaml --db y.db 2>err2 &&
	grep -q "^sweep: .y.db. is being written by another sweep" err2 &&
	kill -CONT $first &&
	stopped_within $first 3000 &&
	grep -q "^sweep: .$T/x.db. was moved or renamed to .$T/y.db. while this sweep wrote it: stopped writing; every result it had committed is in .$T/y.db. (checkpointed): use that name to go on (for a run, the same command with --db .$T/y.db.)" err &&
	n=$(sql y.db "SELECT count(*) FROM results WHERE status = '\''ok'\''") &&
	test "$n" -ge "$kept" && test "$n" -ge 1 && test "$n" -lt 30 &&
	test "$(state_n y.db ok)" = "$n" &&
	db_sound y.db &&
	test ! -e x.db && test ! -e x.db-wal && test ! -e x.db-shm && test ! -e x.db-writer &&
	test "$(sql y.db "SELECT group_concat(status) FROM runs")" = failed &&
	test "$(state_n y.db running)" = 0 &&
	"$SWEEP" run s30.yaml --db y.db 2>err3 &&
	test "$(state_n y.db ok)" = 30 && test "$(status_n y.db ok)" = 30 &&
	test "$(sql y.db "SELECT sum(attempts) FROM cells")" = 30 &&
	db_sound y.db
'

test_expect_success 'the -writer note removed during a run: a second writer is still refused' '
	run_bg "$SWEEP" run slow.yaml --db "$T/n.db" &&
	first=$BG_PID &&
	wait_running n.db &&
	rm n.db-writer &&
	test_expect_code 1 "$SWEEP" plan slow.yaml --db n.db 2>err &&
	grep -q "^sweep: .n.db. is being written by another sweep" err &&
	test_expect_code 1 "$SWEEP" retry n.db 2>err &&
	grep -q "is being written by another sweep" err &&
	wait_gone $first &&
	test "$(state_n n.db ok)" = 8 && test "$(status_n n.db ok)" = 8 &&
	test "$(sql n.db "SELECT sum(attempts) FROM cells")" = 8 &&
	test "$(sql n.db "SELECT group_concat(status) FROM runs")" = ok
'

test_expect_success 'a database replaced during a run: the run stops, its results copied beside the name' '
	"$SWEEP" plan slow.yaml --db other.db >/dev/null &&
	run_bg "$SWEEP" run s30.yaml --db "$T/r.db" 2>err &&
	first=$BG_PID &&
	wait_running r.db && wait_for 30 has_ok r.db &&
	mv other.db r.db &&
	stopped_within $first 3000 &&
	saved=$(ls r.db.saved-*) &&
	grep -q "^sweep: .$T/r.db. was deleted or replaced while this sweep wrote it: stopped writing; every result it had committed is in .$T/$saved.: use that file as the database to go on" err &&
	n=$(status_n "$saved" ok) && test "$n" -ge 1 && test "$n" -lt 30 &&
	test "$(sql "$saved" "SELECT count(*) FROM cells")" = 30 &&
	db_sound "$saved" &&
	test "$(sql r.db "SELECT count(*) FROM cells")" = 8 &&
	test "$(status_n r.db ok)" = 0 &&
	db_sound r.db
'

test_expect_success 'a database deleted during a run: the run stops, its results copied beside the name' '
	run_bg "$SWEEP" run s30.yaml --db "$T/d.db" 2>err &&
	first=$BG_PID &&
	wait_running d.db && wait_for 30 has_ok d.db &&
	rm d.db &&
	stopped_within $first 3000 &&
	saved=$(ls d.db.saved-*) &&
	grep -q "^sweep: .$T/d.db. was deleted or replaced while this sweep wrote it" err &&
	n=$(status_n "$saved" ok) && test "$n" -ge 1 && test "$n" -lt 30 &&
	db_sound "$saved" &&
	test ! -e d.db && test ! -e d.db-wal && test ! -e d.db-shm
'

test_needs "root (a bind mount)" test "$(id -u)" = 0
trap 'umount -l "$T/bound.db" 2>/dev/null; rm -rf "$T"' EXIT

test_expect_success 'a bind mount of the database file: a second writer through it is refused' '
	run_bg "$SWEEP" run slow.yaml --db "$T/b.db" &&
	first=$BG_PID &&
	wait_running b.db &&
	touch bound.db && mount --bind b.db bound.db &&
	test_expect_code 1 "$SWEEP" plan slow.yaml --db bound.db 2>err &&
	grep -q "^sweep: .bound.db. is being written by another sweep" err &&
	wait_gone $first &&
	test "$(state_n b.db ok)" = 8 && test "$(sql b.db "SELECT sum(attempts) FROM cells")" = 8
'
