#!/bin/bash
# decode_tune.sh: decode_attn's tuning constants side by side through `sweep run` with default timing: each
# variant's kernel object is linked ahead of libsweep.a into a sweep binary of its own, which runs
# tests/gpu/specs/decode-tune.yaml (SPEC=FILE another spec, e.g. decode-dims.yaml); then decode_attn's check
# over odd shapes (decode-check.yaml). With OLD=FILE, FILE (another version of kernels/cuda_decode_attn.cu,
# e.g. `git show REV:kernels/...`) is one more variant, "old", run before and after the others. Run after
# vendor.sh with vendor/ copied along; reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=decode_tune
. tests/gpu/lib.sh
build
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
LINK="build/cuda/libsweep.a -L$V/lib -Wl,-rpath,$V/lib -lyaml -l:libsqlite3.so.0 -ljansson -lpcre2-8 -lcrypto -lhwloc
	-lopenblas $(mpicc --showme:link) -lpthread -ldl -lm -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64
	-lcudart_static -lnccl -lrt -lstdc++"
obj() { # NAME SOURCE DEFINES...: compile a variant's object (in the background)
	local n=$1 src=$2; shift 2
	nvcc -std=c++17 -O3 -arch=sm_90 -DSWEEP_CUDA -Ikernels -Isrc "$@" -c "$src" -o "$R/attn-$n.o" &&
		cc -o "$R/sweep-$n" build/cuda/src/main.o "$R/attn-$n.o" $LINK
}
# "one_wave0" without the rule that makes one wave of splits where there would be between one and two;
# two and four stages of 16 keys in flight per warp; 2 and 8 warps a block (8 with two stages: 128 KiB).
VARIANTS=(base one_wave0 stages2 stages4 warps2 warps8)
DEFS=("" "-DATTN_ONE_WAVE=0" "-DATTN_STAGES=2" "-DATTN_STAGES=4" "-DATTN_WARPS=2" "-DATTN_WARPS=8 -DATTN_STAGES=2")
SRCS=()
for _ in "${VARIANTS[@]}"; do SRCS+=(kernels/cuda_decode_attn.cu); done
RUNS=("${VARIANTS[@]}")
if [ -n "${OLD:-}" ]; then
	VARIANTS+=(old) DEFS+=("") SRCS+=("$OLD") RUNS=(old "${RUNS[@]}" old)
fi
step "compile ${#VARIANTS[@]} variants"
# Waiting on the pids alone: a bare `wait` would also wait for lib.sh's tee, which never ends.
pids=()
for i in "${!VARIANTS[@]}"; do
	obj "${VARIANTS[$i]}" "${SRCS[$i]}" ${DEFS[$i]} >"$R/obj-${VARIANTS[$i]}.log" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
step "run"
for n in "${RUNS[@]}"; do
	[ -x "$R/sweep-$n" ] || { echo "$n: no binary"; tail -5 "$R/obj-$n.log"; continue; }
	rm -f "$R/$n.db"
	timeout 120 "$R/sweep-$n" run "${SPEC:-tests/gpu/specs/decode-tune.yaml}" --db "$R/$n.db" 2>&1 | tail -1
	q "$R/$n.db" "SELECT '$n' AS variant, group_concat(printf('%s%d/%d:%.2f@%d',
		ifnull('d' || json_extract(params, '\$.dim') || ' ', ''), json_extract(params, '\$.batch'),
		json_extract(params, '\$.kv_len') / 1024, median * 1e6, sm_clock), '  ') AS us,
		group_concat((SELECT value FROM metrics m WHERE m.result = v.id AND m.name = 'splits'), ',') AS splits
		FROM (SELECT * FROM v_results ORDER BY id) v"
done
step "decode_attn's check over odd lengths, dims, group sizes and types (the defaults)"
timeout 200 $S run tests/gpu/specs/decode-check.yaml --db "$R/check.db" 2>&1 | tail -1
q "$R/check.db" "SELECT state, count(*), min(error) FROM cells GROUP BY 1"
