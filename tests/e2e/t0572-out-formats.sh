#!/bin/bash
# t0572-out-formats: --out never writes over the database or another SQLite file and takes its format
# from the extension; no inf or nan in JSON; Markdown and text escape what breaks a row or a terminal;
# LaTeX says its method and keeps a column's decimals alike.
. tests/e2e/lib.sh

# grid.yaml: dtype x M x N, whose gflops differ by dtype (tests/progs/gflops.sh).
sed "s|@ROOT@|$ROOT|" "$ROOT/tests/data/sweeps/grid.yaml" >"$T/grid.yaml"

test_expect_success 'setup: dtype x M x N' '
	"$SWEEP" run grid.yaml --db g.db 2>err && grep -q "8 cells ok" err
'

test_expect_success '--out never writes over the database or another SQLite file (exit 1)' '
	cp g.db copy.db && sum=$(md5sum <copy.db) &&
	test_expect_code 1 "$SWEEP" report copy.db --rows M,N,dtype --metric gflops --out copy.db 2>err &&
	grep -q "^sweep: --out .copy.db. is the database being read: not overwriting it$" err &&
	test "$(md5sum <copy.db)" = "$sum" &&
	ln -s copy.db link.db &&
	test_expect_code 1 "$SWEEP" report copy.db --rows M,N,dtype --metric gflops --out link.db 2>err &&
	test "$(md5sum <copy.db)" = "$sum" &&
	cp g.db other.db && osum=$(md5sum <other.db) &&
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

test_expect_success 'markdown and text escape | and newlines, replace ESC and bad UTF-8, quote blanks (in the spec'\''s order)' '
	"$SWEEP" run cells.yaml --db c.db 2>/dev/null &&
	"$SWEEP" report c.db --rows s --metric v >md &&
	cat >want <<-\EOF &&
	| s        | n   | v     |
	|:-------- | ---:| -----:|
	| ""       |   1 | 1.000 |
	| " "      |   1 | 1.000 |
	| a\|b     |   1 | 1.000 |
	| x<br>y   |   1 | 1.000 |
	| ?[31mred |   1 | 1.000 |
	EOF
	tail -n +3 md | cmp want - &&
	"$SWEEP" report c.db --cols s --metric v --format text >txt &&
	grep -Eq "^s=\"\" +s=\" \" +s=a\|b +s=x\?y +s=\?\[31mred$" txt &&
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
