#!/bin/bash
# t0610-merge: `sweep merge`: one run per host pulled together (one result per host per cell, pivoted by
# host), idempotence, a grown input, conflicts kept apart, shards; and untrusted inputs (corrupt, not a
# sweep database, hostile trigger, view, generated column, wrong key, wrong type, dangling reference)
# refused with OUT.db unchanged.
. tests/e2e/lib.sh

# as_host NAME CMD...: CMD under a hostname of its own (a UTS namespace; root only, as the tests run).
as_host() { unshare --uts sh -c 'hostname "$0" && exec "$@"' "$@"; }
dump() { sqlite3 "$1" .dump | sha256sum; }

cat >"$T/ph.yaml" <<'Y'
sweep: ph
kernel: sleep
params: {ms: [0, 1, 2]}
per: host
timing: {min_samples: 6, min_time: 0, precision: 1e9, timeout: 2}
Y

test_expect_success 'setup: the same per-host sweep run on two hosts, a database each' '
	as_host merge-a "$SWEEP" run ph.yaml --db a.db 2>/dev/null &&
	as_host merge-b "$SWEEP" run ph.yaml --db b.db 2>/dev/null &&
	test "$(sql a.db "SELECT hostname FROM hosts")" = merge-a &&
	test "$(sql b.db "SELECT hostname FROM hosts")" = merge-b
'

test_expect_success 'merge: one ok result per host per cell, hosts, runs and workers kept apart' '
	"$SWEEP" merge out.db a.db b.db >out &&
	cat out &&
	grep -q "^a.db: 3 cells (3 new), 3 results new, 0 already there, 0 conflicts; 1 runs, 1 hosts new" out &&
	grep -q "^b.db: 3 cells (3 new), 3 results new, 0 already there, 0 conflicts; 1 runs, 1 hosts new" out &&
	test "$(sql out.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 6 &&
	test "$(sql out.db "SELECT count(*) FROM cells WHERE state = '\''template'\''")" = 3 &&
	test "$(sql out.db "SELECT group_concat(h, '\'' '\'') FROM (SELECT host || '\'':'\'' || count(*) AS h
		FROM v_results WHERE status = '\''ok'\'' GROUP BY host ORDER BY host)")" = "merge-a:3 merge-b:3" &&
	test "$(sql out.db "SELECT count(*) FROM runs")" = 2 &&
	test "$(sql out.db "SELECT count(*) FROM workers")" = 2 &&
	test "$(sql out.db "SELECT count(*) FROM samples")" = "$(( $(sql a.db "SELECT count(*) FROM samples") +
		$(sql b.db "SELECT count(*) FROM samples") ))" &&
	db_sound out.db &&
	test "$(sql out.db "SELECT count(*) FROM merges")" = 2
'

test_expect_success 'the values came over unchanged' '
	q="SELECT c.key, r.median, r.n, r.noise_ok,
		(SELECT group_concat(seconds) FROM samples s WHERE s.result = r.id)
		FROM results r JOIN cells c ON c.id = r.cell ORDER BY c.key" &&
	sql a.db "$q" >va && sql b.db "$q" >vb && sort va vb >want &&
	sql out.db "$q" | sort >got && cmp want got
'

test_expect_success 'the merged database reports by host' '
	"$SWEEP" report out.db --rows ms --cols host --metric seconds --format csv >rep &&
	cat rep &&
	test "$(head -1 rep)" = "ms,host=merge-a,host=merge-b" &&
	# a value in every column of every row: each host measured each ms
	test "$(grep -c "^[012],[0-9][0-9.e-]*,[0-9][0-9.e-]*$" rep)" = 3 &&
	test "$(cut -d, -f1 rep | tr "\n" " ")" = "ms 0 1 2 "
'

test_expect_success 'merging the same files again adds nothing (byte for byte the same dump)' '
	before=$(dump out.db) &&
	"$SWEEP" merge out.db a.db b.db b.db >out &&
	grep -q "^a.db: 3 cells (0 new), 0 results new, 3 already there, 0 conflicts; 0 runs, 0 hosts new" out &&
	test "$(dump out.db)" = "$before"
'

test_expect_success 'a grown input brings only what is new; a resumed run is the same run' '
	sed "s/ms: \[0, 1, 2\]/ms: [0, 1, 2, 3]/" ph.yaml >ph4.yaml &&
	as_host merge-a "$SWEEP" run ph4.yaml --db a.db 2>/dev/null &&
	"$SWEEP" merge out.db a.db >out && cat out &&
	grep -q "^a.db: 4 cells (1 new), 1 results new, 3 already there, 0 conflicts; 1 runs, 0 hosts new" out &&
	test "$(sql out.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 7 &&
	test "$(sql out.db "SELECT count(*) FROM runs")" = 3 &&
	sql out.db "SELECT spec FROM sweeps WHERE name = '\''ph'\''" | grep -q "ms: \[0, 1, 2, 3\]"
'

cat >"$T/fail.yaml" <<'Y'
sweep: fail
kernel: debug.fail
params:
  mode: error
  on: "i=1"
  i: [0, 1, 2]
max_attempts: 2
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'failed attempts and quarantined cells come over once' '
	test_expect_code 3 "$SWEEP" run fail.yaml --db f.db 2>/dev/null &&
	test "$(sql f.db "SELECT status, count(*) FROM results GROUP BY status ORDER BY status" | tr "\n" " ")" = \
		"error|2 ok|2 " &&
	"$SWEEP" merge fm.db f.db >/dev/null &&
	before=$(dump fm.db) &&
	"$SWEEP" merge fm.db f.db f.db >out &&
	grep -q "^f.db: 3 cells (0 new), 0 results new, 4 already there" out &&
	test "$(dump fm.db)" = "$before" &&
	test "$(sql fm.db "SELECT status, count(*) FROM results GROUP BY status ORDER BY status" | tr "\n" " ")" = \
		"error|2 ok|2 " &&
	test "$(sql fm.db "SELECT json_extract(params, '\''$.i'\''), state, attempts FROM cells
		WHERE state != '\''ok'\''")" = "1|quarantined|2"
'

cat >"$T/any.yaml" <<'Y'
sweep: any
kernel: sleep
params: {ms: [1, 2, 3]}
timing: {min_samples: 3, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'conflicts: two ok results of one cell are kept apart, listed, never overwritten' '
	"$SWEEP" run any.yaml --db c1.db 2>/dev/null &&
	"$SWEEP" run any.yaml --db c2.db 2>/dev/null &&
	"$SWEEP" merge cm.db c1.db >/dev/null &&
	kept=$(sql cm.db "SELECT group_concat(median) FROM (SELECT median FROM results ORDER BY cell)") &&
	"$SWEEP" merge cm.db c2.db >out && cat out &&
	grep -q "^c2.db: 3 cells (0 new), 0 results new, 0 already there, 3 conflicts" out &&
	test "$(grep -c "c2.db has" out)" = 3 &&
	# what a conflict is, and the command that lists them, which works
	grep -q "^cm.db: 3 conflicts: ok results of a host for cells that already had an ok result of that same host with other values" out &&
	cmd=$(sed -n "s/^cm.db: 3 conflicts: .*; list them: sweep //p" out) && test -n "$cmd" &&
	eval "\"\$SWEEP\" $cmd" >list && cat list &&
	test "$(grep -c "c2.db" list)" = 3 &&
	test "$(sql cm.db "SELECT group_concat(median) FROM (SELECT median FROM results ORDER BY cell)")" = \
		"$kept" &&
	test "$(sql cm.db "SELECT count(*) FROM results")" = 3 &&
	test "$(sql cm.db "SELECT count(*) FROM conflicts WHERE source = '\''c2.db'\''
		AND kept IN (SELECT id FROM results) AND json_array_length(samples) = n")" = 3 &&
	# the conflicting values are those of c2
	test "$(sql cm.db "SELECT group_concat(median) FROM (SELECT x.median FROM conflicts x JOIN cells c
		ON c.id = x.cell ORDER BY c.key)")" = "$(sql c2.db "SELECT group_concat(median) FROM (SELECT r.median
		FROM results r JOIN cells c ON c.id = r.cell ORDER BY c.key)")" &&
	before=$(dump cm.db) &&
	"$SWEEP" merge cm.db c2.db >out2 &&
	grep -q "^c2.db: 3 cells (0 new), 0 results new, 3 already there, 0 conflicts" out2 &&
	test "$(dump cm.db)" = "$before"
'

# cells_of DB: each cell's key, state and attempts with its results' status and median, in one order.
cells_of() {
	sql "$1" "SELECT c.key, c.state, c.attempts, r.status, r.median FROM cells c
		LEFT JOIN results r ON r.cell = c.id ORDER BY c.key, r.status, r.median"
}

test_expect_success 'a decision travels: an older copy merged back undoes no --force or retry; a copy takes it' '
	"$SWEEP" run any.yaml --db d.db 2>/dev/null &&
	cp d.db d-old.db &&
	"$SWEEP" run any.yaml --db d.db --force --where "ms = 2" 2>/dev/null &&
	test "$(sql d.db "SELECT status, count(*) FROM results GROUP BY status ORDER BY status" | tr "\n" " ")" = \
		"ok|3 superseded|1 " &&
	cells_of d.db >want &&
	# the copy holds the superseded result as ok: the same result, no conflict, nothing changes
	"$SWEEP" merge d.db d-old.db >out && cat out &&
	grep -q "^d-old.db: 3 cells (0 new), 0 results new, 3 already there, 0 conflicts" out &&
	cells_of d.db >got && cmp want got &&
	# the other way, the copy takes the newer decision: its result superseded, the new one ok
	"$SWEEP" merge d-old.db d.db >out && cat out &&
	grep -q "^d.db: 3 cells (0 new), 1 results new, 3 already there, 0 conflicts" out &&
	grep -q "^d.db: 1 cells took its newer decision" out &&
	cells_of d-old.db >got && cmp want got &&
	db_sound d-old.db &&
	# a retried cell: a copy where it is quarantined does not quarantine it again
	cp f.db f-old.db &&
	"$SWEEP" retry f.db >/dev/null &&
	"$SWEEP" merge f.db f-old.db >out && cat out &&
	test "$(sql f.db "SELECT state, attempts FROM cells WHERE json_extract(params, '\''$.i'\'') = 1")" = \
		"planned|0" &&
	"$SWEEP" merge f-old.db f.db >out && cat out &&
	grep -q "^f.db: 1 cells took its newer decision" out &&
	test "$(sql f-old.db "SELECT state, attempts, error FROM cells
		WHERE json_extract(params, '\''$.i'\'') = 1")" = "planned|0|" &&
	# run now, the cell fails again and a merge brings that back: the same decision, a newer result
	test_expect_code 3 "$SWEEP" run fail.yaml --db f-old.db 2>/dev/null &&
	"$SWEEP" merge f.db f-old.db >out && cat out &&
	test "$(sql f.db "SELECT state, attempts FROM cells WHERE json_extract(params, '\''$.i'\'') = 1")" = \
		"quarantined|2"
'

cat >"$T/busy.yaml" <<'Y'
sweep: busy
kernel: sleep
params: {ms: [300, 301, 302, 303, 304, 305, 306, 307, 308, 309]}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# some_results DB: DB has a result, waited for at most 20 s.
some_results() {
	for t in $(seq 1 200); do
		test "$(sql "$1" "SELECT count(*) FROM results" 2>/dev/null || echo 0)" -ge 1 && return 0
		sleep 0.1
	done
	return 1
}

test_expect_success 'an input a run writes now is merged with a warning naming it and its run' '
	run_bg "$SWEEP" run busy.yaml --db w.db --quiet &&
	some_results w.db &&
	"$SWEEP" merge wm.db w.db >out 2>err && cat out err &&
	grep -q "^sweep: warning: .w.db. is being written now (host [^ ]* pid $BG_PID since [-0-9T:.Z]*: sweep run): run 1 of busy (started [-0-9T:.Z]*) still going: merged as it is now; merge it again once it has ended$" err &&
	test "$(sql wm.db "SELECT status FROM runs")" = running &&
	wait "$BG_PID" &&
	"$SWEEP" merge wm.db w.db >out 2>err && cat out err &&
	test ! -s err &&
	test "$(sql wm.db "SELECT status, finished IS NOT NULL FROM runs")" = "ok|1" &&
	test "$(sql wm.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 10
'

test_expect_success 'a FIFO in place of an input'"'"'s writer lock holds nothing up' '
	cp c1.db fifo.db && mkfifo fifo.db-writer &&
	timeout 20 "$SWEEP" merge fifo-out.db fifo.db >out 2>err && cat out err &&
	grep -q "^fifo.db: 3 cells (3 new), 3 results new" out && test ! -s err
'

test_expect_success 'shards: three --shard runs merged give the cells of one run' '
	cat >sh.yaml <<-\EOF &&
	sweep: sh
	kernel: sleep
	params: {ms: [0, 1], jitter: [0, 0.5, 1, 1.5, 2, 2.5]}
	timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
	EOF
	"$SWEEP" run sh.yaml --db full.db 2>/dev/null &&
	for i in 0 1 2; do "$SWEEP" run sh.yaml --db s$i.db --shard $i/3 2>/dev/null || return 1; done &&
	n0=$(sql s0.db "SELECT count(*) FROM cells") && n1=$(sql s1.db "SELECT count(*) FROM cells") &&
	n2=$(sql s2.db "SELECT count(*) FROM cells") && echo "shards of $n0, $n1, $n2 cells" &&
	test $((n0 + n1 + n2)) = 12 && test "$n0" -gt 0 && test "$n1" -gt 0 && test "$n2" -gt 0 &&
	"$SWEEP" merge sm.db s0.db s1.db s2.db >/dev/null &&
	sql full.db "SELECT key FROM cells WHERE state = '\''ok'\'' ORDER BY key" >k1 &&
	sql sm.db "SELECT key FROM cells WHERE state = '\''ok'\'' ORDER BY key" >k2 &&
	test "$(wc -l <k1)" = 12 && cmp k1 k2 &&
	test_expect_code 2 "$SWEEP" run sh.yaml --db full2.db --shard 3/3 2>err &&
	grep -q -- "--shard takes I/K with 0 <= I < K, not '\''3/3'\''" err && test ! -e full2.db &&
	"$SWEEP" plan sh.yaml --db mixed.db >/dev/null &&
	test_must_fail "$SWEEP" run sh.yaml --db mixed.db --shard 1/3 2>err &&
	grep -q "'\''mixed.db'\'' holds $((12 - n1)) pending cells of other shards than 1/3" err
'

# Untrusted inputs. Each must be refused with exit 2 and a message naming it, OUT.db unchanged.
test_expect_success 'setup: hostile and broken inputs' '
	cp c1.db corrupt.db &&
	head -c 4096 /dev/zero | tr "\0" "\377" | dd of=corrupt.db bs=1 seek=4096 conv=notrunc 2>/dev/null &&
	head -c 3000 /dev/urandom >junk.db &&
	sqlite3 other.db "CREATE TABLE t(x); INSERT INTO t VALUES(1)" &&
	: >empty.db &&
	cp c1.db trigger.db &&
	sqlite3 trigger.db "CREATE TABLE pwned(x); CREATE TRIGGER evil AFTER INSERT ON cells
		BEGIN INSERT INTO pwned VALUES(1); END" &&
	cp c1.db view.db &&
	sqlite3 view.db "ALTER TABLE results RENAME TO r0; CREATE VIEW results AS SELECT * FROM r0" &&
	cp c1.db gen.db && sqlite3 gen.db "ALTER TABLE results ADD COLUMN evil AS (median * 2)" &&
	cp c1.db key.db && sqlite3 key.db "UPDATE cells SET params = '\''{\"ms\":99}'\'' WHERE id = 1" &&
	cp c1.db type.db && sqlite3 type.db "UPDATE results SET median = '\''fast'\'' WHERE id = 1" &&
	cp c1.db ref.db && sqlite3 ref.db "UPDATE results SET worker = 999 WHERE id = 1" &&
	cp c1.db old.db && sqlite3 old.db "PRAGMA user_version = 99" &&
	cp c1.db nocol.db && sqlite3 nocol.db "ALTER TABLE items DROP COLUMN value" &&
	cp c1.db decided.db && sqlite3 decided.db "UPDATE cells SET decided = '\''9999'\'' WHERE id = 1" &&
	slurm="CREATE TABLE slurm_jobs(job TEXT PRIMARY KEY, sweep TEXT NOT NULL, submitted TEXT NOT NULL,
		nodes INTEGER, gpus_per_node INTEGER, shards INTEGER NOT NULL DEFAULT 0, script TEXT NOT NULL, command TEXT);
		CREATE TABLE slurm_runs(run INTEGER PRIMARY KEY, job TEXT NOT NULL, task INTEGER,
		restarts INTEGER NOT NULL DEFAULT 0, node TEXT)" &&
	cp c1.db jobid.db && sqlite3 jobid.db "$slurm; INSERT INTO slurm_runs(run, job) VALUES(1, '\''1;rm -rf ~'\'')" &&
	cp c1.db jobref.db && sqlite3 jobref.db "$slurm; INSERT INTO slurm_runs(run, job) VALUES(999, '\''5'\'')" &&
	cp c1.db jobcol.db && sqlite3 jobcol.db "$slurm; ALTER TABLE slurm_jobs ADD COLUMN evil TEXT"
'

# refuse FILE PATTERN: merging FILE into cm.db exits 2 with PATTERN, cm.db unchanged. One && chain, as a
# body is: a body that is only this call runs it with errexit on.
refuse() {
	local before
	before=$(dump cm.db) &&
	test_expect_code 2 "$SWEEP" merge cm.db c1.db "$1" >/dev/null 2>err &&
	sed "s/^/  /" err &&
	grep -q "$2" err && grep -q "nothing was merged; .cm.db. is as it was" err &&
	test "$(dump cm.db)" = "$before"
}

test_expect_success 'a corrupt file is refused' 'refuse corrupt.db "corrupt.db.: the database is corrupt"'
test_expect_success 'a file that is not SQLite is refused' 'refuse junk.db "junk.db.: file is not a database"'
test_expect_success 'an SQLite file of another program is refused' '
	refuse other.db "other.db. is not a sweep database"
'
test_expect_success 'an empty file is refused' 'refuse empty.db "empty.db. is not a sweep database"'
test_expect_success 'a file with a trigger is refused, and the trigger never ran' '
	refuse trigger.db "trigger.db. has a trigger (.evil.)" &&
	test "$(sql trigger.db "SELECT count(*) FROM pwned")" = 0
'
test_expect_success 'a view in place of a table is refused' '
	refuse view.db "view.db. is not a sweep database: it has no table .results."
'
test_expect_success 'a generated column is refused' 'refuse gen.db "column results.evil is generated"'
test_expect_success 'a cell whose key is not its own is refused' '
	refuse key.db "does not have the key of its"
'
test_expect_success 'a value of the wrong type is refused' 'refuse type.db "results.median holds text"'
test_expect_success 'a dangling reference is refused' '
	refuse ref.db "1 row of results names a row of workers that is not there"
'
test_expect_success 'another schema version is refused' '
	refuse old.db "old.db. has schema version 99, newer than this sweep knows"
'
test_expect_success 'a missing column is refused' 'refuse nocol.db "table .items. has no column .value."'
test_expect_success 'a decision that is not a time is refused' '
	refuse decided.db "decided.db.: cell [0-9a-f]*: decided is .9999., not a time"
'
test_expect_success 'Slurm tables: a job id that is no number, a run not there, a column more: refused' '
	refuse jobid.db "jobid.db.: slurm_runs: job .1;rm -rf ~. is not a Slurm job id" &&
	refuse jobref.db "1 row of slurm_runs names a row of runs that is not there (slurm_runs.run)" &&
	refuse jobcol.db "table .slurm_jobs. has column .evil., which sweep merge does not copy"
'

test_expect_success 'a refused input leaves no new output behind; the output is no input (exit 1, as a report --out)' '
	test_expect_code 2 "$SWEEP" merge new.db c1.db corrupt.db 2>err &&
	grep -q "cannot merge .corrupt.db.: the database is corrupt" err &&
	grep -q "nothing was merged; .new.db. is as it was" err && ! test -e new.db &&
	before=$(dump cm.db) &&
	test_expect_code 1 "$SWEEP" merge cm.db cm.db 2>err &&
	grep -q "^sweep: the output .cm.db. is the database being read: not overwriting it$" err &&
	test_expect_code 2 "$SWEEP" merge cm.db nothere.db 2>err && grep -q "cannot open .nothere.db." err &&
	! test -e nothere.db && test "$(dump cm.db)" = "$before"
'
