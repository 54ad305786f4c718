#!/bin/bash
# t0550-plot: `sweep plot` writes data and a gnuplot script beside the picture and renders PNG, SVG and PDF;
# axes are labelled with units, series and facets are named; without gnuplot it says how to render.
. tests/e2e/lib.sh

cat >"$T/pl.yaml" <<'EOF'
sweep: pl
command: [sh, -c, 'if [ {system} = fast ]; then f=3; else f=2; fi; echo "{\"tok_s\": $((f * {batch})), \"mode\": 1}"']
metrics: json
params:
  model: [small, large]
  system: [fast, slow]
  batch: [1, 2, 4, 8, 16]
EOF

test_expect_success 'setup' '
	"$SWEEP" run pl.yaml --db p.db 2>/dev/null &&
	test "$(sql p.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 20
'

test_expect_success 'png: data, script and picture; labels with units, one line per series, a panel per facet' '
	mkdir -p fig && "$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --logx \
		--out fig/tok.png >out &&
	grep -q "^wrote fig/tok.png (data fig/tok.dat, script fig/tok.gp)$" out &&
	test "$(head -c 8 fig/tok.png | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a &&
	test "$(stat -c %s fig/tok.png)" -gt 10000 &&
	grep -q "^set xlabel '\''batch'\''$" fig/tok.gp &&
	grep -q "^set ylabel '\''tok_s (tokens/s), median over passes'\''$" fig/tok.gp &&
	grep -q "^set logscale x 2$" fig/tok.gp &&
	grep -q "^set multiplot layout 1,2" fig/tok.gp &&
	grep -q "^set title '\''model=large'\''$" fig/tok.gp &&
	grep -q "title '\''system=fast'\''" fig/tok.gp && grep -q "title '\''system=slow'\''" fig/tok.gp &&
	# one pass, no pooling: every interval is its point, no bar is drawn and the legend names none
	! grep -q "yerrorbars\|bars:" fig/tok.gp &&
	# 4 blocks of 5 points: the fast series doubles with batch (3, 6, 12, 24, 48)
	test "$(grep -c "^[0-9]" fig/tok.dat)" = 20 &&
	grep -A5 "^# model=large fast" fig/tok.dat | grep -q "^16	48	16	1	48	48$"
'

test_expect_success 'svg holds the axis labels, panel titles and legend as text' '
	"$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --out tok.svg >/dev/null &&
	grep -q "<svg" tok.svg && grep -q "tok_s (tokens/s), median over passes" tok.svg &&
	grep -q ">batch<" tok.svg && grep -q "model=small" tok.svg && grep -q ">system=fast<" tok.svg
'

test_expect_success 'pdf, a title and axis labels of ones own' '
	"$SWEEP" plot p.db --x batch --y tok_s --where "model = '\''small'\''" --pool system --title "decode" \
		--xlabel "batch (sequences)" --ylabel "tokens per second" --logy --out tok.pdf >/dev/null &&
	test "$(head -c 4 tok.pdf)" = "%PDF" &&
	grep -q "^set title '\''decode'\''$" tok.gp && grep -q "^set ylabel '\''tokens per second'\''$" tok.gp &&
	grep -q "^set logscale y$" tok.gp && test "$(grep -c "^[0-9]" tok.dat)" = 5
'

test_expect_success 'text on the x axis becomes categories' '
	"$SWEEP" plot p.db --x model --y tok_s --series system --pool batch --out cat.png >/dev/null &&
	grep -q "using 1:2:xtic(3)" cat.gp &&
	# one point per model, in the spec'\''s order: the median over the 5 batches of each system (3 or 2 times
	# 1, 2, 4, 8, 16), with their min and max, drawn as bars and named so
	printf "0\t12\tsmall\t5\t3\t48\n1\t12\tlarge\t5\t3\t48\n0\t8\tsmall\t5\t2\t32\n1\t8\tlarge\t5\t2\t32\n" >want &&
	grep -q "keyentry with yerrorbars .* title '\''bars: min-max over passes and batch'\''" cat.gp &&
	grep "^[0-9]" cat.dat | cmp want - &&
	grep -q "^# fast$" cat.dat && grep -q "^# slow$" cat.dat
'

test_expect_success 'without gnuplot: the data and script are written, with how to render them' '
	mkdir -p nobin && ln -s "$(command -v sh)" nobin/sh &&
	PATH="$T/nobin" "$SWEEP" plot p.db --x batch --y tok_s --pool model,system --out no.svg >out &&
	grep -q "gnuplot is not installed: wrote no.dat and no.gp; render them with: gnuplot no.gp" out &&
	test -s no.dat && test -s no.gp && test ! -e no.svg &&
	gnuplot no.gp && grep -q "<svg" no.svg
'

test_expect_success 'an unknown extension, key or metric is refused' '
	test_expect_code 2 "$SWEEP" plot p.db --x batch --y tok_s --out a.jpg 2>e1 &&
	grep -q "^sweep: --out '\''a.jpg'\'': the picture is made from the name'\''s extension: .png, .svg or .pdf$" e1 &&
	test_expect_code 2 "$SWEEP" plot p.db --x bach --y tok_s --out a.png 2>e2 &&
	grep -q "unknown key '\''bach'\'' (did you mean '\''batch'\''?)" e2 &&
	test_expect_code 2 "$SWEEP" plot p.db --x batch --y toks --out a.png 2>e3 &&
	grep -q "no metric '\''toks'\'' in the results of sweep '\''pl'\'' (did you mean '\''tok_s'\''?" e3 &&
	test_expect_code 2 "$SWEEP" plot p.db --x batch --out a.png 2>e4 &&
	grep -q "plot needs --x KEY, --y METRIC and --out FILE" e4 &&
	# nothing is written when the plot is refused: no picture, data or script
	test ! -e a.jpg && test ! -e a.png && test ! -e a.dat && test ! -e a.gp
'
