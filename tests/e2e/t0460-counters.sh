#!/bin/bash
# t0460-counters: a spec's counters: a command cell's program runs once more, untimed, under Nsight
# Compute's CLI (ncu --csv) and each counter asked becomes a metric of its result (summed over kernels for
# a .sum, the mean for a ratio); a driver that refuses counters (ERR_NVGPUCTRPERM), or no ncu, is said in
# one line of the result's stderr and nothing is made up; a kernel cell where no CUPTI can be loaded runs
# once more, untimed, in `sweep __counters` under ncu with only its launch profiled (its CUPTI path, in
# process: t0461-cupti.sh).
# The ncu here is a fake (on PATH) that logs its arguments, runs the program and prints what ncu prints.
. tests/e2e/lib.sh

mkdir -p "$T/bin"
cat >"$T/bin/ncu" <<'EOF2'
#!/bin/sh
# A fake ncu: its arguments to $T/ncu.args, the program run (after ncu's options), then the CSV.
echo "$*" >>"$FAKE_NCU_LOG"
while [ $# -gt 0 ]; do
	case $1 in
	--csv) shift ;;
	--metrics|--print-units|--target-processes|--profile-from-start|--clock-control) shift 2 ;;
	*) break ;;
	esac
done
if ! "$@" >/dev/null; then
	echo "==ERROR== The application returned an error code (1)."
	exit 1
fi
if [ "${FAKE_NCU_DENY:-}" = 1 ]; then
	echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."
	exit 1
fi
echo "==PROF== Connected to process 1 ($1)"
echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
echo '"0","1","p","h","copy","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","2,147,483,648"'
echo '"0","1","p","h","copy","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","10.5"'
echo '"1","1","p","h","tail","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","1,000"'
echo '"1","1","p","h","tail","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","20.5"'
echo "==PROF== Disconnected from process 1"
EOF2
chmod +x "$T/bin/ncu"
export FAKE_NCU_LOG="$T/ncu.args"

cat >"$T/cmd.yaml" <<'Y'
sweep: cmd
command: [sh, -c, "echo t={n}"]
params: {n: [1, 2]}
metrics: {t: "t=([0-9]+)"}
counters: [dram__bytes_read.sum, lts__t_sector_hit_rate.pct, sm__cycles_elapsed.max]
Y

test_expect_success 'a command cell: its program once under ncu, the counters as metrics' '
	PATH="$T/bin:$PATH" "$SWEEP" run cmd.yaml --db cmd.db 2>err &&
	test "$(wc -l <ncu.args)" = 2 &&
	grep -qx -- "--csv --print-units base --target-processes all --clock-control none --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.max sh -c echo t=1" ncu.args &&
	test "$(sql cmd.db "SELECT group_concat(name || '\''='\'' || value, '\'' '\'') FROM (SELECT m.name, m.value FROM metrics m
		JOIN results r ON r.id = m.result JOIN cells c ON c.id = r.cell WHERE json_extract(c.params, '\''$.n'\'') = 1
		AND m.name <> '\''seconds'\'' ORDER BY m.name)")" = "dram__bytes_read.sum=2147484648.0 lts__t_sector_hit_rate.pct=15.5 t=1.0" &&
	test "$(sql cmd.db "SELECT count(*) FROM results WHERE stderr IS NOT NULL")" = 0 &&
	"$SWEEP" report cmd.db --metric dram__bytes_read.sum --rows n >rep &&
	grep -q "2147484648\|2.147" rep
'

test_expect_success 'a driver that refuses counters: said in one line, nothing made up, the cell ok' '
	rm -f ncu.args &&
	FAKE_NCU_DENY=1 PATH="$T/bin:$PATH" "$SWEEP" run cmd.yaml --db deny.db 2>err &&
	test "$(sql deny.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 2 &&
	test "$(sql deny.db "SELECT DISTINCT stderr FROM results")" = "counters: ncu: ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." &&
	test "$(sql deny.db "SELECT group_concat(DISTINCT name) FROM metrics WHERE name <> '\''seconds'\''")" = t
'

test_expect_success 'no ncu on PATH: said, nothing made up' '
	mkdir -p empty && ln -sf "$(command -v sh)" empty/sh &&
	PATH="$T/empty" "$SWEEP" run cmd.yaml --db none.db 2>err &&
	test "$(sql none.db "SELECT DISTINCT stderr FROM results")" = "counters: no ncu (Nsight Compute'\''s CLI) on PATH: none read" &&
	test "$(sql none.db "SELECT group_concat(DISTINCT name) FROM metrics WHERE name <> '\''seconds'\''")" = t
'

test_expect_success 'a kernel cell without CUPTI: one launch more, in sweep __counters under ncu, only it profiled' '
	rm -f ncu.args &&
	printf "%s\n" "sweep: k" "kernel: cpu.copy" "params: {bytes: [4K, 8K]}" "counters: [dram__bytes_read.sum]" \
		"timing: {min_samples: 3, min_time: 0, max_noise: 1, warmup: 0}" >k.yaml &&
	SWEEP_CUPTI_LIB="$T/no-libcupti.so" PATH="$T/bin:$PATH" "$SWEEP" run k.yaml --db k.db 2>err &&
	test "$(wc -l <ncu.args)" = 2 &&
	grep -q -- "--metrics dram__bytes_read.sum --profile-from-start off $SWEEP __counters /tmp/sweep-counters-[A-Za-z0-9]* {\"bytes\":4096} -1$" ncu.args &&
	test "$(sql k.db "SELECT group_concat(DISTINCT r.status || '\''|'\'' || m.value) FROM results r JOIN metrics m ON m.result = r.id
		WHERE m.name = '\''dram__bytes_read.sum'\''")" = "ok|2147484648.0" &&
	test "$(ls /tmp/sweep-counters-* 2>/dev/null | wc -l)" = 0 &&
	"$SWEEP" __counters k.yaml "{\"bytes\": 4096}" -1 &&
	test_expect_code 3 "$SWEEP" __counters k.yaml "{\"bytes\": \"x\"}" -1 2>err &&
	grep -q "bytes" err
'

test_expect_success 'a bad counter name is a spec error' '
	printf "%s\n" "sweep: b" "command: [true]" "counters: [\"dram bytes\"]" >b.yaml &&
	test_expect_code 2 "$SWEEP" run b.yaml --db b.db 2>err &&
	grep -q "^sweep: b.yaml:3:12: .dram bytes. is no counter.s name" err
'
