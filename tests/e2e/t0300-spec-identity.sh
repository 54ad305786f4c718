#!/bin/bash
# t0300-spec-identity: a sweep is its spec: a changed spec is refused or replanned (--replan: retired
# cells, superseded results, merged as such), a cap on cells (--max-cells), kernel defaults in every
# cell (and the migration that fills them into old databases), parameter names that are identifiers.
. tests/e2e/lib.sh

cp "$ROOT/tests/data/sweeps/a.yaml" "$ROOT/tests/data/sweeps/slow.yaml" "$T/"
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
	"$SWEEP" plan slow.yaml --db c.db &&
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
	# no usage columns (schema 5), no counts, grids or their indexes (schema 6), no file hashes, commit or
	# conditions (schema 7), no intervals (schema 8), no launcher line (schema 9), no energy in v_results (schema 10),
	# no note (schema 11)
	sql "$1" "ALTER TABLE sweeps DROP COLUMN inputs; ALTER TABLE runs DROP COLUMN revision;
		ALTER TABLE runs DROP COLUMN launcher;
		ALTER TABLE runs DROP COLUMN inputs; ALTER TABLE workers DROP COLUMN conditions;
		DROP TRIGGER cells_count_insert; DROP TRIGGER cells_count_delete; DROP TRIGGER cells_count_state;
		DROP TRIGGER cells_count_move; DROP TABLE cell_counts; DROP TABLE grids; DROP INDEX cells_ord;
		DROP INDEX cells_failed; DROP INDEX results_imprecise;
		UPDATE cells SET params = json_remove(params, '$.jitter'), key = 'old' || id;
		ALTER TABLE cells DROP COLUMN decided;
		DROP VIEW v_results; ALTER TABLE results DROP COLUMN stop; ALTER TABLE results DROP COLUMN launches;
		ALTER TABLE results DROP COLUMN warmup; ALTER TABLE results DROP COLUMN cpu_user;
		ALTER TABLE results DROP COLUMN cpu_sys; ALTER TABLE results DROP COLUMN peak_rss;
		ALTER TABLE samples DROP COLUMN cpu_user; ALTER TABLE samples DROP COLUMN cpu_sys;
		ALTER TABLE samples DROP COLUMN peak_rss; ALTER TABLE results DROP COLUMN ci_lo;
		ALTER TABLE results DROP COLUMN ci_hi; ALTER TABLE results DROP COLUMN precise;
		ALTER TABLE results DROP COLUMN settled; DROP INDEX results_noted; ALTER TABLE results DROP COLUMN note;
		CREATE VIEW v_results AS SELECT 1;
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
	test "$(sql old.db "PRAGMA user_version")" = 11 &&
	test "$(sql def.db "PRAGMA user_version")" = 11 &&
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
