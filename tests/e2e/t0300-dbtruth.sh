#!/bin/bash
# t0300-dbtruth: the database says what was measured: a changed spec is refused or replanned, one writer
# at a time (a dead one's lock taken over, its damage healed), an interrupt charges no attempt, retry and
# --force, a cap on cells, kernel defaults in every cell (and a migration for old databases), parameter
# names that are identifiers.
. tests/e2e/lib.sh

state_n() { # state_n DB STATE: cells in that state
	sql "$1" "SELECT count(*) FROM cells WHERE state = '$2'"
}
status_n() { # status_n DB STATUS: results with that status
	sql "$1" "SELECT count(*) FROM results WHERE status = '$2'"
}
last_run() { # last_run DB: the status of the latest run
	sql "$1" "SELECT status FROM runs ORDER BY id DESC LIMIT 1"
}
rank_pid() { # rank_pid DB RANK: pid of that rank of the job writing DB
	for p in $(pgrep -f "run slow.yaml --db $1" || :); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
			echo "$p"
			return 0
		fi
	done
	return 0
}

cat >"$T/a.yaml" <<'Y'
sweep: a
kernel: sleep
params:
  ms: [1, 2, 3, 4, 5]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
Y
# What spec edits make of it: a smaller grid, another kernel, other timing, a command, a comment.
sed 's/\[1, 2, 3, 4, 5\]/[1, 2]/' "$T/a.yaml" >"$T/shrunk.yaml"
sed 's/min_samples: 1,/min_samples: 2,/' "$T/shrunk.yaml" >"$T/timing.yaml"
sed 's/kernel: sleep/kernel: cpu.copy/; s/ms: \[1, 2\]/bytes: [4K, 8K]/' "$T/timing.yaml" >"$T/kernel.yaml"
sed 's/kernel: sleep/command: [true, "{ms}"]/; /^timing:/d' "$T/a.yaml" >"$T/command.yaml"
{ echo "# a comment changes nothing"; cat "$T/a.yaml"; } >"$T/comment.yaml"

test_expect_success 'a spec whose grid shrank is refused before measuring, saying old and new and the ways on' '
	"$SWEEP" run a.yaml --db a.db &&
	test_expect_code 2 "$SWEEP" run shrunk.yaml --db a.db 2>err &&
	test "$(grep -c . err)" = 1 &&
	grep -q "params.ms: \[1, 2, 3, 4, 5\] -> \[1, 2\] (5 cells -> 2)" err &&
	grep -q "new sweep name" err && grep -q -- "--replan" err &&
	test "$(sql a.db "SELECT count(*) FROM runs")" = 1 &&
	test "$(status_n a.db ok)" = 5 &&
	"$SWEEP" run comment.yaml --db a.db
'

test_expect_success 'a grid that only grew plans its new cells and keeps the rest' '
	"$SWEEP" run a.yaml --db g.db &&
	sed "s/\[1, 2, 3, 4, 5\]/[1, 2, 3, 4, 5, 6]/" a.yaml >grown.yaml &&
	"$SWEEP" run grown.yaml --db g.db 2>err &&
	grep -q "grid grew by 1 cells" err && grep -q "this run: 1 results ok" err &&
	test "$(state_n g.db ok)" = 6
'

test_expect_success 'another kernel, other timing or a command instead are refused, each named' '
	test_expect_code 2 "$SWEEP" run kernel.yaml --db a.db 2>err1 &&
	grep -q "kernel: sleep -> cpu.copy" err1 &&
	test_expect_code 2 "$SWEEP" run timing.yaml --db a.db 2>err2 &&
	grep -q "timing.min_samples: 1 -> 2" err2 &&
	test_expect_code 2 "$SWEEP" plan command.yaml --db a.db 2>err3 &&
	grep -q "kernel: sleep -> (none); command: (none) -> true {ms}" err3 &&
	test "$(sql a.db "SELECT count(*) FROM runs")" = 2 &&
	test "$(sql a.db "SELECT kernel FROM sweeps")" = sleep
'

test_expect_success '--replan retires the cells no longer in the spec; reports leave them out and say so' '
	"$SWEEP" run shrunk.yaml --db a.db --replan 2>err &&
	grep -q "3 cells retired" err &&
	test "$(state_n a.db retired)" = 3 && test "$(state_n a.db ok)" = 2 &&
	test "$(status_n a.db ok)" = 5 &&
	"$SWEEP" report a.db --rows ms --metric seconds --format csv >rep 2>rerr &&
	grep -q "3 retired cells" rerr &&
	"$SWEEP" status a.db >st && grep -Eq "^a +2 +2 +0 +0 +0 +100.0%" st &&
	test "$(cut -d, -f1 rep | tr "\n" " ")" = "ms 1 2 " &&
	"$SWEEP" run shrunk.yaml --db a.db 2>err2 && grep -q "this run: 0 results ok" err2 &&
	cp a.db back.db &&
	"$SWEEP" run a.yaml --db back.db 2>err3 &&
	grep -q "grew by 3 cells: planned; 3 retired cells (and replicas) are the spec.s again" err3 &&
	test "$(state_n back.db ok)" = 5 && test "$(state_n back.db retired)" = 0 &&
	grep -q "this run: 0 results ok" err3
'

test_expect_success '--replan of a changed measurement keeps the old results as superseded and measures again' '
	"$SWEEP" run timing.yaml --db a.db --replan 2>err &&
	grep -q "2 results superseded" err &&
	test "$(status_n a.db superseded)" = 2 && test "$(status_n a.db ok)" = 5 &&
	test "$(sql a.db "SELECT min(n) FROM results WHERE status = '\''ok'\'' AND cell IN
		(SELECT id FROM cells WHERE state = '\''ok'\'')")" = 2 &&
	"$SWEEP" run kernel.yaml --db a.db --replan 2>err2 &&
	test "$(state_n a.db ok)" = 2 && test "$(state_n a.db retired)" = 5 &&
	test "$(sql a.db "SELECT kernel FROM sweeps")" = cpu.copy
'

test_expect_success 'a replanned database merges: retired cells stay retired, superseded results stay so' '
	"$SWEEP" merge merged.db a.db >out &&
	test "$(state_n merged.db retired)" = 5 && test "$(state_n merged.db ok)" = 2 &&
	test "$(status_n merged.db superseded)" = 2
'

cat >"$T/slow.yaml" <<'Y'
sweep: slow
kernel: sleep
params:
  ms: [200]
  jitter: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
max_attempts: 1
Y

test_expect_success 'a second writer is refused at once, naming the first; readers are not' '
	run_bg "$SWEEP" run slow.yaml --db "$T/c.db" &&
	first=$BG_PID &&
	wait_running c.db &&
	test_expect_code 1 "$SWEEP" run slow.yaml --db c.db 2>err1 &&
	grep -q "is being written by another sweep (host $(hostname) pid $first since 20.*: sweep run)" err1 &&
	test_expect_code 1 "$SWEEP" plan slow.yaml --db c.db 2>err2 &&
	grep -q "pid $first" err2 &&
	"$SWEEP" run a.yaml --db other.db &&
	test_expect_code 1 "$SWEEP" merge c.db other.db 2>err3 &&
	grep -q "pid $first" err3 &&
	"$SWEEP" status c.db >status &&
	grep -q slow status &&
	wait_gone $first &&
	test "$(state_n c.db ok)" = 8 && test "$(status_n c.db ok)" = 8 &&
	test "$(sql c.db "SELECT count(*) FROM cells WHERE state <> '\''ok'\''")" = 0 &&
	test "$(sql c.db "SELECT count(*) FROM runs")" = 1 && test "$(last_run c.db)" = ok
'

test_expect_success 'the lock of a killed run is taken over; its run is recorded killed, not left running' '
	sed "s/max_attempts: 1/max_attempts: 3/" slow.yaml >slow3.yaml &&
	run_bg "$SWEEP" run slow3.yaml --db "$T/d.db" &&
	dead=$BG_PID &&
	wait_running d.db &&
	kill -9 $dead &&
	test_expect_code 137 wait_gone $dead &&
	test "$(last_run d.db)" = running &&
	"$SWEEP" status d.db >st &&
	grep -Eq "^ *1 +slow +[0-9T:.Z-]+ +- +gone \(was running\)" st &&
	"$SWEEP" status d.db --json | grep -q "\"run_status\":\"gone (was running)\"" &&
	sql d.db ".backup copy.db" && "$SWEEP" status copy.db | grep -Eq "^ *1 +slow .* running *$" &&
	"$SWEEP" run slow3.yaml --db d.db 2>err &&
	grep -q "taking over the writer lock of a sweep that is gone (host $(hostname) pid $dead since" err &&
	grep -q "1 run (from run 1) left .running. by a sweep that is gone: recorded as .killed." err &&
	test "$(sql d.db "SELECT group_concat(status) FROM runs")" = "killed,ok" &&
	test "$(state_n d.db ok)" = 8
'

test_expect_success 'cells with an ok result left running or planned by an older sweep are healed on open' '
	cp c.db e.db &&
	sql e.db "UPDATE cells SET state = '\''running'\'' WHERE id <= 3;
		UPDATE cells SET state = '\''planned'\'' WHERE id = 4" &&
	"$SWEEP" run slow.yaml --db e.db 2>err &&
	grep -q "4 cells with an ok result were not marked ok" err &&
	grep -q "this run: 0 results ok" err &&
	test "$(state_n e.db ok)" = 8 && test "$(status_n e.db ok)" = 8
'

# An interrupted run: the cells in flight go back to planned uncharged (max_attempts: 1 would quarantine
# a charged one), the run says so once and is recorded as interrupted; the next run finishes the sweep.
check_interrupted() { # check_interrupted DB ERRFILE SIGNAME
	test "$(last_run "$1")" = interrupted &&
	test "$(state_n "$1" running)" = 0 && test "$(state_n "$1" quarantined)" = 0 &&
	test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'planned' AND (attempts <> 0 OR flight = 1)")" = 0 &&
	test "$(state_n "$1" planned)" -ge 1 &&
	test "$(grep -c "run the same command again" "$2")" = 1 &&
	grep -q "interrupted by $3: .* cells in flight went back to planned (no attempt charged)" "$2"
}

for sig in INT TERM USR1; do
	test_expect_success "SIG$sig charges no attempt (one process)" '
		run_bg "$SWEEP" run slow.yaml --db "$T/i'$sig'.db" 2>err'$sig' &&
		wait_running i'$sig'.db &&
		kill -'$sig' $BG_PID &&
		test_expect_code 5 wait_gone $BG_PID &&
		check_interrupted i'$sig'.db err'$sig' SIG'$sig' &&
		"$SWEEP" run slow.yaml --db i'$sig'.db &&
		test "$(state_n i'$sig'.db ok)" = 8
	'
done

test_expect_success 'SIGINT to mpirun and SIGTERM to rank 0 of mpirun -np 3 charge no attempt' '
	run_bg mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m1.db" 2>err1 &&
	wait_running m1.db &&
	kill -INT $BG_PID &&
	test_must_fail wait_gone $BG_PID &&
	check_interrupted m1.db err1 SIGTERM &&
	run_bg mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m2.db" 2>err2 &&
	mp=$BG_PID &&
	wait_running m2.db &&
	r0=$(rank_pid "$T/m2.db" 0) && test -n "$r0" &&
	kill -TERM $r0 &&
	test_must_fail wait_gone $mp &&
	check_interrupted m2.db err2 SIGTERM &&
	mpirun --bind-to none -np 3 "$SWEEP" run slow.yaml --db "$T/m2.db" &&
	test "$(state_n m2.db ok)" = 8
'

cat >"$T/f.yaml" <<'Y'
sweep: f
kernel: debug.fail
params:
  mode: [error]
  on: ["i=2"]
  i: [1, 2, 3]
timing: {min_samples: 1, min_time: 0, max_noise: 1}
max_attempts: 1
Y

# The closing line of a run that leaves quarantined cells names them (the first few, then a count) and the
# command that puts them back; that command, run as printed, does.
cat >"$T/q.yaml" <<'Y'
sweep: q
kernel: debug.fail
params:
  mode: [error]
  on: ["i=2"]
  i: [1, 2]
  ms: [0, 1, 2, 3, 4]
timing: {min_samples: 1, min_time: 0, max_noise: 1}
max_attempts: 1
Y

test_expect_success 'the closing line names the quarantined cells and the retry command, which works' '
	mkdir -p "with space" &&
	test_expect_code 3 "$SWEEP" run q.yaml --db "with space/q.db" --quiet 2>err &&
	cat err &&
	grep -q "^sweep: q: 5 cells ok, 5 quarantined, 0 not run;" err &&
	line=$(grep "^sweep: q: 5 cells quarantined: " err) &&
	# the first three by their parameters, the error once while it repeats, then a count
	test "${line%%; to measure*}" = "sweep: q: 5 cells quarantined: {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":0} (launch: debug.fail: failing on purpose), {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":1}, {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":2} and 2 more" &&
	cmd=${line#*; to measure them again: } &&
	cmd=${cmd%, then run again} &&
	test "$cmd" = "sweep retry '\''with space/q.db'\'' --sweep q --state quarantined" &&
	eval "\"\$SWEEP\" ${cmd#sweep }" >out &&
	grep -q "^q: 5 quarantined cells back to planned" out &&
	test "$(sql "with space/q.db" "SELECT count(*) FROM cells WHERE state = '\''planned'\'' AND attempts = 0")" = 5
'

test_expect_success 'sweep retry puts quarantined cells back with their attempts reset, and says how many' '
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db &&
	test "$(state_n f.db quarantined)" = 1 &&
	"$SWEEP" retry f.db --state failed >out0 && grep -q "^f: 0 failed cells back to planned" out0 &&
	"$SWEEP" retry f.db --where "i = 3" >out1 && grep -q "^f: 0 " out1 &&
	test "$(state_n f.db quarantined)" = 1 &&
	"$SWEEP" retry f.db --where "i = 2" --state quarantined >out2 &&
	grep -q "^f: 1 quarantined cells back to planned, attempts reset" out2 &&
	test "$(sql f.db "SELECT state || attempts || coalesce(error, '\''-'\'') FROM cells WHERE id = 2")" = "planned0-" &&
	test_expect_code 2 "$SWEEP" retry f.db --where "nope = 1" &&
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db 2>err &&
	grep -q "this run: 0 results ok, 1 failed attempts" err
'

test_expect_success 'run --force --where measures again, keeping the old result as superseded; reports use the newest' '
	old=$(sql f.db "SELECT id FROM results WHERE status = '\''ok'\'' AND cell = 1") &&
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db --force --where "i = 1" 2>err &&
	grep -q -- "--force: 1 cells to measure again (1 ok results kept as superseded)" err &&
	test "$(sql f.db "SELECT status FROM results WHERE id = $old")" = superseded &&
	test "$(sql f.db "SELECT count(*) FROM results WHERE cell = 1 AND status = '\''ok'\'' AND id > $old")" = 1 &&
	"$SWEEP" report f.db --rows i --metric seconds --format csv >rep &&
	test "$(grep -c "^1," rep)" = 1 &&
	test_expect_code 2 "$SWEEP" run f.yaml --db f.db --where "i = 1"
'

cat >"$T/big.yaml" <<'Y'
sweep: big
kernel: sleep
params:
  ms: {from: 1, to: 10000, step: 1}
  jitter: {from: 1, to: 10000, step: 1}
Y
cat >"$T/rep.yaml" <<'Y'
sweep: rep
kernel: sleep
params:
  ms: [1]
repeat: 2000000000
order: shuffle
Y

test_expect_success 'a grid over the cap is refused with exit 2 before anything is made' '
	test_expect_code 2 timeout 20 "$SWEEP" run big.yaml --db big.db 2>err1 &&
	grep -q "big.yaml: sweep .big. has 100000000 cells, over the limit of 10000000" err1 &&
	test_expect_code 2 timeout 20 "$SWEEP" plan rep.yaml --db rep.db 2>err2 &&
	grep -q "has 2000000000 cells" err2 &&
	test ! -e big.db && test ! -e big.db-writer && test ! -e rep.db && test ! -e rep.db-wal &&
	test_expect_code 2 "$SWEEP" plan a.yaml --db cap.db --max-cells 4 &&
	test ! -e cap.db &&
	"$SWEEP" plan a.yaml --db cap.db --max-cells 5 >out && grep -q "5 new" out
'

test_expect_success 'kernel defaults are in every cell, so reports can use them' '
	test "$(sql c.db "SELECT count(*) FROM cells WHERE json_extract(params, '\''$.jitter'\'') IS NOT NULL")" = 8 &&
	test "$(sql a.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''
		AND json_extract(params, '\''$.bytes'\'') IS NOT NULL")" = 2 &&
	"$SWEEP" plan shrunk.yaml --db def.db &&
	test "$(sql def.db "SELECT group_concat(params, '\'' '\'') FROM cells")" = "{\"ms\":1,\"jitter\":0} {\"ms\":2,\"jitter\":0}" &&
	"$SWEEP" run shrunk.yaml --db def.db &&
	"$SWEEP" report def.db --rows jitter --metric seconds --format csv >rep &&
	grep -q "^0,2," rep
'

make_schema1() { # make_schema1 DB: what schema 1 made of it: no defaults in params, narrower CHECKs, no stop,
	# no usage columns (schema 5), no counts, grids or their indexes (schema 6)
	sql "$1" "DROP TRIGGER cells_count_insert; DROP TRIGGER cells_count_delete; DROP TRIGGER cells_count_state;
		DROP TRIGGER cells_count_move; DROP TABLE cell_counts; DROP TABLE grids; DROP INDEX cells_ord;
		DROP INDEX cells_failed; DROP INDEX results_noisy;
		UPDATE cells SET params = json_remove(params, '$.jitter'), key = 'old' || id;
		ALTER TABLE cells DROP COLUMN decided;
		DROP VIEW v_results; ALTER TABLE results DROP COLUMN stop; ALTER TABLE results DROP COLUMN launches;
		ALTER TABLE results DROP COLUMN warmup; ALTER TABLE results DROP COLUMN cpu_user;
		ALTER TABLE results DROP COLUMN cpu_sys; ALTER TABLE results DROP COLUMN peak_rss;
		ALTER TABLE samples DROP COLUMN cpu_user; ALTER TABLE samples DROP COLUMN cpu_sys;
		ALTER TABLE samples DROP COLUMN peak_rss; CREATE VIEW v_results AS SELECT 1;
		PRAGMA writable_schema = ON;
		UPDATE sqlite_master SET sql = replace(replace(sql, ' OR state = ''retired''', ''),
			' OR status = ''superseded''', '') WHERE name IN ('cells', 'results');
		PRAGMA writable_schema = OFF; PRAGMA user_version = 1"
}

test_expect_success 'a database of schema 1 is migrated: defaults filled in, keys recomputed, said' '
	cp def.db old.db &&
	make_schema1 old.db &&
	db_sound old.db &&
	"$SWEEP" run shrunk.yaml --db old.db 2>err &&
	grep -q "schema version 2 -> 3: .*kernel defaults were written into the params of 2 cells" err &&
	grep -q "this run: 0 results ok" err &&
	test "$(sql old.db "SELECT group_concat(key) FROM (SELECT key FROM cells ORDER BY id)")" = \
		"$(sql def.db "SELECT group_concat(key) FROM (SELECT key FROM cells ORDER BY id)")" &&
	test "$(sql old.db "PRAGMA user_version")" = 6 &&
	test "$(sql def.db "PRAGMA user_version")" = 6 &&
	test "$(sql old.db "SELECT count(*) FROM v_results WHERE stop IS NULL")" = 2 &&
	# version 4 adds cells.decided after the CHECK version 3 widened in place: the table is whole
	test "$(sql old.db "SELECT group_concat(name || '\'' '\'' || type) FROM pragma_table_info('\''cells'\'')
		WHERE cid >= 10")" = "flight INTEGER,decided TEXT" &&
	# the counts a status reads are those of the cells, as in a database made new
	test "$(sql old.db "SELECT sweep, replica, ok, planned FROM cell_counts")" = "a||2|0" &&
	test "$(sql def.db "SELECT sweep, replica, ok, planned FROM cell_counts")" = "a||2|0" &&
	db_sound old.db
'

cat >"$T/names.yaml" <<'Y'
sweep: names
command: [echo, "{a b}", "{név}", "{ok_1}"]
params:
  a b: [1]
  név: [2]
  ok_1: [3]
Y

test_expect_success 'parameter names that are not identifiers are spec errors at their line and column' '
	test_expect_code 2 "$SWEEP" plan names.yaml --db names.db 2>err &&
	grep -q "names.yaml:4:3: parameter name .a b. is not an identifier" err &&
	grep -q "names.yaml:5:3: parameter name .név. is not an identifier" err &&
	! grep -q ok_1 err &&
	test ! -e names.db
'
