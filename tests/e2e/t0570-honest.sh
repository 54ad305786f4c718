#!/bin/bash
# t0570-honest: tables that never mislead: no silent pooling over a parameter, noise misses shown,
# strict command metrics, --out that cannot destroy a database, escaped gnuplot scripts and table cells,
# no inf/nan in JSON, merge refusing impossible values, LaTeX that says its method.
. tests/e2e/lib.sh

# prog.sh DTYPE M N prints {"gflops": B + M + N} with B = 100 for f32 and 50 for f64: the medians of f32
# and f64 must never be pooled into one number.
cat >"$T/prog.sh" <<'EOF'
#!/bin/sh
case $1 in f32) b=100 ;; *) b=50 ;; esac
echo "{\"gflops\": $((b + $2 + $3))}"
EOF
cat >"$T/grid.yaml" <<EOF
sweep: grid
command: [sh, $T/prog.sh, "{dtype}", "{M}", "{N}"]
metrics: json
params:
  dtype: [f32, f64]
  M: [1, 2]
  N: [10, 20]
EOF

test_expect_success 'setup: dtype x M x N' '
	"$SWEEP" run grid.yaml --db g.db 2>err && grep -q "8 cells ok" err
'

test_expect_success 'report: a parameter not named becomes a row key, in spec order, with a note' '
	"$SWEEP" report g.db --rows M,N --metric gflops --format csv >out 2>err &&
	printf "M,N,dtype,n,gflops\n1,10,f32,1,111\n1,10,f64,1,61\n1,20,f32,1,121\n1,20,f64,1,71\n2,10,f32,1,112\n2,10,f64,1,62\n2,20,f32,1,122\n2,20,f64,1,72\n" >want &&
	cmp want out &&
	grep -q "rows also split by dtype" err &&
	"$SWEEP" report g.db --metric gflops --format csv >all 2>err &&
	head -1 all >head &&
	echo "dtype,M,N,n,gflops" | cmp - head &&
	test $(wc -l <all) = 9
'

test_expect_success 'report --pool: aggregates over what it names, and the title says so' '
	"$SWEEP" report g.db --rows M --pool N,dtype --metric gflops >out 2>err &&
	head -1 out >title &&
	echo "median of gflops over passes and N, dtype, sweep grid" | cmp - title &&
	grep -Eq "^\| +1 \| +4 \| +91\.00 \|$" out &&
	! grep -q "split by" err &&
	"$SWEEP" report g.db --rows M --pool N --metric gflops --format csv >p 2>err &&
	printf "M,dtype,n,gflops\n1,f32,2,116\n1,f64,2,66\n2,f32,2,117\n2,f64,2,67\n" | cmp - p &&
	test_expect_code 2 "$SWEEP" report g.db --rows M --pool nope --metric gflops 2>err &&
	grep -q "unknown key .nope." err
'

test_expect_success 'report --cols and --compare: the unnamed parameter still splits rows' '
	"$SWEEP" report g.db --rows M --cols dtype --metric gflops --format csv >out 2>/dev/null &&
	printf "M,N,dtype=f32,dtype=f64\n1,10,111,61\n1,20,121,71\n2,10,112,62\n2,20,122,72\n" | cmp - out
'

test_expect_success 'plot: a parameter varying inside a point is refused, --pool names it on the axis' '
	test_expect_code 2 "$SWEEP" plot g.db --x M --y gflops --series dtype --out p.svg 2>err &&
	grep -q "N varies inside a point of the plot" err &&
	! test -e p.gp &&
	"$SWEEP" plot g.db --x M --y gflops --series dtype --pool N --out p.svg >/dev/null &&
	grep -q "^set ylabel .*median over passes and N" p.gp &&
	"$SWEEP" plot g.db --x M --y gflops --series dtype --facet N --out f.svg >/dev/null
'

# A parameter value that ends the gnuplot string, ends the line and calls system(): in a sweep run here
# and in one that arrives through merge. Nothing may run.
cat >"$T/evil.yaml" <<EOF
sweep: evil
command: [sh, -c, "echo '{\"v\": 1}'", "{s}"]
metrics: json
params:
  s: ["a", "b'\nsystem(\"touch $T/PWNED\")\n#\`touch $T/PWNED2\`"]
  x: [1, 2]
EOF

test_expect_success 'plot: a value trying to run a command through the gnuplot script runs nothing' '
	"$SWEEP" run evil.yaml --db e.db 2>/dev/null &&
	"$SWEEP" plot e.db --x x --y v --series s --title "t
system(\"touch $T/PWNED3\")" --out e.svg >/dev/null &&
	! test -e PWNED && ! test -e PWNED2 && ! test -e PWNED3 &&
	test -s e.svg &&
	grep -q "title .b..?system" e.gp &&
	test $(grep -c "^system" e.gp) = 0 &&
	"$SWEEP" merge m.db e.db >/dev/null 2>&1 &&
	"$SWEEP" plot m.db --x x --y v --facet s --out m.svg >/dev/null &&
	! test -e PWNED && test -s m.svg
'

# Two sleep cells, one with 20 ms of jitter against a 1 % noise target it cannot meet in 0.3 s.
cat >"$T/noisy.yaml" <<'EOF'
sweep: noisy
kernel: sleep
params: {ms: [5], jitter: [0, 20]}
timing: {min_samples: 3, min_time: 0, max_noise: 0.01, timeout: 0.3, warmup: 0}
EOF

test_expect_success 'the closing line and status count the results above their noise target' '
	"$SWEEP" run noisy.yaml --db n.db 2>err &&
	miss=$(sql n.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND NOT noise_ok") &&
	test "$miss" -ge 1 &&
	grep -q "^sweep: noisy: 2 cells ok, 0 quarantined, .* s; $miss cells ok above their noise target$" err &&
	"$SWEEP" status n.db >st &&
	grep -Eq "^noisy +2 +2 +0 +0 +0 +100.0% +$miss *$" st &&
	grep -q "above_noise" st &&
	"$SWEEP" status n.db --json | python3 -c "import json,sys; assert json.load(sys.stdin)[\"above_noise\"] == $miss"
'

test_expect_success 'reports mark noisy values; --metric noise; --strict leaves them out and says so' '
	sql n.db "UPDATE results SET noise_ok = (json_extract((SELECT params FROM cells WHERE id = cell), '\''$.jitter'\'') = 0), noise = CASE WHEN json_extract((SELECT params FROM cells WHERE id = cell), '\''$.jitter'\'') = 0 THEN 0.005 ELSE 0.25 END" &&
	"$SWEEP" report n.db --rows jitter --metric noise >md &&
	printf "| jitter | n   | noise   |\n| ------:| ---:| -------:|\n|      0 |   1 | 0.0050  |\n" >want &&
	printf "|     20 |   1 | 0.2500\342\200\240 |\n\n\342\200\240 holds results above their noise target" >>want &&
	printf " (1 result); --strict leaves them out\n" >>want &&
	tail -n +3 md | cmp want - &&
	"$SWEEP" report n.db --rows jitter --metric noise --format csv >csv &&
	printf "jitter,n,noise,noise_ok\n0,1,0.005,1\n20,1,0.25,0\n" | cmp - csv &&
	"$SWEEP" report n.db --rows ms --cols jitter --metric seconds --format json >j &&
	python3 -c "import json; d = json.load(open(\"j\")); assert d[0][\"noise_ok\"] == 0, d" &&
	"$SWEEP" report n.db --rows ms --cols jitter --metric seconds --format latex >tex &&
	grep "^5 & " tex | grep -qF "\\rlap{\$^\\dagger\$} \\\\" &&
	"$SWEEP" report n.db --rows ms --metric seconds --compare jitter=0/20 --paired-by ms --format csv >c 2>/dev/null &&
	head -1 c | grep -q ",noise_ok$" && grep -q ",0$" c &&
	"$SWEEP" report n.db --rows jitter --metric seconds --limit "seconds * 2" >l 2>/dev/null &&
	grep -Eq "^\| +20 \| +1 \| .*$(printf "\342\200\240") \| .* \| 0.500$(printf "\342\200\240") \|$" l &&
	grep -Eq "^\| +0 \| +1 \| .* \| 0.500  \|$" l &&
	"$SWEEP" report n.db --rows jitter --metric seconds --format csv --summary >sum 2>/dev/null &&
	test $(wc -l <sum) = 10 && test $(grep -c "^m[a-z]*,,,[0-9.e-]*,$" sum) = 4 && grep -q "^n,,,2,$" sum &&
	"$SWEEP" report n.db --rows jitter --metric seconds --strict --format csv >s 2>err &&
	test $(wc -l <s) = 2 && grep -q "^0,1," s &&
	grep -q "note: --strict left out 1 result above its noise target" err
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

test_expect_success '--out never writes over the database or another SQLite file (exit 1)' '
	cp g.db copy.db && sum=$(md5sum <copy.db) &&
	test_expect_code 1 "$SWEEP" report copy.db --rows M,N,dtype --metric gflops --out copy.db 2>err &&
	grep -q "^sweep: --out .copy.db. is the database being read: not overwriting it$" err &&
	test "$(md5sum <copy.db)" = "$sum" &&
	ln -s copy.db link.db &&
	test_expect_code 1 "$SWEEP" report copy.db --rows M,N,dtype --metric gflops --out link.db 2>err &&
	test "$(md5sum <copy.db)" = "$sum" &&
	cp n.db other.db && osum=$(md5sum <other.db) &&
	test_expect_code 1 "$SWEEP" report g.db --rows M,N,dtype --metric gflops --out other.db 2>err &&
	grep -q "^sweep: --out .other.db. is an SQLite database: not overwriting it$" err &&
	test "$(md5sum <other.db)" = "$osum" &&
	test_expect_code 1 "$SWEEP" report g.db --rows M --pool N,dtype --metric gflops --limit "gflops * 2" \
		--out other.db 2>/dev/null &&
	test "$(md5sum <other.db)" = "$osum"
'

test_expect_success '--out takes the format from the extension unless --format says otherwise' '
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --out t.csv &&
	printf "M,N,dtype,n,gflops\n1,10,f32,1,111\n2,10,f32,1,112\n" | cmp - t.csv &&
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --out t.json &&
	python3 -c "import json; assert json.load(open(\"t.json\"))[1] == {\"M\": 2, \"N\": 10, \"dtype\": \"f32\", \"n\": 1, \"gflops\": 112}" &&
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --out t.tex &&
	grep -q "^\\\\begin{tabular}" t.tex &&
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --out t.txt &&
	grep -Eq "^M +N +dtype +n +gflops$" t.txt &&
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --out t.md &&
	grep -q "^| M " t.md &&
	"$SWEEP" report g.db --rows M,N,dtype --where "N = 10 AND dtype = '\''f32'\''" --metric gflops --format md --out forced.csv &&
	grep -q "^| M " forced.csv
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

test_expect_success 'no inf in JSON: report --limit and sql --json give null' '
	"$SWEEP" report g.db --rows M,N,dtype --metric gflops --limit "gflops * 1e308 * 10" --format json >j &&
	! grep -qi "inf" j &&
	python3 -c "import json; d = json.load(open(\"j\")); assert d[0][\"limit\"] is None, d" &&
	"$SWEEP" sql g.db "SELECT 9e999 AS a, '\''x'\'' AS b UNION ALL SELECT '\''y'\'', -9e999" --json >s &&
	python3 -c "import json; d = json.load(open(\"s\")); assert d == [{\"a\": None, \"b\": \"x\"}, {\"a\": \"y\", \"b\": None}], d"
'

# Values that break a Markdown row or a terminal: '|', a newline, ESC, an empty and a blank value; and
# a command whose stderr holds an escape sequence and a byte that is not UTF-8.
cat >"$T/cells.yaml" <<'EOF'
sweep: cells
command: [sh, -c, "echo '{\"v\": 1}'", "{s}"]
metrics: json
params:
  s: ["", " ", "a|b", "x\ny", "\e[31mred"]
EOF
cat >"$T/loud.yaml" <<'EOF'
sweep: loud
command: [sh, -c, "printf 'bad \\033[2J\\377 x\\n' >&2; exit 3"]
metrics: json
max_attempts: 1
EOF

test_expect_success 'markdown and text escape | and newlines, replace ESC and bad UTF-8, quote blanks' '
	"$SWEEP" run cells.yaml --db c.db 2>/dev/null &&
	"$SWEEP" report c.db --rows s --metric v >md &&
	cat >want <<-\EOF &&
	| s        | n   | v     |
	|:-------- | ---:| -----:|
	| ""       |   1 | 1.000 |
	| ?[31mred |   1 | 1.000 |
	| " "      |   1 | 1.000 |
	| a\|b     |   1 | 1.000 |
	| x<br>y   |   1 | 1.000 |
	EOF
	tail -n +3 md | cmp want - &&
	"$SWEEP" report c.db --cols s --metric v --format text >txt &&
	grep -Eq "^s=\"\" +s=\?\[31mred +s=\" \" +s=a\|b +s=x\?y$" txt &&
	test_expect_code 3 "$SWEEP" run loud.yaml --db l.db 2>/dev/null &&
	"$SWEEP" status l.db >st &&
	! grep -q "$(printf "\033")" st && ! grep -q "$(printf "\377")" st &&
	grep -q "exit 3: bad ?\[2J$(printf "\357\277\275") x" st
'

# Values over orders of magnitude: prog2.sh X prints {"t": X / 1000, "item": "i1"} and the same for i2.
cat >"$T/wide.yaml" <<'EOF'
sweep: wide
command: [sh, -c, 'for i in i1 i2; do echo "{\"item\": \"$i\", \"t\": {x}}"; done', "{arm}"]
metrics: json
params:
  x: [0.5, 64, 8192]
  arm: [a, b]
EOF

test_expect_success 'latex: the method as a comment; numbers of a column with equal decimals' '
	"$SWEEP" run wide.yaml --db w.db 2>/dev/null &&
	"$SWEEP" report w.db --rows x --where "arm = '\''a'\''" --metric t --format latex >tex &&
	head -1 tex >first &&
	echo "% median of t over passes, sweep wide, where arm = '\''a'\''" | cmp - first &&
	grep -q "^0.5 & 1 & 0.5000 \\\\\\\\$" tex &&
	grep -q "^64 & 1 & 64.0000 \\\\\\\\$" tex &&
	grep -q "^8192 & 1 & 8192.0000 \\\\\\\\$" tex &&
	"$SWEEP" report w.db --rows x --metric t --compare arm=a/b --boot 500 --seed 7 --ci 90 --format latex >cmp 2>/dev/null &&
	head -1 cmp >first &&
	echo "% t of arm=a over arm=b, paired by item: ratio of means (n = 2 pairs a row; 90% percentile bootstrap interval of 500 resamples, seed 7), sweep wide" |
		cmp - first
'
