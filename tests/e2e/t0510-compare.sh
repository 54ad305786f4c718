#!/bin/bash
# t0510-compare: --compare KEY=A/B: items paired by name (averaged over passes first), the ratio of means
# with a bootstrap interval, unpaired items reported, the A/A case, pairing by a parameter, every format.
. tests/e2e/lib.sh

# items.sh SYSTEM MODEL prints items i0..i3: 10+i+o for system a, 5+i+o for b, where o is 0 on the first
# call for (SYSTEM, MODEL) and 2 on the second; system b of model m2 has no item i3.
cat >"$T/items.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")/state; mkdir -p "$d"
f="$d/$1-$2"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
o=$((2 * n))
for i in 0 1 2 3; do
	[ "$1$2$i" = bm23 ] && continue
	if [ "$1" = a ]; then v=$((10 + i + o)); else v=$((5 + i + o)); fi
	echo "{\"item\": \"i$i\", \"tok_s\": $v}"
done
EOF
cat >"$T/cmp.yaml" <<EOF
sweep: cmp
command: [sh, $T/items.sh, "{system}", "{model}"]
metrics: json
params:
  model: [m1, m2]
  system: [a, b]
repeat: 2
EOF

test_expect_success 'setup: 2 models x 2 systems, 2 passes, per-item values' '
	"$SWEEP" run cmp.yaml --db c.db 2>err && grep -q "8 cells ok" err &&
	test "$(sql c.db "SELECT count(*) FROM items")" = 30
'

# By hand, averaged over the two passes: a_i = 11+i, b_i = 6+i.
#   m1: mean a = (11+12+13+14)/4 = 12.5, mean b = 7.5, ratio 5/3 = 1.66667 (n = 4)
#   m2: i3 has no partner; mean a = (11+12+13)/3 = 12, mean b = 7, ratio 12/7 = 1.71429 (n = 3)
test_expect_success 'csv: the exact header, n paired items, means and ratio computed by hand' '
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --paired-by item --ci 95 \
		--format csv >out.csv 2>err &&
	head -1 out.csv | grep -qx "model,n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi" &&
	grep -q "^m1,4,12.5,7.5,1.66667," out.csv && grep -q "^m2,3,12,7,1.71429," out.csv &&
	test "$(wc -l <out.csv)" = 3
'

test_expect_success 'the interval lies within the possible resampled ratios and holds the ratio' '
	# a resample of m1 has a ratio between min a_i/b_i = 14/9 and max = 11/6
	awk -F, "NR == 2 { exit !(\$6 >= 14/9 - 1e-9 && \$6 < \$5 && \$5 < \$7 && \$7 <= 11/6 + 1e-9) }" out.csv &&
	awk -F, "NR == 3 { exit !(\$6 >= 13/8 - 1e-9 && \$6 < \$5 && \$5 < \$7 && \$7 <= 11/6 + 1e-9) }" out.csv
'

test_expect_success 'the interval agrees with an independent bootstrap (Python, 20000 resamples)' '
	python3 - <<-\EOF
	import csv, random
	rows = {r["model"]: r for r in csv.DictReader(open("out.csv"))}
	data = {"m1": ([11, 12, 13, 14], [6, 7, 8, 9]), "m2": ([11, 12, 13], [6, 7, 8])}
	rng = random.Random(5)
	for model, (a, b) in data.items():
	    n = len(a)
	    rs = []
	    for _ in range(20000):
	        idx = [rng.randrange(n) for _ in range(n)]
	        rs.append(sum(a[i] for i in idx) / sum(b[i] for i in idx))
	    rs.sort()
	    lo, hi = rs[int(0.025 * len(rs))], rs[int(0.975 * len(rs))]
	    got_lo, got_hi = float(rows[model]["ci_lo"]), float(rows[model]["ci_hi"])
	    assert abs(got_lo - lo) < 0.01 and abs(got_hi - hi) < 0.01, (model, got_lo, lo, got_hi, hi)
	EOF
'

test_expect_success 'items without a partner are named, not dropped silently; fewer than 5 pairs warned of' '
	grep -q "note: model=m2: 1 unit without a partner, left out of the ratio: i3 (only system=a)" err &&
	! grep -q "^note: model=m1" err &&
	grep -qx "sweep: warning: fewer than 5 pairs: model=m1 (n = 4); model=m2 (n = 3); an interval of so few is rough, of one missing (marked)" err
'

test_expect_success 'markdown and latex: one cell "ratio [lo, hi]"; json keeps the numbers apart' '
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b >md 2>/dev/null &&
	grep -Eq "^\| m1 +\| +4 \| +12.50 \| +7.50 \| 1.67 \[1\.[56][0-9], 1\.[78][0-9]\]$(printf "\342\200\241") \|$" md &&
	grep -q "a/b \[95% CI\]" md &&
	grep -qx "$(printf "\342\200\241") an interval rests on fewer than 5 pairs (see the warnings)" md &&
	head -1 md | grep -q "paired by item: ratio of means (n = 3 to 4 pairs a row; 95% percentile bootstrap interval of 10000 resamples, seed 1)" &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --format latex >tex 2>/dev/null &&
	grep -Eq "^m1 & 4 & 12.50 & 7.50 & 1.67 \[1\.[56][0-9], 1\.[78][0-9]\]\\\\rlap\{\\\$\^\\\\ddagger\\\$\} \\\\\\\\$" tex &&
	grep -q "a/b \[95\\\\% CI\]" tex &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --format json >j 2>/dev/null &&
	python3 -c "
import json; d = json.load(open(\"j\"))
assert d[0][\"n\"] == 4 and abs(d[0][\"ratio\"] - 5 / 3) < 1e-5 and d[0][\"ci_lo\"] < d[0][\"ratio\"], d"
'

# The arm's column comes twice: the second takes the name tok_s_a_2, as a table names a column once.
test_expect_success 'A/A: an arm against itself gives 1 [1, 1]' '
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/a --format csv >aa &&
	printf "model,n,tok_s_a,tok_s_a_2,ratio,ci_lo,ci_hi\nm1,4,12.5,12.5,1,1,1\nm2,4,12.5,12.5,1,1,1\n" | cmp - aa
'

# With 4 or 3 items the resampled ratios take few values, and 10000 resamples put the percentiles on the
# same ones whatever the seed; 100 resamples (the fewest --boot takes) make the interval depend on it.
test_expect_success '--seed repeats the interval; --ci and --boot change it' '
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --seed 9 --boot 100 \
		--format csv >s1 2>/dev/null &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --seed 9 --boot 100 \
		--format csv >s2 2>/dev/null &&
	cmp s1 s2 &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --seed 3 --boot 100 \
		--format csv >s3 2>/dev/null &&
	! cmp -s s1 s3 &&
	# the default seed is 1: the same interval as out.csv, until --boot changes
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --seed 1 --format csv >d1 2>/dev/null &&
	cmp out.csv d1 &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --seed 1 --boot 100 \
		--format csv >b100 2>err100 &&
	! cmp -s out.csv b100 &&
	grep -qx "sweep: warning: --boot 100: fewer than 1000 resamples, the bounds move with --seed (marked)" err100 &&
	test_expect_code 2 "$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --boot 99 2>err &&
	grep -qx "sweep: --boot takes 100 to 10000000 resamples, not .99." err &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --ci 50 --boot 2000 \
		--format csv >s50 2>/dev/null &&
	# a 50 % interval is narrower than the 95 % one, in every row
	paste -d, out.csv s50 |
		awk -F, "NR > 1 && !(\$13 > \$6 && \$14 < \$7) { bad = 1 } END { exit bad || NR != 3 }" &&
	"$SWEEP" report c.db --rows model --metric tok_s --compare system=a/b --ci 50 >md50 2>/dev/null &&
	grep -q "a/b \[50% CI\]" md50
'

test_expect_success 'no rows: one comparison over everything pooled with --pool' '
	"$SWEEP" report c.db --metric tok_s --compare system=a/b --pool model --format csv >all 2>/dev/null &&
	head -1 all | grep -qx "n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi" &&
	# i0..i2 average over both models, i3 only in m1 for b: mean a = (11+12+13+14)/4, b = (6+7+8+9)/4
	grep -q "^4,12.5,7.5,1.66667," all
'

cat >"$T/par.yaml" <<'EOF'
sweep: par
command: [sh, -c, 'if [ {system} = fast ]; then echo "{\"t\": $((2 * {problem}))}"; else echo "{\"t\": {problem}}"; fi']
metrics: json
params:
  system: [fast, slow]
  problem: [1, 2, 3]
EOF

test_expect_success '--paired-by a parameter pairs cells by its value' '
	"$SWEEP" run par.yaml --db p.db 2>/dev/null &&
	"$SWEEP" report p.db --metric t --compare system=fast/slow --paired-by problem --format csv >pp &&
	printf "n,t_fast,t_slow,ratio,ci_lo,ci_hi\n3,4,2,2,2,2\n" | cmp - pp
'

test_expect_success 'a wrong arm, a compared row key or no per-item values are refused, exit 2' '
	test_expect_code 2 "$SWEEP" report c.db --rows model --metric tok_s --compare system=a/c 2>e1 &&
	grep -q "no ok results with system=c in sweep '\''cmp'\'' (system takes: a, b)" e1 &&
	test_expect_code 2 "$SWEEP" report c.db --rows system --metric tok_s --compare system=a/b 2>e2 &&
	grep -q "cannot also be a row key" e2 &&
	test_expect_code 2 "$SWEEP" report p.db --metric t --compare system=fast/slow 2>e3 &&
	grep -q "no per-item values of '\''t'\''" e3 && grep -q "paired-by" e3 &&
	test_expect_code 2 "$SWEEP" report c.db --metric tok_s --compare system=a 2>e4 &&
	grep -q "KEY=A/B" e4
'

# cav.sh CASE SYSTEM prints per-item tok_s, a pass at a time: one item (one), two (two), a 0 and a -1 in
# arm b (zero), an item of arm b in the first pass only (pass), and 30 items a hair apart (near: b 100, a
# 100 + 0.3 (7i mod 11 - 5)).
cat >"$T/cav.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")/cavstate; mkdir -p "$d"
f="$d/$1-$2"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
item() { echo "{\"item\": \"u$1\", \"tok_s\": $2}"; }
case $1-$2 in
one-a) item 1 10 ;;
one-b) item 1 5 ;;
two-a) item 1 10; item 2 12 ;;
two-b) item 1 5; item 2 5 ;;
zero-a|pass-a) for i in 0 1 2 3 4 5; do item $i $((10 + i)); done ;;
zero-b) item 0 0; item 1 -1; for i in 2 3 4 5; do item $i 5; done ;;
pass-b) for i in 0 1 2 3 4; do item $i 5; done; [ "$n" = 0 ] && item 5 5 ;;
near-a) i=0; while [ $i -lt 30 ]; do item $i "$(awk -v i=$i 'BEGIN { print 100 + 0.3 * ((7 * i) % 11 - 5) }')"; i=$((i + 1)); done ;;
near-b) i=0; while [ $i -lt 30 ]; do item $i 100; i=$((i + 1)); done ;;
esac
exit 0
EOF
cat >"$T/cav.yaml" <<EOF
sweep: cav
command: [sh, $T/cav.sh, "{case}", "{system}"]
metrics: json
params:
  case: [one, two, zero, pass, near]
  system: [a, b]
repeat: 2
EOF

test_expect_success 'what an interval cannot stand behind is warned of on stderr and marked in the table' '
	"$SWEEP" run cav.yaml --db cav.db 2>/dev/null &&
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --format csv >cav.csv 2>err &&
	grep -q "^one,1,10,5,2,,$" cav.csv &&
	grep -qx "sweep: warning: fewer than 5 pairs: case=one (n = 1); case=two (n = 2); an interval of so few is rough, of one missing (marked)" err &&
	grep -qx "sweep: warning: a value <= 0 in an arm: case=zero (u0 in system=b: 0); a ratio of means over values of both signs says little (marked)" err &&
	grep -qx "sweep: warning: units with unequal passes in the two arms: case=pass (1 unit, such as u5: 2 in a, 1 in b); each arm.s mean over its passes is paired all the same (marked)" err &&
	# zero: the ratio of means of 10..15 over 0, -1, 5, 5, 5, 5
	grep -q "^zero,6,12.5,3.16667,3.94737," cav.csv &&
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b >cav.md 2>/dev/null &&
	d=$(printf "\342\200\241") &&
	grep -Eq "^\| one +\| +1 \| .* \| 2\.0+$d +\|$" cav.md &&
	grep -Eq "^\| zero +\| +6 \| .*\]$d +\|$" cav.md && grep -Eq "^\| pass +\| +6 \| .*\]$d +\|$" cav.md &&
	grep -Eq "^\| near +\| +30 \| .*\] +\|$" cav.md &&
	grep -qx "$d an interval rests on fewer than 5 pairs; an arm holds a value <= 0; a unit has unequal passes in the two arms (see the warnings)" cav.md
'

test_expect_success 'printed bounds stay apart from each other and from 1 where the true ones are' '
	# near: 30 items a hair apart, the interval around 1; CSV has 6 digits, Markdown as many as it takes
	grep "^near," cav.csv >near.csv &&
	grep "^| near " cav.md >near.md &&
	python3 - <<-\EOF
	import re
	r = open("near.csv").read().strip().split(",")
	ratio, lo, hi = float(r[4]), float(r[5]), float(r[6])
	m = re.search(r"\| ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]", open("near.md").read())
	plo, phi = m.group(2), m.group(3)
	assert lo < 1 < hi, (lo, hi)            # the case the issue met: an interval that includes 1
	assert float(plo) < 1 < float(phi), (plo, phi)
	assert plo != phi and len(plo) == len(phi) and len(plo) > 4, (plo, phi)
	assert abs(float(plo) - lo) < 10 ** -(len(plo) - 2), (plo, lo)
	EOF
'

test_expect_success '--stat geomean: the geometric mean of the items'\'' ratios, its own interval; --interval bca' '
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --stat geomean --where "\"case\" = '\''near'\''" \
		--format csv >geo.csv 2>/dev/null &&
	python3 - <<-\EOF &&
	import csv, statistics
	r = next(csv.DictReader(open("geo.csv")))
	a = [100 + 0.3 * ((7 * i) % 11 - 5) for i in range(30)]
	want = statistics.geometric_mean([x / 100 for x in a])
	assert abs(float(r["ratio"]) / want - 1) < 1e-5, (r, want)
	assert abs(float(r["tok_s_a"]) / statistics.geometric_mean(a) - 1) < 1e-5, r
	assert float(r["ci_lo"]) < float(r["ratio"]) < float(r["ci_hi"]), r
	EOF
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --stat geomean --where "\"case\" = '\''near'\''" \
		>geo.md 2>/dev/null &&
	head -1 geo.md | grep -q "paired by item: geometric mean of the ratios of each item (n = 30 pairs a row; 95% percentile" &&
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --stat geomean 2>err >/dev/null &&
	grep -q "a value <= 0 in an arm: case=zero (u0 in system=b: 0); the ratios have no geometric mean" err &&
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --interval bca --where "\"case\" = '\''near'\''" \
		--format csv >bca.csv 2>/dev/null &&
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --interval bca --where "\"case\" = '\''near'\''" \
		>bca.md 2>/dev/null &&
	head -1 bca.md | grep -q "95% BCa bootstrap interval of 10000 resamples" &&
	grep "^near," cav.csv >pct.row && tail -1 bca.csv >bca.row &&
	cut -d, -f5 pct.row >pct.ratio && cut -d, -f5 bca.row | cmp - pct.ratio && ! cmp -s pct.row bca.row &&
	test_expect_code 2 "$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --stat median 2>err &&
	grep -qx "sweep: --stat median: --compare takes mean (the ratio of means) or geomean (the geometric mean of the per-unit ratios)" err &&
	test_expect_code 2 "$SWEEP" report cav.db --rows case --metric tok_s --interval bca 2>err &&
	grep -qx "sweep: --interval goes with --compare" err
'

test_expect_success 'the summary of a comparison summarises the ratio only' '
	"$SWEEP" report cav.db --rows case --metric tok_s --compare system=a/b --summary --format csv >cs.csv 2>/dev/null &&
	grep -q "^mean,,,,,[0-9.]*,,$" cs.csv && grep -q "^n,,,,,5,,$" cs.csv &&
	python3 "$ROOT/tests/summary_check.py" cs.csv >check && grep -qx "checked 7 summary cells" check
'

# The figure of the table: a row the table marks ‡ has the mark on its label, and the footnote is drawn.
test_expect_success 'plot --compare marks the rows the table marks, boxed, the footnote in the legend' '
	"$SWEEP" plot c.db --rows model --y tok_s --compare system=a/b --out g.svg >/dev/null 2>&1 &&
	grep -qx "set ytics ('\''m1 $(printf "\342\200\241")'\'' 1, '\''m2 $(printf "\342\200\241")'\'' 0)" g.gp &&
	grep -q "using 3:((\$1 == 1 || \$1 == 0) ? \$1 : NaN) with points pt 4 .* title '\''$(printf "\342\200\241") an interval rests on fewer than 5 pairs (see the warnings)'\''$" g.gp &&
	grep -q "<text>$(printf "\342\200\241") an interval rests on fewer than 5 pairs (see the warnings)</text>" g.svg
'
