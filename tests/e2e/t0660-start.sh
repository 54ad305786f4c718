#!/bin/bash
# t0660-start: the start of a run of a large plan. A run of the spec it was planned from expands nothing
# (cells deleted by hand are not made again) and dispatches from the database; an interrupt (SIGINT,
# SIGTERM) at any moment of a start that plans 300,000 cells leaves a sound database, as it was or as the
# run left it when it had begun, with no attempt charged, and the run exits 4 saying so. Kept to a few
# hundred thousand cells: the figures of 2 and 10 million are make bench's (tests/bench.sh --big).
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

# cells_by_state DB: "state count" lines, and the attempts counted, for comparing a database with itself
cells_by_state() {
	sql "$1" "SELECT state || ' ' || count(*) FROM cells GROUP BY state ORDER BY state;
		SELECT 'attempts ' || sum(attempts) FROM cells; SELECT 'results ' || count(*) FROM results"
}

cat >"$T/big.yaml" <<'Y'
sweep: big
kernel: debug.fail
params:
  mode: ok
  i: {from: 1, to: 300, step: 1}
  ms: {from: 0, to: 0.000999, step: 0.000001}
timing: {min_samples: 1, min_time: 0, max_noise: 1e9, timeout: 1, warmup: 0, batch: 1}
Y

test_expect_success 'a run of the planned spec expands nothing: cells deleted by hand stay deleted' '
	"$SWEEP" plan big.yaml --db d.db >out &&
	grep -q "300000 cells planned in d.db: 300000 new" out &&
	sql d.db "UPDATE cells SET state = '\''ok'\'' WHERE id > 1000; DELETE FROM cells WHERE id <= 990" &&
	"$SWEEP" run big.yaml --db d.db 2>err &&
	grep -q "big: 299010 cells ok, 0 quarantined, 0 not run; this run: 10 results ok" err &&
	test "$(sql d.db "SELECT count(*) FROM cells")" = 299010 &&
	"$SWEEP" status d.db >st &&
	grep -q "^big  *299010  *299010  *0  *0  *0  *100.0%" st &&
	db_sound d.db
'

# The plan grows from 1,000 cells to 300,000: a start that plans 299,000 new cells, interrupted after
# 0.2, 0.5, 1 and 2 s (one copy of the database each), by SIGINT and by SIGTERM in turn.
sed 's/to: 300,/to: 1,/' "$T/big.yaml" >"$T/small.yaml"

test_expect_success 'an interrupt at any moment of a start leaves a sound database, nothing charged, exit 5' '
	"$SWEEP" plan small.yaml --db base.db >/dev/null &&
	sql base.db "UPDATE cells SET state = '\''ok'\'' WHERE id <= 500" &&
	cells_by_state base.db >before &&
	before=0 &&
	n=0 &&
	for at in 0.2 0.5 1 2; do
		n=$((n + 1)) &&
		sig=$(test $((n % 2)) = 1 && echo INT || echo TERM) &&
		cp base.db s$n.db &&
		run_bg "$SWEEP" run big.yaml --db "$T/s$n.db" 2>err$n &&
		sleep $at &&
		kill -$sig $BG_PID &&
		test_expect_code 5 wait "$BG_PID" &&
		cat err$n &&
		grep -q "^sweep: big: interrupted by SIG$sig" err$n &&
		db_sound s$n.db &&
		test "$(sql s$n.db "SELECT count(*) FROM cells WHERE state = '\''running'\'' OR flight = 1")" = 0 &&
		test "$(sql s$n.db "SELECT sum(attempts) FROM cells")" = "$(sql s$n.db "SELECT count(*) FROM results")" &&
		if grep -q "before the run began: nothing was changed" err$n; then
			cells_by_state s$n.db >after$n &&
			diff before after$n &&
			test "$(sql s$n.db "SELECT count(*) FROM runs")" = 0 &&
			before=$((before + 1))
		else
			test "$(sql s$n.db "SELECT count(*) FROM cells")" = 300000 &&
			test "$(sql s$n.db "SELECT status FROM runs")" = interrupted
		fi || return 1
	done &&
	echo "interrupted before the run began: $before of 4" &&
	test $before -ge 1
'

test_expect_success 'an interrupt while the first plan of a database is made leaves no database' '
	run_bg "$SWEEP" run big.yaml --db "$T/fresh.db" 2>errf &&
	# as soon as the plan has made the file (a fixed sleep let a quick machine finish the plan first)
	wait_file fresh.db &&
	kill -TERM $BG_PID &&
	test_expect_code 5 wait "$BG_PID" &&
	grep -q "^sweep: big: interrupted by SIGTERM before the run began: nothing was changed" errf &&
	test ! -e fresh.db && test ! -e fresh.db-wal
'

# Worker ranks wait for the spec of the run; a start that stops must release them, or mpirun waits for
# ever (it did, for a spec refused with exit 2).
sed 's/to: 300,/to: 2,/' "$T/big.yaml" >"$T/two.yaml"

test_expect_success 'under mpirun, a start that stops releases the workers: the run exit code, at once' '
	"$SWEEP" plan two.yaml --db m.db >/dev/null &&
	test_expect_code 2 timeout 60 mpirun --bind-to none -np 2 "$SWEEP" run small.yaml --db m.db 2>err &&
	grep -q "was planned from another spec" err
'
