#!/bin/bash
# t0571-noise-strict: imprecise values shown: the closing line and status count them, reports mark them,
# --strict leaves them out and says so; strict command metrics (a value not a finite number, a broken,
# duplicated or missing line fails the cell); merge refuses impossible values.
. tests/e2e/lib.sh

# Two sleep cells, one with 20 ms of jitter against a precision of 1 % it cannot reach in 0.3 s.
cat >"$T/noisy.yaml" <<'EOF'
sweep: noisy
kernel: sleep
params: {ms: [5], jitter: [0, 20]}
timing: {min_samples: 3, min_time: 0, precision: 0.01, timeout: 0.3, warmup: 0}
EOF

test_expect_success 'the closing line and status count the results short of their precision' '
	"$SWEEP" run noisy.yaml --db n.db 2>err &&
	miss=$(sql n.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND NOT precise") &&
	test "$miss" -ge 1 &&
	grep -q "^sweep: noisy: 2 cells ok, 0 quarantined, .* s; $miss cells ok short of their precision$" err &&
	"$SWEEP" status n.db >st &&
	grep -Eq "^noisy +2 +2 +0 +0 +0 +100.0% +$miss +0$" st &&
	grep -q "imprecise" st &&
	"$SWEEP" status n.db --json | python3 -c "import json,sys; assert json.load(sys.stdin)[\"imprecise\"] == $miss"
'

test_expect_success 'reports mark imprecise values; --metric noise; --strict leaves them out and says so' '
	sql n.db "UPDATE results SET precise = (json_extract((SELECT params FROM cells WHERE id = cell), '\''$.jitter'\'') = 0), noise = CASE WHEN json_extract((SELECT params FROM cells WHERE id = cell), '\''$.jitter'\'') = 0 THEN 0.005 ELSE 0.25 END" &&
	"$SWEEP" report n.db --rows jitter --metric noise >md &&
	printf "| jitter | n   | noise   |\n| ------:| ---:| -------:|\n|      0 |   1 | 0.0050  |\n" >want &&
	printf "|     20 |   1 | 0.2500\342\200\240 |\n\n\342\200\240 holds medians not known to the precision asked" >>want &&
	printf " (1 result); --strict leaves them out\n" >>want &&
	tail -n +3 md | cmp want - &&
	"$SWEEP" report n.db --rows jitter --metric noise --format csv >csv &&
	printf "jitter,n,noise,precise\n0,1,0.005,1\n20,1,0.25,0\n" | cmp - csv &&
	"$SWEEP" report n.db --rows ms --cols jitter --metric seconds --format json >j &&
	python3 -c "import json; d = json.load(open(\"j\")); assert d[0][\"precise\"] == 0, d" &&
	"$SWEEP" report n.db --rows ms --cols jitter --metric seconds --format latex >tex &&
	grep "^5 & " tex | grep -qF "\\rlap{\$^\\dagger\$} \\\\" &&
	"$SWEEP" report n.db --rows ms --metric seconds --compare jitter=0/20 --paired-by ms --format csv >c 2>/dev/null &&
	head -1 c | grep -q ",precise$" && grep -q ",0$" c &&
	"$SWEEP" report n.db --rows jitter --metric seconds --limit "seconds * 2" >l 2>/dev/null &&
	grep -Eq "^\| +20 \| +1 \| .*$(printf "\342\200\240") \| .* \| 0.500$(printf "\342\200\240") \|$" l &&
	grep -Eq "^\| +0 \| +1 \| .* \| 0.500  \|$" l &&
	"$SWEEP" report n.db --rows jitter --metric seconds --format csv --summary >sum 2>/dev/null &&
	test $(wc -l <sum) = 10 && test $(grep -c "^m[a-z]*,,,[0-9.e-]*,$" sum) = 4 && grep -q "^n,,,2,$" sum &&
	"$SWEEP" report n.db --rows jitter --metric seconds --strict --format csv >s 2>err &&
	test $(wc -l <s) = 2 && grep -q "^0,1," s &&
	grep -q "note: --strict left out 1 of 2 results: its median not known to the precision asked" err
'

# bad.sh LINE: prints LINE as its only output.
cat >"$T/bad.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "$1"
EOF

# bad_metric NAME 'LINE' 'REASON': a json sweep whose command prints LINE quarantines its cell, and the
# error names REASON and the line.
bad_metric() {
	printf "sweep: %s\ncommand: [sh, %s, %s]\nmetrics: json\nmax_attempts: 1\n" "$1" "$T/bad.sh" "'$2'" \
		>"$1.yaml" &&
	test_expect_code 3 "$SWEEP" run "$1.yaml" --db "$1.db" 2>err &&
	sql "$1.db" "SELECT state, error FROM cells" >state &&
	grep -q "^quarantined|.*$3" state &&
	grep -qF "(stdout line 1: '$2')" state &&
	test "$(sql "$1.db" "SELECT count(*) FROM results WHERE status = 'ok'")" = 0
}

test_expect_success 'a metric that is not a finite number, or a broken or duplicated line, fails the cell' '
	bad_metric nan "{\"x\": NaN}" "not JSON: expected a value" &&
	bad_metric big "{\"x\": 1e999}" "number out of range" &&
	bad_metric cut "{\"x\": 1" "not JSON" &&
	bad_metric tail "{\"x\": 1}garbage" "text after the JSON value" &&
	bad_metric dup "{\"x\": 1, \"x\": 2}" "duplicate key" &&
	bad_metric null "{\"x\": null}" "metric .x. is null, not a number"
'

test_expect_success 'metrics: json with no line, and a regex metric that never matches, fail the cell' '
	printf "sweep: quiet\ncommand: [sh, -c, \"echo hello\"]\nmetrics: json\nmax_attempts: 1\n" >quiet.yaml &&
	test_expect_code 3 "$SWEEP" run quiet.yaml --db q.db 2>/dev/null &&
	test "$(sql q.db "SELECT error FROM cells")" = "metrics: json, but the command printed no JSON object line (1 lines of stdout)" &&
	printf "sweep: rx\ncommand: [sh, -c, \"echo time: 5 ms\"]\nmetrics: {t: \"time: ([0-9.]+)\", u: \"zz([0-9]+)\"}\nmax_attempts: 1\n" >rx.yaml &&
	test_expect_code 3 "$SWEEP" run rx.yaml --db rx.db 2>/dev/null &&
	test "$(sql rx.db "SELECT error FROM cells")" = "metric '\''u'\'': regex '\''zz([0-9]+)'\'' matched no line of stdout (1 lines)" &&
	printf "sweep: rn\ncommand: [sh, -c, \"echo time: 0x10 ms\"]\nmetrics: {t: \"time: ([0-9a-fx.]+)\"}\nmax_attempts: 1\n" >rn.yaml &&
	test_expect_code 3 "$SWEEP" run rn.yaml --db rn.db 2>/dev/null &&
	sql rn.db "SELECT error FROM cells" >rn.err &&
	grep -q "metric .t.: .0x10.: not a number (stdout line 1: .time: 0x10 ms.)" rn.err
'

# refused_merge 'UPDATE ...' MESSAGE: a copy of n.db changed so is refused by merge, naming the row.
refused_merge() {
	rm -f bad.db merged.db* && cp n.db bad.db && sql bad.db "$1" &&
	test_must_fail "$SWEEP" merge merged.db bad.db 2>err &&
	grep -q "cannot merge .bad.db.: $2" err &&
	grep -q "nothing was merged" err
}

test_expect_success 'merge refuses non-finite samples and medians, negative counts, ok without a median' '
	refused_merge "UPDATE samples SET seconds = 9e999 WHERE result = 1 AND i = 0" \
		"samples row with result = 1: seconds is inf, not a finite number" &&
	refused_merge "UPDATE results SET median = -9e999 WHERE id = 2" \
		"results row with id = 2: median is -inf, not a finite number" &&
	refused_merge "UPDATE results SET n = -5 WHERE id = 1" "results row with id = 1: n is -5, a negative count" &&
	refused_merge "UPDATE results SET median = NULL WHERE id = 2" \
		"results row with id = 2: an ok result without a median" &&
	rm -f merged.db* && "$SWEEP" merge merged.db n.db >/dev/null 2>&1 &&
	test "$(sql merged.db "SELECT count(*) FROM results")" = 2
'
