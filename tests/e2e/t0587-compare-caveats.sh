#!/bin/bash
# t0587-compare-caveats: sweep compare warns of what report --compare warns of, on stderr and as a mark ‡
# on the ratio with its footnote in every format that prints marks: fewer than 5 pairs, fewer than 1000
# resamples, a value <= 0, units with unequal passes (one pass a side: t0585).
. tests/e2e/lib.sh

# items.sh N prints items i0..i5 (i0..i2 for n=2) with t = 10 + i; with ZERO in the file zero, item i5 has
# t = 0.
cat >"$T/items.sh" <<'EOF'
#!/bin/sh
last=5; [ "$1" = 2 ] && last=2
for i in $(seq 0 $last); do
	v=$((10 + i)); [ "$i" = 5 ] && [ -e "$(dirname "$0")/zero" ] && v=0
	echo "{\"item\": \"i$i\", \"t\": $v}"
done
EOF
spec() {
	printf 'sweep: cav\ncommand: [sh, %s/items.sh, "{n}"]\nmetrics: json\nparams:\n  n: [1, 2]\nrepeat: %s\n' \
		"$T" "$1"
}
spec 2 >"$T/two.yaml"
spec 3 >"$T/three.yaml"
dagger=$(printf "\342\200\241")

test_expect_success 'setup: base 2 passes, new 3 passes with item i5 at 0; 6 items for n=1, 3 for n=2' '
	"$SWEEP" run two.yaml --db base.db 2>/dev/null && touch zero &&
	"$SWEEP" run three.yaml --db new.db 2>/dev/null &&
	test "$(sql new.db "SELECT count(*) FROM items WHERE value = 0")" = 3
'

test_expect_success 'each caveat: a warning naming its rows, the ratio marked, the footnote naming it' '
	"$SWEEP" compare base.db new.db --metric t --better lower --boot 500 >md 2>err &&
	grep -qx "sweep: warning: fewer than 5 pairs: n=2 host=[^ ]* (n = 3); an interval of so few is rough, of one missing (marked)" err &&
	grep -qx "sweep: warning: --boot 500: fewer than 1000 resamples, the bounds move with --seed (marked)" err &&
	grep -qx "sweep: warning: a value <= 0: n=1 host=[^ ]* (i5 in new: 0); a ratio of means over values of both signs says little (marked)" err &&
	grep -qx "sweep: warning: units with unequal passes in base and new: n=1 host=[^ ]* (6 units, such as i0: 2 in base, 3 in new); n=2 host=[^ ]* (3 units, such as i0: 2 in base, 3 in new); each side.s mean over its passes is paired all the same (marked)" err &&
	test "$(grep -c "^| .*\\]$dagger |" md)" = 2 &&
	grep -qx "$dagger an interval rests on fewer than 5 pairs; fewer than 1000 resamples; a side holds a value <= 0; a unit has unequal passes in base and new (see the warnings)" md
'

test_expect_success 'text and LaTeX carry the mark and the footnote; CSV and JSON a caveat column of it' '
	"$SWEEP" compare base.db new.db --metric t --better lower --format text >t 2>/dev/null &&
	test "$(grep -c "\\]$dagger " t)" = 2 && grep -q "^$dagger an interval rests on fewer than 5 pairs" t &&
	"$SWEEP" compare base.db new.db --metric t --better lower --format latex >tex 2>/dev/null &&
	test "$(grep -c "\\\\rlap{\\$^\\\\ddagger\\$}" tex)" = 2 &&
	grep -q "ddagger.* an interval rests on fewer than 5 pairs" tex &&
	"$SWEEP" compare base.db new.db --metric t --better lower --format csv >c 2>err &&
	grep -q "^sweep: warning: fewer than 5 pairs" err &&
	head -1 c | grep -qx "n,host,pairs,t_base,t_new,ratio,ci_lo,ci_hi,verdict,caveat" &&
	test "$(sed 1d c | cut -d, -f1,10)" = "1,a value <= 0 in new; unequal passes in base and new
2,fewer than 5 pairs (3); unequal passes in base and new" &&
	"$SWEEP" compare base.db new.db --metric t --better lower --format json >j 2>/dev/null &&
	test "$(python3 -c "import json; print([r[\"caveat\"] for r in json.load(open(\"j\"))][1])")" = \
		"fewer than 5 pairs (3); unequal passes in base and new"
'

# Without i5 at 0, with as many passes and 1000 resamples, only the few pairs of n=2 stay.
test_expect_success 'what is not so is not said: the same passes, positive values, 1000 resamples' '
	"$SWEEP" compare base.db base.db --metric t --better lower --boot 1000 >same 2>err &&
	test "$(grep -c "warning" err)" = 1 && grep -q "fewer than 5 pairs: n=2 host=[^ ]* (n = 3);" err &&
	test "$(grep -c "$dagger" same)" = 2
'
