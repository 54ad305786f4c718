#!/bin/bash
# t0100-run: plan and run in one process; results in the database; resume; exit codes; status and sql.
. tests/e2e/lib.sh

cat >"$T/sleep.yaml" <<'Y'
sweep: naps
kernel: sleep
params:
  ms: [1, 2]
  jitter: 0
repeat: 2
timing: {min_samples: 5, min_time: 0.01, max_noise: 1, timeout: 2}
Y

test_expect_success 'plan stores 4 cells, then 0 new' '
	"$SWEEP" plan sleep.yaml --db p.db >out1 &&
	grep -q "4 cells planned in p.db: 4 new, 0 already there" out1 &&
	"$SWEEP" plan sleep.yaml --db p.db >out2 &&
	grep -q "4 new" out1 && grep -q "0 new, 4 already there" out2 &&
	test "$(sql p.db "SELECT count(*) FROM cells WHERE state = '\''planned'\''")" = 4
'

test_expect_success 'run measures every cell once with samples near the slept time' '
	"$SWEEP" run sleep.yaml --db r.db 2>err && grep -q "4 cells ok, 0 quarantined, 0 not run" err &&
	test "$(sql r.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 4 &&
	test "$(sql r.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 4 &&
	test "$(sql r.db "SELECT min(n) >= 5 FROM results")" = 1 &&
	test "$(sql r.db "SELECT count(*) FROM samples")" -ge 20 &&
	# a 2 ms sleep takes at least 2 ms and, on an idle machine, well under 10 ms
	test "$(sql r.db "SELECT count(*) FROM v_results WHERE json_extract(params, '\''$.ms'\'') = 2
		AND median >= 0.002 AND median < 0.010")" = 2 &&
	test "$(sql r.db "SELECT count(*) FROM metrics WHERE name = '\''seconds'\''")" = 4
'

test_expect_success 'a second run has nothing left to do and adds no result' '
	"$SWEEP" run sleep.yaml --db r.db 2>err &&
	grep -q "this run: 0 results ok" err &&
	test "$(sql r.db "SELECT count(*) FROM results")" = 4 &&
	test "$(sql r.db "SELECT count(*) FROM runs")" = 2
'

test_expect_success 'the default database is results/NAME.db relative to the working directory' '
	mkdir -p d && cd d && "$SWEEP" run ../sleep.yaml 2>/dev/null && test -f results/naps.db &&
	test "$(sql results/naps.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 4 &&
	test ! -e ../results
'

cat >"$T/fail.yaml" <<'Y'
sweep: fails
kernel: debug.fail
params:
  mode: error
  on: "i=2"
  i: [0, 1, 2, 3]
max_attempts: 2
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'a failing cell is retried, quarantined with its error, and the exit code is 3' '
	test_expect_code 3 "$SWEEP" run fail.yaml --db f.db 2>err &&
	grep -q "^sweep: fails: 3 cells ok, 1 quarantined, 0 not run; this run: 3 results ok, 2 failed attempts" err &&
	test "$(sql f.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 3 &&
	test "$(sql f.db "SELECT json_extract(params, '\''$.i'\''), attempts FROM cells
		WHERE state = '\''quarantined'\''")" = "2|2" &&
	test "$(sql f.db "SELECT count(*) FROM results WHERE status = '\''error'\''")" = 2 &&
	"$SWEEP" status f.db >st &&
	grep -Eq "^fails +4 +3 +0 +0 +1 +75.0%" st &&
	# the failures table: the cell i=2, quarantined after 2 attempts, with the kernel'\''s error
	grep -Eq "^fails +[0-9a-f]{16} +\{[^ ]*\"i\":2[,}][^ ]* +quarantined +2 +launch: debug.fail: failing on purpose" st
'

test_expect_success 'status shows cells by state and the workers of the latest run' '
	"$SWEEP" status r.db >st &&
	grep -Eq "^naps +4 +4 +0 +0 +0 +100.0%" st &&
	# the latest run is the second, which had nothing left to do: its worker has no result
	grep -Eq "^ +2 +naps +[0-9T:.-]+Z +[0-9T:.-]+Z +ok" st &&
	grep -Eq "^$(hostname) +0 +-1 +0 +0 +0 " st
'

test_expect_success 'sql prints a table, csv and json, and refuses writes' '
	"$SWEEP" sql r.db "SELECT json_extract(params, '\''$.ms'\'') AS ms, count(*) AS n FROM cells
		GROUP BY 1 ORDER BY 1" --csv >csv &&
	printf "ms,n\n1,2\n2,2\n" | cmp - csv &&
	"$SWEEP" sql r.db "SELECT 1 AS one, '\''a'\'' AS s" --json >j &&
	test "$(cat j)" = "[{\"one\":1,\"s\":\"a\"}]" &&
	"$SWEEP" sql r.db "SELECT 1 AS one, 2 AS two" >tab &&
	grep -Eq "^one +two *$" tab && grep -Eq "^ *1 +2 *$" tab &&
	test_expect_code 2 "$SWEEP" sql r.db "DELETE FROM cells" 2>err &&
	grep -q "read-only" err &&
	test "$(sql r.db "SELECT count(*) FROM cells")" = 4
'

test_expect_success 'sql refuses functions that read or write memory or files, and other files, by name' '
	test_expect_code 2 "$SWEEP" sql r.db "SELECT fts3_tokenizer('\''simple'\'') AS p" >out 2>err &&
	test ! -s out &&
	test "$(cat err)" = "sweep: sql error: the function fts3_tokenizer() is not allowed: sweep sql reads with SQLite'\''s plain functions and sweep'\''s own, none that reads or writes memory by address or files" &&
	! grep -Eq "0x|[0-9a-f]{8}" err &&
	test_expect_code 2 "$SWEEP" sql r.db "SELECT load_extension('\''/no/such.so'\'')" 2>err &&
	grep -q "^sweep: sql error: the function load_extension() is not allowed" err &&
	test_expect_code 2 "$SWEEP" sql r.db "ATTACH '\''r.db'\'' AS other" 2>err &&
	grep -q "^sweep: sql error: ATTACH is not allowed" err &&
	test_expect_code 2 "$SWEEP" sql r.db "PRAGMA writable_schema = 1" 2>err &&
	grep -q "^sweep: sql error: PRAGMA writable_schema with a value is not allowed" err &&
	"$SWEEP" sql r.db "SELECT median(json_extract(params, '\''$.ms'\'')) AS m, count(*) AS n FROM v_results" --csv >csv &&
	printf "m,n\n1.5,4\n" | cmp - csv
'

test_expect_success 'every subcommand has --help, and exit codes for usage errors are 2' '
	for c in plan run status sql kernels; do
		"$SWEEP" $c --help >h && grep -q "^usage: sweep $c" h || return 1
	done &&
	test_expect_code 2 "$SWEEP" plna 2>err &&
	grep -q "unknown command '\''plna'\'' (did you mean '\''plan'\''?)" err &&
	test_expect_code 2 "$SWEEP" run 2>err &&
	grep -q "^usage: sweep run SPEC" err
'

test_expect_success 'kernels lists every kernel with its parameters' '
	"$SWEEP" kernels >k &&
	grep -q "^cpu.gemm:" k && grep -q "^sleep:" k && grep -q "^debug.fail:" k &&
	grep -E -q "^  dtype +str f32\|f64 +f32" k
'
