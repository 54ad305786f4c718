#!/bin/bash
# t0582-tool-text: tools' text read as they print it, each value compared with what the tool printed in the
# same run (kept with tee): zstd -b's progress overwritten with '\r' (the figures a terminal shows last),
# python -m timeit's "nsec per loop", openssl speed -mr's bare bytes per second given a unit by scale:, and
# perf stat's "msec" and "K/sec" where the kernel lets perf count.
. tests/e2e/lib.sh

# zstd's last line is " 1#" over the figures it printed before: a terminal shows them under it (and where
# its last progress ended in a blank, without the comma between them). The check builds that line alike.

# same DB METRIC WANT: the metric's stored value is WANT to 12 digits.
same() {
	got=$(sql "$1" "SELECT value FROM metrics WHERE name = '$2'") &&
	python3 -c "import sys; g, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g - w) > 1e-12 * abs(w))" \
		"$got" "$3" || { echo "$2: stored $got, the tool printed $3"; return 1; }
}

test_needs "zstd" zstd --version
test_needs "openssl" openssl version

test_expect_success 'zstd -b: the figures after the last \r, as the terminal shows them' '
	head -c 2000000 /dev/urandom | od -x >data.txt &&
	printf "%s\n" "sweep: zstd" "command: [sh, -c, \"zstd -b1 -i1 $T/data.txt 2>&1 | tee $T/zstd.out\"]" \
		"metrics:" "  comp: {regex: \"^ *1#.*[)], +([0-9.]+ MB/s)\", unit: MB/s}" \
		"  dec: {regex: \"^ *1#.*MB/s,? +([0-9.]+ MB/s)\$\", unit: MB/s}" >zstd.yaml &&
	"$SWEEP" run zstd.yaml --db zstd.db --quiet &&
	python3 -c "
import re
line, shown = [l for l in open(\"zstd.out\", newline=\"\").read().split(\"\n\") if \"1#\" in l][0], \"\"
for part in line.split(\"\r\"):
    shown = part + shown[len(part):]
c, d = re.findall(r\"([0-9.]+) MB/s\", shown)
print(c, d)" >want &&
	read -r comp dec <want &&
	same zstd.db comp "$comp" && same zstd.db dec "$dec"
'

test_expect_success 'python -m timeit: "nsec per loop" (or usec, msec, sec) read as seconds' '
	printf "%s\n" "sweep: timeit" \
		"command: [sh, -c, \"python3 -m timeit -n 2000 -r 3 '\''sum(range(50))'\'' | tee $T/timeit.out\"]" \
		"metrics: {loop: {regex: \"best of [0-9]+: ([0-9.]+ [a-z]+) per loop\", unit: s}}" >timeit.yaml &&
	"$SWEEP" run timeit.yaml --db timeit.db --quiet &&
	want=$(python3 -c "
import re
v, u = re.search(r\"best of [0-9]+: ([0-9.]+) ([a-z]+) per loop\", open(\"timeit.out\").read()).groups()
print(float(v) * {\"nsec\": 1e-9, \"usec\": 1e-6, \"msec\": 1e-3, \"sec\": 1}[u])") &&
	same timeit.db loop "$want"
'

test_expect_success 'openssl speed -mr: a bare number of bytes per second given its unit by scale:' '
	printf "%s\n" "sweep: ssl" \
		"command: [sh, -c, \"openssl speed -mr -seconds 1 -bytes 1024 md5 2>&1 | tee $T/ssl.out\"]" \
		"metrics: {md5: {regex: \"^[+]F:[0-9]+:md5:([0-9.]+)\$\", scale: B/s, unit: MB/s}}" >ssl.yaml &&
	"$SWEEP" run ssl.yaml --db ssl.db --quiet &&
	want=$(python3 -c "
import re
print(float(re.search(r\"^[+]F:[0-9]+:md5:([0-9.]+)$\", open(\"ssl.out\").read(), re.M).group(1)) / 1e6)") &&
	same ssl.db md5 "$want"
'

test_expect_success 'fio --output-format=json under metrics: json: an error naming the path syntax, no metric kept' '
	printf "%s\n" "sweep: fio" \
		"command: [fio, --name=t, --size=1M, --rw=read, --filename=$T/fio.dat, --output-format=json]" \
		"metrics: json" "max_attempts: 3" >fio.yaml &&
	test_expect_code 3 "$SWEEP" run fio.yaml --db fio.db 2>err &&
	sql fio.db "SELECT state || attempts || \"|\" || error FROM cells" >state &&
	grep -q "^quarantined1|metrics: json reads one JSON object a line, and this one spans lines 1 to [0-9]*: read a document with a path for each metric (metrics: {json: ., NAME: a.b\[0\]}) (stdout line 1: .{.)$" state &&
	test "$(sql fio.db "SELECT count(*) FROM metrics")" = 0
'

test_needs "perf stat (perf_event_paranoid)" perf stat -e task-clock true

test_expect_success 'perf stat: "msec task-clock" and "K/sec" read as perf means them' '
	printf "%s\n" "sweep: perf" \
		"command: [sh, -c, \"perf stat -e task-clock sh -c '\''i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done'\'' 2>&1 | tee $T/perf.out\"]" \
		"metrics: {task: {regex: \"([0-9.]+ msec) +task-clock\", unit: s}," \
		"  cpus: \"# +([0-9.]+) +CPUs utilized\"}" >perf.yaml &&
	"$SWEEP" run perf.yaml --db perf.db --quiet &&
	want=$(python3 -c "
import re
print(float(re.search(r\"([0-9.]+) msec +task-clock\", open(\"perf.out\").read()).group(1)) / 1e3)") &&
	same perf.db task "$want" &&
	printf "%s\n" "sweep: rate" \
		"command: [sh, -c, \"perf stat -e task-clock,page-faults true 2>&1 | tee $T/rate.out\"]" \
		"metrics: {faults: {regex: \"page-faults +# +([0-9.]+ [KMG]?/sec)\", unit: /s}}" >rate.yaml &&
	"$SWEEP" run rate.yaml --db rate.db --quiet &&
	want=$(python3 -c "
import re
v, p = re.search(r\"page-faults +# +([0-9.]+) ([KMG]?)/sec\", open(\"rate.out\").read()).groups()
print(float(v) * {\"\": 1, \"K\": 1e3, \"M\": 1e6, \"G\": 1e9}[p])") &&
	same rate.db faults "$want"
'
