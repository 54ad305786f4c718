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
