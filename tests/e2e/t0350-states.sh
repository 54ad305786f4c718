#!/bin/bash
# t0350-states: states said as they are: status counts the cells of a per: host sweep's hosts that never
# ran and names them, and is never "done 100%" while a cell is not ok; a report, a page and a plot of a
# sweep with cells not ok say "K of N cells measured" and the states of the others; the resume command
# status and a stopped run's closing line print is the launcher's whole line (mpirun and its options).
. tests/e2e/lib.sh

cat >"$T/ph.yaml" <<Y
sweep: ph
kernel: sleep
params:
  ms: [0, 1, 2]
per: host
hosts: [$(hostname), ghost]
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 2}
Y

cat >"$T/fail.yaml" <<'Y'
sweep: fails
kernel: debug.fail
params:
  mode: error
  on: "i=2"
  i: [0, 1, 2, 3]
max_attempts: 1
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'status of a per: host sweep counts the cells of a host that never came and names it' '
	test_expect_code 3 "$SWEEP" run ph.yaml --db ph.db 2>err &&
	"$SWEEP" status ph.db >st &&
	head -2 st | tail -1 | grep -Eq " +wait_hosts$" &&
	grep -Eq "^ph +6 +3 +0 +0 +0 +50.0% +[0-9]+ +3$" st &&
	! grep -q "100.0%" st &&
	grep -qx "  ph: 3 cells wait for a host that never ran: ghost (3 cells); a run with them measures those" st &&
	grep -qx "  3 cells to do" st &&
	# the totals status --hosts reads count them too
	"$SWEEP" status ph.db --json >js &&
	grep -q "\"cells\":6,\"ok\":3," js && grep -q "\"wait_hosts\":3," js
'

test_expect_success 'a report of a partly measured sweep says K of N cells measured in each format' '
	test_expect_code 3 "$SWEEP" run fail.yaml --db f.db 2>/dev/null &&
	sed "s/i: \[0, 1, 2, 3\]/i: [0, 1, 2, 3, 4, 5]/" fail.yaml >fail6.yaml &&
	"$SWEEP" plan fail6.yaml --db f.db --replan 2>/dev/null &&
	words="3 of 6 cells measured; the others: 2 planned, 1 quarantined" &&
	"$SWEEP" report f.db --metric seconds --rows i --format text >t.txt 2>t.err &&
	grep -qx "median of seconds over passes, sweep fails; $words" t.txt &&
	grep -qx "note: $words" t.err &&
	test "$(grep -c "^ *[0-9] " t.txt)" = 3 &&
	"$SWEEP" report f.db --metric seconds --rows i --format md >t.md 2>/dev/null &&
	grep -qx "median of seconds over passes, sweep fails; $words" t.md &&
	"$SWEEP" report f.db --metric seconds --rows i --format latex >t.tex 2>/dev/null &&
	grep -qx "% median of seconds over passes, sweep fails; $words" t.tex &&
	for f in csv json; do
		"$SWEEP" report f.db --metric seconds --rows i --format $f >t.$f 2>t.$f.err &&
		grep -qx "note: $words" t.$f.err &&
		! grep -q "cells measured" t.$f || return 1
	done &&
	"$SWEEP" report f.db --metric seconds --rows i --out page.html 2>/dev/null &&
	grep -q "<li class=\"note\">note: $words</li>" page.html &&
	grep -q "sweep fails; $words</p>" page.html
'

test_expect_success 'sweep plot of a partly measured sweep says it on stderr; the cells of absent hosts count' '
	"$SWEEP" plot f.db --x i --y seconds --out f.svg >/dev/null 2>p.err &&
	grep -qx "note: 3 of 6 cells measured; the others: 2 planned, 1 quarantined" p.err &&
	"$SWEEP" report ph.db --metric seconds --format csv 2>h.err >/dev/null &&
	grep -qx "note: 3 of 6 cells measured; the others: 3 cells wait for a host that never ran: ghost (3 cells)" h.err
'

test_expect_success 'a fully measured sweep has no such note, and status says 100.0%' '
	sed "s/i=2/i=9/" fail.yaml >good.yaml &&
	"$SWEEP" run good.yaml --db good.db 2>/dev/null &&
	"$SWEEP" report good.db --metric seconds --rows i >g.txt 2>g.err &&
	! grep -q "cells measured" g.txt g.err &&
	"$SWEEP" status good.db | grep -Eq "^fails +4 +4 +0 +0 +0 +100.0% +[0-9]+ +0$"
'

test_needs mpirun command -v mpirun

test_expect_success 'status prints the resume command with the launcher: mpirun and its options' '
	echo "localhost slots=3" >hf &&
	test_expect_code 3 timeout -k 10 120 mpirun -np 3 --hostfile hf --bind-to none "$SWEEP" run ph.yaml \
		--db m.db 2>/dev/null &&
	test "$(sql m.db "SELECT launcher FROM runs")" = "mpirun -np 3 --hostfile hf --bind-to none $SWEEP run ph.yaml --db m.db" &&
	"$SWEEP" status m.db >st &&
	grep -qx "  run it again as run 1 was: mpirun -np 3 --hostfile hf --bind-to none $SWEEP run ph.yaml --db m.db" st
'

test_expect_success 'without a launcher line, the resume command is stated from the ranks and hosts' '
	sql m.db "UPDATE runs SET launcher = NULL" &&
	"$SWEEP" status m.db >st &&
	grep -qx "  run it again as run 1 was: mpirun -np 3 --host $(hostname):3 sweep run --db m.db ph.yaml" st
'

test_expect_success 'a run stopped under mpirun says the launcher line to resume with' '
	cp "$ROOT/tests/data/sweeps/slow.yaml" . &&
	run_bg mpirun --bind-to none -np 2 --hostfile hf "$SWEEP" run slow.yaml --db "$T/s.db" 2>serr &&
	wait_running s.db &&
	r0=$(rank_pid "$T/s.db" 0) && test -n "$r0" &&
	kill -TERM $r0 &&
	test_must_fail wait_gone $BG_PID &&
	grep -q "interrupted by SIGTERM: .*; run the same command again to resume: mpirun --bind-to none -np 2 --hostfile hf $SWEEP run slow.yaml --db $T/s.db$" serr
'
