#!/bin/bash
# t0555-figures: every plotted point carries its interval (the spread over passes, a percentile range, the
# median's interval where results keep one); --compare and --limit as figures; axes in binary prefixes, SI
# and time units. Figures are checked by value: each data file holds the numbers its table prints.
. tests/e2e/lib.sh
export SWEEP

# three passes whose values differ by the process id: a spread to draw
cat >"$T/pl.yaml" <<'EOF'
sweep: pl
command: [sh, -c, 'if [ {system} = fast ]; then f=3; else f=2; fi; echo "{\"tok_s\": $((f * {batch} + $$ % 5))}"']
metrics: json
repeat: 3
params:
  model: [small, large]
  system: [fast, slow]
  batch: [1, 2, 4, 16384]
EOF

cat >"$T/cp.yaml" <<'EOF'
sweep: cp
kernel: cpu.copy
params: {bytes: [64K, 1M, 2M]}
timing: {max_samples: 30, min_time: 0, max_noise: 1, timeout: 5}
EOF

# dat_rows DAT: "facet,series,x,COLUMN" per point of a plot's data file (COLUMN 2 = y, 5 = low, 6 = high)
dat_rows() {
	awk -F'\t' -v c="$2" '/^# [^\t]*$/ { split(substr($0, 3), h, " "); sub(/^[^=]*=/, "", h[1]); f = h[1]; s = h[2]; next }
		/^[0-9]/ { print f "," s "," $3 "," $c }' "$1" | sort
}

test_expect_success 'setup' '
	"$SWEEP" run pl.yaml --db p.db 2>/dev/null &&
	"$SWEEP" run cp.yaml --db c.db 2>/dev/null &&
	test "$(sql p.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 48 &&
	test "$(sql c.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 3
'

for ext in png svg pdf; do
test_expect_success "$ext: each point its median with the min-max over passes, the numbers the tables print" '
	"$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --logx --out f.'$ext' >out &&
	test -s f.'$ext' &&
	grep -q "keyentry with yerrorbars .* title '\''bars: min-max over passes'\''$" f.gp &&
	test "$(grep -o "with yerrorbars lt" f.gp | wc -l)" = 4 &&
	for s in median:2 min:5 max:6; do
		"$SWEEP" report p.db --rows model,system,batch --metric tok_s --stat ${s%:*} --format csv |
			awk -F, "NR > 1 { print \$1 \",\" \$2 \",\" \$3 \",\" \$5 }" | sort >want.${s%:*} &&
		dat_rows f.dat ${s#*:} >got.${s%:*} &&
		test "$(wc -l <got.${s%:*})" = 16 && cmp want.${s%:*} got.${s%:*} || return 1
	done &&
	# the spread is real: some point has low < y < high
	awk -F"\t" "/^[0-9]/ && \$5 < \$2 && \$2 < \$6 { n++ } END { exit !n }" f.dat
'
done

test_expect_success '--spread 50: the quartiles, named; --errors none: no bars' '
	"$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --spread 50 --out q.svg >/dev/null &&
	grep -q "title '\''bars: 25-75 percentile over passes'\''" q.gp &&
	"$SWEEP" sql p.db "SELECT k || '\'','\'' || quantile(v, 0.25) FROM (SELECT json_extract(params, '\''$.model'\'')
		|| '\'','\'' || json_extract(params, '\''$.system'\'') || '\'','\'' || json_extract(params, '\''$.batch'\'') AS k,
		m.value AS v FROM v_results r JOIN metrics m ON m.result = r.id AND m.name = '\''tok_s'\'') GROUP BY k" --csv |
		tail -n +2 | tr -d "\"" | sort >want &&
	dat_rows q.dat 5 | awk -F, "{ printf \"%s,%s,%s,%.6g\n\", \$1, \$2, \$3, \$4 }" >got &&
	awk -F, "{ printf \"%s,%s,%s,%.6g\n\", \$1, \$2, \$3, \$4 }" want | sort | cmp - got &&
	"$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --errors none --out n.svg >/dev/null &&
	! grep -q "yerrorbars\|bars:" n.gp &&
	test "$(awk -F"\t" "/^[0-9]/ && \$5 \$6 != \"\"" n.dat | wc -l)" = 0
'

test_expect_success 'axes: sizes in binary prefixes on the grid values, counts in SI, seconds in ms or us' '
	"$SWEEP" plot c.db --x bytes --y seconds --logx --out b.svg >/dev/null &&
	grep -q "^set xtics ('\''64 KiB'\'' 65536, '\''1 MiB'\'' 1048576, '\''2 MiB'\'' 2097152)$" b.gp &&
	grep -Eq "^set ylabel '\''seconds \((ms|µs)\), median over passes'\''$" b.gp &&
	grep -Eq "using 1:\(\\\$2\*(1000|1e\+06)\)" b.gp &&
	grep -q ">64 KiB<" b.svg && grep -q ">2 MiB<" b.svg &&
	"$SWEEP" plot p.db --x batch --y tok_s --series system --facet model --logx --out s.svg >/dev/null &&
	grep -q "^set xtics ('\''1'\'' 1, '\''2'\'' 2, '\''4'\'' 4, '\''16.4k'\'' 16384)$" s.gp
'

test_expect_success '--errors ci: the median interval results keep, in the unit of the metric' '
	cp c.db ci.db &&
	# a database of a schema without the interval is told so; one with it is given known bounds
	if ! sql ci.db "SELECT ci_lo FROM results LIMIT 1" >/dev/null 2>&1; then
		test_expect_code 2 "$SWEEP" plot c.db --x bytes --y gbs --errors ci --out ci.svg 2>e1 &&
		grep -q "keep no interval of their median" e1 && test ! -e ci.svg &&
		sql ci.db "ALTER TABLE results ADD COLUMN ci_lo REAL; ALTER TABLE results ADD COLUMN ci_hi REAL"
	fi &&
	sql ci.db "UPDATE results SET ci_lo = median * 0.9, ci_hi = median * 1.25" &&
	"$SWEEP" plot ci.db --x bytes --y gbs --errors ci --out ci.svg >/dev/null &&
	grep -q "title '\''bars: 95% interval of each result'\'''\''s median, median over passes'\''" ci.gp &&
	# a rate: gbs / 1.25 to gbs / 0.9
	awk -F"\t" "/^[0-9]/ { if (!(\$5 > 0 && (\$5 * 1.25 / \$2 - 1) ^ 2 < 1e-9 && (\$6 * 0.9 / \$2 - 1) ^ 2 < 1e-9)) bad = 1; n++ }
		END { exit bad || n != 3 }" ci.dat &&
	"$SWEEP" plot ci.db --x bytes --y seconds --errors ci --out cs.svg >/dev/null &&
	awk -F"\t" "/^[0-9]/ { if (!((\$5 / 0.9 / \$2 - 1) ^ 2 < 1e-9 && (\$6 / 1.25 / \$2 - 1) ^ 2 < 1e-9)) bad = 1; n++ }
		END { exit bad || n != 3 }" cs.dat &&
	test_expect_code 2 "$SWEEP" plot p.db --x batch --y tok_s --pool model,system --errors ci --out x.svg 2>e2 &&
	grep -q "keep no interval\|is not seconds" e2
'

test_expect_success 'the 12-cell grid as a figure: ratio, paired interval, a line at 1, rows by keys' '
	"$ROOT/examples/decode-grid.sh" "$T/dg.db" >/dev/null 2>&1 &&
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --compare system=cache/baseline --format csv |
		awk -F, "NR > 1 { print \$1 \" \" \$2 \" \" \$3 \"\t\" \$7 \"\t\" \$8 \"\t\" \$9 }" >want &&
	test "$(wc -l <want)" = 12 &&
	for ext in png svg pdf; do
		"$SWEEP" plot dg.db --rows host,model,budget --y tok_s --compare system=cache/baseline --out g.$ext >out &&
		grep -q "^wrote g.$ext (data g.dat, script g.gp)$" out && test -s g.$ext &&
		grep "^[0-9]" g.dat | cut -f2- | cmp want - || return 1
	done &&
	grep -q "^set arrow from 1, graph 0 to 1, graph 1 nohead" g.gp &&
	grep -q "'\''node-a llama-8b 256'\'' 11" g.gp && grep -q "'\''node-b qwen-14b 4096'\'' 0" g.gp &&
	grep -q "with xerrorbars" g.gp && grep -q "95% paired percentile bootstrap interval, 10000 resamples, seed 1" g.gp &&
	grep -q "node-a llama-8b 256" g.svg &&
	# the geometric mean of the ratios with a BCa interval: the table of the same options, named so
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --compare system=cache/baseline --stat geomean \
		--interval bca --boot 2000 --format csv |
		awk -F, "NR > 1 { print \$1 \" \" \$2 \" \" \$3 \"\t\" \$7 \"\t\" \$8 \"\t\" \$9 }" >want.geo &&
	"$SWEEP" plot dg.db --rows host,model,budget --y tok_s --compare system=cache/baseline --stat geomean \
		--interval bca --boot 2000 --out geo.svg >/dev/null &&
	grep "^[0-9]" geo.dat | cut -f2- | cmp want.geo - && ! cmp -s want want.geo &&
	grep -q "95% paired BCa bootstrap interval, 2000 resamples, seed 1" geo.gp &&
	grep -q "tok_s cache/baseline, geometric mean of the ratios over paired units" geo.gp &&
	test_must_fail "$SWEEP" plot dg.db --y tok_s --compare system=cache/baseline --stat median --out m.svg 2>err &&
	grep -q "^sweep: --stat median: --compare takes mean" err && test ! -e m.dat
'

test_expect_success 'shares of a limit as a figure: each row, each class mean and t interval as a band' '
	"$ROOT/examples/roofline.sh" "$T/rl.db" >/dev/null 2>&1 &&
	"$SWEEP" report rl.db --rows host,model --metric tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--summary=label.class --format csv >rl.csv &&
	awk -F, "NR > 1 && \$1 == \"\" { print \$2 \" \" \$3 \"\t\" \$8 }" rl.csv >want &&
	test "$(wc -l <want)" = 15 &&
	for c in consumer server; do
		printf "%s\t%s\t%s\t%s\n" $c "$(grep "^mean,,,$c," rl.csv | cut -d, -f8)" \
			"$(grep "^ci95 lo,,,$c," rl.csv | cut -d, -f8)" "$(grep "^ci95 hi,,,$c," rl.csv | cut -d, -f8)" ||
			return 1
	done >want.bands && test "$(cut -f2 want.bands)" = "$(printf "0.792723\n0.597119")" &&
	for ext in png svg pdf; do
		"$SWEEP" plot rl.db --rows host,model --y tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
			--summary=label.class --out l.$ext >/dev/null && test -s l.$ext &&
		awk -F"\t" "/^# share/ { on = 1; next } /^#/ { on = 0 } on && /^[0-9]/ { print \$2 \"\t\" \$3 }" l.dat |
			cmp want - &&
		awk -F"\t" "/^# y from/ { on = 1; next } on && NF { print \$3 \"\t\" \$4 \"\t\" \$5 \"\t\" \$6 }" l.dat |
			cmp want.bands - || return 1
	done &&
	grep -q "with boxxyerror" l.gp && grep -q "title '\''mean'\''" l.gp && grep -q "consumer" l.svg &&
	# --limit draws host rows unless told
	"$SWEEP" plot rl.db --y tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--pool model,bytes_per_token --out h.svg >/dev/null &&
	test "$(grep -c "^[0-9]" h.dat)" = 5
'

test_expect_success 'what a figure cannot take is refused before anything is written' '
	test_expect_code 2 "$SWEEP" plot dg.db --y tok_s --compare system=cache/baseline --x budget --out r.png 2>e1 &&
	grep -q "go with a line plot" e1 &&
	test_expect_code 2 "$SWEEP" plot p.db --x batch --y tok_s --errors wide --out r.png 2>e2 &&
	grep -q "^sweep: --errors is none, spread or ci, not '\''wide'\''$" e2 &&
	test_expect_code 2 "$SWEEP" plot p.db --x batch --y tok_s --rows model --out r.png 2>e3 &&
	grep -q "go with --compare or --limit" e3 &&
	test_expect_code 2 "$SWEEP" plot dg.db --y tok_s --compare system=cache/baseline --limit 1 --out r.png 2>e4 &&
	grep -q "separate figures" e4 &&
	# no unit in both arms: a table of rows without a ratio, nothing to draw
	test_expect_code 2 "$SWEEP" plot dg.db --y tok_s --compare system=cache/baseline --rows host,model --pool budget \
		--paired-by budget --where "(system = '\''cache'\'' AND budget = 1024) OR (system = '\''baseline'\'' AND budget = 256)" \
		--out r.png 2>e5 &&
	grep -q "^sweep: nothing to plot: no row of the table has a value$" e5 &&
	test ! -e r.png && test ! -e r.dat
'
