#!/bin/bash
# kernel_checks.sh: after cuBLASLt became a dlopen on the first gemm cell and decode_attn's splits grew to at
# least 1024 keys: every kernel's check, decode_attn at 64K keys (two passes), the gemm cell against
# cuBLASLt timed directly after the same 1 s warm-up, and sweep hosts probe on both GPUs. Run after
# bench/gpu/vendor.sh with vendor/ copied along. Reads the cards' state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=kernel_checks
. tests/gpu/lib.sh
step build
build
ldd $S | grep -c cublasLt
build_check
step "every kernel's check, good and corrupted outputs (GPU 0)"
build/check_kernels 0 >"$R/check.log" 2>&1
grep -E '^not ok|PASSED|FAILED' "$R/check.log"; grep -c '^ok' "$R/check.log"
grep -E '^ok - (gemm|decode_attn) \{' "$R/check.log" | cut -c1-150
step "decode_attn at 64K keys, batch 1, 4, 16, two passes"
sweep_run 1 tests/gpu/specs/ev-decode.yaml "$R/decode.db"
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs, n, (SELECT value FROM metrics WHERE result = v_results.id AND
	name = 'splits') AS splits FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs'
	WHERE status = 'ok' ORDER BY 2, 1"
q "$R/decode.db" "SELECT count(*) AS cells, printf('%.4f', median(r)) AS median_pass2_over_pass1 FROM (SELECT
	b.median / a.median AS r FROM v_results a JOIN v_results b ON a.params = b.params AND a.pass = 0 AND
	b.pass = 1 AND a.status = 'ok' AND b.status = 'ok')"
step "gemm 8192^3 bf16: the cell and cuBLASLt direct, each after 1 s at full load, two rounds"
for round in 1 2; do
	sweep_run 1 tests/gpu/specs/ev-gemm3.yaml "$R/gemm$round.db" >/dev/null
	$S sql "$R/gemm$round.db" "SELECT 'cell', printf('%.4f ms', median * 1e3), n, printf('%.0f MHz', sm_clock),
		status, error FROM v_results" --csv | tail -1
	build/gemm_direct 8192 8192 8192 0 1 0
done
step "sweep hosts probe on both GPUs"
timeout 200 mpirun -np 2 --bind-to none $S hosts probe --db "$R/probe.db" 2>&1 | grep -E '^sweep: |^probes'
q "$R/probe.db" "SELECT gpu, name, printf('%.1f', value) AS value, unit FROM probes ORDER BY name, gpu"
tar -C "$R" -czf "$OUT/kernel_checks-dbs.tgz" $(cd "$R" && ls *.db) check.log
