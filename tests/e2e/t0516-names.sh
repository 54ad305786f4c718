#!/bin/bash
# t0516-names: a report's own columns (n, ratio, ci_lo, precise, ...) never take a parameter's name: the
# parameters keep theirs, the report's column is renamed (n_2), in every format; CSV and JSON readers load
# every parameter's value and every figure of the report.
. tests/e2e/lib.sh

# Parameters named like the report's columns. Each cell prints items x and y: v and 2 v, where
# v = (10 n + ratio + ci_lo) k, k = 2 for sys a and 1 for b; the stored t is their mean, 1.5 v.
cat >"$T/nm.yaml" <<'EOF'
sweep: nm
command: [sh, -c, 'if [ {sys} = a ]; then k=2; else k=1; fi; v=$(( ({n} * 10 + {ratio} + {ci_lo}) * k )); echo "{\"item\": \"x\", \"t\": $v}"; echo "{\"item\": \"y\", \"t\": $((2 * v))}"']
metrics: json
params:
  n: [1, 2]
  ratio: [3]
  ci_lo: [5]
  precise: [7]
  sys: [a, b]
EOF

# The header of a table in FORMAT (md, text, latex) as a list, and the first cell of each row.
cat >"$T/head.py" <<'EOF'
import re, sys
fmt, path = sys.argv[1], sys.argv[2]
lines = [l.rstrip("\n") for l in open(path)]
if fmt == "md":
    rows = [[c.strip() for c in l.strip("|").split("|")] for l in lines if l.startswith("|")]
    rows = [rows[0]] + rows[2:]
elif fmt == "latex":
    body = lines[lines.index("\\toprule") + 1:lines.index("\\bottomrule")]
    rows = [[c.strip() for c in l[:-len(" \\\\")].split(" & ")] for l in body if l != "\\midrule"]
else:
    # the lines under the table that begin with a mark are its footnotes
    rows = [re.split(r"  +", l.strip()) for l in lines[2:] if l.strip() and l[0] not in "\u2020\u2021"]
print("|".join(rows[0]))
print(" ".join(r[0] for r in rows[1:]))
EOF

test_expect_success 'setup' '
	"$SWEEP" run nm.yaml --db n.db 2>err && grep -q "4 cells ok" err &&
	sql n.db "VACUUM INTO '\''m.db'\''" &&
	# one result short of its precision, in a copy: the precise column of csv and json appears
	sql m.db "UPDATE results SET precise = 0 WHERE cell IN (SELECT id FROM cells
		WHERE json_extract(params, '\''$.n'\'') = 2 AND json_extract(params, '\''$.sys'\'') = '\''b'\'')"
'

test_expect_success 'csv: the parameters keep their names, the count and the precision mark are renamed' '
	"$SWEEP" report m.db --rows n,ratio,ci_lo,precise,sys --metric t --format csv >t.csv &&
	cat >want <<-\EOF &&
	n,ratio,ci_lo,precise,sys,n_2,t,precise_2
	1,3,5,7,a,1,54,1
	1,3,5,7,b,1,27,1
	2,3,5,7,a,1,84,1
	2,3,5,7,b,1,42,0
	EOF
	cmp want t.csv
'

test_expect_success 'json of the table: every parameter and figure loads' '
	"$SWEEP" report m.db --rows n,ratio,ci_lo,precise,sys --metric t --format json >t.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("t.json"))
	got = [(r["n"], r["ratio"], r["ci_lo"], r["precise"], r["sys"], r["n_2"], r["t"], r["precise_2"]) for r in d]
	assert got == [(1, 3, 5, 7, "a", 1, 54, 1), (1, 3, 5, 7, "b", 1, 27, 1), (2, 3, 5, 7, "a", 1, 84, 1),
	               (2, 3, 5, 7, "b", 1, 42, 0)], got
	assert all(len(r) == 8 for r in d), d
	EOF
'

# --compare pairs the items x and y: a over b is 2 for both values of n.
test_expect_success '--compare: n, ratio and ci_lo of the report renamed, csv and json read back' '
	"$SWEEP" report n.db --rows n,ratio,ci_lo,precise --metric t --compare sys=a/b --format csv >c.csv &&
	cat >want <<-\EOF &&
	n,ratio,ci_lo,precise,n_2,t_a,t_b,ratio_2,ci_lo_2,ci_hi
	1,3,5,7,2,54,27,2,2,2
	2,3,5,7,2,84,42,2,2,2
	EOF
	cmp want c.csv &&
	python3 -c "
import csv
rows = list(csv.DictReader(open(\"c.csv\")))
assert [(r[\"n\"], r[\"ratio\"], r[\"ci_lo\"], r[\"n_2\"], r[\"ratio_2\"]) for r in rows] == [(\"1\", \"3\", \"5\", \"2\", \"2\"), (\"2\", \"3\", \"5\", \"2\", \"2\")], rows
" &&
	"$SWEEP" report n.db --rows n,ratio,ci_lo,precise --metric t --compare sys=a/b --format json >c.json &&
	python3 - <<-\EOF
	import json
	d = json.load(open("c.json"))
	assert [(r["n"], r["ratio"], r["ci_lo"], r["precise"], r["n_2"], r["t_a"], r["t_b"], r["ratio_2"], r["ci_lo_2"],
	         r["ci_hi"]) for r in d] == [(1, 3, 5, 7, 2, 54, 27, 2, 2, 2), (2, 3, 5, 7, 2, 84, 42, 2, 2, 2)], d
	EOF
'

test_expect_success 'md, text and latex: no name twice in a heading, the parameter n in its column' '
	for f in md text latex; do
		"$SWEEP" report n.db --rows n,ratio,ci_lo,precise,sys --metric t --format $f >t.$f &&
		python3 head.py $f t.$f >h.$f &&
		"$SWEEP" report n.db --rows n,ratio,ci_lo,precise --metric t --compare sys=a/b --format $f >c.$f &&
		python3 head.py $f c.$f >hc.$f || return 1
	done &&
	printf "n|ratio|ci_lo|precise|sys|n_2|t\n1 1 2 2\n" | cmp - h.md &&
	printf "n|ratio|ci_lo|precise|sys|n_2|t\n1 1 2 2\n" | cmp - h.text &&
	printf "n|ratio|ci\\\\_lo|precise|sys|n\\\\_2|t\n1 1 2 2\n" | cmp - h.latex &&
	printf "n|ratio|ci_lo|precise|n_2|t_a|t_b|a/b [95%% CI]\n1 2\n" | cmp - hc.md &&
	printf "n|ratio|ci_lo|precise|n_2|t_a|t_b|a/b [95%% CI]\n1 2\n" | cmp - hc.text &&
	printf "n|ratio|ci\\\\_lo|precise|n\\\\_2|t\\\\_a|t\\\\_b|a/b [95\\\\%% CI]\n1 2\n" | cmp - hc.latex &&
	grep -Eq "^\| +2 \| +3 \| +5 \| +7 \| b +\| +1 \| 42.00 \|$" t.md
'
