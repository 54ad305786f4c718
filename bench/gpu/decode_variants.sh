#!/bin/bash
# decode_variants.sh: decode_attn's tuning constants (kernels/cuda_decode_attn.cu) tried side by side: each
# variant's kernel object is linked ahead of libsweep.a into tests/gpu/check_kernels.c, which times the cells
# of one decode step over 64K keys (32/8 heads of dim 128) at batch 1, 4 and 16. Run after vendor.sh with
# vendor/ copied along; reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=decode_variants
. tests/gpu/lib.sh
build
CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
LIBS="-L$V/lib -Wl,-rpath,$V/lib -lyaml -ljansson -lpcre2-8 -lcrypto -l:libsqlite3.so.0 -lhwloc -lopenblas $(mpicc --showme:link) -lpthread
	-ldl -lm -L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart_static -lcublasLt -lnccl -lrt -lstdc++"
variant() { # NAME DEFINES...
	local n=$1; shift
	nvcc -std=c++17 -O3 -arch=sm_90 "$@" -c kernels/cuda_decode_attn.cu -o "$R/attn-$n.o" || return
	gcc -std=c11 -D_GNU_SOURCE -O2 -DSWEEP_CUDA -I"$CUDA_HOME/include" -I"$V/include" tests/gpu/check_kernels.c \
		"$R/attn-$n.o" build/cuda/libsweep.a $LIBS -o "$R/check-$n" || return
	echo "== $n: $*"
	"$R/check-$n" 0 cells decode_attn '{"batch": 1, "kv_len": 65536}' \
		decode_attn '{"batch": 4, "kv_len": 65536}' decode_attn '{"batch": 16, "kv_len": 65536}' | grep -E '^(ok|not ok) - decode' |
		sed -E 's/.*"batch": ([0-9]+).*median ([0-9.]+) ms, ([0-9.]+) GB\/s.*/batch \1: \2 ms, \3 GB\/s/'
}
variant base
variant stages2 -DATTN_STAGES=2
variant stages4 -DATTN_STAGES=4
variant warps2 -DATTN_WARPS=2
variant warps8-stages2 -DATTN_WARPS=8 -DATTN_STAGES=2
variant chunk512 -DATTN_MIN_CHUNK=512
variant waves8 -DATTN_WAVES=8
step "every kernel's check with the default constants"
"$R/check-base" 0 | grep -E '^not ok|^ok - decode_attn.*(passes|caught)|PASSED|FAILED'
