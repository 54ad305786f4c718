#!/bin/bash
# t0540-predict: `sweep predict` registers predictions before the run (sha256, time, blind), refuses cells
# with a result unless --late, never replaces one; `sweep report --score` scores them, blind and late apart.
. tests/e2e/lib.sh

cat >"$T/pr.yaml" <<'EOF'
sweep: pr
command: [sh, -c, 'echo "{\"v\": $(({M} * 10))}"']
metrics: json
params:
  M: [1, 2, 3]
  dtype: [a]
repeat: 2
EOF
printf 'sweep,M,dtype,metric,value\npr,1,a,v,10\npr,2,a,v,2.5e1\n' >"$T/pred.csv"

test_expect_success 'predictions by parameter columns are registered for every pass, with the sha256' '
	"$SWEEP" plan pr.yaml --db p.db >/dev/null &&
	"$SWEEP" predict p.db pred.csv >out &&
	grep -q "pred.csv: 4 predictions registered (4 blind, 0 late), 0 already registered; sha256 $(sha256sum pred.csv | cut -c1-64)" out &&
	test "$(sql p.db "SELECT count(*), sum(blind), count(DISTINCT key), min(sha256), min(source)
		FROM predictions")" = "4|4|4|$(sha256sum pred.csv | cut -c1-64)|pred.csv" &&
	sql p.db "SELECT frozen_at FROM predictions LIMIT 1" | grep -Eq "^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$"
'

test_expect_success 'registering the same file again adds nothing' '
	"$SWEEP" predict p.db pred.csv >out &&
	grep -q "0 predictions registered (0 blind, 0 late), 4 already registered" out &&
	test "$(sql p.db "SELECT count(*) FROM predictions")" = 4
'

test_expect_success 'bad files are refused with the line, nothing is registered, exit 2' '
	printf "sweep,MM,dtype,metric,value\npr,1,a,v,1\n" >e1.csv &&
	printf "sweep,M,dtype,metric,value\npr,9,a,v,1\n" >e2.csv &&
	printf "sweep,M,dtype,metric,value\npr,1,a,v,fast\n" >e3.csv &&
	printf "sweep,M,dtype,value\npr,1,a,1\n" >e4.csv &&
	printf "sweep,M,dtype,metric,value\npr,1,a,w,1\npr,2,a\n" >e5.csv &&
	for i in 1 2 3 4 5; do
		test_expect_code 2 "$SWEEP" predict p.db e$i.csv >out$i 2>err$i &&
		test ! -s out$i || return 1
	done &&
	grep -q "e1.csv:1: column '\''MM'\'' is not a parameter of sweep '\''pr'\'' (did you mean '\''M'\''?)" err1 &&
	grep -q "e2.csv:2: no cell of sweep '\''pr'\'' has these parameter values" err2 &&
	grep -q "e3.csv:2: value '\''fast'\'' is not a number" err3 &&
	grep -q "e4.csv:1: the header needs the columns metric and value" err4 &&
	grep -q "e5.csv:3: 3 fields, the header has 5" err5 &&
	test "$(sql p.db "SELECT count(*) FROM predictions")" = 4 &&
	test_expect_code 2 "$SWEEP" predict nosuch.db pred.csv 2>err &&
	grep -q "plan the sweep first" err && test ! -e nosuch.db
'

test_expect_success 'after the run a prediction for a measured cell is refused unless --late' '
	"$SWEEP" run pr.yaml --db p.db 2>/dev/null &&
	key=$(sql p.db "SELECT key FROM cells WHERE json_extract(params, '\''$.M'\'') = 3 ORDER BY pass LIMIT 1") &&
	printf "key,metric,value\n%s,v,24\n" "$key" >late.csv &&
	test_expect_code 2 "$SWEEP" predict p.db late.csv 2>err &&
	grep -q "1 prediction is for a cell that already has a result" err &&
	grep -q "late.csv:2: cell $key" err && grep -q "with --late" err &&
	test "$(sql p.db "SELECT count(*) FROM predictions")" = 4 &&
	"$SWEEP" predict p.db late.csv --late >out &&
	grep -q "1 predictions registered (0 blind, 1 late)" out &&
	test "$(sql p.db "SELECT blind, value FROM predictions WHERE key = '\''$key'\''")" = "0|24.0"
'

test_expect_success 'a registered prediction is never replaced' '
	printf "sweep,M,dtype,metric,value\npr,1,a,v,11\n" >again.csv &&
	test_expect_code 2 "$SWEEP" predict p.db again.csv --late 2>err &&
	grep -q "already has a prediction of v" err && grep -q "never replaced" err &&
	test "$(sql p.db "SELECT count(*), sum(value) FROM predictions")" = "5|94.0"
'

# By hand, measured v = 10 M. Blind: M=1 predicted 10 (error 0 %), M=2 predicted 25 (error
# 100 (20 - 25) / 25 = -20 %), each for 2 passes: rms = sqrt((0 + 400) / 2) = 14.1421, mean -10.
# Late: M=3 pass 0 predicted 24, measured 30: +25 %.
test_expect_success 'score: rms and mean signed error, blind and late apart, the bar (missed: exit 4)' '
	test_expect_code 4 "$SWEEP" report p.db --score --bar 15 --format csv >s 2>err &&
	cat >want <<-\EOF &&
	metric,predictions,n,rms_err_%,mean_err_%,bar
	v,blind,4,14.1421,-10,met
	v,late,1,25,25,missed
	EOF
	cmp want s &&
	grep -q "bar 15%: met by 1 of 2 groups" err &&
	"$SWEEP" report p.db --score --bar 25 >/dev/null 2>err &&
	grep -q "bar 25%: met by 2 of 2 groups" err &&
	"$SWEEP" report p.db --score --rows M >md &&
	grep -Eq "^\| +2 \| v +\| blind +\| +2 \| +20.0 \| +-20.0 \|$" md &&
	grep -Eq "^\| +1 \| v +\| blind +\| +2 \| +0.00 \| +0.00 \|$" md &&
	grep -q "error = 100 (measured - predicted) / predicted" md
'

cat >"$T/ph.yaml" <<'EOF'
sweep: ph
command: [sh, -c, 'echo "{\"v\": {x}}"']
metrics: json
params: {x: [4, 8]}
per: host
EOF

test_expect_success 'per-host sweeps: predictions on the planned template score every host replica' '
	"$SWEEP" plan ph.yaml --db h.db >/dev/null &&
	printf "x,metric,value\n4,v,5\n8,v,8\n" >ph.csv &&
	"$SWEEP" predict h.db ph.csv >out &&
	grep -q "ph.csv: 2 predictions registered (2 blind, 0 late), 0 already registered" out &&
	"$SWEEP" run ph.yaml --db h.db 2>/dev/null &&
	"$SWEEP" report h.db --score --rows host,x --format csv >s &&
	printf "host,x,metric,predictions,n,rms_err_%%,mean_err_%%\n%s,4,v,blind,1,20,-20\n%s,8,v,blind,1,0,0\n" \
		"$(hostname)" "$(hostname)" | cmp - s
'

test_expect_success 'score without predictions says how to make them' '
	test_expect_code 2 "$SWEEP" report h.db --sweep ph --score --metric w 2>err &&
	grep -q "no predictions of sweep '\''ph'\'' for w" err
'
