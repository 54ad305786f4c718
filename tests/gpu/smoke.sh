#!/bin/bash
# smoke.sh: on the H200 machine, build sweep against the carried vendor/ folder, check every
# CUDA kernel (good and corrupted outputs, compute-sanitizer on small cells), run the copy, gemm and decode
# sweeps under mpirun, and time cuBLASLt directly for the gemm 8192^3 bf16 cell. Logs and databases go to
# $OUT. Reads the card's state only: never changes clocks, power limits or modes.
# Run there as: tests/gpu/smoke.sh [quick]   (after bench/gpu/vendor.sh here, with vendor/ copied along);
# quick stops after the checks and the timed cells, before compute-sanitizer and the sweeps.
# Exits 1 when a check failed (check_kernels, a timed cell, compute-sanitizer's errors, a sweep that did
# not end with every cell ok); the last line names each failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
# The lent card's clocks must never change: --lock-clocks is refused before anything.
case " $* " in *" --lock-clocks "*) echo "smoke.sh: --lock-clocks is refused: the GPU machines' clocks must not change" >&2; exit 2;; esac
OUT=${OUT:-/tmp/h200-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/h200.log") 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# The lent card: sweep refuses --lock-clocks (and any lock or reset) under this.
export SWEEP_NO_LOCK_CLOCKS=1
V=$PWD/vendor
R=/tmp/h200-results
rm -rf "$R" && mkdir -p "$R"
step() { echo; echo "=== $* ($(date +%T))"; }
failed=
fail() { failed="$failed $1"; echo "FAILED: $1"; }
finish() {
	if [ -n "$failed" ]; then echo "smoke: failed:$failed"; exit 1; fi
	echo "smoke: every check passed"
	exit 0
}

step machine
nvidia-smi --query-gpu=index,name,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,power.limit,ecc.mode.current \
	--format=csv
ls /usr/include/yaml.h /usr/include/sqlite3.h 2>&1
ldconfig -p | grep -E 'libyaml|openblas|sqlite|hwloc|nvidia-ml' | sed 's/^/  /'
nproc

step build
MK=(CUDA_ARCH="-arch=sm_90" EXTRA_CFLAGS="-I$V/include" EXTRA_LIBS="-L$V/lib -Wl,-rpath,$V/lib"
    SQLITE_LIBS="-l:libsqlite3.so.0")
if make -j16 "${MK[@]}" build/sweep >"$R/build.log" 2>&1; then
	echo "build/sweep built"
	LIBSWEEP=$(ls build/cuda/libsweep.a build/libsweep.a 2>/dev/null | head -1)
else
	# A file being edited elsewhere may not compile: the drivers below still link from what did.
	grep -E 'error|\*\*\*' "$R/build.log" | head -20
	make -k -j16 "${MK[@]}" build/cuda/libsweep.a >>"$R/build.log" 2>&1
	LIBSWEEP=build/cuda/libsweep-partial.a
	rm -f "$LIBSWEEP" && ar rcs "$LIBSWEEP" $(find build/cuda -name '*.o' ! -name main.o)
	echo "build/sweep NOT built; drivers linked from the objects that compiled"
fi
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
LIBS="-L$V/lib -Wl,-rpath,$V/lib -lyaml -ljansson -lpcre2-8 -lcrypto -l:libsqlite3.so.0 -lhwloc -lopenblas $(mpicc --showme:link)
	-lpthread -ldl -lm -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart_static -lcublasLt
	-lnccl -lrt -lstdc++"
gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -DSWEEP_CUDA \
	-I"$CUDA_HOME/include" -I"$V/include" tests/gpu/check_kernels.c "$LIBSWEEP" $LIBS \
	-o build/check_kernels || exit 1
nvcc -std=c++17 -O2 -arch=sm_90 -DSWEEP_CUDA -I"$V/include" bench/gpu/gemm_direct.cu src/nvml.c -o build/gemm_direct \
	-lcublasLt -ldl || exit 1
[ -x build/sweep ] && build/sweep kernels | grep -E '^[a-z_.0-9]+:'

step check_kernels on GPU 0
build/check_kernels 0 | tee "$R/check.log" | grep -v '^ok - facts'
[ "${PIPESTATUS[0]}" = 0 ] || fail check_kernels

step "timed cells on GPU 0 (the sweeps' timing), then cuBLASLt timed directly"
build/check_kernels 0 cells \
	copy '{"bytes": "1G", "unroll": 1}' copy '{"bytes": "1G", "unroll": 2}' \
	copy '{"bytes": "1G", "unroll": 4}' copy '{"bytes": "1G", "unroll": 8}' \
	copy '{"bytes": "4G", "unroll": 4}' h2d '{"bytes": "256M"}' d2h '{"bytes": "256M"}' \
	gemm '{"M": 8192, "N": 8192, "K": 8192, "dtype": "bf16"}' \
	decode_attn '{"batch": 1, "kv_len": 65536}' decode_attn '{"batch": 4, "kv_len": 65536}' \
	decode_attn '{"batch": 16, "kv_len": 32768}' decode_attn '{"batch": 16, "kv_len": 131072}' |
	tee "$R/cells.log" | grep -E '^(ok|not ok) - (copy|h2d|d2h|gemm|decode_attn) '
[ "${PIPESTATUS[0]}" = 0 ] && ! grep -q '^not ok' "$R/cells.log" || fail "timed cells"
build/gemm_direct 8192 8192 8192 0
cp "$R/check.log" "$R/cells.log" "$OUT/"
[ "${1:-full}" = quick ] && finish
# The last GPU (the second of two; the only one of a one-GPU machine).
G=$(($(nvidia-smi -L | wc -l) - 1))
step check_kernels on GPU $G, small cells, under compute-sanitizer memcheck
timeout 100 compute-sanitizer --tool memcheck --print-limit 20 build/check_kernels $G small 2>&1 |
	tail -40 | tee "$R/memcheck.log" | grep -E 'ERROR SUMMARY|not ok|PASSED|FAILED|========= [A-Z]'
grep -q "ERROR SUMMARY: 0 errors" "$R/memcheck.log" && ! grep -q '^not ok' "$R/memcheck.log" || fail memcheck

run_sweep() {   # name
	step "sweep run sweeps/$1.yaml"
	timeout 300 mpirun -np 1 --bind-to none build/sweep run "sweeps/$1.yaml" --db "$R/$1.db" 2>&1 |
		tail -3
	[ "${PIPESTATUS[0]}" = 0 ] || fail "sweep $1"
}
run_sweep copy
build/sweep sql "$R/copy.db" "SELECT json_extract(params, '$.bytes') / 1048576 AS MiB,
	json_extract(params, '$.unroll') AS unroll, printf('%.1f', m.value) AS gbs,
	printf('%.1f%%', m.value / 4800 * 100) AS of_4800, n, printf('%.2f%%', noise * 100) AS noise
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs' WHERE status = 'ok'
	ORDER BY 1, 2" --md
run_sweep gemm
build/sweep sql "$R/gemm.db" "SELECT json_extract(params, '$.dtype') AS dtype,
	json_extract(params, '$.M') AS M, json_extract(params, '$.N') AS N, json_extract(params, '$.K') AS K,
	printf('%.4f', median * 1e3) AS ms,
	printf('%.1f', m.value / 1000) AS tflops, n, printf('%.2f%%', noise * 100) AS noise
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gflops' WHERE status = 'ok'
	ORDER BY 1, 2, 3" --md
build/sweep sql "$R/gemm.db" "SELECT status, error FROM v_results WHERE status != 'ok'" --md
run_sweep decode
build/sweep sql "$R/decode.db" "SELECT json_extract(params, '$.dtype') AS dtype,
	json_extract(params, '$.batch') AS batch, json_extract(params, '$.kv_len') AS kv_len,
	printf('%.2f', median * 1e6) AS us, printf('%.1f', m.value) AS gbs, n,
	printf('%.2f%%', noise * 100) AS noise
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gbs' WHERE status = 'ok'
	ORDER BY 1, 2, 3" --md
build/sweep sql "$R/decode.db" "SELECT status, error FROM v_results WHERE status != 'ok'" --md

step "gemm 8192^3 bf16: cuBLASLt timed directly, then the sweep's cell"
build/gemm_direct 8192 8192 8192 0
build/sweep sql "$R/gemm.db" "SELECT 'sweep cell' AS what, printf('%.4f', median * 1e3) AS median_ms,
	printf('%.1f', m.value / 1000) AS tflops, n,
	(SELECT value FROM metrics WHERE result = v_results.id AND name = 'cublaslt_algo') AS algo
	FROM v_results JOIN metrics m ON m.result = v_results.id AND m.name = 'gflops'
	WHERE json_extract(params, '$.dtype') = 'bf16' AND json_extract(params, '$.M') = 8192
	AND status = 'ok'" --md

step "results to \$OUT"
for f in copy gemm decode; do cp "$R/$f.db" "$OUT/" 2>/dev/null; done
cp "$R/check.log" "$R/memcheck.log" "$OUT/" 2>/dev/null
ls -la "$OUT"
finish
