#!/bin/bash
# t0596-foreign-db: a reader trusts nothing of the file. A database whose 'metrics' is a view that never
# ends is refused at once by every command that reads one (report, compare, status, plot, sql, merge),
# naming it; `sweep sql` stops a query past --timeout and prints its rows as they come (memory
# bounded, not the whole result at once).
. tests/e2e/lib.sh

test_needs "GNU time (time)" test -x /usr/bin/time

cat >"$T/s.yaml" <<'Y'
sweep: s
kernel: sleep
params:
  ms: [1, 2]
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# secs CMD...: run CMD (its exit status kept in $T/rc) and print its wall seconds, whole.
secs() {
	local t0=$(date +%s%N) rc=0
	"$@" || rc=$?
	echo $rc >rc
	echo $((($(date +%s%N) - t0) / 1000000000))
}

test_expect_success 'setup: a sweep database, and a copy whose metrics is an endless recursive view' '
	"$SWEEP" run s.yaml --db s.db 2>err && grep -q "2 cells ok" err &&
	cp s.db f.db &&
	sqlite3 f.db "DROP TABLE metrics; CREATE VIEW metrics(result, name, value) AS WITH RECURSIVE n(i) AS
		(SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, '\''x'\'', i FROM n WHERE i < 0" &&
	test "$(sqlite3 f.db "SELECT type FROM sqlite_master WHERE name = '\''metrics'\''")" = view
'

test_expect_success 'report, compare, status, plot, sql and merge refuse it at once, naming the view' '
	for cmd in "report f.db --metric seconds" "compare f.db s.db --metric seconds" "status f.db" \
		"plot f.db --y seconds --limit seconds --out p.png" "sql f.db SELECT\ 1" "merge m.db f.db"; do
		s=$(eval "secs timeout 30 \"\$SWEEP\" $cmd" 2>err) &&
		echo "$cmd: exit $(cat rc) in $s s" &&
		test "$(cat rc)" = 2 &&
		test "$s" -lt 5 &&
		# merge runs no view of an input (views are off there): it names the table it lacks
		grep -q "^sweep: .f.db. is not a sweep database: \(its .metrics. is a view, where sweep keeps a table\|it has no table .metrics.$\)" err ||
		return 1
	done &&
	test ! -e p.png &&
	"$SWEEP" report s.db --metric seconds >out &&
	grep -q "seconds" out
'

test_expect_success 'sweep sql: a query that does not end is stopped at --timeout' '
	s=$(secs timeout 60 "$SWEEP" sql s.db --timeout 2 \
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n" 2>err) &&
	echo "exit $(cat rc) in $s s" &&
	test "$(cat rc)" = 2 &&
	test "$s" -ge 2 && test "$s" -lt 6 &&
	grep -q "^sweep: .s.db.: a read ran past its limit of 2 s and was stopped" err &&
	test_expect_code 2 "$SWEEP" sql s.db --timeout soon "SELECT 1" 2>err &&
	grep -q "^sweep: --timeout: .soon. is not a number of seconds" err &&
	"$SWEEP" sql s.db --timeout 0 "SELECT 41 + 1 AS n" >out &&
	test "$(tail -1 out | tr -d " ")" = 42
'

test_expect_success 'sweep sql prints 2,000,000 rows as they come: every row, memory bounded' '
	q="WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000)
		SELECT i, printf('\''x%0100d'\'', i) AS pad FROM n" &&
	/usr/bin/time -f "%M" -o rss "$SWEEP" sql s.db --csv "$q" >out.csv &&
	echo "peak RSS $(cat rss) KiB" &&
	test "$(wc -l <out.csv)" = 2000001 &&
	test "$(head -1 out.csv)" = "i,pad" &&
	test "$(sed -n 4098p out.csv)" = "4097,x$(printf %0100d 4097)" &&
	test "$(tail -1 out.csv)" = "2000000,x$(printf %0100d 2000000)" &&
	test "$(cat rss)" -lt 100000 &&
	"$SWEEP" sql s.db --json "$q LIMIT 10000" >out.json &&
	python3 -c "import json, sys; d = json.load(open(\"out.json\")); assert len(d) == 10000, len(d);
assert d[4096] == {\"i\": 4097, \"pad\": \"x%0100d\" % 4097}, d[4096]" &&
	"$SWEEP" sql s.db --md "$q LIMIT 5000" >out.md &&
	test "$(grep -c "^|" out.md)" = 5002 &&
	"$SWEEP" sql s.db "$q LIMIT 5000" >out.txt &&
	test "$(wc -l <out.txt)" = 5001
'
