#!/bin/bash
# t0308-tree: however a run stops (SIGINT or SIGTERM to it, in one process and under mpirun -np 2; its
# worker rank killed; its executor killed), nothing its cells started is left: tests/progs/tree.sh starts
# children and grandchildren that ignore SIGTERM, an orphan and a setsid() one, and all are gone.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

# tree_spec NAME [N]: NAME.yaml, N cells (2) of tree.sh whose processes carry TREE_MARK=NAME.
tree_spec() {
	cat >"$T/$1.yaml" <<EOF
sweep: tree
command: [sh, $ROOT/tests/progs/tree.sh]
env: {TREE_MARK: "$1"}
params:
  n: [$(seq -s ', ' 1 "${2:-2}")]
max_attempts: 1
EOF
}

# tree_pids NAME: the processes alive that carry TREE_MARK=NAME (a zombie has no environment). One grep
# reads them all: a loop of a few processes each would take seconds on a loaded machine.
tree_pids() {
	grep -lsxz "TREE_MARK=$1" /proc/[0-9]*/environ | sed 's|^/proc/||; s|/environ$||'
}
# tree_is NAME N: N of them alive.
tree_is() { test "$(tree_pids "$1" | wc -l)" = "$2"; }
# tree_kill NAME: what a failed test left, killed (tree.sh's processes ignore SIGTERM and sleep 1000 s).
tree_kill() { tree_pids "$1" | xargs -r kill -9 2>/dev/null || :; }

# tree.sh's six: itself, a child, a child and its child, an orphan, a setsid() orphan.
for sig in INT TERM; do
	test_expect_success "SIG$sig (one process): the cell's tree is gone when the run exits 5" '
		tree_spec one'$sig' &&
		run_bg "$SWEEP" run one'$sig'.yaml --db "$T/one'$sig'.db" 2>err'$sig' &&
		wait_for 20 tree_is one'$sig' 6 &&
		kill -'$sig' $BG_PID &&
		test_expect_code 5 wait_gone $BG_PID &&
		tree_is one'$sig' 0 &&
		grep -q "interrupted by SIG'$sig'" err'$sig' &&
		test "$(state_n one'$sig'.db planned)" = 2
	'
	tree_kill one$sig
done

test_expect_success 'SIGINT to mpirun -np 2: none of the tree left 5 s after it exits' '
	tree_spec mpINT &&
	run_bg mpirun --bind-to none -np 2 "$SWEEP" run mpINT.yaml --db "$T/mpINT.db" 2>errmp &&
	wait_for 30 tree_is mpINT 6 &&
	kill -INT $BG_PID &&
	test_must_fail wait_gone $BG_PID &&
	wait_for 5 tree_is mpINT 0 &&
	test "$(state_n mpINT.db planned)" = 2
'
tree_kill mpINT

test_expect_success 'SIGTERM to rank 0 of mpirun -np 2: none of the tree left 5 s after it exits' '
	tree_spec mpTERM &&
	run_bg mpirun --bind-to none -np 2 "$SWEEP" run mpTERM.yaml --db "$T/mpTERM.db" 2>errmt &&
	mp=$BG_PID &&
	wait_for 30 tree_is mpTERM 6 &&
	r0=$(rank_pid "$T/mpTERM.db" 0) && test -n "$r0" &&
	kill -TERM $r0 &&
	test_must_fail wait_gone $mp &&
	wait_for 5 tree_is mpTERM 0 &&
	test "$(state_n mpTERM.db planned)" = 2
'
tree_kill mpTERM

# The worker rank dies at once (SIGKILL: a lost rank): its executor ends the programs on its way out,
# whenever mpirun and the master notice (how the run then ends is another test's: t0330, t06xx).
test_expect_success 'the worker rank killed under mpirun -np 2: none of the tree left 5 s after' '
	tree_spec mpKILL &&
	run_bg mpirun --bind-to none -np 2 "$SWEEP" run mpKILL.yaml --db "$T/mpKILL.db" 2>errmk &&
	mp=$BG_PID &&
	wait_for 30 tree_is mpKILL 6 &&
	r1=$(rank_pid "$T/mpKILL.db" 1) && test -n "$r1" &&
	kill -KILL $r1 &&
	wait_for 5 tree_is mpKILL 0 &&
	{ wait_gone $mp || :; }
'
tree_kill mpKILL

# The executor dies at once (SIGKILL): its worker adopted what it left, ends it, and goes on; the one
# cell fails (max_attempts 1) and the run ends with nothing left.
test_expect_success 'the executor killed: its orphans are ended by its worker' '
	tree_spec ex 1 &&
	run_bg "$SWEEP" run ex.yaml --db "$T/ex.db" 2>errex &&
	wait_for 20 tree_is ex 6 &&
	ex=$(pgrep -f -P $BG_PID "__executor") && test -n "$ex" &&
	kill -KILL $ex &&
	test_expect_code 3 wait_gone $BG_PID &&
	tree_is ex 0 &&
	grep -q "signal 9 (SIGKILL)" errex &&
	test "$(state_n ex.db quarantined)" = 1
'
tree_kill ex
