#!/bin/bash
# copy_methods.sh: the copy methods (kernel, plain, memcpy, bulk) with the read-back L2 flush, on both GPUs;
# the gemm 8192^3 bf16 cell against cuBLASLt timed directly after the same 1 s warm-up at full load, in
# three interleaved rounds; decode_attn at 64K keys; every kernel's check. Run after bench/gpu/vendor.sh
# with vendor/ copied along. Reads the cards' state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=copy_methods
. tests/gpu/lib.sh
step machine
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
	--format=csv
step build
build
build_check

step "every kernel's check, good and corrupted outputs (GPU 0)"
build/check_kernels 0 >"$R/check.log" 2>&1
grep -E '^not ok|PASSED|FAILED' "$R/check.log"; grep -c '^ok' "$R/check.log"; grep 'bulk' "$R/check.log"

COPYQ="SELECT replica, pass, json_extract(params, '\$.bytes') / 1048576 AS MiB, json_extract(params,
	'\$.method') AS method, json_extract(params, '\$.unroll') AS unroll, json_extract(params, '\$.chunk') AS
	chunk, printf('%.1f', m.value) AS gbs, printf('%.2f%%', m.value / 48) AS of_4800, n,
	printf('%.2f%%', noise * 100) AS noise, printf('%.0f', sm_clock) AS mhz, status FROM v_results JOIN
	metrics m ON m.result = v_results.id AND m.name = 'gbs' ORDER BY 3, 4, 5, 6, 1, 2"
step "copy: every method, 1 and 4 GiB, both GPUs, two passes"
sweep_run 2 tests/gpu/specs/ev-copy4.yaml "$R/copy4.db"
q "$R/copy4.db" "$COPYQ"
q "$R/copy4.db" "SELECT count(*) AS cells, printf('%.4f', median(r)) AS median_pass2_over_pass1,
	printf('%.4f', min(r)) AS lo, printf('%.4f', max(r)) AS hi FROM (SELECT b.median / a.median AS r
	FROM v_results a JOIN v_results b ON a.params = b.params AND a.replica = b.replica AND a.pass = 0
	AND b.pass = 1 AND a.status = 'ok' AND b.status = 'ok')"
step "copy: bulk chunk and vector unroll, 4 and 8 GiB, both GPUs"
sweep_run 2 tests/gpu/specs/ev-copy5.yaml "$R/copy5.db"
q "$R/copy5.db" "$COPYQ"

step "gemm 8192^3 bf16: cell (cold L2, hot L2) and cuBLASLt direct, each after 1 s at full load"
sed 's/timeout: 6}/timeout: 6, l2: hot}/; s/ev-gemm3/ev-gemm3-hot/' tests/gpu/specs/ev-gemm3.yaml >"$R/hot.yaml"
for round in 1 2 3; do
	echo "== round $round"
	sweep_run 1 tests/gpu/specs/ev-gemm3.yaml "$R/cold$round.db" >/dev/null
	sweep_run 1 "$R/hot.yaml" "$R/hot$round.db" >/dev/null
	build/gemm_direct 8192 8192 8192 0 1
	build/gemm_direct 8192 8192 8192 0 0
	for d in cold hot; do
		$S sql "$R/$d$round.db" "SELECT '$d' AS l2, printf('%.4f', median * 1e3) AS median_ms,
			printf('%.4f', min * 1e3) AS min_ms, printf('%.4f', max * 1e3) AS max_ms, n, throttled,
			printf('%.0f', sm_clock) AS sm_mhz, status FROM v_results" --csv | tail -1
	done
	nvidia-smi --query-gpu=index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader | head -1
done

step "decode_attn at 64K keys, batch 1, 4, 16, two passes"
sweep_run 1 tests/gpu/specs/ev-decode.yaml "$R/decode.db"
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs, n FROM v_results JOIN metrics m ON m.result = v_results.id AND
	m.name = 'gbs' WHERE status = 'ok' ORDER BY 2, 1"
tar -C "$R" -czf "$OUT/copy_methods-dbs.tgz" $(cd "$R" && ls *.db) check.log
