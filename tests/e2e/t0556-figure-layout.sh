#!/bin/bash
# t0556-figure-layout: every figure kind at the default size (lines with and without bars, --errors ci,
# facets, a legend of many long names, --compare, --limit) keeps its plot area at least 60 % of the figure
# each way, its legend under the plot (never over data or the title, every entry inside its box) and x tick
# labels apart; checked on the SVG's geometry by tests/figure_geometry.py. A legend names only what is drawn.
. tests/e2e/lib.sh
export SWEEP

# 17 sizes from 1 KiB to 64 MiB, three systems, three passes whose values differ by the process id
cat >"$T/sz.yaml" <<'EOF'
sweep: sz
command: [sh, -c, 'echo "{\"gbs\": $(( ({bytes} / 1024) % 97 + $$ % 7 + 1 ))}"']
metrics: json
repeat: 3
params:
  bytes: [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304,
          8388608, 16777216, 33554432, 67108864]
  system: [a, b, c]
EOF

# one pass, ten series with long names
cat >"$T/ln.yaml" <<'EOF'
sweep: ln
command: [sh, -c, 'echo "{\"tok_s\": {batch}}"']
metrics: json
params:
  batch: [1, 2, 4, 8]
  system: [baseline-with-a-long-name-one, baseline-with-a-long-name-two, cache-with-a-long-name-three,
           cache-with-a-long-name-four, cache-with-a-long-name-five, cache-with-a-long-name-six,
           prefetch-with-a-long-name-seven, prefetch-with-a-long-name-eight, prefetch-with-a-long-name-nine,
           prefetch-with-a-long-name-ten]
EOF

# a series whose name needs two lines of the legend
cat >"$T/lt.yaml" <<'EOF'
sweep: lt
command: [sh, -c, 'echo "{\"tok_s\": {batch}}"']
metrics: json
params:
  batch: [1, 2]
  system: [a system whose name is long enough to need more than one line in the legend of a figure of default size,
           short]
EOF

# eight benchmarks with long names, as categories on the x axis
cat >"$T/it.yaml" <<'EOF'
sweep: it
command: [sh, -c, 'echo "{\"tok_s\": 5}"']
metrics: json
params:
  bench: [matrix-multiply-large, matrix-multiply-small, convolution-depthwise, convolution-grouped,
          attention-flash-long, attention-paged-short, layernorm-fused, softmax-online-long]
EOF

# python3 points.py SVG N: at least N places where the SVG draws a point marker (gnuplot's points, the legend's
# samples), each seen last (on top) as a filled circle (gnuplot pt 7, the SVG's gpPt6) in its colour, at a
# size that reads in print
cat >"$T/points.py" <<'EOF'
import re, sys
last = {}
for m in re.finditer(r"<use xlink:href='#gpPt(\d+)' transform='translate\(([\d.,]+)\) scale\(([\d.]+)\)' "
                     r"color='([^']*)'", open(sys.argv[1]).read()):
    last[m.group(2)] = m.groups()
assert len(last) >= int(sys.argv[2]), len(last)
for pt, at, scale, colour in last.values():
    assert pt == "6" and colour.startswith("rgb(") and float(scale) >= 4.5, (at, pt, scale, colour)
EOF

# layout SVG: the geometry check, its measures kept in SVG.geo
layout() {
	python3 "$ROOT/tests/figure_geometry.py" "$1" >"$1.geo" || { cat "$1.geo" >&2; return 1; }
}

test_expect_success 'setup' '
	"$SWEEP" run sz.yaml --db sz.db 2>/dev/null &&
	"$SWEEP" run ln.yaml --db ln.db 2>/dev/null &&
	"$SWEEP" run it.yaml --db it.db 2>/dev/null &&
	"$SWEEP" run lt.yaml --db lt.db 2>/dev/null &&
	"$ROOT/examples/decode-grid.sh" "$T/dg.db" >/dev/null 2>&1 &&
	"$ROOT/examples/roofline.sh" "$T/rl.db" >/dev/null 2>&1 &&
	test "$(sql sz.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 153 &&
	test "$(sql ln.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 40 &&
	cp sz.db ci.db &&
	if ! sql ci.db "SELECT ci_lo FROM results LIMIT 1" >/dev/null 2>&1; then
		sql ci.db "ALTER TABLE results ADD COLUMN ci_lo REAL; ALTER TABLE results ADD COLUMN ci_hi REAL"
	fi &&
	sql ci.db "UPDATE results SET ci_lo = median * 0.9, ci_hi = median * 1.25"
'

test_expect_success 'lines with bars, on a log axis of 17 sizes: room kept, ticks thinned apart' '
	"$SWEEP" plot sz.db --x bytes --y gbs --series system --logx --out l.svg >/dev/null &&
	layout l.svg && grep -qx "panel 1: area [6-9][0-9]% x [6-9][0-9]% *" l.svg.geo &&
	# the ticks kept are fewer than the sizes, the first and last among them
	n=$(grep "^set xtics" l.gp | grep -o "KiB\|MiB" | wc -l) && test "$n" -ge 4 && test "$n" -lt 17 &&
	grep "^set xtics" l.gp | grep -q "('\''1 KiB'\'' 1024, .*'\''64 MiB'\'' 67108864)$" &&
	"$SWEEP" plot sz.db --x bytes --y gbs --series system --out lin.svg >/dev/null && layout lin.svg
'

test_expect_success 'lines without bars, --errors ci, facets: room kept, legends under their plots' '
	"$SWEEP" plot sz.db --x bytes --y gbs --series system --logx --errors none --out n.svg >/dev/null &&
	layout n.svg &&
	"$SWEEP" plot ci.db --x bytes --y gbs --series system --logx --errors ci --out ci.svg >/dev/null &&
	layout ci.svg &&
	"$SWEEP" plot sz.db --x bytes --y gbs --facet system --logx --out f.svg >/dev/null &&
	layout f.svg && test "$(grep -c "^panel [1-3]: area" f.svg.geo)" = 3
'

test_expect_success 'a legend of ten long names, or of one too long for a line, stays under the plot' '
	"$SWEEP" plot ln.db --x batch --y tok_s --series system --out ln.svg >/dev/null &&
	layout ln.svg && test "$(grep -c "system=.*-with-a-long-name-" ln.svg)" -ge 10 &&
	# a name too long for a line is wrapped, and the rows of the legend make room for its lines
	"$SWEEP" plot lt.db --x batch --y tok_s --series system --out lt.svg >/dev/null &&
	grep -q "title '\''system=a system whose name is long enough to need more than one line in the'\''.\"\\\\n\".'\''legend of" lt.gp &&
	grep -q "samplen 2 spacing 2 " lt.gp && layout lt.svg
'

test_expect_success 'long categories on the x axis are turned upright, the figure taller, the plot kept' '
	"$SWEEP" plot it.db --x bench --y tok_s --out it.svg >/dev/null &&
	grep -q "^set xtics rotate by 90 right$" it.gp && layout it.svg &&
	grep -q "^set terminal svg noenhanced size 900,[6-9][0-9][0-9] " it.gp &&
	# short ones stay flat
	"$SWEEP" plot it.db --x bench --y tok_s --where "bench LIKE '\''conv%'\''" --out it2.svg >/dev/null &&
	! grep -q "rotate" it2.gp && layout it2.svg
'

test_expect_success '--compare and --limit: the legend under the plot, below the title; one row named' '
	"$SWEEP" plot dg.db --rows host,model,budget --y tok_s --compare system=cache/baseline --out c.svg >/dev/null &&
	layout c.svg &&
	"$SWEEP" plot dg.db --y tok_s --compare system=cache/baseline --pool host,model,budget --out c1.svg >/dev/null &&
	layout c1.svg && grep -q "^set ytics ('\''all results'\'' 0)$" c1.gp && grep -q ">all results<" c1.svg &&
	"$SWEEP" plot rl.db --rows host,model --y tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--summary=label.class --out r.svg >/dev/null 2>&1 &&
	layout r.svg &&
	# a share is read against zero, unless on a log axis
	grep -q "^set xrange \[0:" r.gp &&
	"$SWEEP" plot rl.db --rows host,model --y tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" --logy \
		--out rlog.svg >/dev/null 2>&1 &&
	grep -q "^set logscale x$" rlog.gp && grep -q "^set xrange \[0\.[0-9]*:" rlog.gp && layout rlog.svg
'

test_expect_success 'a legend names what is drawn: no bars without them, the interval when there are' '
	"$SWEEP" plot ln.db --x batch --y tok_s --where "system LIKE '\''cache%'\''" --series system --out one.svg >/dev/null &&
	! grep -q "bars\|yerrorbars" one.gp && ! grep -q "bars:" one.svg &&
	grep -q ">bars: min-max over passes<" l.svg &&
	test "$(grep -o "with yerrorbars lt" l.gp | wc -l)" = 3 &&
	grep -q ">bars: 95% interval of each result.s median, median over passes<" ci.svg &&
	! grep -q "bars" n.gp &&
	# 51 points (some may coincide) and 3 legend samples
	grep -q "linespoints pt 7 ps 1.2 lw 2" l.gp &&
	python3 "$T/points.py" l.svg 30
'
