#!/bin/bash
# blocking_timer.sh: after first_pass.sh: the timer with NVBench's blocking kernel (launch latency kept out of the
# timed region), copy by our kernel and by cudaMemcpyAsync, gemm against cuBLASLt timed directly, and NCCL
# bus bandwidth from 64 MiB against torch.distributed timed the nccl-tests way (ops back to back).
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=blocking_timer
. tests/gpu/lib.sh
run() { timeout 100 mpirun -np "$1" --bind-to none $S run "$2" --db "$3" 2>&1 | grep -E '^sweep: ' | tail -3; }
step build
build
step copy
run 1 tests/gpu/specs/ev-copy2.yaml "$R/copy.db"
q "$R/copy.db" "SELECT json_extract(params, '\$.bytes') / 1048576 AS MiB, json_extract(params, '\$.method')
	AS method, printf('%.1f', m.value) AS gbs, printf('%.1f%%', m.value / 48) AS of_4800, n FROM v_results
	JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs' ORDER BY 1, 2"
step gemm
run 1 tests/gpu/specs/ev-gemm.yaml "$R/gemm.db"
build/gemm_direct 8192 8192 8192 0
q "$R/gemm.db" "SELECT pass, printf('%.4f', median * 1e3) AS median_ms, printf('%.1f', m.value / 1000)
	AS tflops, n, throttled FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gflops'"
build/gemm_direct 8192 8192 8192 0
step decode
run 1 tests/gpu/specs/ev-decode.yaml "$R/decode.db"
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs FROM v_results JOIN metrics m ON m.result = v_results.id AND
	m.name = 'gbs' ORDER BY 2, 1"
step nccl
for k in all_reduce all_gather; do
	sed "s/KERNEL/$k/g; s/from: 8,/from: 1K,/" tests/gpu/specs/ev-nccl.yaml >"$R/nccl-$k.yaml"
	run 2 "$R/nccl-$k.yaml" "$R/nccl-$k.db"
	q "$R/nccl-$k.db" "SELECT json_extract(params, '\$.bytes') AS bytes, printf('%.2f', median * 1e6) AS us,
		printf('%.2f', (SELECT value FROM metrics WHERE result = v.id AND name = 'busbw_gbs')) AS busbw,
		(SELECT value FROM metrics WHERE result = v.id AND name = 'errors') AS wrong, n, status
		FROM v_results v ORDER BY 1"
done
timeout 200 torchrun --nproc_per_node 2 bench/gpu/torch_nccl.py 2>&1 | grep '^torch '
tar -C "$R" -czf "$OUT/blocking_timer-dbs.tgz" $(cd "$R" && ls *.db 2>/dev/null)
