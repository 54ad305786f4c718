#!/bin/bash
# final_checks.sh: the final checks on the two-H200 machine, through `sweep run` under mpirun: every CUDA
# kernel's check (and a corrupted output caught), copy by three methods, gemm against cuBLASLt timed
# directly, NCCL 8 B to 4 GiB (no timeouts) against torch.distributed, sweep hosts probe on both GPUs, the
# 220-cell grid on 1 and 2 GPUs, and a mixed 1-/2-GPU grid. Logs and databases go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=final_checks
. tests/gpu/lib.sh
run() { timeout 100 mpirun -np "$1" --bind-to none $S "${@:2}" 2>&1 | grep -E '^sweep: |^probes' | tail -4; }
step build
build
build_check
step "every CUDA kernel's check on GPU 0, and corrupted outputs"
build/check_kernels 0 >"$R/check.log" 2>&1
echo "$(grep -c '^ok' "$R/check.log") ok, $(grep -c '^not ok' "$R/check.log") not ok"
grep -E '^not ok|corrupt|broken' "$R/check.log" | head -12
step copy
run 1 run tests/gpu/specs/ev-copy3.yaml --db "$R/copy.db"
q "$R/copy.db" "SELECT json_extract(params, '\$.bytes') / 1048576 AS MiB, json_extract(params, '\$.method')
	AS method, printf('%.1f', m.value) AS gbs, printf('%.1f%%', m.value / 48) AS of_4800, n FROM v_results
	JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs' ORDER BY 1, 2"
step "gemm 8192^3 bf16: direct, sweep (two passes), direct"
build/gemm_direct 8192 8192 8192 0
run 1 run tests/gpu/specs/ev-gemm.yaml --db "$R/gemm.db"
build/gemm_direct 8192 8192 8192 0
q "$R/gemm.db" "SELECT pass, printf('%.4f', median * 1e3) AS median_ms, printf('%.1f', m.value / 1000)
	AS tflops, n, throttled, printf('%.0f', sm_clock) AS sm_mhz FROM v_results JOIN metrics m
	ON m.result = v_results.id AND m.name = 'gflops' ORDER BY pass"
step "decode (batch 1, 64K keys, 32/8 heads, dim 128)"
run 1 run tests/gpu/specs/ev-decode.yaml --db "$R/decode.db"
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs FROM v_results JOIN metrics m ON m.result = v_results.id AND
	m.name = 'gbs' ORDER BY 2, 1"
step "sweep hosts probe on 2 GPUs"
run 2 hosts probe --db "$R/probe.db"
q "$R/probe.db" "SELECT h.hostname AS host, p.gpu, p.name, printf('%.1f', p.value) AS value, p.unit
	FROM probes p JOIN hosts h ON h.id = p.host ORDER BY p.name, p.gpu"
step "the 220-cell grid on 1 GPU, then on 2"
run 1 run tests/gpu/specs/ev-grid.yaml --db "$R/grid1.db"
run 2 run tests/gpu/specs/ev-grid.yaml --db "$R/grid2.db"
step "NCCL all_reduce and all_gather 8 B to 4 GiB on 2 GPUs, then torch.distributed"
for k in all_reduce all_gather; do
	sed "s/KERNEL/$k/g" tests/gpu/specs/ev-nccl.yaml >"$R/nccl-$k.yaml"
	run 2 run "$R/nccl-$k.yaml" --db "$R/nccl-$k.db"
	q "$R/nccl-$k.db" "SELECT status, count(*) AS results, min(error) FROM results GROUP BY 1"
	q "$R/nccl-$k.db" "SELECT json_extract(params, '\$.bytes') AS bytes, printf('%.2f', median * 1e6) AS us,
		printf('%.2f', (SELECT value FROM metrics WHERE result = v.id AND name = 'busbw_gbs')) AS busbw,
		(SELECT value FROM metrics WHERE result = v.id AND name = 'errors') AS wrong
		FROM v_results v WHERE status = 'ok' AND (json_extract(params, '\$.bytes') <= 1024
		OR json_extract(params, '\$.bytes') >= 268435456) ORDER BY 1"
done
timeout 150 torchrun --nproc_per_node 2 bench/gpu/torch_nccl.py 2>&1 | grep '^torch '
step "mixed grid of 1-GPU and 2-GPU cells"
run 2 run tests/gpu/specs/ev-mixed.yaml --db "$R/mixed.db"
q "$R/mixed.db" "SELECT json_extract(params, '\$.gpus') AS gpus, w.rank, count(*) AS cells,
	sum(r.status = 'ok') AS ok FROM results r JOIN cells c ON c.id = r.cell JOIN workers w ON w.id = r.worker
	GROUP BY 1, 2"
tar -C "$R" -czf "$OUT/final_checks-dbs.tgz" $(cd "$R" && ls *.db check.log 2>/dev/null)
