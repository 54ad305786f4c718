#!/bin/bash
# t0500-report: `sweep report` tables: pivots, aggregation over passes, every format, keys (parameters, host,
# labels), --where, --out, --summary, and the errors a user meets.
. tests/e2e/lib.sh

# prog.sh X Y prints {"v": X*Y + o, "w": X} with o = 0, 1, 5 on the 1st, 2nd and 3rd call for (X, Y): the
# three passes of a cell give X*Y, X*Y+1 and X*Y+5 whatever order they run in.
cat >"$T/prog.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")/state; mkdir -p "$d"
f="$d/$1-$2"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
case $n in 0) o=0 ;; 1) o=1 ;; *) o=5 ;; esac
echo "{\"v\": $(($1 * $2 + o)), \"w\": $1}"
EOF
cat >"$T/grid.yaml" <<EOF
sweep: grid
command: [sh, $T/prog.sh, "{x}", "{y}"]
metrics: json
params:
  x: [1, 2]
  y: [10, 20]
repeat: 3
EOF

test_expect_success 'setup: a 4-cell grid, 3 passes' '
	"$SWEEP" run grid.yaml --db g.db 2>err && grep -q "12 cells ok" err
'

# Expected values by hand: the cell (x, y) has v = {xy, xy+1, xy+5}: median xy+1, mean xy+2,
# geomean (xy (xy+1) (xy+5))^(1/3): 1650^(1/3) = 11.8167 for xy = 10 (Python: statistics.geometric_mean);
# a row x = 1 holds {10, 11, 15, 20, 21, 25}: median 17.5.
test_expect_success 'markdown pivot: the median over passes of every cell' '
	"$SWEEP" report g.db --rows x --cols y --metric v >out &&
	cat >want <<-\EOF &&
	median of v over passes, sweep grid

	| x   | y=10  | y=20  |
	| ---:| -----:| -----:|
	|   1 | 11.00 | 21.00 |
	|   2 | 21.00 | 41.00 |
	EOF
	cmp want out
'

test_expect_success 'csv with --stat mean and geomean, the count of results per row' '
	"$SWEEP" report g.db --rows x,y --metric v --stat mean --format csv >mean.csv &&
	printf "x,y,n,v\n1,10,3,12\n1,20,3,22\n2,10,3,22\n2,20,3,42\n" | cmp - mean.csv &&
	"$SWEEP" report g.db --rows x,y --metric v --stat geomean --format csv >geo.csv &&
	printf "x,y,n,v\n1,10,3,11.8167\n1,20,3,21.8976\n2,10,3,21.8976\n2,20,3,41.9455\n" | cmp - geo.csv &&
	"$SWEEP" report g.db --rows x --pool y --metric v --stat min --format csv >min.csv &&
	printf "x,n,v\n1,6,10\n2,6,20\n" | cmp - min.csv &&
	"$SWEEP" report g.db --rows x --pool y --metric v --stat max --format csv >max.csv &&
	printf "x,n,v\n1,6,25\n2,6,45\n" | cmp - max.csv
'

test_expect_success 'latex uses booktabs and escapes' '
	"$SWEEP" report g.db --rows x --cols y --metric v --format latex >tex &&
	cat >want <<-\EOF &&
	% median of v over passes, sweep grid
	\begin{tabular}{rrr}
	\toprule
	x & y=10 & y=20 \\
	\midrule
	1 & 11.00 & 21.00 \\
	2 & 21.00 & 41.00 \\
	\bottomrule
	\end{tabular}
	EOF
	cmp want tex
'

test_expect_success 'json is an array of objects with numbers as numbers' '
	"$SWEEP" report g.db --rows x,y --metric v --format json >j &&
	python3 -c "import json,sys; d=json.load(open(\"j\")); assert d[3] == {\"x\": 2, \"y\": 20, \"n\": 3, \"v\": 41}, d; assert len(d) == 4"
'

test_expect_success 'text format, --digits and --summary (median, min, max of each column)' '
	"$SWEEP" report g.db --rows x --cols y --metric v --format text --digits 2 --summary >txt &&
	grep -Eq "^1 +11 +21 *$" txt && grep -Eq "^median +16 +31 *$" txt &&
	grep -Eq "^min +11 +21 *$" txt && grep -Eq "^max +21 +41 *$" txt
'

test_expect_success '--where filters rows with parameters and metrics; text in single quotes' '
	"$SWEEP" report g.db --rows x,y --metric v --where "x = 2 AND y > 10" --format csv >w &&
	printf "x,y,n,v\n2,20,3,41\n" | cmp - w &&
	"$SWEEP" report g.db --rows x --metric v --where "v >= 40 OR (x * y) / 3 < 4" --format csv >w2 &&
	printf "x,n,v\n1,3,11\n2,3,41\n" | cmp - w2 &&
	"$SWEEP" report g.db --rows x --pool y --metric v --where "host = '\''$(hostname)'\''" --format csv >w3 &&
	printf "x,n,v\n1,6,17.5\n2,6,32.5\n" | cmp - w3
'

test_expect_success 'host and inventory labels are keys' '
	"$SWEEP" report g.db --rows host --pool x,y --metric w --format csv >h &&
	printf "host,n,w\n%s,12,1.5\n" "$(hostname)" | cmp - h &&
	sqlite3 g.db "UPDATE hosts SET facts = json_set(facts, '\''$.labels'\'', json_object('\''class'\'', '\''server'\''))" &&
	"$SWEEP" report g.db --rows label.class,x --pool y --metric v --format csv >l &&
	printf "label.class,x,n,v\nserver,1,6,17.5\nserver,2,6,32.5\n" | cmp - l
'

test_expect_success 'a pivot with --summary=label.class: the class column and its summary rows' '
	"$SWEEP" report g.db --rows x --cols y --metric v --summary=label.class --format csv >s 2>err &&
	printf "stat,x,label.class,y=10,y=20\n,1,server,11,21\n,2,server,21,41\n" >want &&
	printf "median,,server,16,31\nmin,,server,11,21\nmax,,server,21,41\n" >>want &&
	# mean -+ t(0.975, 1) * s / sqrt(2): 16 -+ 12.7062 * 5, 31 -+ 12.7062 * 10
	printf "mean,,server,16,31\nci95 lo,,server,-47.531,-96.062\nci95 hi,,server,79.531,158.062\n" >>want &&
	printf "n,,server,2,2\n" >>want &&
	cmp want s &&
	python3 "$ROOT/tests/summary_check.py" s --group label.class >check && grep -qx "checked 14 summary cells" check &&
	# two rows, each its own unit: said, and the rows of one host said too
	grep -q "^sweep: warning: the summary of .server. rests on 2 units (n, one value per row), fewer than 5" err &&
	grep -q "^note: the summary takes each row as a unit, and rows share a host" err
'

test_expect_success '--summary: the mean, its 95 % t interval and n, as computed apart, in every format' '
	"$SWEEP" report g.db --rows x,y --metric v --summary --format csv >sc &&
	cat sc &&
	python3 "$ROOT/tests/summary_check.py" sc >check &&
	cat check && grep -qx "checked 7 summary cells" check &&
	# by hand: v of the four rows 11, 21, 21, 41: mean 23.5, s sqrt(475 / 3), t(0.975, 3) 3.182446: -+ 20.0225
	grep -qx "mean,,,,23.5" sc && grep -qx "ci95 lo,,,,3.47755" sc && grep -qx "ci95 hi,,,,43.5225" sc &&
	grep -qx "n,,,,4" sc &&
	"$SWEEP" report g.db --rows x,y --metric v --summary --format json >sj 2>/dev/null &&
	python3 -c "import json; d = json.load(open(\"sj\")); m = {r[\"stat\"]: r[\"v\"] for r in d[4:]}
assert (m[\"mean\"], m[\"n\"], round(m[\"ci95 lo\"], 3), len(d)) == (23.5, 4, 3.478, 11), m
assert all(r[\"stat\"] is None for r in d[:4]) and d[4][\"x\"] is None, d" &&
	"$SWEEP" report g.db --rows x,y --metric v --summary --format text >st 2>/dev/null &&
	grep -Eq "^ci95 hi +43\.52$(printf "\342\200\241")$" st && grep -Eq "^n +4 *$" st &&
	"$SWEEP" report g.db --rows x,y --metric v --summary >sm 2>/dev/null &&
	grep -Eq "^\| mean +\| +\| +\| +23\.50  \|$" sm &&
	head -1 sm | grep -q "; summary over the rows (n counts them): median, min, max, mean and its 95% Student t interval$" &&
	grep -q "^$(printf "\342\200\241") a summary.s interval rests on fewer than 5 units (see the warnings)$" sm &&
	"$SWEEP" report g.db --rows x,y --metric v --summary --format latex >sl 2>/dev/null &&
	head -1 sl | grep -q "^% median of v over passes, sweep grid; summary over the rows (n counts them)" &&
	grep -q "^ci95 lo & *& *& 3.48\\\\rlap{\$^\\\\ddagger\$} " sl
'

test_expect_success '--out writes the file, stdout stays empty; ms is derived from seconds' '
	"$SWEEP" report g.db --rows x --pool y --metric v --out rep.md >stdout && test ! -s stdout &&
	grep -q "^|   2 |   6 | 32.50 |$" rep.md &&
	"$SWEEP" report g.db --rows x --pool y --metric seconds --format csv >s.csv &&
	"$SWEEP" report g.db --rows x --pool y --metric ms --format csv >ms.csv &&
	python3 -c "
import csv
s = list(csv.DictReader(open(\"s.csv\"))); m = list(csv.DictReader(open(\"ms.csv\")))
assert len(s) == 2 and all(abs(float(a[\"seconds\"]) * 1000 / float(b[\"ms\"]) - 1) < 1e-5 for a, b in zip(s, m))"
'

test_expect_success 'unknown keys and metrics are refused with a suggestion, exit 2' '
	test_expect_code 2 "$SWEEP" report g.db --rows xx --metric v 2>e1 &&
	grep -q "unknown key '\''xx'\'' (did you mean '\''x'\''?)" e1 &&
	test_expect_code 2 "$SWEEP" report g.db --rows x --metric vv 2>e2 &&
	grep -q "no metric '\''vv'\''.*did you mean '\''v'\''.*it has: seconds, v, w" e2 &&
	# a label no host has is not an error: its value is "-"
	"$SWEEP" report g.db --rows x --cols label.nope --pool y --metric v --format csv >o3 &&
	printf "x,label.nope=-\n1,17.5\n2,32.5\n" | cmp - o3 &&
	test_expect_code 2 "$SWEEP" report missing.db --rows x --metric v 2>e4 &&
	grep -q "cannot open '\''missing.db'\''" e4 && ! test -e missing.db &&
	test_expect_code 2 "$SWEEP" report g.db --rows x 2>e5 &&
	grep -q "give --metric" e5
'

# refused_where EXPR MESSAGE: report --where EXPR exits 2 with MESSAGE (grep) and prints no table.
refused_where() {
	test_expect_code 2 "$SWEEP" report g.db --rows x --metric v --where "$1" >o 2>err &&
	test ! -s o && grep -q "$2" err
}

test_expect_success '--where cannot smuggle SQL in; the database is untouched' '
	refused_where "x = 1; DELETE FROM cells" "unexpected '\'';'\'' at column 6 of --where" &&
	# "--" is two minus signs, not a comment: x = 1 + y holds for no row
	refused_where "x = 1 -- y" "no ok results of sweep '\''grid'\'' with metric '\''v'\'' that pass the filters" &&
	refused_where "x IN (SELECT 1)" "unknown name '\''SELECT'\'' in --where" &&
	refused_where "load_extension('\''a'\'')" "unknown function '\''load_extension'\'' at column 1" &&
	refused_where "x = \"1\"" "unknown name \"1\" at column 5 of --where .*text goes in single quotes, not double: .1." &&
	refused_where "x = 1 /* c */" "'\''\*'\'' at column 8 of --where '\''x = 1 /\* c \*/'\'': expected a name" &&
	test "$(sql g.db "SELECT count(*) FROM cells")" = 12
'

# Expressions of the allowed tokens in any order: each is a table (exit 0), or refused with our own
# message (exit 2); SQLite's own error never reaches the user (it said "sql error: ..." with exit 1).
test_expect_success '--where: 600 random expressions of allowed tokens, never an SQL error' '
	python3 - "$SWEEP" <<-\EOF
	import random, subprocess, sys
	toks = ["x", "y", "v", "host", "\"x\"", "'\''a'\''", "1", "2.5", "(", ")", ",", "+", "-", "*", "/", "%",
	        "=", "!=", "<", "<=", ">", ">=", "AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE",
	        "CASE", "WHEN", "THEN", "ELSE", "END", "abs(", "min(", "round(", "coalesce(", "log("]
	rng = random.Random(29)
	seen = {0: 0, 2: 0}
	for i in range(600):
	    e = " ".join(rng.choice(toks) for _ in range(rng.randint(1, 9)))
	    p = subprocess.run([sys.argv[1], "report", "g.db", "--rows", "x", "--metric", "v", "--where", e,
	                        "--format", "csv"], capture_output=True, text=True, timeout=30)
	    assert p.returncode in (0, 2) and "sql error" not in p.stderr, (e, p.returncode, p.stderr)
	    assert p.returncode == 0 or p.stderr.startswith("sweep: "), (e, p.stderr)
	    seen[p.returncode] += 1
	assert seen[0] > 10 and seen[2] > 300, seen
	print("tables %d, refused %d" % (seen[0], seen[2]))
	# and expressions the grammar allows: a table, or none left by the filter; never refused
	def term(d):
	    atoms = ["x", "y", "v", "1", "2.5", "\"y\"", "-x", "abs(v - 20)", "min(x, y, 3)", "round(v, 1)",
	             "coalesce(x, 0)", "log(2, v)", "sqrt(y)", "pow(x, 2)"]
	    if d > 2 or rng.random() < 0.5:
	        return rng.choice(atoms)
	    return "(%s %s %s)" % (term(d + 1), rng.choice("+-*/%"), term(d + 1))
	def cond(d):
	    k = rng.randrange(9 if d < 3 else 5)
	    t = lambda: term(d)
	    return [lambda: "%s %s %s" % (t(), rng.choice(["=", "!=", "<>", "<", "<=", ">", ">=", "=="]), t()),
	            lambda: "%s IS %sNULL" % (t(), rng.choice(["", "NOT "])),
	            lambda: "%s %sIN (%s, %s)" % (t(), rng.choice(["", "NOT "]), t(), t()),
	            lambda: "%s %sBETWEEN %s AND %s" % (t(), rng.choice(["", "NOT "]), t(), t()),
	            lambda: "host %sLIKE '\''%%'\''" % rng.choice(["", "NOT "]),
	            lambda: "NOT " + cond(d + 1),
	            lambda: "%s %s %s" % (cond(d + 1), rng.choice(["AND", "OR"]), cond(d + 1)),
	            lambda: "(%s)" % cond(d + 1),
	            lambda: "CASE WHEN %s THEN %s ELSE %s END > 1" % (cond(d + 1), t(), t())][k]()
	for i in range(300):
	    e = cond(0)
	    p = subprocess.run([sys.argv[1], "report", "g.db", "--rows", "x", "--metric", "v", "--where", e,
	                        "--format", "csv"], capture_output=True, text=True, timeout=30)
	    assert p.returncode == 0 or (p.returncode == 2 and "that pass the filters" in p.stderr), (e, p.stderr)
	EOF
'

# A parameter named like a word of the syntax, and a metric too: case n1 prints v 1 and in 3, n2 v 2, in 4.
cat >"$T/kw.yaml" <<'EOF'
sweep: kw
command: [sh, -c, 'if [ {case} = n1 ]; then echo "{\"v\": 1, \"in\": 3}"; else echo "{\"v\": 2, \"in\": 4}"; fi']
metrics: json
params: {case: [n1, n2], x: [1]}
EOF

test_expect_success '--where with a parameter or metric named like a keyword: in double quotes, or our message' '
	"$SWEEP" run kw.yaml --db kw.db 2>/dev/null &&
	"$SWEEP" report kw.db --rows case --metric v --where "\"case\" = '\''n1'\''" --format csv >o &&
	printf "case,n,v\nn1,1,1\n" | cmp - o &&
	"$SWEEP" report kw.db --rows case --metric v --where "\"in\" > 3.5 AND \"case\" IN ('\''n1'\'', '\''n2'\'')" \
		--format csv >o2 &&
	printf "case,n,v\nn2,1,2\n" | cmp - o2 &&
	test_expect_code 2 "$SWEEP" report kw.db --rows case --metric v --where "case = '\''n1'\''" >o3 2>err &&
	test ! -s o3 && ! grep -q "sql error" err &&
	grep -q "^sweep: .=. at column 6 of --where .case = .n1..: expected a name, a number, .text., .(., CASE or a function (.case. is a word of the syntax: the parameter of that name is written \"case\")$" err &&
	test_expect_code 2 "$SWEEP" report kw.db --rows case --metric v --where "in > 3" 2>err &&
	grep -q "the metric of that name is written \"in\"" err
'

# The cells of x = 1 hold v over passes: y = 10 {10, 11, 15}, y = 20 {20, 21, 25}.
test_expect_success '--stat stdev, cv and pNN, checked against Python statistics; refused where they mean nothing' '
	for s in stdev cv p90 p2.5; do
		"$SWEEP" report g.db --rows x,y --metric v --stat $s --format csv >st.$s || return 1
	done &&
	python3 - <<-\EOF &&
	import csv, statistics
	def p(xs, q):   # type 7, as numpy: statistics.quantiles(method="inclusive") at 1000 cuts
	    return statistics.quantiles(xs, n=1000, method="inclusive")[round(q * 1000) - 1]
	cells = {(x, y): [x * y, x * y + 1, x * y + 5] for x in (1, 2) for y in (10, 20)}
	want = {"stdev": statistics.stdev, "cv": lambda v: statistics.stdev(v) / statistics.fmean(v),
	        "p90": lambda v: p(v, 0.9), "p2.5": lambda v: p(v, 0.025)}
	for s, f in want.items():
	    rows = list(csv.DictReader(open("st." + s)))
	    assert len(rows) == 4, rows
	    for r in rows:
	        w = f(cells[(int(r["x"]), int(r["y"]))])
	        assert abs(float(r["v"]) / w - 1) < 1e-5, (s, r, w)
	EOF
	"$SWEEP" report g.db --rows x --cols y --metric v --stat p90 >md &&
	head -1 md | grep -qx "p90 of v over passes, sweep grid" &&
	grep -Eq "^\| +1 \| 14\.20 \| 24\.20 \|$" md &&
	test_expect_code 2 "$SWEEP" report g.db --rows x --metric v --stat p101 2>err &&
	grep -q "not .p101." err &&
	test_expect_code 2 "$SWEEP" report g.db --rows x --metric v --stat stdev --limit "v * 2" 2>err &&
	grep -q "^sweep: --stat stdev: --limit takes median, mean, geomean, min or max$" err &&
	test_expect_code 2 "$SWEEP" report g.db --drift --stat mean 2>err &&
	grep -q "^sweep: --stat goes with a table, --limit or --compare, not --drift$" err
'

cat >"$T/other.yaml" <<EOF
sweep: other
command: [sh, -c, 'echo "{\"v\": {z}}"']
metrics: json
params: {z: [7]}
EOF

test_expect_success 'several sweeps: --sweep chooses, without it the error names them' '
	"$SWEEP" run other.yaml --db g.db 2>/dev/null &&
	test_expect_code 2 "$SWEEP" report g.db --rows x --metric v 2>err &&
	grep -q "several sweeps (grid, other): choose one with --sweep" err &&
	"$SWEEP" report g.db --sweep other --rows z --metric v --format csv >o &&
	printf "z,n,v\n7,1,7\n" | cmp - o &&
	test_expect_code 2 "$SWEEP" report g.db --sweep nosuch --rows z --metric v 2>err &&
	grep -q "no sweep '\''nosuch'\'' in '\''g.db'\'' (it has: grid, other)" err
'

test_expect_success 'report --help, and conflicting options are usage errors' '
	"$SWEEP" report --help >help &&
	grep -q "^usage: sweep report DB \[--rows KEYS\] \[--cols KEYS\] --metric NAME" help &&
	test_expect_code 2 "$SWEEP" report g.db --drift --rows x 2>err &&
	grep -q "^sweep: --drift takes only --sweep, --threshold, --drop-first, --format and --out$" err &&
	test_expect_code 2 "$SWEEP" report g.db --sweep grid --rows x --cols y --metric v --compare x=1/2 2>err &&
	grep -q "^sweep: --cols makes a pivot table; with --compare put the keys into --rows$" err
'
