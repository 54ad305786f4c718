#!/bin/bash
# copy_variants.sh: copy variants side by side (bench/gpu/copy_variants.cu) at 4 and 16 GiB; the gemm 8192^3
# bf16 cell against cuBLASLt timed directly three ways (after 1 s at full load with and without the cell's
# cold-L2 flush, and a short burst from idle), with the SM clock of each, in three interleaved rounds.
# Run after bench/gpu/vendor.sh with vendor/ copied along. Reads the cards' state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=copy_variants
. tests/gpu/lib.sh
step build
build
step "copy variants, 4 GiB then 16 GiB, GPU 0"
build/copy_variants 4 0
build/copy_variants 16 0
step "gemm 8192^3 bf16: the cell (1 s warm-up, cold L2) and cuBLASLt direct, three rounds"
for round in 1 2 3; do
	echo "== round $round"
	timeout 60 mpirun -np 1 --bind-to none $S run tests/gpu/specs/ev-gemm3.yaml --db "$R/cold$round.db" 2>&1 |
		grep -E '^sweep: ' | tail -1
	$S sql "$R/cold$round.db" "SELECT 'cell (cold L2)' AS what, printf('%.4f', median * 1e3) AS median_ms,
		printf('%.4f', min * 1e3) AS min_ms, n, throttled, printf('%.0f', sm_clock) AS sm_mhz,
		printf('%.3f', median * sm_clock) AS mcycles, status FROM v_results" --csv | tail -1
	build/gemm_direct 8192 8192 8192 0 1 1
	build/gemm_direct 8192 8192 8192 0 1 0
	build/gemm_direct 8192 8192 8192 0 0 0
done
tar -C "$R" -czf "$OUT/copy_variants-dbs.tgz" $(cd "$R" && ls *.db)
