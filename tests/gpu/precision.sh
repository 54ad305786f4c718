#!/bin/bash
# precision.sh: on one H200, the issue's grid (7 bf16 GEMMs from 1x6144x4096 to 8192x28672x4096,
# decode_attn at batch 1 and 8 over 1K-64K keys, copies of 256 MiB and 2 GiB, six passes of the 67 us
# GEMM) with default timing through `sweep run`, then triton's do_bench on the same shapes in the same job
# (refs.py), then the table (cell, wall, samples, stop rule, median and its 95 % interval, do_bench) and
# the checks (precision.py): median wall per cell at most do_bench's, no cell over 2.5 s, six passes
# within 0.5 %, shapes of 0.5 ms and more within 1 % of do_bench at the same clock, decode within 1.15x of
# SDPA; exit 1 when one fails. The same-clock check takes each such shape's grid cell and the cells of
# its paired rounds (refs.py --pairs: the shape through sweep alone from an idle second, as do_bench's
# ladder runs), each against do_bench's ladder at its own clock, and judges their median: a grid cell runs
# in a state the ladder may not reach (after the larger GEMMs before it: 8192x28672x4096 at 1392 MHz, where
# the rungs from an idle second reached 1524-1540). do_bench timed along each round's timeline is printed.
# Fits one 10-minute command: about 5 minutes (build 1-2, sweeps under one, do_bench and the pairs about
# 3), at most 10 (each sweep cut at 75 s, do_bench at 270 s; the checks then say which cells ran long).
# Run after bench/gpu/vendor.sh here, with vendor/ copied along. Reads the card's state only.
# `precision.sh cpu` is its CPU twin, which make check runs: sleep cells with default timing and
# time.sleep timed the do_bench way, through the same steps and the same table and checks (their verdicts
# shown, not enforced: a shared CPU is not the card), with build/sweep as built.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=precision
. tests/gpu/lib.sh
if [ "${1:-gpu}" = cpu ]; then
	grids=precision-cpu passes=precision-cpu-passes
else
	grids="timing-gemm timing-decode timing-copy" passes=timing-passes
	step machine
	nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu \
		--format=csv
	step build
	build
fi

step "the grid and six passes with default timing"
dbs=()
for s in $grids $passes; do
	timeout 75 $S run "tests/gpu/specs/$s.yaml" --db "$R/$s.db" 2>&1 | tail -1
	dbs+=("$R/$s.db")
done

step "do_bench on the same shapes"
if [ "${1:-gpu}" = cpu ]; then
	python3 tests/gpu/precision.py cpuref --pairs $S "$R" 0.5 1 2 | tee "$R/refs.txt"
else
	PYTHONUNBUFFERED=1 timeout 270 python3 bench/gpu/refs.py --passes 6 --pairs $S "$R" 2>&1 | grep -v Warning |
		tee "$R/refs.txt"
	nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
fi

step "table and checks"
python3 tests/gpu/precision.py table "$R/refs.txt" "${dbs[@]}"
rc=$?
cp "${dbs[@]}" "$R/refs.txt" "$OUT"/
[ "${1:-gpu}" = cpu ] && rc=0
exit $rc
