#!/bin/bash
# t0461-cupti: a kernel cell's counters: read in the executor's own process through CUPTI's range profiler,
# over a launch a pass after the timed samples (automatic ranges, user replay): each counter a metric of
# the result, folded over the kernels (ranges) as ncu's rows are, read by `report --metric`; a driver's
# refusal is the result's one line, in CUPTI's words, and nothing is made up (no ncu asked after it).
# The CUPTI here is a fake (tests/unit/fake_cupti.cc, loaded through SWEEP_CUPTI_LIB) that logs each call;
# an ncu on PATH that logs its arguments shows that it is not asked.
. tests/e2e/lib.sh

FAKE="$ROOT/build/tests/fake/libcupti-fake.so"
if [ ! -e "$FAKE" ]; then
	# Built with CUDA only (the toolkit's CUPTI headers): a build without CUDA has no CUPTI path to test.
	echo "ok - # SKIP no fake CUPTI (make $FAKE, in a build with CUDA)"
	exit 0
fi
export SWEEP_CUPTI_LIB="$FAKE" FAKE_CUPTI_LOG="$T/cupti.log"
mkdir -p "$T/bin"
printf '%s\n' '#!/bin/sh' 'echo "$*" >>"$FAKE_NCU_LOG"' 'exit 1' >"$T/bin/ncu"
chmod +x "$T/bin/ncu"
export FAKE_NCU_LOG="$T/ncu.args" PATH="$T/bin:$PATH"

cat >"$T/k.yaml" <<'Y'
sweep: k
kernel: cpu.copy
params: {bytes: [4K, 8K]}
counters: [dram__bytes_read.sum, lts__t_sector_hit_rate.pct, sm__cycles_elapsed.max]
timing: {min_samples: 3, min_time: 0, max_noise: 1, warmup: 0}
Y

test_expect_success 'counters through CUPTI: folded over the kernels, stored, read by report --metric' '
	"$SWEEP" run k.yaml --db k.db 2>err &&
	test "$(sql k.db "SELECT group_concat(name || '\''='\'' || value, '\'' '\'') FROM (SELECT m.name, m.value FROM metrics m
		JOIN results r ON r.id = m.result JOIN cells c ON c.id = r.cell WHERE json_extract(c.params, '\''$.bytes'\'') = 4096
		AND m.name NOT IN ('\''seconds'\'', '\''gbs'\'') ORDER BY m.name)")" = "dram__bytes_read.sum=2147484648.0 lts__t_sector_hit_rate.pct=15.5 sm__cycles_elapsed.max=8.0" &&
	test "$(sql k.db "SELECT count(*) FROM metrics WHERE name = '\''dram__bytes_read.sum'\''")" = 2 &&
	test "$(sql k.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND stderr IS NULL")" = 2 &&
	"$SWEEP" report k.db --metric dram__bytes_read.sum --rows bytes >rep &&
	grep -q "2147484648\|2\.147" rep &&
	test ! -e ncu.args
'

test_expect_success 'one session a cell: the metrics asked, automatic ranges, user replay, all undone' '
	test "$(grep -c "^cuptiRangeProfilerEnable = 0" cupti.log)" = 2 &&
	test "$(grep -c "^cuptiRangeProfilerStart = 0" cupti.log)" = 2 &&
	test "$(grep -c "^config: auto range 1, user replay, config image 64 bytes" cupti.log)" = 2 &&
	test "$(grep "^metric " cupti.log | sort | uniq -c | awk "{print \$1 \$3}" | tr "\n" " ")" = "2dram__bytes_read.sum 2lts__t_sector_hit_rate.pct 2sm__cycles_elapsed.max " &&
	test "$(grep -c "^cuptiProfilerHostEvaluateToGpuValues = 0" cupti.log)" = 4 &&
	test "$(grep -c "^cuptiRangeProfilerDisable = 0" cupti.log)" = 2 &&
	test "$(grep -c "^cuptiProfilerHostDeinitialize = 0" cupti.log)" = 2 &&
	test "$(grep -c "^cuptiProfilerDeInitialize = 0" cupti.log)" = 2 &&
	test "$(grep -n "" cupti.log | grep -E "cuptiRangeProfiler(Start|Stop|DecodeData) " | head -3 | cut -d" " -f1 | cut -d: -f2 | tr "\n" " ")" = "cuptiRangeProfilerStart cuptiRangeProfilerStop cuptiRangeProfilerDecodeData "
'

test_expect_success 'a session of three passes: the launch once a pass, the values as before' '
	rm -f cupti.log &&
	FAKE_CUPTI_PASSES=3 "$SWEEP" run k.yaml --db p.db 2>err &&
	test "$(grep -c "^cuptiRangeProfilerStart = 0" cupti.log)" = 6 &&
	test "$(grep -c "^cuptiRangeProfilerStop = 0" cupti.log)" = 6 &&
	test "$(sql p.db "SELECT group_concat(DISTINCT value) FROM metrics WHERE name = '\''dram__bytes_read.sum'\''")" = 2147484648.0
'

test_expect_success 'a driver that refuses: CUPTI'\''s answer in one line, nothing made up, no ncu after it' '
	rm -f cupti.log &&
	FAKE_CUPTI_DENY=cuptiRangeProfilerEnable "$SWEEP" run k.yaml --db deny.db 2>err &&
	test "$(sql deny.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 2 &&
	test "$(sql deny.db "SELECT DISTINCT stderr FROM results")" = "counters: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): the fake'\''s refusal: profiling is restricted to admin users" &&
	test "$(sql deny.db "SELECT group_concat(DISTINCT name) FROM metrics WHERE name NOT IN ('\''seconds'\'', '\''gbs'\'')")" = "" &&
	test "$(grep -c "^cuptiProfilerDeInitialize = 0" cupti.log)" = 2 &&
	test "$(grep -c "^cuptiRangeProfilerStart" cupti.log)" = 0 &&
	test ! -e ncu.args
'

test_expect_success 'a counter no kernel gave is absent, the others kept' '
	printf "%s\n" "sweep: n" "kernel: cpu.copy" "params: {bytes: 4K}" "counters: [none.bytes.sum, dram__bytes_read.sum]" \
		"timing: {min_samples: 3, min_time: 0, max_noise: 1, warmup: 0}" >n.yaml &&
	"$SWEEP" run n.yaml --db n.db 2>err &&
	test "$(sql n.db "SELECT group_concat(name) FROM metrics WHERE name NOT IN ('\''seconds'\'', '\''gbs'\'')")" = dram__bytes_read.sum &&
	test "$(sql n.db "SELECT count(*) FROM results WHERE stderr IS NULL")" = 1
'

test_expect_success 'no CUPTI library: ncu asked instead, and both said when neither reads' '
	rm -f ncu.args &&
	SWEEP_CUPTI_LIB="$T/no-libcupti.so" "$SWEEP" run n.yaml --db none.db 2>err &&
	test "$(wc -l <ncu.args)" = 1 &&
	test "$(sql none.db "SELECT stderr FROM results")" = "counters: no CUPTI library: $T/no-libcupti.so: cannot open shared object file: No such file or directory; ncu gave no rows of the counters asked"
'
