#!/bin/bash
# t0330-fault: a run that stops for a fault of its own (here its disk fills up: a small tmpfs) hands its
# cells in flight back as an interrupt does and says what happened; resumed once there is room, no cell
# carries an attempt it did not use (max_attempts: 1 would quarantine a charged one).
. tests/e2e/lib.sh

test_needs "root (mounting a tmpfs)" test "$(id -u)" = 0
test_needs mpirun command -v mpirun
mkdir "$T/small"
mount -t tmpfs -o size=16m sweeptest "$T/small" || { echo "not ok - setup: tmpfs"; exit 1; }
trap 'umount -l "$T/small"; rm -rf "$T"' EXIT

# 200 cells of about 20 ms on two ranks: a few seconds, long enough to fill the disk under the run.
cat >"$T/full.yaml" <<'Y'
sweep: full
kernel: sleep
params:
  ms: {from: 10, to: 29, step: 1}
  jitter: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
max_attempts: 1
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# ok_n DB: cells ok so far (0 while the database is being made).
ok_n() { sql "$1" "SELECT count(*) FROM cells WHERE state = 'ok'" 2>/dev/null || echo 0; }

test_expect_success 'the disk fills up mid-run: the run stops, says so, and charges no cell' '
	run_bg timeout 120 mpirun --bind-to none -np 2 "$SWEEP" run full.yaml --db small/f.db 2>err &&
	job=$BG_PID &&
	# a few results first (bounded: 300 x 0.1 s), then everything left on the disk taken
	for i in $(seq 1 300); do
		if test "$(ok_n small/f.db)" -ge 10; then break; fi &&
		sleep 0.1 || return 1
	done &&
	test "$(ok_n small/f.db)" -ge 10 &&
	# dd stops at the full disk (what is free after is the room the run kept and gave back to say so)
	test_must_fail dd if=/dev/zero of=small/fill bs=64k 2>dd.err &&
	grep -q "No space left on device" dd.err &&
	test_expect_code 1 wait $job &&
	cat err | tr "\r" "\n" | grep "^sweep: " &&
	grep -q "^sweep: sql error: database or disk is full" err &&
	grep -q "^sweep: full: stopped by the error above: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume once that is mended: mpirun --bind-to none -np 2 $SWEEP run full.yaml --db small/f.db$" err &&
	# started again on a full disk (the room the run kept is free again: taken too), it stops at once and
	# tells its workers (not left waiting for a spec)
	test_must_fail dd if=/dev/zero of=small/fill2 bs=64k 2>/dev/null &&
	test_expect_code 1 timeout 60 mpirun --bind-to none -np 2 "$SWEEP" run full.yaml --db small/f.db 2>err1 &&
	cat err1 &&
	grep -q "^sweep: .*\(disk I/O error\|disk is full\)" err1 &&
	rm small/fill small/fill2 &&
	db_sound small/f.db &&
	test "$(sql small/f.db "SELECT status FROM runs")" = failed &&
	test "$(sql small/f.db "SELECT count(*) FROM cells WHERE state = '\''running'\'' OR flight != 0")" = 0 &&
	test "$(sql small/f.db "SELECT count(*) FROM cells c WHERE attempts != (SELECT count(*) FROM results r
		WHERE r.cell = c.id)")" = 0 &&
	test "$(sql small/f.db "SELECT count(*) FROM cells WHERE state = '\''planned'\''")" -ge 1
'

test_expect_success 'resumed with room again: every cell ok, attempts equal cells, exit 0' '
	timeout 120 mpirun --bind-to none -np 2 "$SWEEP" run full.yaml --db small/f.db 2>err2 &&
	tail -1 err2 &&
	grep -q "^sweep: full: 200 cells ok, 0 quarantined, 0 not run;" err2 &&
	db_sound small/f.db &&
	test "$(sql small/f.db "SELECT count(*), sum(attempts) FROM cells WHERE state = '\''ok'\''")" = "200|200" &&
	test "$(sql small/f.db "SELECT count(*) FROM results")" = 200 &&
	test "$(sql small/f.db "SELECT group_concat(status) FROM runs")" = "failed,ok"
'
