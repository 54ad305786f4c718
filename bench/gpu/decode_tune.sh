#!/bin/bash
# decode_tune.sh: decode_attn's tuning constants side by side through `sweep run` with default timing: each
# variant's kernel object is linked ahead of libsweep.a into a sweep binary of its own, which runs
# tests/gpu/specs/decode-tune.yaml; then decode_attn's check over odd shapes (decode-check.yaml). Run after
# vendor.sh with vendor/ copied along; reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=decode_tune
. tests/gpu/lib.sh
build
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
LINK="build/cuda/libsweep.a -L$V/lib -Wl,-rpath,$V/lib -lyaml -l:libsqlite3.so.0 -ljansson -lcrypto -lhwloc
	-lopenblas $(mpicc --showme:link) -lpthread -ldl -lm -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64
	-lcudart_static -lnccl -lrt -lstdc++"
obj() { # NAME DEFINES...: compile a variant's object (in the background)
	local n=$1; shift
	nvcc -std=c++17 -O3 -arch=sm_90 -DSWEEP_CUDA "$@" -c kernels/cuda_decode_attn.cu -o "$R/attn-$n.o" &&
		cc -o "$R/sweep-$n" build/cuda/src/main.o "$R/attn-$n.o" $LINK
}
# The splits: "before" without the one-wave rule (1.3 waves at batch 1, 64K keys); at least 1560, 880 and
# 683 keys a split (0.85, 1.5 and 1.9 waves there).
VARIANTS=(base before chunk1560 chunk880 chunk683)
DEFS=("" "-DATTN_ONE_WAVE=0" "-DATTN_ONE_WAVE=0 -DATTN_MIN_CHUNK=1560" "-DATTN_ONE_WAVE=0 -DATTN_MIN_CHUNK=880"
	"-DATTN_ONE_WAVE=0 -DATTN_MIN_CHUNK=683")
step "compile ${#VARIANTS[@]} variants"
# Waiting on the pids alone: a bare `wait` would also wait for lib.sh's tee, which never ends.
pids=()
for i in "${!VARIANTS[@]}"; do
	obj "${VARIANTS[$i]}" ${DEFS[$i]} >"$R/obj-${VARIANTS[$i]}.log" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
step "run"
for n in "${VARIANTS[@]}"; do
	[ -x "$R/sweep-$n" ] || { echo "$n: no binary"; tail -5 "$R/obj-$n.log"; continue; }
	timeout 120 "$R/sweep-$n" run tests/gpu/specs/decode-tune.yaml --db "$R/$n.db" 2>&1 | tail -1
	q "$R/$n.db" "SELECT '$n' AS variant, group_concat(printf('%d/%d:%.2f', json_extract(params, '\$.batch'),
		json_extract(params, '\$.kv_len') / 1024, median * 1e6), '  ') AS us FROM (SELECT * FROM v_results
		ORDER BY id)"
done
step "decode_attn's check over odd lengths, dims, group sizes and types (the defaults)"
timeout 200 $S run tests/gpu/specs/decode-check.yaml --db "$R/check.db" 2>&1 | tail -1
q "$R/check.db" "SELECT state, count(*), min(error) FROM cells GROUP BY 1"
