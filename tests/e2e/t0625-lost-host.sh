#!/bin/bash
# t0625-lost-host: three hosts as network namespaces under one mpirun, started as a user starts it (no
# keepalive options). A host whose link is cut mid-run (no process of it killed: it just stops answering)
# ends the run by itself: the master hears nothing from its ranks for MSG_LOST_SECONDS, hands their cells
# in flight back uncharged, names the host and rank, and ends mpirun (exit 1) within 90 s of the cut; the
# cut host's ranks hear nothing from the master for MSG_ORPHAN_SECONDS and end their executors, themselves
# and their daemon, so that 20 s after mpirun nothing of the job is left anywhere. A re-run without the host
# names it as what its cells wait for, and one with the host back does exactly the cells left. SIGTERM to
# mpirun or to rank 0 ends every process of the job within 20 s; a rank that hangs is lost too.
. tests/e2e/lib.sh
. tests/netns/lib.sh
test_needs mpirun command -v mpirun

netns_test 3
# A run that failed to end leaves nothing behind either (its processes are named by this test's folder).
trap 'kill -9 $(pgrep -f "db $T/") 2>/dev/null; netns_down; rm -rf "$T"' EXIT
H3=$(netns_name 3)
# No timeout around mpirun: that the job ends by itself is what is tested (each wait below is bounded).
MPIRUN="mpirun --bind-to none $(netns_mpirun_opts) --hostfile $NETNS_HOSTFILE -np 6"

# 30 cells of about 0.3 s on each host (2 ranks each): a few seconds of work per host.
cat >"$T/lost.yaml" <<'Y'
sweep: lost
kernel: sleep
params:
  ms: {from: 300, to: 329, step: 1}
per: host
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# left: every process of this test's jobs still alive, anywhere: in the hosts' namespaces (ranks, their
# executors, Open MPI's daemons) and here (mpirun).
left() {
	for i in 1 2 3; do netns_procs "$i"; done
	pgrep -f "db $T/" || :
}

# all_gone PID: PID has ended and nothing of the job is left.
all_gone() { ! kill -0 "$1" 2>/dev/null && test -z "$(left)"; }

# gone_within SECONDS PID: all_gone within SECONDS; else what is left, said.
gone_within() {
	wait_for "$1" all_gone "$2" && return 0
	echo "after $1 s: mpirun $(kill -0 "$2" 2>/dev/null && echo alive || echo gone); left: $(left | tr '\n' ' ')" >&2
	return 1
}

# has_results DB HOST N: HOST has N results or more in DB.
has_results() { test "$(sql "$1" "SELECT count(*) FROM v_results WHERE host = '$2'" 2>/dev/null || echo 0)" -ge "$3"; }

# uncharged DB STATUS: DB is sound, its one run ended STATUS, nothing is in flight and no cell has an attempt
# it has no result for.
uncharged() {
	db_sound "$1" &&
	test "$(sql "$1" "SELECT status FROM runs")" = "$2" &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'running' OR flight != 0")" = 0 &&
	test "$(sql "$1" "SELECT count(*) FROM cells c WHERE c.state != 'template' AND c.attempts !=
		(SELECT count(*) FROM results r WHERE r.cell = c.id)")" = 0
}

# ended PID: the process PID (mpirun) has ended.
ended() { ! kill -0 "$1" 2>/dev/null; }

test_expect_success 'a host cut off under a plain mpirun: mpirun ends within 90 s (exit 1), nothing left 20 s later' '
	run_bg $MPIRUN "$SWEEP" run lost.yaml --db "$T/l.db" 2>lost.err &&
	job=$BG_PID &&
	wait_for 30 has_results l.db "$H3" 4 &&
	netns_cut 3 &&
	cut=$(date +%s) &&
	wait_for 90 ended $job &&
	echo "mpirun ended $(($(date +%s) - cut)) s after the cut" &&
	test_expect_code 1 wait $job &&
	gone_within 20 $job &&
	grep "^sweep: lost: " lost.err &&
	grep -q "^sweep: lost: rank [45] on .$H3. sent nothing for [0-9]* s: lost (its host down or cut off, or the rank hung); ending the job: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume (with that host back, or without it): mpirun .* run lost.yaml --db $T/l.db$" lost.err &&
	uncharged l.db failed &&
	test "$(sql l.db "SELECT count(*) FROM results WHERE status != '\''ok'\''")" = 0 &&
	# the other hosts finished theirs, each cell once; the cut host has cells left
	test "$(sql l.db "SELECT group_concat(replica || '\'':'\'' || state || '\'':'\'' || attempts, '\'' '\'') FROM (SELECT
		replica, state, attempts FROM cells WHERE state != '\''template'\'' AND replica != '\''$H3'\'' GROUP BY 1, 2, 3)")" = \
		"$(netns_name 1):ok:1 $(netns_name 2):ok:1" &&
	sql l.db "SELECT key FROM cells WHERE state = '\''planned'\'' ORDER BY key" >missing &&
	test "$(wc -l <missing)" -ge 1 &&
	test "$(sql l.db "SELECT count(*) FROM cells WHERE state = '\''planned'\'' AND replica != '\''$H3'\''")" = 0
'

test_expect_success 'a re-run without the cut host names it, and how many cells wait for it (exit 3)' '
	head -2 "$NETNS_HOSTFILE" >hf12 &&
	test_expect_code 3 timeout 120 mpirun --bind-to none $(netns_mpirun_opts) --hostfile hf12 -np 4 \
		"$SWEEP" run lost.yaml --db "$T/l.db" 2>without.err &&
	n=$(wc -l <missing) &&
	grep "^sweep: lost: " without.err &&
	grep -q "^sweep: lost: $((90 - n)) cells ok, 0 quarantined, $n not run;" without.err &&
	grep -q "^sweep: lost: $n cells wait for hosts, GPUs or gangs that were not in this run: $H3 ($n); run again with them to measure those$" without.err &&
	test "$(sql l.db "SELECT count(*) FROM results WHERE run = 2")" = 0
'

test_expect_success 'the host back: the re-run does exactly the cells left, each once' '
	netns_mend 3 &&
	timeout 120 $MPIRUN "$SWEEP" run lost.yaml --db "$T/l.db" 2>again.err &&
	tail -1 again.err &&
	db_sound l.db &&
	test "$(sql l.db "SELECT group_concat(status) FROM runs")" = "failed,incomplete,ok" &&
	sql l.db "SELECT k.key FROM results r JOIN cells k ON k.id = r.cell WHERE r.run = 3 ORDER BY k.key" >did &&
	cmp missing did &&
	test "$(sql l.db "SELECT count(*) FROM cells WHERE state = '\''ok'\'' AND attempts = 1")" = 90 &&
	test "$(sql l.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 90
'

# sigterm_ends VICTIM DB: a run across the hosts, SIGTERM to VICTIM (mpirun or rank 0) once host 3 has
# results: every process of the job gone within 20 s, the run interrupted, nothing charged.
sigterm_ends() {
	run_bg $MPIRUN "$SWEEP" run lost.yaml --db "$T/$2" 2>"$2.err" &&
	job=$BG_PID &&
	wait_for 30 has_results "$2" "$H3" 2 &&
	if [ "$1" = mpirun ]; then victim=$job; else victim=$(rank_pid "$T/$2" 0); fi &&
	test -n "$victim" &&
	kill -TERM $victim &&
	gone_within 20 $job &&
	test_must_fail wait $job &&
	if [ "$1" = mpirun ]; then why="SIGINT or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM)"
	else why=SIGTERM; fi &&
	grep -q "^sweep: lost: interrupted by $why: [0-9]* cells in flight went back to planned" "$2.err" &&
	uncharged "$2" interrupted
}

test_expect_success 'SIGTERM to mpirun ends every process of the job within 20 s; nothing charged' '
	sigterm_ends mpirun t.db
'

test_expect_success 'SIGTERM to rank 0 ends every process of the job within 20 s; nothing charged' '
	sigterm_ends rank0 r.db
'

# A rank that hangs on a host that answers (stopped here): lost the same way, 20 s after the stop
# (MSG_LOST_SECONDS); rank 0 has mpirun end the job (comm_end_cut). Waited on for 60 s.
test_expect_success 'a rank that hangs: declared lost, the job ends, nothing charged' '
	run_bg mpirun --bind-to none -np 3 "$SWEEP" run lost.yaml --db "$T/h.db" 2>hang.err &&
	job=$BG_PID &&
	wait_for 30 has_results h.db "$(hostname)" 4 &&
	r2=$(rank_pid "$T/h.db" 2) && test -n "$r2" &&
	kill -STOP $r2 &&
	gone_within 60 $job &&
	test_expect_code 1 wait $job &&
	grep -q "^sweep: lost: rank 2 on .$(hostname). sent nothing for [0-9]* s: lost (its host down or cut off, or the rank hung); ending the job: [0-9]* cells in flight went back to planned (no attempt charged)" hang.err &&
	uncharged h.db failed
'
