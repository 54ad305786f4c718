#!/bin/bash
# t0220-executor: cells run in an executor process that each worker supervises. A cell that crashes,
# aborts, exits, hangs or is stuck costs one attempt and the run goes on with a fresh executor; gangs
# whose member dies fail that cell on every member and the next gang forms on fresh executors.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
MPIRUN="timeout -k 10 300 mpirun --bind-to none"

# 200 ok cells with a segv, an abort, an exit and a hang among them (a zipped group: 204 distinct cells).
python3 - >"$T/mix.yaml" <<'P'
rows = ["    - {mode: ok, i: %d}" % i for i in range(200)]
for at, mode in ((20, "segv"), (70, "abort"), (120, "exit"), (170, "hang")):
    rows.insert(at, "    - {mode: %s, i: %d}" % (mode, 1000 + at))
print("sweep: mix\nkernel: debug.fail\nparams:\n  cell:\n" + "\n".join(rows))
print("max_attempts: 2\ntiming: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 1, warmup: 0}")
P

check_mix() { # check_mix DB ERRFILE: what a run of mix.yaml must leave
	grep -q "^sweep: mix: 200 cells ok, 4 quarantined, 0 not run; this run: 200 results ok, 8 failed attempts" "$2" &&
	test "$(sql "$1" "SELECT json_extract(params, '$.mode') || ':' || attempts || ':' || error FROM cells
		WHERE state = 'quarantined' ORDER BY json_extract(params, '$.i')")" = "segv:2:signal 11 (SIGSEGV)
abort:2:signal 6 (SIGABRT)
exit:2:exit 7
hang:2:timeout: hung: cancelled after timeout" &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'ok' AND json_extract(params, '$.mode') = 'ok'")" = 200 &&
	test "$(sql "$1" "SELECT count(*) FROM results WHERE status = 'ok'")" = 200 &&
	# each failing cell's two results are its attempts 1 and 2, the ok ones attempt 1
	test "$(sql "$1" "SELECT group_concat(a, ' ') FROM (SELECT group_concat(attempt, ',') AS a FROM
		(SELECT cell, attempt FROM results WHERE status != 'ok' ORDER BY cell, attempt) GROUP BY cell)")" = \
		"1,2 1,2 1,2 1,2" &&
	test "$(sql "$1" "SELECT DISTINCT attempt FROM results WHERE status = 'ok'")" = 1 &&
	# every executor, the fresh ones after a crash too, ran the kernel's open once, before its first cell
	test "$(sql "$1" "SELECT group_concat(DISTINCT printf('%g', m.value)) || ':' || count(*) FROM metrics m
		JOIN results r ON r.id = m.result WHERE m.name = 'opened' AND r.status = 'ok'")" = "1:200" &&
	db_sound "$1"
}

test_expect_success 'one process: 200 ok, the four failing cells quarantined with their causes, exit 3' '
	test_expect_code 3 timeout 300 "$SWEEP" run mix.yaml --db one.db 2>err1 &&
	check_mix one.db err1
'

test_expect_success 'the same under mpirun -np 3, every rank working' '
	test_expect_code 3 $MPIRUN -np 3 "$SWEEP" run mix.yaml --db three.db 2>err3 &&
	check_mix three.db err3 &&
	test "$(sql three.db "SELECT count(DISTINCT w.rank) FROM results r JOIN workers w ON w.id = r.worker")" = 3
'

cat >"$T/stuck.yaml" <<'Y'
sweep: stuck
kernel: debug.fail
params:
  mode: stuck
  on: "i=1"
  i: [0, 1, 2]
max_attempts: 1
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 1, warmup: 0}
Y

# A cell deaf to its watchdog (a spinning GPU kernel) is killed with its executor at its limit: the
# timeout, the watchdog's margin and the worker's (1 + 5 + 10 s here).
test_expect_success 'a stuck cell is killed with its executor at its limit; the others are ok' '
	test_expect_code 3 timeout 120 "$SWEEP" run stuck.yaml --db stuck.db 2>err &&
	grep -q "^sweep: stuck: 2 cells ok, 1 quarantined, 0 not run" err &&
	test "$(sql stuck.db "SELECT status || '\''|'\'' || error FROM results WHERE status != '\''ok'\''")" = \
		"timeout|hung: no result within 16 s; its executor was killed" &&
	test "$(sql stuck.db "SELECT wall >= 16 AND wall < 60 FROM results WHERE status != '\''ok'\''")" = 1
'

cat >"$T/gcrash.yaml" <<'Y'
sweep: gcrash
kernel: cpu.allreduce
params:
  cell:
    - {bytes: 4K, crash: 1}
    - {bytes: 8K, crash: -1}
    - {bytes: 16K, crash: -1}
gpus: 2
max_attempts: 2
order: sequential
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 3, warmup: 0}
Y

test_expect_success 'a gang member whose executor dies fails the cell for every member; the next gangs run' '
	sed -i "s/^gpus: 2$//; s/{bytes: \([0-9K]*\), crash: \(-\?[0-9]\)}/{bytes: \1, crash: \2, gpus: 2}/" gcrash.yaml &&
	test_expect_code 3 $MPIRUN -np 3 "$SWEEP" run gcrash.yaml --db g.db 2>err &&
	grep -q "^sweep: gcrash: 2 cells ok, 1 quarantined, 0 not run" err &&
	err=$(sql g.db "SELECT error FROM results WHERE status != '\''ok'\'' AND attempt = 1") &&
	echo "$err" &&
	case "$err" in *"gang rank 1 (rank "*"): signal 11 (SIGSEGV)"*) ;; *) false ;; esac &&
	# the crashing cell ran twice, as attempts 1 and 2, whichever member'\''s result came first
	test "$(sql g.db "SELECT group_concat(attempt, '\'','\'') FROM (SELECT attempt FROM results
		WHERE status != '\''ok'\'' ORDER BY attempt)")" = "1,2" &&
	test "$(sql g.db "SELECT attempts || state FROM cells WHERE json_extract(params, '\''$.crash'\'') = 1")" = \
		2quarantined &&
	test "$(sql g.db "SELECT count(*) FROM metrics WHERE name = '\''errors'\'' AND value = 0")" = 2 &&
	db_sound g.db
'
