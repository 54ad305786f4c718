#!/bin/bash
# t0200-mpi: the same sweep on 1, 2 and 4 ranks gives the same successful cells; dynamic scheduling keeps
# workers busy when cells are unequal; per: host and per: gpu replicas; --no-local-worker.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
MPIRUN="timeout -k 10 300 mpirun --bind-to none"

cat >"$T/grid.yaml" <<'Y'
sweep: grid
kernel: sleep
params:
  ms: [0, 1]
  jitter: [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]
repeat: 3
order: shuffle
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 2}
Y

ok_set() { sql "$1" "SELECT key FROM cells c JOIN results r ON r.cell = c.id AND r.status = 'ok' ORDER BY key"; }

test_expect_success 'one process, then mpirun on 2 and 4 ranks: the same 60 successful cells' '
	"$SWEEP" run grid.yaml --db n1.db 2>/dev/null &&
	$MPIRUN -np 2 "$SWEEP" run grid.yaml --db n2.db 2>/dev/null &&
	$MPIRUN -np 4 "$SWEEP" run grid.yaml --db n4.db 2>/dev/null &&
	test "$(ok_set n1.db | wc -l)" = 60 &&
	ok_set n1.db >k1 && ok_set n2.db >k2 && ok_set n4.db >k4 && cmp k1 k2 && cmp k1 k4 &&
	test "$(sql n4.db "SELECT count(DISTINCT worker) FROM results")" = 4 &&
	test "$(sql n4.db "SELECT count(*) FROM workers WHERE run = 1")" = 4
'

test_expect_success 'with --no-local-worker rank 0 only schedules' '
	$MPIRUN -np 3 "$SWEEP" run grid.yaml --db nl.db --no-local-worker 2>/dev/null &&
	test "$(sql nl.db "SELECT group_concat(rank) FROM (SELECT DISTINCT w.rank FROM results r
		JOIN workers w ON w.id = r.worker ORDER BY 1)")" = "1,2" &&
	test "$(sql nl.db "SELECT count(*) FROM results r JOIN workers w ON w.id = r.worker WHERE w.rank = 0")" = 0 &&
	test "$(ok_set nl.db | wc -l)" = 60
'

# 30 distinct cells (a zipped group of i and ms): three of 60 ms among 5 ms ones.
cat >"$T/unequal.yaml" <<'Y'
sweep: unequal
kernel: debug.fail
params:
  mode: ok
  cell:
    - {i: 0, ms: 5}
    - {i: 1, ms: 5}
    - {i: 2, ms: 5}
    - {i: 3, ms: 5}
    - {i: 4, ms: 5}
    - {i: 5, ms: 5}
    - {i: 6, ms: 5}
    - {i: 7, ms: 5}
    - {i: 8, ms: 5}
    - {i: 9, ms: 5}
    - {i: 10, ms: 60}
    - {i: 11, ms: 60}
    - {i: 12, ms: 5}
    - {i: 13, ms: 5}
    - {i: 14, ms: 5}
    - {i: 15, ms: 5}
    - {i: 16, ms: 5}
    - {i: 17, ms: 5}
    - {i: 18, ms: 5}
    - {i: 19, ms: 5}
    - {i: 20, ms: 5}
    - {i: 21, ms: 5}
    - {i: 22, ms: 5}
    - {i: 23, ms: 5}
    - {i: 24, ms: 5}
    - {i: 25, ms: 5}
    - {i: 26, ms: 5}
    - {i: 27, ms: 5}
    - {i: 28, ms: 60}
    - {i: 29, ms: 5}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y
test_expect_success 'unequal cells: workers finish within one cell of each other (dynamic scheduling)' '
	$MPIRUN -np 3 "$SWEEP" run unequal.yaml --db u.db 2>/dev/null &&
	test "$(sql u.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 30 &&
	# each worker: the time its last cell ended. With no prefetch the spread would stay under the longest
	# cell; a prefetched cell can add part of another, and a loaded machine stretches every cell alike,
	# so the bound is 1.5 longest cells (a static split of these cells would end 200 ms and more apart).
	spread=$(sql u.db "SELECT (max(e) - min(e)) * 1000 FROM (SELECT max(julianday(started) * 86400 + wall) AS e
		FROM results GROUP BY worker)") &&
	longest=$(sql u.db "SELECT max(wall) * 1000 FROM results") &&
	echo "end spread ${spread} ms, longest cell ${longest} ms" &&
	awk -v s="$spread" -v l="$longest" "BEGIN { exit !(s < 1.5 * l + 20) }"
'

cat >"$T/perhost.yaml" <<'Y'
sweep: perhost
kernel: sleep
params: {ms: [0, 1, 2]}
per: host
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y
cat >"$T/pergpu.yaml" <<'Y'
sweep: pergpu
kernel: sleep
params: {ms: [0, 1, 2]}
per: gpu
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'per: host makes one replica per host; per: gpu one per worker slot' '
	$MPIRUN -np 2 "$SWEEP" run perhost.yaml --db ph.db 2>/dev/null &&
	test "$(sql ph.db "SELECT count(*) FROM cells WHERE state = '\''template'\''")" = 3 &&
	test "$(sql ph.db "SELECT count(*), min(replica) FROM cells WHERE state = '\''ok'\''")" = "3|$(hostname)" &&
	$MPIRUN -np 3 "$SWEEP" run pergpu.yaml --db pg.db 2>/dev/null &&
	test "$(sql pg.db "SELECT count(*), count(DISTINCT replica) FROM cells WHERE state = '\''ok'\''")" = "9|3"
'

# The master kept pointers into its array of queues while adding to it: 17 or more replicas crashed it.
test_expect_success 'per: gpu on 20 ranks: 20 replicas, every cell ok, exit 0' '
	$MPIRUN -np 20 "$SWEEP" run pergpu.yaml --db p20.db 2>err20 &&
	test "$(sql p20.db "SELECT count(*), count(DISTINCT replica) FROM cells WHERE state = '\''ok'\''")" = "60|20" &&
	test "$(sql p20.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 60 &&
	grep -q "60 cells ok, 0 quarantined, 0 not run" err20
'

test_expect_success 'hosts: naming no host of the run leaves every cell waiting, exit 3' '
	sed "s/^per: host/per: host\nhosts: [elsewhere]/" perhost.yaml >elsewhere.yaml &&
	test_expect_code 3 "$SWEEP" run elsewhere.yaml --db e.db 2>err &&
	grep -q "host '\''elsewhere'\'' named in the spec is not in this run: its cells wait" err &&
	grep -q "perhost: 0 cells ok, 0 quarantined, 3 not run" err &&
	grep -q "^sweep: perhost: 3 cells wait for hosts, GPUs or gangs that were not in this run: elsewhere (3); run again with them to measure those$" err &&
	test "$(sql e.db "SELECT count(*) FROM results")" = 0 &&
	test "$(sql e.db "SELECT group_concat(state) FROM cells")" = "template,template,template"
'

test_expect_success 'hosts and workers are recorded with their facts' '
	test "$(sql n2.db "SELECT hostname FROM hosts")" = "$(hostname)" &&
	test "$(sql n2.db "SELECT json_extract(facts, '\''$.cores'\''), json_extract(facts, '\''$.kernel'\'')
		FROM hosts")" = "$(getconf _NPROCESSORS_ONLN)|$(uname -s) $(uname -r) $(uname -m)" &&
	test "$(sql n2.db "SELECT group_concat(rank) FROM (SELECT rank FROM workers ORDER BY rank)")" = "0,1"
'
