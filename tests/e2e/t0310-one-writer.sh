#!/bin/bash
# t0310-one-writer: one writer per database file, whatever name reaches it: a second writer through a
# symbolic link (to the file or to its folder) is refused at once naming the first, a file with two names
# (hard links) is refused for writing, and the first run ends with every cell ok and the database sound.
. tests/e2e/lib.sh

# clean DB: the one run ended ok, every one of the 16 cells ok with one ok result and one attempt, and
# SQLite finds the file sound.
clean() {
	test "$(sql "$1" "SELECT group_concat(status) FROM runs")" = ok &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'ok'")" = 16 &&
	test "$(sql "$1" "SELECT count(*) FROM cells")" = 16 &&
	test "$(sql "$1" "SELECT sum(attempts) FROM cells")" = 16 &&
	test "$(sql "$1" "SELECT count(*) FROM results")" = 16 &&
	test "$(sql "$1" "SELECT count(*) FROM results WHERE status = 'ok'")" = 16 &&
	db_sound "$1"
}

# 16 cells of 0.2 s: about 3 s of running for the second writers to try their luck.
cat >"$T/slow.yaml" <<'Y'
sweep: slow
kernel: sleep
params:
  ms: [200]
  jitter: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.01, 0.011, 0.012, 0.013, 0.014, 0.015]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
max_attempts: 1
Y
cat >"$T/small.yaml" <<'Y'
sweep: small
kernel: sleep
params:
  ms: [1]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
Y

test_expect_success 'a second writer through a symbolic link is refused at once, naming the first' '
	run_bg "$SWEEP" run slow.yaml --db "$T/s.db" &&
	first=$BG_PID &&
	wait_running s.db &&
	ln -s s.db sym.db &&
	test_expect_code 1 timeout 10 "$SWEEP" run slow.yaml --db sym.db 2>err1 &&
	grep -q "^sweep: .sym.db. is being written by another sweep (host $(hostname) pid $first since 20.*: sweep run)" err1 &&
	test_expect_code 1 timeout 10 "$SWEEP" plan slow.yaml --db sym.db 2>err2 &&
	grep -q "pid $first" err2 &&
	test_expect_code 1 timeout 10 "$SWEEP" retry sym.db 2>err3 &&
	grep -q "pid $first" err3 &&
	"$SWEEP" run small.yaml --db other.db 2>/dev/null &&
	test_expect_code 1 timeout 10 "$SWEEP" merge sym.db other.db 2>err4 &&
	grep -q "pid $first" err4 &&
	"$SWEEP" status sym.db --json >st &&
	grep -q "\"run_status\":\"running\"" st &&
	wait_gone $first &&
	clean s.db &&
	test ! -e sym.db-writer && test ! -e sym.db-wal
'

test_expect_success 'a second writer through a symbolic link to the folder is refused at once' '
	mkdir -p real && ln -s real alias &&
	run_bg "$SWEEP" run slow.yaml --db "$T/real/f.db" &&
	first=$BG_PID &&
	wait_running real/f.db &&
	test_expect_code 1 timeout 10 "$SWEEP" run slow.yaml --db alias/f.db 2>err &&
	grep -q "^sweep: .alias/f.db. is being written by another sweep (host $(hostname) pid $first since" err &&
	"$SWEEP" status alias/f.db --json >st &&
	grep -q "\"run_status\":\"running\"" st &&
	wait_gone $first &&
	clean real/f.db &&
	test "$(ls alias/)" = "$(printf "f.db\nf.db-writer")"
'

test_expect_success 'a database with a second name (a hard link) is refused for writing, saying why' '
	"$SWEEP" plan slow.yaml --db h.db >/dev/null &&
	run_bg "$SWEEP" run slow.yaml --db "$T/h.db" &&
	first=$BG_PID &&
	wait_running h.db &&
	ln h.db hard.db &&
	test_expect_code 1 timeout 10 "$SWEEP" run slow.yaml --db hard.db 2>err1 &&
	grep -q "^sweep: .hard.db. has 2 names (hard links): SQLite keeps one write-ahead log per name" err1 &&
	test_expect_code 1 timeout 10 "$SWEEP" plan slow.yaml --db hard.db 2>err2 &&
	grep -q "has 2 names" err2 &&
	test_expect_code 1 timeout 10 "$SWEEP" merge hard.db other.db 2>err3 &&
	grep -q "has 2 names" err3 &&
	# a reader is not refused, but told that it may not see what the run has written yet
	"$SWEEP" status hard.db >st 2>err4 &&
	grep -Eq "^slow +16 " st &&
	grep -q "^sweep: warning: .hard.db. has 2 names (hard links): SQLite keeps a write-ahead log per name" err4 &&
	wait_gone $first &&
	clean h.db &&
	"$SWEEP" sql hard.db "SELECT count(*) AS n FROM cells WHERE state = '\''ok'\''" >ok 2>/dev/null &&
	grep -Eq "^ *16 *$" ok &&
	test ! -e hard.db-writer
'

test_expect_success 'with two names even the first name is refused for writing, and works again with one' '
	test_expect_code 1 "$SWEEP" run slow.yaml --db h.db 2>err &&
	grep -q "^sweep: .h.db. has 2 names (hard links)" err &&
	test_expect_code 1 "$SWEEP" retry h.db 2>err &&
	grep -q "has 2 names" err &&
	rm hard.db &&
	"$SWEEP" run slow.yaml --db h.db 2>err &&
	test "$(sql h.db "SELECT group_concat(status) FROM runs")" = ok,ok &&
	test "$(sql h.db "SELECT sum(attempts) FROM cells")" = 16 &&
	db_sound h.db
'

test_expect_success 'path, symbolic link and hard link at once: one writer, the others refused at once' '
	mkdir -p d2 && ln -s d2 d2link &&
	run_bg "$SWEEP" run slow.yaml --db "$T/d2/b.db" &&
	first=$BG_PID &&
	wait_running d2/b.db &&
	ln -s d2/b.db bsym.db && ln d2/b.db bhard.db &&
	run_bg timeout 10 "$SWEEP" run slow.yaml --db bsym.db 2>errs &&
	sym=$BG_PID &&
	run_bg timeout 10 "$SWEEP" run slow.yaml --db bhard.db 2>errh &&
	hard=$BG_PID &&
	run_bg timeout 10 "$SWEEP" run slow.yaml --db d2link/b.db 2>errd &&
	dir=$BG_PID &&
	test_expect_code 1 wait $sym && test_expect_code 1 wait $hard && test_expect_code 1 wait $dir &&
	grep -q "^sweep: .bsym.db. has 2 names (hard links)" errs &&
	grep -q "^sweep: .bhard.db. has 2 names (hard links)" errh &&
	grep -q "^sweep: .d2link/b.db. has 2 names (hard links)" errd &&
	rm bhard.db &&
	test_expect_code 1 timeout 10 "$SWEEP" run slow.yaml --db bsym.db 2>errs &&
	grep -q "^sweep: .bsym.db. is being written by another sweep (host $(hostname) pid $first since" errs &&
	wait_gone $first &&
	clean d2/b.db
'

test_expect_success 'a lock file that is a symbolic link is refused, and not written through' '
	"$SWEEP" run small.yaml --db l.db 2>/dev/null &&
	rm l.db-writer && echo precious >precious && ln -s precious l.db-writer &&
	test_expect_code 1 "$SWEEP" run small.yaml --db l.db 2>err &&
	grep -q "cannot open the writer lock .*l.db-writer" err &&
	test "$(cat precious)" = precious
'
