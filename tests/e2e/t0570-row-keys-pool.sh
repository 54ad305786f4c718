#!/bin/bash
# t0570-row-keys-pool: no silent pooling over a parameter: one not named becomes a row key (in spec
# order, with a note), --pool aggregates over what it names and says so, plots refuse a parameter
# varying inside a point; and a value never runs a command through the gnuplot script.
. tests/e2e/lib.sh

# grid.yaml: dtype x M x N, whose gflops differ by dtype (tests/progs/gflops.sh).
sed "s|@ROOT@|$ROOT|" "$ROOT/tests/data/sweeps/grid.yaml" >"$T/grid.yaml"

test_expect_success 'setup: dtype x M x N' '
	"$SWEEP" run grid.yaml --db g.db 2>err && grep -q "8 cells ok" err
'

test_expect_success 'report: a parameter not named becomes a row key, in spec order, with a note' '
	"$SWEEP" report g.db --rows M,N --metric gflops --format csv >out 2>err &&
	printf "M,N,dtype,n,gflops\n1,10,f32,1,111\n1,10,f64,1,61\n1,20,f32,1,121\n1,20,f64,1,71\n2,10,f32,1,112\n2,10,f64,1,62\n2,20,f32,1,122\n2,20,f64,1,72\n" >want &&
	cmp want out &&
	grep -q "rows also split by dtype" err &&
	"$SWEEP" report g.db --metric gflops --format csv >all 2>err &&
	head -1 all >head &&
	echo "dtype,M,N,n,gflops" | cmp - head &&
	test $(wc -l <all) = 9
'

test_expect_success 'report --pool: aggregates over what it names, and the title says so' '
	"$SWEEP" report g.db --rows M --pool N,dtype --metric gflops >out 2>err &&
	head -1 out >title &&
	echo "median of gflops over passes and N, dtype, sweep grid" | cmp - title &&
	grep -Eq "^\| +1 \| +4 \| +91\.00 \|$" out &&
	! grep -q "split by" err &&
	"$SWEEP" report g.db --rows M --pool N --metric gflops --format csv >p 2>err &&
	printf "M,dtype,n,gflops\n1,f32,2,116\n1,f64,2,66\n2,f32,2,117\n2,f64,2,67\n" | cmp - p &&
	test_expect_code 2 "$SWEEP" report g.db --rows M --pool nope --metric gflops 2>err &&
	grep -q "unknown key .nope." err
'

test_expect_success 'report --cols and --compare: the unnamed parameter still splits rows' '
	"$SWEEP" report g.db --rows M --cols dtype --metric gflops --format csv >out 2>/dev/null &&
	printf "M,N,dtype=f32,dtype=f64\n1,10,111,61\n1,20,121,71\n2,10,112,62\n2,20,122,72\n" | cmp - out
'

test_expect_success 'plot: a parameter varying inside a point is refused, --pool names it on the axis' '
	test_expect_code 2 "$SWEEP" plot g.db --x M --y gflops --series dtype --out p.svg 2>err &&
	grep -q "N varies inside a point of the plot" err &&
	! test -e p.gp &&
	"$SWEEP" plot g.db --x M --y gflops --series dtype --pool N --out p.svg >/dev/null &&
	grep -q "^set ylabel .*median over passes and N" p.gp &&
	"$SWEEP" plot g.db --x M --y gflops --series dtype --facet N --out f.svg >/dev/null
'

# A parameter value that ends the gnuplot string, ends the line and calls system(): in a sweep run here
# and in one that arrives through merge. Nothing may run.
cat >"$T/evil.yaml" <<EOF
sweep: evil
command: [sh, -c, "echo '{\"v\": 1}'", "{s}"]
metrics: json
params:
  s: ["a", "b'\nsystem(\"touch $T/PWNED\")\n#\`touch $T/PWNED2\`"]
  x: [1, 2]
EOF

test_expect_success 'plot: a value trying to run a command through the gnuplot script runs nothing' '
	"$SWEEP" run evil.yaml --db e.db 2>/dev/null &&
	"$SWEEP" plot e.db --x x --y v --series s --title "t
system(\"touch $T/PWNED3\")" --out e.svg >/dev/null &&
	! test -e PWNED && ! test -e PWNED2 && ! test -e PWNED3 &&
	test -s e.svg &&
	grep -q "title .s=b..?system" e.gp &&
	test $(grep -c "^system" e.gp) = 0 &&
	"$SWEEP" merge m.db e.db >/dev/null 2>&1 &&
	"$SWEEP" plot m.db --x x --y v --facet s --out m.svg >/dev/null &&
	! test -e PWNED && test -s m.svg
'
