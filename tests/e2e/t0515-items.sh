#!/bin/bash
# t0515-items: per-benchmark tables: `item` as a row or column key shows each item's value (the statistic
# over the results of a group), with parameters as keys, pivoted, in every format, with --compare and in a
# plot; refused with our own message where the results have no items.
. tests/e2e/lib.sh

# items.sh SYSTEM MODEL prints items i0..i3 with tok_s = B + i + o: B is 10 for system a and 5 for b, plus
# 100 for model m2; o is 0, 2 and 10 on the 1st, 2nd and 3rd call for (SYSTEM, MODEL), whatever order the
# passes run in. System b of model m2 has no item i3. So over the 3 passes an item's median is B + i + 2,
# its mean B + i + 4.
cat >"$T/items.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")/state; mkdir -p "$d"
f="$d/$1-$2"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
case $n in 0) o=0 ;; 1) o=2 ;; *) o=10 ;; esac
if [ "$1" = a ]; then b=10; else b=5; fi
[ "$2" = m2 ] && b=$((b + 100))
for i in 0 1 2 3; do
	[ "$1$2$i" = bm23 ] && continue
	echo "{\"item\": \"i$i\", \"tok_s\": $((b + i + o))}"
done
EOF
cat >"$T/it.yaml" <<EOF
sweep: it
command: [sh, $T/items.sh, "{system}", "{model}"]
metrics: json
params:
  model: [m1, m2]
  system: [a, b]
repeat: 3
EOF
cat >"$T/flat.yaml" <<'EOF'
sweep: flat
command: [sh, -c, 'echo "{\"t\": {x}}"']
metrics: json
params:
  x: [1, 2]
EOF
# A parameter named item, and items named k.
cat >"$T/pitem.yaml" <<'EOF'
sweep: pitem
command: [sh, -c, 'echo "{\"item\": \"k\", \"t\": {x}}"']
metrics: json
params:
  item: [p, q]
  x: [5]
EOF

test_expect_success 'setup: 2 models x 2 systems, 3 passes, 4 items a result (3 for b on m2)' '
	"$SWEEP" run it.yaml --db i.db 2>err && grep -q "12 cells ok" err &&
	test "$(sql i.db "SELECT count(*) FROM items")" = 45 &&
	"$SWEEP" run flat.yaml --db f.db 2>/dev/null &&
	"$SWEEP" run pitem.yaml --db pi.db 2>/dev/null
'

test_expect_success '--rows item: one row per item, its median over the passes, n the results' '
	"$SWEEP" report i.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''a'\''" \
		--format csv >one.csv 2>err &&
	printf "item,n,tok_s\ni0,3,12\ni1,3,13\ni2,3,14\ni3,3,15\n" | cmp - one.csv &&
	test ! -s err &&
	"$SWEEP" report i.db --rows item --metric tok_s --stat mean --where "model = '\''m2'\'' AND system = '\''b'\''" \
		--format csv >mean.csv &&
	printf "item,n,tok_s\ni0,3,109\ni1,3,110\ni2,3,111\n" | cmp - mean.csv &&
	"$SWEEP" report i.db --rows item --metric tok_s --stat max --where "model = '\''m1'\'' AND system = '\''b'\''" \
		--format csv >max.csv &&
	printf "item,n,tok_s\ni0,3,15\ni1,3,16\ni2,3,17\ni3,3,18\n" | cmp - max.csv
'

test_expect_success 'item with parameters as keys: the parameters that vary join it, with a note' '
	"$SWEEP" report i.db --rows item --metric tok_s --format csv >all.csv 2>err &&
	grep -q "^note: rows also split by model,system" err &&
	head -1 all.csv | grep -qx "item,model,system,n,tok_s" &&
	test "$(wc -l <all.csv)" = 16 &&
	grep -qx "i0,m1,a,3,12" all.csv && grep -qx "i0,m1,b,3,7" all.csv && grep -qx "i3,m2,a,3,115" all.csv &&
	! grep -q "^i3,m2,b" all.csv &&
	"$SWEEP" report i.db --rows system,item --pool model --metric tok_s --format csv >pool.csv 2>/dev/null &&
	# over both models and 3 passes: i0 of system a holds 10, 12, 20, 110, 112, 120: median 65
	grep -qx "a,i0,6,65" pool.csv && grep -qx "b,i3,3,10" pool.csv
'

test_expect_success 'pivots: --cols item and --cols with --rows item; a missing item is unknown' '
	"$SWEEP" report i.db --rows model,system --cols item --metric tok_s --format csv >pc.csv &&
	cat >want <<-\EOF &&
	model,system,item=i0,item=i1,item=i2,item=i3
	m1,a,12,13,14,15
	m1,b,7,8,9,10
	m2,a,112,113,114,115
	m2,b,107,108,109,
	EOF
	cmp want pc.csv &&
	"$SWEEP" report i.db --rows model,item --cols system --metric tok_s --format json >pr.json &&
	python3 -c "
import json
d = json.load(open(\"pr.json\"))
got = {(r[\"model\"], r[\"item\"]): (r[\"system=a\"], r[\"system=b\"]) for r in d}
assert len(d) == 8 and got[(\"m1\", \"i0\")] == (12, 7) and got[(\"m2\", \"i2\")] == (114, 109), got
assert got[(\"m2\", \"i3\")] == (115, None), got
"
'

test_expect_success 'every format shows the same per-item values' '
	for f in md text latex; do
		"$SWEEP" report i.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''b'\''" \
			--format $f >one.$f || return 1
	done &&
	grep -Eq "^\| i0 +\| +3 \| +7.00 \|$" one.md && grep -Eq "^\| i3 +\| +3 \| 10.00 \|$" one.md &&
	grep -Eq "^i2 +3 + 9.00$" one.text &&
	grep -q "^i1 & 3 & 8.00 \\\\\\\\$" one.latex &&
	"$SWEEP" report i.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''b'\''" \
		--format json >one.json &&
	python3 -c "
import json
d = json.load(open(\"one.json\"))
assert [(r[\"item\"], r[\"n\"], r[\"tok_s\"]) for r in d] == [(\"i0\", 3, 7), (\"i1\", 3, 8), (\"i2\", 3, 9), (\"i3\", 3, 10)], d
"
'

# --compare averages each unit over the passes (mean: B + i + 4): for model m1, item i has 14 + i in a and
# 9 + i in b. One pair a row: no interval (docs/report-statistics.md), the bounds empty.
test_expect_success '--compare with --rows item: one pair a row, the ratio of that item' '
	"$SWEEP" report i.db --rows item --metric tok_s --compare system=a/b --where "model = '\''m1'\''" \
		--format csv >ci.csv 2>err &&
	cat >want <<-\EOF &&
	item,n,tok_s_a,tok_s_b,ratio,ci_lo,ci_hi
	i0,1,14,9,1.55556,,
	i1,1,15,10,1.5,,
	i2,1,16,11,1.45455,,
	i3,1,17,12,1.41667,,
	EOF
	cmp want ci.csv &&
	# paired by model instead: i0 pairs m1 (14 / 9) and m2 (114 / 109); i3 has no m2 in b
	"$SWEEP" report i.db --rows item --metric tok_s --compare system=a/b --paired-by model --format csv \
		>cm.csv 2>err &&
	grep -qx "i0,2,64,59,1.08475,1.04587,1.55556" cm.csv && grep -qx "i3,1,17,12,1.41667,," cm.csv &&
	grep -q "note: item=i3: 1 unit without a partner, left out of the ratio: m2 (only system=a)" err
'

test_expect_success '--summary=item and a plot over items' '
	"$SWEEP" report i.db --rows model,system --metric tok_s --summary=item --format csv >sum.csv &&
	# the rows of item i0 hold 12, 7, 112 and 107; those of i3 15, 10 and 115
	grep -qx "stat,model,system,item,n,tok_s" sum.csv && grep -qx ",m2,b,i2,3,109" sum.csv &&
	grep -qx "median,,,i0,,59.5" sum.csv && grep -qx "min,,,i0,,7" sum.csv &&
	grep -qx "mean,,,i3,,46.6667" sum.csv && grep -qx "n,,,i3,,3" sum.csv &&
	"$SWEEP" plot i.db --x item --y tok_s --series system --where "model = '\''m1'\''" --out p.svg >/dev/null &&
	# each point: x, its median, the item, n, and the min and max over the passes (o is 0, 2, 10)
	for b in 10 5; do
		for i in 0 1 2 3; do
			printf "%d\t%d\ti%d\t3\t%d\t%d\n" $i $((b + i + 2)) $i $((b + i)) $((b + i + 10)) || return 1
		done || return 1
	done >want &&
	grep "^[0-9]" p.dat | cmp want -
'

test_expect_success 'a result short of its precision counts once, not once per item' '
	sql i.db "VACUUM INTO '\''n.db'\''" &&
	sql n.db "UPDATE results SET precise = 0 WHERE id = (SELECT min(r.id) FROM results r JOIN cells c
		ON c.id = r.cell WHERE json_extract(c.params, '\''$.model'\'') = '\''m1'\''
		AND json_extract(c.params, '\''$.system'\'') = '\''a'\'')" &&
	"$SWEEP" report n.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''a'\''" >nm.md &&
	test "$(grep -c "^| i[0-3] .*†" nm.md)" = 4 &&
	grep -qx "† holds medians not known to the precision asked (1 result); --strict leaves them out" nm.md &&
	"$SWEEP" report n.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''a'\''" \
		--format csv >nm.csv &&
	head -1 nm.csv | grep -qx "item,n,tok_s,precise" && test "$(grep -c ",3,1[2-5],0$" nm.csv)" = 4 &&
	"$SWEEP" report n.db --rows item --metric tok_s --where "model = '\''m1'\'' AND system = '\''a'\''" --strict \
		--format csv >st.csv 2>err &&
	grep -qx "note: --strict left out 1 of 3 results: its median not known to the precision asked" err &&
	test "$(grep -c "^i[0-3],2," st.csv)" = 4
'

test_expect_success 'a parameter named item keeps its name: item and param.item are the parameter' '
	"$SWEEP" report pi.db --rows item --metric t --format csv >pi.csv &&
	printf "item,n,t\np,1,5\nq,1,5\n" | cmp - pi.csv &&
	"$SWEEP" report pi.db --rows param.item --metric t --format csv >pp.csv &&
	printf "param.item,n,t\np,1,5\nq,1,5\n" | cmp - pp.csv
'

test_expect_success 'no items, the noise, a score or item compared: refused with our own message' '
	test_expect_code 2 "$SWEEP" report f.db --rows item --metric t 2>e1 &&
	grep -q "^sweep: no per-item values of metric '\''t'\'' in sweep '\''flat'\''" e1 &&
	test_expect_code 2 "$SWEEP" report i.db --rows item --metric noise 2>e2 &&
	grep -q "^sweep: --metric noise is a figure of a result: it has no per-item values" e2 &&
	test_expect_code 2 "$SWEEP" report i.db --rows item --metric precision 2>e2 &&
	grep -q "^sweep: --metric precision is a figure of a result: it has no per-item values" e2 &&
	test_expect_code 2 "$SWEEP" report i.db --rows item --score 2>e3 &&
	grep -q "^sweep: --score scores the predictions of cells, which have no items: item is no key" e3 &&
	test_expect_code 2 "$SWEEP" report i.db --metric tok_s --compare item=i0/i1 2>e4 &&
	grep -q "^sweep: --compare item=i0/i1: items are what is paired" e4
'
