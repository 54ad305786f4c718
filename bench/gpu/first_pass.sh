#!/bin/bash
# first_pass.sh: on the two-H200 machine, the measurements the GPU and NCCL issues ask for, through the real
# `sweep run` under mpirun, with independent references timed in the same run. Logs and databases go to
# $OUT. Reads the cards' state only. Run there after bench/gpu/vendor.sh here, with vendor/ copied along.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=first_pass
. tests/gpu/lib.sh
run() { # run NP SPEC DB [extra]: prints the master's summary line
	timeout 100 mpirun -np "$1" --bind-to none $S run "$2" --db "$3" ${4:-} 2>&1 | grep -E '^sweep: ' | tail -3
}

step machine
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
step build
build
$S kernels | grep -E '^[a-z_.0-9]+:' | tr '\n' ' '; echo

step "single GPU: copy, gemm, decode, h2d (two passes each)"
for s in copy gemm decode xfer; do run 1 tests/gpu/specs/ev-$s.yaml "$R/$s.db"; done
q "$R/copy.db" "SELECT pass, json_extract(params, '\$.bytes') / 1048576 AS MiB, json_extract(params,
	'\$.unroll') AS unroll, printf('%.1f', m.value) AS gbs, printf('%.1f%%', m.value / 48) AS of_4800,
	n, printf('%.2f%%', noise * 100) AS noise FROM v_results JOIN metrics m ON m.result = v_results.id
	AND m.name = 'gbs' WHERE status = 'ok' ORDER BY 2, 3, 1"
q "$R/gemm.db" "SELECT pass, printf('%.4f', median * 1e3) AS median_ms, printf('%.1f', m.value / 1000)
	AS tflops, n, throttled, printf('%.2f%%', noise * 100) AS noise, printf('%.0f', sm_clock) AS sm_mhz
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gflops' ORDER BY pass"
build/gemm_direct 8192 8192 8192 0
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs, n FROM v_results JOIN metrics m ON m.result = v_results.id AND
	m.name = 'gbs' WHERE status = 'ok' ORDER BY 2, 1"
q "$R/xfer.db" "SELECT pass, json_extract(params, '\$.bytes') / 1048576 AS MiB, printf('%.1f', m.value) AS gbs
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs' ORDER BY 2, 1"
for s in copy gemm decode xfer; do
	q "$R/$s.db" "SELECT '$s' AS sweep, count(*) AS cells, printf('%.4f', median(r)) AS median_pass2_over_pass1
		FROM (SELECT b.median / a.median AS r FROM v_results a JOIN v_results b ON a.params = b.params
		AND a.pass = 0 AND b.pass = 1 AND a.status = 'ok' AND b.status = 'ok')"
	q "$R/$s.db" "SELECT status, count(*), min(error) FROM v_results WHERE status != 'ok' GROUP BY 1"
done

step "the same 220-cell grid on 1 GPU, then on 2"
run 1 tests/gpu/specs/ev-grid.yaml "$R/grid1.db"
run 2 tests/gpu/specs/ev-grid.yaml "$R/grid2.db"
q "$R/grid2.db" "SELECT w.rank, w.gpu, w.binding, count(*) AS cells FROM results r JOIN workers w
	ON w.id = r.worker GROUP BY w.id"

step "NCCL: all_reduce and all_gather, 8 B to 4 GiB, 2 GPUs"
for k in all_reduce all_gather; do
	sed "s/KERNEL/$k/g" tests/gpu/specs/ev-nccl.yaml >"$R/nccl-$k.yaml"
	run 2 "$R/nccl-$k.yaml" "$R/nccl-$k.db"
	q "$R/nccl-$k.db" "SELECT json_extract(params, '\$.bytes') AS bytes, printf('%.2f', median * 1e6) AS us,
		printf('%.2f', (SELECT value FROM metrics WHERE result = v.id AND name = 'algbw_gbs')) AS algbw,
		printf('%.2f', (SELECT value FROM metrics WHERE result = v.id AND name = 'busbw_gbs')) AS busbw,
		(SELECT value FROM metrics WHERE result = v.id AND name = 'errors') AS wrong, n, status
		FROM v_results v ORDER BY 1"
done
step "torch.distributed reference (CUDA events), 256 MiB to 4 GiB"
timeout 200 torchrun --nproc_per_node 2 bench/gpu/torch_nccl.py 2>&1 | grep '^torch ' | tee "$R/torch.txt"

step "mixed grid of 1-GPU and 2-GPU cells"
run 2 tests/gpu/specs/ev-mixed.yaml "$R/mixed.db"
q "$R/mixed.db" "SELECT json_extract(params, '\$.gpus') AS gpus, w.rank, count(*) AS cells,
	sum(r.status = 'ok') AS ok FROM results r JOIN cells c ON c.id = r.cell JOIN workers w ON w.id = r.worker
	GROUP BY 1, 2"
q "$R/grid1.db" "SELECT * FROM hosts"
tar -C "$R" -czf "$OUT/first_pass-dbs.tgz" $(cd "$R" && ls *.db torch.txt build.log 2>/dev/null)
ls -la "$OUT"
