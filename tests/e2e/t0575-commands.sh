#!/bin/bash
# t0575-commands: command cells as a user's benchmarks are: several matches of a regex, units, stderr,
# failures no attempt can change (quarantined at once, crashes still tried again), and a command timed as
# a measurement (runs under the stopping rule, warm-up runs, prepare and cleanup, what each run cost).
. tests/e2e/lib.sh

# Google Benchmark's console table with --benchmark_repetitions=3: the iterations and then the aggregates,
# whose names start like the benchmark's. (A regex for BM_Sum/1024 matched them all and averaged them.)
cat >"$T/gbench.txt" <<'EOF2'
Benchmark                 Time             CPU   Iterations
-----------------------------------------------------------
BM_Sum/1024            1160 ns         1150 ns       600000
BM_Sum/1024            1167 ns         1157 ns       600000
BM_Sum/1024            1163 ns         1153 ns       600000
BM_Sum/1024_mean       1163 ns         1153 ns            3
BM_Sum/1024_median     1163 ns         1153 ns            3
BM_Sum/1024_stddev     3.51 ns         3.51 ns            3
BM_Sum/1024_cv         0.30 %          0.30 %             3
EOF2

test_expect_success 'several matches of a regex: an error naming the lines, quarantined at its first attempt' '
	printf "%s\n" "sweep: many" "command: [cat, $T/gbench.txt]" \
		"metrics: {time: \"^BM_Sum/1024[_a-z]* +([0-9.]+) ns\"}" "max_attempts: 3" >many.yaml &&
	test_expect_code 3 "$SWEEP" run many.yaml --db many.db 2>err &&
	grep -q "this run: 0 results ok, 1 failed attempts" err &&
	test "$(sql many.db "SELECT state || attempts || '\''|'\'' || error FROM cells")" = \
		"quarantined1|metric '\''time'\'': regex '\''^BM_Sum/1024[_a-z]* +([0-9.]+) ns'\'' matched 6 times in one run (stdout lines 3, 4, 5, 6, 7, ...): say which with match: first, last or each" &&
	test "$(sql many.db "SELECT count(*) || status FROM results")" = 1error &&
	test "$(sql many.db "SELECT count(*) FROM metrics")" = 0
'

test_expect_success 'match: each names items by a group; units convert what the line says into seconds' '
	printf "%s\n" "sweep: each" "command: [cat, $T/gbench.txt]" \
		"metrics: {time: {regex: \"^(BM_[^ ]+) +([0-9.]+ [a-z]+) \", match: each, unit: s}}" >each.yaml &&
	"$SWEEP" run each.yaml --db each.db 2>err &&
	test "$(sql each.db "SELECT group_concat(item || \"=\" || value, \" \") FROM (SELECT * FROM items ORDER BY item)")" = \
		"BM_Sum/1024=1.16333333333333e-06 BM_Sum/1024_mean=1.163e-06 BM_Sum/1024_median=1.163e-06 BM_Sum/1024_stddev=3.51e-09" &&
	printf "%s\n" "sweep: first" "command: [cat, $T/gbench.txt]" \
		"metrics: {time: {regex: \"^BM_Sum/1024 +([0-9.]+ ns)\", match: last, unit: us}}" >last.yaml &&
	"$SWEEP" run last.yaml --db last.db 2>err &&
	test "$(sql last.db "SELECT value FROM metrics WHERE name = '\''time'\''")" = 1.163
'

test_expect_success 'a value without the unit declared, or a metric missing: quarantined at once, with the line' '
	printf "%s\n" "sweep: unitless" "command: [echo, \"Mean +- std dev: 158\"]" \
		"metrics: {t: {regex: \"Mean [+]- std dev: ([0-9.]+.*)\", unit: s}}" >unitless.yaml &&
	test_expect_code 3 "$SWEEP" run unitless.yaml --db unitless.db 2>err &&
	test "$(sql unitless.db "SELECT state || attempts || '\''|'\'' || error FROM cells")" = \
		"quarantined1|metric '\''t'\'': '\''158'\'': no unit, and '\''s'\'' was declared (stdout line 1: '\''Mean +- std dev: 158'\'')"
'

test_expect_success 'a crash or a failing exit is still tried again, up to max_attempts' '
	printf "%s\n" "sweep: crash" "command: [sh, -c, \"kill -SEGV \$\$\"]" "metrics: {t: \"t=([0-9]+)\"}" \
		"max_attempts: 3" >crash.yaml &&
	test_expect_code 3 "$SWEEP" run crash.yaml --db crash.db 2>err &&
	test "$(sql crash.db "SELECT state || attempts || '\''|'\'' || error FROM cells")" = \
		"quarantined3|killed by signal 11 (SIGSEGV)"
'

cat >"$T/streams.yaml" <<'Y'
sweep: streams
command: [sh, -c, 'echo +R:5:sha256:2.5 >&2; printf "{\n  \"jobs\": [{\"iops\": 7}]\n}\n" >{cell}.json']
metrics:
  from: "{cell}.json"
  json: .
  iops: "jobs[0].iops"
  secs: {regex: '[+]R:[0-9]+:sha256:([0-9.]+)', from: stderr}
Y

test_expect_success 'metrics from stderr and from a file the command wrote (a multi-line JSON document)' '
	"$SWEEP" run streams.yaml --db streams.db 2>err &&
	test "$(sql streams.db "SELECT group_concat(name || \"=\" || value, \" \") FROM
		(SELECT * FROM metrics WHERE name <> '\''seconds'\'' ORDER BY name)")" = "iops=7.0 secs=2.5"
'

cat >"$T/timed.yaml" <<Y
sweep: timed
command: [sh, -c, 'echo run >>$T/log; echo "{\"x\": 1}"']
metrics: json
min_runs: 4
warmup: 2
prepare: [sh, -c, 'echo prepare >>$T/log']
cleanup: [sh, -c, 'echo cleanup >>$T/log']
timing: {precision: 1e-9, max_samples: 6, timeout: 100}
Y

test_expect_success 'runs: N runs exactly N, as hyperfine --runs (a 10 ms command ran 117 times)' '
	printf "%s\n" "sweep: exact" "command: [sh, -c, \"echo run >>$T/exact.log; sleep 0.01\"]" "runs: 5" >exact.yaml &&
	"$SWEEP" run exact.yaml --db exact.db 2>err &&
	test "$(wc -l <exact.log)" = 5 &&
	test "$(sql exact.db "SELECT n || stop || launches FROM v_results")" = 5count1 &&
	printf "%s\n" "sweep: bounded" "command: [sh, -c, \"echo run >>$T/bounded.log; sleep 0.01\"]" \
		"min_runs: 3" "max_runs: 4" "timing: {max_noise: 0}" >bounded.yaml &&
	test_expect_code 2 "$SWEEP" run bounded.yaml --db bounded.db 2>err &&
	grep -q "max_runs. is timing.s max_samples: give one of them" err &&
	sed "/^timing:/d" bounded.yaml >b2.yaml &&
	"$SWEEP" run b2.yaml --db bounded.db 2>err &&
	test "$(sql bounded.db "SELECT n || stop FROM v_results")" = 4max_samples
'

test_expect_success 'min_runs: N under the stopping rule, warm-up runs, prepare and cleanup around each run' '
	"$SWEEP" run timed.yaml --db timed.db 2>err &&
	test "$(sql timed.db "SELECT n || stop || launches || (warmup > 0) FROM v_results")" = 6max_samples11 &&
	test "$(tr "\n" " " <log)" = "$(for i in 1 2 3 4 5 6 7 8; do printf "prepare run cleanup "; done)" &&
	test "$(sql timed.db "SELECT count(*) FROM samples WHERE cpu_user >= 0 AND cpu_sys >= 0 AND peak_rss > 0")" = 6 &&
	test "$(sql timed.db "SELECT (cpu_user >= 0) || (cpu_sys >= 0) ||
		(peak_rss = (SELECT max(peak_rss) FROM samples)) FROM v_results")" = 111
'

test_expect_success 'runs, warm-up, prepare and how metrics are read are the measurement: a change is refused' '
	sed "s/^min_runs: 4/min_runs: 5/" timed.yaml >runs5.yaml &&
	test_expect_code 2 "$SWEEP" run runs5.yaml --db timed.db 2>err &&
	grep -q "runs: 4 -> 5" err &&
	sed "s/^metrics: json/metrics: {x: {regex: \"(1)\", match: last}}/" timed.yaml >rx.yaml &&
	test_expect_code 2 "$SWEEP" run rx.yaml --db timed.db 2>err &&
	grep -q "metrics changed" err &&
	sed "s/^warmup: 2/warmup: 1/" timed.yaml >w1.yaml &&
	test_expect_code 2 "$SWEEP" run w1.yaml --db timed.db 2>err &&
	grep -q "warmup: 2 -> 1" err
'

# 150 MB touched, then 0.3 s of CPU: Python's own allocations are a few MB, the executor's under 20.
cat >"$T/hog.py" <<'Y'
import time
b = bytearray(150 * 2 ** 20)
t = time.process_time()
while time.process_time() - t < 0.3:
    pass
Y
cat >"$T/usage.yaml" <<Y
sweep: usage
command: [/usr/bin/python3, $T/hog.py]
Y

test_expect_success 'the CPU time and the peak RSS of a run are what GNU time says of the same program' '
	"$SWEEP" run usage.yaml --db usage.db 2>err &&
	/usr/bin/time -f "%U %S %M" -o gnu.txt /usr/bin/python3 hog.py &&
	sql usage.db "SELECT cpu_user, cpu_sys, peak_rss FROM v_results" | tr "|" " " >sweep.txt &&
	python3 -c "
u, s, m = map(float, open(\"sweep.txt\").read().split())
gu, gs, gm = map(float, open(\"gnu.txt\").read().split())
print(\"sweep\", u, s, m, \"GNU time\", gu, gs, gm * 1024)
assert abs(m / (gm * 1024) - 1) < 0.05, \"peak RSS\"
assert 0.3 <= u + s < 3 * (gu + gs) + 0.1, \"CPU time\""
'
