#!/bin/bash
# t0557-docs-figures: the pictures in docs/figures/ (`make figures`: every kind of figure and the page of the
# README's tour) are what the current code draws from the same data: tools/figures.sh draws them again and
# their data and scripts must be the ones beside the pictures (PNG bytes depend on fonts: they are not
# compared). Each, drawn as SVG from its own data and script, keeps the layout t0556 checks; the README
# shows two of them.
. tests/e2e/lib.sh
export SWEEP

figures="lines lines-noerr facets compare limit"

# layout SVG: the geometry check, its measures kept in SVG.geo (and shown when it fails)
layout() {
	python3 "$ROOT/tests/figure_geometry.py" "$1" >"$1.geo" || { cat "$1.geo" >&2; return 1; }
}

test_expect_success 'docs/figures holds every kind of figure and the page, each with its data' '
	for f in $figures; do
		test -s "$ROOT/docs/figures/$f.png" && test -s "$ROOT/docs/figures/$f.dat" &&
			test -s "$ROOT/docs/figures/$f.gp" || return 1
	done &&
	test -s "$ROOT/docs/figures/page.png" && test -s "$ROOT/docs/figures/page.dat" &&
	test "$(head -c 8 "$ROOT/docs/figures/page.png" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a
'

# a failure here: docs/figures is stale, `make figures` draws it again
test_expect_success 'they are what the code draws now: the same data, the same scripts' '
	"$ROOT/tools/figures.sh" "$T/fig" >out &&
	for f in $figures; do
		cmp "$ROOT/docs/figures/$f.dat" fig/$f.dat && cmp "$ROOT/docs/figures/$f.gp" fig/$f.gp || return 1
	done &&
	cmp "$ROOT/docs/figures/page.dat" fig/page.dat &&
	# the page draws the rows of the figure of the same comparison
	grep "^[0-9]" fig/compare.dat >rows && test "$(wc -l <rows)" = 6 && grep "^[0-9]" fig/page.dat | cmp rows -
'

test_expect_success 'each, drawn as SVG from its data and script, keeps its plot area and its legend apart' '
	mkdir svg && cp "$ROOT"/docs/figures/*.dat "$ROOT"/docs/figures/*.gp svg/ &&
	for f in $figures; do
		sed -i "s/^set terminal pngcairo noenhanced size \([0-9]*\),\([0-9]*\) font .*/set terminal svg noenhanced size \1,\2 dynamic font '\''Sans,11'\''/; s/^set output '\''$f.png'\''/set output '\''$f.svg'\''/" svg/$f.gp &&
		grep -q "^set output '\''$f.svg'\''$" svg/$f.gp &&
		(cd svg && gnuplot $f.gp) && layout svg/$f.svg || return 1
	done
'

test_expect_success 'the README shows two of them' '
	grep -q "^!\[.*\](docs/figures/compare.png)$" "$ROOT/README.md" &&
	grep -q "^!\[.*\](docs/figures/page.png)$" "$ROOT/README.md"
'
