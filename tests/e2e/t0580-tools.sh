#!/bin/bash
# t0580-tools: the examples of examples/tools run as shipped, against the real programs where Debian and
# PyPI package them (Google Benchmark, hyperfine, fio, sysbench, pytest-benchmark: make deps installs
# them) and against checked-in samples of real output where they need GPUs (nccl-tests, NVBench). Every
# value sweep stores is compared with what the tool printed or wrote, parsed on its own by
# tests/tools_check.py (python's json and re).
. tests/e2e/lib.sh
export SWEEP

# example NAME: examples/tools/NAME.yaml, run as shipped from another folder (its workdir: is the
# repository root, where its paths point) into $T/NAME.db; every cell ok. The tools write to build/tools.
example() {
	mkdir -p "$ROOT/build/tools" && "$SWEEP" run "$ROOT/examples/tools/$1.yaml" --db "$T/$1.db" --quiet &&
	test "$(sql "$1.db" "SELECT count(*) FROM cells WHERE state <> 'ok'")" = 0
}
# check NAME: tests/tools_check.py NAME on $T/NAME.db
check() { (cd "$ROOT" && python3 tests/tools_check.py "$1" "$T/$1.db"); }

test_expect_success 'Google Benchmark: its JSON file, an item a benchmark, the tool'\''s own mean of its repetitions' '
	(cd "$ROOT" && make -s build/tools/gbench) &&
	example gbench && check gbench
'

test_expect_success 'Google Benchmark'\''s console: bytes'\'' G of 1024 (unit_base: 1024), items'\'' of 1000, against its JSON' '
	(cd "$ROOT" && make -s build/tools/gbench) &&
	example gbench-console && check gbench-console
'

test_expect_success 'hyperfine: its exported JSON, an item a command, mean, median, user and system time' '
	example hyperfine && check hyperfine
'

test_expect_success 'fio: nested JSON values by path and its rounded text (IOPS=16.1k, BW=444MiB/s) by unit' '
	example fio && check fio
'

test_expect_success 'sysbench: regexes on its report, one match each, total time converted from s' '
	example sysbench && check sysbench
'

# Debian's python3 is the one make deps gives pytest-benchmark (another may come first on PATH).
test_expect_success 'pytest-benchmark: its JSON file, an item a test, its statistics in seconds' '
	(PATH=/usr/bin:$PATH && export PATH && example pytest-benchmark) && check pytest-benchmark
'

test_expect_success 'nccl-tests (a real run'\''s text): an item a size, match: each, and its own average' '
	example nccl-tests && check nccl-tests
'

test_expect_success 'NVBench (a real run'\''s JSON): an item a state, values it writes as strings, by filter' '
	example nvbench && check nvbench
'

# Tools whose text is read as they print it: each check parses the output sweep kept (results.stdout and
# stderr, as the tool wrote it) with python's re, and what the tool wrote in a file with python's json.
test_needs "zstd" zstd --version
test_expect_success 'zstd -b: progress overwritten with \r, the figures a terminal shows last' '
	example zstd && check zstd
'

test_expect_success 'python -m timeit: "nsec per loop" (or usec, msec, sec) in seconds' '
	example timeit && check timeit
'

test_needs "openssl" openssl version
test_expect_success 'openssl speed -mr: bare bytes per second given their unit by scale:' '
	example openssl && check openssl
'

test_expect_success 'fio, two jobs of one name: combine: sum adds them, as its group total' '
	example fio-jobs && check fio-jobs
'

test_needs "pyperf (PyPI)" python3 -c "import pyperf"
test_expect_success 'pyperf timeit: its text ("Mean +- std dev: 352 ns +- 24 ns") in seconds' '
	example pyperf && check pyperf
'

test_expect_success 'pyperf timeit -o: its JSON values, bare seconds, one record each, combine: mean' '
	example pyperf-json && check pyperf-json
'

# The example's server: iperf3 -s on the port it names, for two client runs (one a cell).
test_needs "iperf3" iperf3 --version
test_expect_success 'iperf3 -J (-P 2 writes keys twice): duplicate_keys: last, as python reads them' '
	run_bg timeout 60 iperf3 -s -p 5201 && server=$BG_PID &&
	wait_for 10 sh -c "ss -ltn | grep -q \":5201 \"" &&
	example iperf3 && kill "$server" && { wait_gone "$server" || :; } && check iperf3
'

test_needs "perf stat (perf_event_paranoid)" perf stat -e task-clock true
test_expect_success 'perf stat: "msec task-clock" and "K/sec" as perf means them' '
	example perf-stat && check perf-stat
'
