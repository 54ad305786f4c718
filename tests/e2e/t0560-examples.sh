#!/bin/bash
# t0560-examples: the two shipped examples end to end: the decode grid (2 hosts x 2 models x 3 budgets, two
# systems, 30 problems, ratio with a 95 % interval) and the roofline table (speed as a share of a limit from
# probed bandwidth, median and range by class).
. tests/e2e/lib.sh
export SWEEP

test_expect_success 'decode-grid: 12 rows, 30 paired problems each, the published CSV header' '
	"$ROOT/examples/decode-grid.sh" "$T/dg.db" >md 2>err &&
	test "$(grep -c "^| node-[ab] " md)" = 12 &&
	"$SWEEP" report dg.db --rows host,model,budget --metric tok_s --compare system=cache/baseline \
		--paired-by item --ci 95 --format csv >dg.csv &&
	head -1 dg.csv | grep -qx "host,model,budget,n,tok_s_cache,tok_s_baseline,ratio,ci_lo,ci_hi" &&
	test "$(wc -l <dg.csv)" = 13 &&
	# the simulated cache gains 2, 4 and 7 % at budgets 256, 1024 and 4096: each interval excludes 1,
	# holds its ratio, and the gain grows with the budget
	awk -F, "NR > 1 { if (\$4 != 30 || !(\$8 > 1 && \$8 < \$7 && \$7 < \$9)) bad = 1
		g[\$3] += \$7; n[\$3]++ }
		END { exit bad || !(g[256] / n[256] < g[1024] / n[1024] && g[1024] / n[1024] < g[4096] / n[4096]) }" dg.csv &&
	grep -Eq "^\| node-a \| llama-8b \| +4096 \| +30 \| +[0-9]+ \| +[0-9]+ \| 1\.0[5-9] \[1\.0[0-9], 1\.[01][0-9]\] +\|$" md
'

test_expect_success 'decode-grid: the interval agrees with ratio_ci in SQL on the same items' '
	"$SWEEP" sql dg.db "SELECT ratio_ci(a.v, b.v, 0.95, 10000, 1) FROM
		(SELECT i.item, avg(i.value) AS v FROM v_results r JOIN items i ON i.result = r.id
		 WHERE r.host = '\''node-a'\'' AND json_extract(r.params, '\''$.model'\'') = '\''qwen-14b'\''
		 AND json_extract(r.params, '\''$.budget'\'') = 1024 AND json_extract(r.params, '\''$.system'\'') = '\''cache'\''
		 GROUP BY i.item) a JOIN
		(SELECT i.item, avg(i.value) AS v FROM v_results r JOIN items i ON i.result = r.id
		 WHERE r.host = '\''node-a'\'' AND json_extract(r.params, '\''$.model'\'') = '\''qwen-14b'\''
		 AND json_extract(r.params, '\''$.budget'\'') = 1024 AND json_extract(r.params, '\''$.system'\'') = '\''baseline'\''
		 GROUP BY i.item) b ON a.item = b.item ORDER BY 1" --csv | tail -1 | tr -d "[]\"" >sqlci &&
	grep "^node-a,qwen-14b,1024," dg.csv | cut -d, -f7-9 >repci &&
	python3 -c "
a = [float(x) for x in open(\"sqlci\").read().split(\",\")]
b = [float(x) for x in open(\"repci\").read().split(\",\")]
assert len(a) == 3 and len(b) == 3, (a, b)
assert all(abs(x / y - 1) < 1e-5 for x, y in zip(a, b)), (a, b)"
'

test_expect_success 'roofline: five machines, the share of the bandwidth limit, summarised per machine by class' '
	"$ROOT/examples/roofline.sh" "$T/rl.db" >md 2>err &&
	test "$(grep -c "^| \(desk\|mini\|srv\)-" md)" = 15 &&
	# the limits are exact (bandwidth / bytes a token); the statistics of a class are over its machines, each
	# the mean of its three models: the consumer median limit is desk-14900k'\''s, (17.14 + 24.71 + 9.33) / 3
	grep -Eq "^\| median \(consumer\) +\|( +\|){3} +[0-9.]+  \| +17\.1  \| 0\.[0-9]+  \|$" md &&
	grep -Eq "^\| n \(server\) +\|( +\|){3} +2  \| +2  \| +2  \|$" md &&
	grep -Eq "^\| ci95 lo \(server\) +\|( +\|){3} .*\| 0\.205$(printf "\342\200\241") \|$" md &&
	grep -q "^sweep: warning: the summary of .server. rests on 2 units (n, one value per host), fewer than 5" err &&
	"$SWEEP" report rl.db --rows host,model --metric tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--summary=label.class --format csv >rl.csv 2>/dev/null &&
	head -1 rl.csv | grep -qx "stat,host,model,label.class,n,tok_s,limit,share" &&
	# srv-epyc9654 reads 390 GB/s; llama-3.1-8b-q4 moves 4.9e9 bytes a token: limit 79.59 tok/s
	grep -q "^,srv-epyc9654,llama-3.1-8b-q4,server,3,[0-9.]*,79.5918,0.5[0-9]*$" rl.csv &&
	python3 "$ROOT/tests/summary_check.py" rl.csv --group label.class --unit host >check &&
	grep -qx "checked 42 summary cells" check &&
	# the headline: the mean share over machines and its interval, n = machines (3 consumer, 2 server)
	grep -q "^ci95 lo,,,consumer,,[-0-9.]*,[-0-9.]*,0.650[0-9]*$" rl.csv &&
	grep -q "^ci95 hi,,,server,,[0-9.]*,[0-9.]*,0.98958[0-9]*$" rl.csv &&
	grep -q "^n,,,consumer,,3,3,3$" rl.csv &&
	awk -F, "NR > 1 && \$1 == \"\" { if (!(\$8 > 0.5 && \$8 < 0.9)) bad = 1 }
		/^median,,,consumer/ { c = \$8 } /^median,,,server/ { s = \$8 } END { exit bad || !(c > s) }" rl.csv
'
