#!/bin/bash
# t0582-tool-text: what a tool prints that is easy to misread. fio's JSON document under metrics: json (JSON
# lines) is an error naming the path syntax, never its top level kept as figures. Several records of one
# item in one run (fio's jobs of one name) combine as combine: says, each value compared with what fio
# printed in the same run (kept by sweep as results.stdout, parsed with python's json); the default, their
# mean, is said in a note beside the result and under the report's table. (zstd -b's '\r', timeit's
# "nsec", openssl -mr's bare numbers and perf stat's "K/sec" are read by the shipped examples of
# examples/tools, t0580.)
. tests/e2e/lib.sh

test_needs "fio" fio --version

# fio_spec NAME [combine: MODE]: two jobs named "reader" (--numjobs=2), their records by path.
fio_spec() {
	printf "%s\n" "sweep: $1" \
		"command: [fio, --name=reader, --numjobs=2, --rw=read, --size=1M, --bs=4k, --directory=$T," \
		"  --output-format=json]" \
		"metrics:" "  json: \"jobs[*]\"" "  item: jobname" ${2:+"  combine: $2"} "  iops: read.iops" \
		"  p99: 'read.clat_ns.percentile[\"99.000000\"]'" "max_attempts: 3" >"$1.yaml"
}
# fio_want DB FUNC METRIC: FUNC (sum, max, min, mean) of the two jobs' METRIC as fio printed them.
fio_want() {
	sql "$1" "SELECT stdout FROM results" | python3 -c "
import json, sys
jobs = [j for j in json.load(sys.stdin)[\"jobs\"] if j[\"jobname\"] == \"reader\"]
assert len(jobs) == 2, len(jobs)
v = [j[\"read\"][\"iops\"] if sys.argv[2] == \"iops\" else j[\"read\"][\"clat_ns\"][\"percentile\"][\"99.000000\"]
     for j in jobs]
print(repr({\"sum\": sum, \"max\": max, \"min\": min, \"mean\": lambda x: sum(x) / len(x)}[sys.argv[1]](v)))" "$2" "$3"
}
# same DB METRIC WANT: item reader's stored value of METRIC is WANT to 12 digits.
same() {
	got=$(sql "$1" "SELECT value FROM items WHERE item = 'reader' AND metric = '$2'") &&
	python3 -c "import sys; g, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g - w) > 1e-12 * abs(w))" \
		"$got" "$3" || { echo "$2: stored $got, fio printed $3"; return 1; }
}

test_expect_success 'two records of one item in one run, by default: their mean, said beside it and under the table' '
	fio_spec mean && "$SWEEP" run mean.yaml --db mean.db --quiet &&
	same mean.db iops "$(fio_want mean.db mean iops)" && same mean.db p99 "$(fio_want mean.db mean p99)" &&
	test "$(sql mean.db "SELECT note FROM v_results")" = "2 records of item reader averaged" &&
	"$SWEEP" report mean.db --metric iops --rows item >report.md &&
	grep -qx "Note: 2 records of item reader averaged (1 result)" report.md &&
	"$SWEEP" report mean.db --metric iops --rows item --format latex >report.tex &&
	grep -qx "\\\\par{\\\\footnotesize Note: 2 records of item reader averaged (1 result).}" report.tex &&
	"$SWEEP" merge merged.db mean.db --quiet &&
	test "$(sql merged.db "SELECT note FROM v_results")" = "2 records of item reader averaged"
'

test_expect_success 'combine: sum, max and min, as fio printed each job, and no note' '
	for how in sum max min; do
		fio_spec $how $how && "$SWEEP" run $how.yaml --db $how.db --quiet &&
		same $how.db iops "$(fio_want $how.db $how iops)" && same $how.db p99 "$(fio_want $how.db $how p99)" &&
		test "$(sql $how.db "SELECT count(*) FROM results WHERE note IS NOT NULL")" = 0 || return 1
	done &&
	"$SWEEP" report sum.db --metric iops --rows item >report.md && ! grep -q "^Note:" report.md
'

test_expect_success 'combine: error refuses the second record at the first attempt, naming it and its line' '
	fio_spec refuse error && test_expect_code 3 "$SWEEP" run refuse.yaml --db refuse.db 2>err &&
	sql refuse.db "SELECT state || attempts || \"|\" || error FROM cells" >state &&
	grep -q "^quarantined1|metric .iops.: a second record of item .reader. in one run, and combine: error refuses it (mean, sum, max or min combines them) in record 2 of .jobs\[\*\]." state
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

