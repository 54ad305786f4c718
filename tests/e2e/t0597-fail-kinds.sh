#!/bin/bash
# t0597-fail-kinds: a failure has one kind, named where it happens, and one exit code from every command
# (src/exitcode.h). A database that is missing, a text file or another program's SQLite: exit 2 from every
# command that reads one (report, sql, status, snapshot, retry, compare, plot), with the same message; a
# damaged one: exit 1; a database another sweep writes: exit 1 from every writer (run, plan, retry, merge,
# predict, hosts label), naming it; a host nothing answers on: exit 6 from launch, status --hosts, pull and
# stop.
. tests/e2e/lib.sh

cat >"$T/s.yaml" <<'Y'
sweep: s
kernel: sleep
params:
  ms: [1, 2]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
Y

# One cell of 30 s: a run that holds the writer lock while the writers below are refused.
cat >"$T/hold.yaml" <<'Y'
sweep: hold
kernel: sleep
params:
  ms: [30000]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0, timeout: 60}
Y

# An inventory of this machine (for hosts label), predictions of the held sweep (for predict).
cat >"$T/inv.yaml" <<EOF
hosts:
  - {name: here, hostname: $(hostname), labels: {rack: r1}}
EOF
printf 'sweep,ms,metric,value\nhold,30000,seconds,30\n' >"$T/pred.csv"

# readers DB: every command that reads a database, on DB (one per line, DB in its place).
readers() {
	printf '%s\n' "report $1 --metric seconds" "sql $1 SELECT\ 1" "status $1" "snapshot $1 snap.db" \
		"retry $1" "compare $1 s.db --metric seconds" "compare s.db $1 --metric seconds" \
		"plot $1 --x ms --y seconds --out p.png"
}

# each_reader DB CODE MESSAGE: every reader on DB exits CODE, its stderr's first line MESSAGE (a grep
# pattern), and leaves no output behind.
each_reader() {
	readers "$1" >cmds &&
	while read -r cmd; do
		rc=0 &&
		eval "\"\$SWEEP\" $cmd" >out 2>err || rc=$? &&
		echo "$cmd: exit $rc: $(head -1 err)" &&
		test "$rc" = "$2" &&
		head -1 err | grep -q "^sweep: $3" &&
		test ! -e snap.db && test ! -e p.png || return 1
	done <cmds &&
	test "$(wc -l <cmds)" = 8
}

test_expect_success 'setup: a sweep database, a text file, another program'\''s SQLite, a damaged copy' '
	"$SWEEP" run s.yaml --db s.db 2>err && grep -q "2 cells ok" err &&
	printf "ms,seconds\n1,0.001\n" >text.db &&
	sqlite3 other.db "CREATE TABLE t(x); INSERT INTO t VALUES (1)" &&
	cp s.db bad.db &&
	printf "%0512d" 0 | dd of=bad.db bs=1 seek=100 conv=notrunc 2>/dev/null &&
	test "$(sqlite3 bad.db "PRAGMA quick_check" 2>&1 | grep -c malformed)" = 1
'

test_expect_success 'a missing database: exit 2 from every reader, no such file' '
	each_reader missing.db 2 "cannot open .missing.db.: No such file or directory$" &&
	each_reader no-dir/missing.db 2 "cannot open .no-dir/missing.db.: No such file or directory$"
'

test_expect_success 'a text file: exit 2 from every reader, not a database' '
	each_reader text.db 2 "cannot open .text.db.: file is not a database$"
'

test_expect_success 'another program'\''s SQLite database: exit 2 from every reader, not a sweep database' '
	each_reader other.db 2 ".other.db. is not a sweep database (no sweep schema)$" &&
	test "$(sqlite3 other.db "SELECT x FROM t")" = 1
'

test_expect_success 'a newer schema: exit 2 from every reader, as not a sweep database' '
	cp s.db new.db && sqlite3 new.db "PRAGMA user_version = 999" &&
	each_reader new.db 2 ".new.db. has schema version 999, newer than this sweep knows"
'

test_expect_success 'a damaged database: exit 1 from every reader (sweep'\''s file, not a wrong name)' '
	each_reader bad.db 1 "cannot open .bad.db.: .*malformed"
'

test_expect_success 'the same three from writers: exit 2, and nothing is made of them' '
	for db in missing.db text.db other.db; do
		test_expect_code 2 "$SWEEP" hosts label $db inv.yaml 2>err && cat err &&
		test_expect_code 2 "$SWEEP" predict $db pred.csv 2>err && cat err || return 1
	done &&
	test ! -e missing.db &&
	test_expect_code 2 "$SWEEP" plan s.yaml --db text.db 2>err &&
	grep -q "^sweep: cannot open .text.db.: file is not a database" err &&
	test_expect_code 2 "$SWEEP" run s.yaml --db other.db 2>err &&
	grep -q "^sweep: .other.db. is an SQLite database without a sweep schema" err &&
	test_expect_code 2 "$SWEEP" merge other.db s.db 2>err &&
	grep -q "^sweep: .other.db. is an SQLite database without a sweep schema" err &&
	test "$(printf "ms,seconds\n1,0.001\n")" = "$(cat text.db)" &&
	test "$(sqlite3 other.db "SELECT count(*) FROM sqlite_master")" = 1
'

test_expect_success 'a refused output: exit 1 from report and merge alike' '
	test_expect_code 1 "$SWEEP" report s.db --metric seconds --out s.db 2>err1 &&
	cp s.db m.db &&
	test_expect_code 1 "$SWEEP" merge m.db m.db 2>err2 &&
	cat err1 err2 &&
	grep -q "^sweep: --out .s.db. is the database being read" err1 &&
	grep -q "^sweep: the output .m.db. is the database being read" err2
'

test_expect_success 'a database a run writes: exit 1 from every writer, naming the run' '
	"$SWEEP" plan hold.yaml --db held.db &&
	run_bg "$SWEEP" run hold.yaml --db "$T/held.db" &&
	holder=$BG_PID &&
	wait_running held.db &&
	for cmd in "run hold.yaml --db held.db" "plan hold.yaml --db held.db" "retry held.db" \
		"merge held.db s.db" "predict held.db pred.csv" "hosts label held.db inv.yaml" \
		"run hold.yaml --db held.db --force --where ms=30000"; do
		rc=0 &&
		eval "\"\$SWEEP\" $cmd" >out 2>err || rc=$? &&
		echo "$cmd: exit $rc: $(head -1 err)" &&
		test "$rc" = 1 &&
		grep -q "^sweep: .held.db. is being written by another sweep (host $(hostname) pid $holder since 20.*: sweep run)" err ||
		return 1
	done &&
	test "$(sql held.db "SELECT count(*) FROM predictions")" = 0 &&
	test "$(sql held.db "SELECT count(*) FROM hosts WHERE facts LIKE '\''%rack%'\''")" = 0 &&
	kill -TERM $holder &&
	test_expect_code 5 wait_gone $holder &&
	test "$(last_run held.db)" = interrupted &&
	"$SWEEP" hosts label held.db inv.yaml >out && cat out &&
	grep -q "labels of 1 host written" out
'

# A host nothing listens on: port 1 of this machine refuses at once.
cat >"$T/closed.yaml" <<'Y'
defaults:
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null, ConnectTimeout=5]
hosts:
  - {name: closed, address: 127.0.0.1, port: 1}
Y

test_needs ssh command -v ssh
test_expect_success 'a host not reached: exit 6 from launch, status --hosts, pull and stop, not 3' '
	for cmd in "launch closed.yaml s.yaml" "status --hosts closed.yaml" "pull closed.yaml --into p.db" \
		"stop closed.yaml"; do
		rc=0 &&
		eval "\"\$SWEEP\" $cmd" >out 2>err || rc=$? &&
		echo "$cmd: exit $rc: $(grep "^closed" out | tail -1)" &&
		test "$rc" = 6 &&
		grep -q "^closed: .*unreachable.*Connection refused" out || return 1
	done &&
	test ! -e p.db
'
