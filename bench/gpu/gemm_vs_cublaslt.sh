#!/bin/bash
# gemm_vs_cublaslt.sh: the GEMM cell against cuBLASLt timed directly, back to back (cold L2, hot L2, direct,
# in turn), and sweep hosts probe on both GPUs (no failed attempts after the first-launch fix).
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=gemm_vs_cublaslt
. tests/gpu/lib.sh
build
sed 's/timeout: 3}/timeout: 3, l2: hot}/; s/ev-gemm2/ev-gemm2-hot/' tests/gpu/specs/ev-gemm2.yaml >"$R/hot.yaml"
for round in 1 2 3; do
	echo "== round $round"
	timeout 60 mpirun -np 1 --bind-to none $S run tests/gpu/specs/ev-gemm2.yaml --db "$R/cold$round.db" 2>&1 |
		grep '^sweep: '
	timeout 60 mpirun -np 1 --bind-to none $S run "$R/hot.yaml" --db "$R/hot$round.db" 2>&1 | grep '^sweep: '
	build/gemm_direct 8192 8192 8192 0
	for d in cold hot; do
		$S sql "$R/$d$round.db" "SELECT '$d' AS l2, pass, printf('%.4f', median * 1e3) AS median_ms,
			printf('%.4f', min * 1e3) AS min_ms, n, throttled, printf('%.0f', sm_clock) AS sm_mhz, status
			FROM v_results ORDER BY pass" --md
	done
done
echo "== sweep hosts probe"
timeout 120 mpirun -np 2 --bind-to none $S hosts probe --db "$R/probe.db" 2>&1 | grep -E '^sweep: |^probes'
$S sql "$R/probe.db" "SELECT p.gpu, p.name, printf('%.1f', p.value) AS value, p.unit FROM probes p
	ORDER BY p.name, p.gpu" --md
tar -C "$R" -czf "$OUT/gemm_vs_cublaslt-dbs.tgz" $(cd "$R" && ls *.db)
