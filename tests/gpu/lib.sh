# lib.sh: what the evidence scripts share, sourced after `cd` to the repository root with NAME set: the
# environment (root, NVLink multicast off), a log in $OUT/NAME.log, the build against the carried vendor/
# folder, and helpers. Reads the cards' state only: never changes clocks, power limits or modes.
OUT=${OUT:-/tmp/evidence-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/$NAME.log") 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
V=$PWD/vendor R=/tmp/ev S=build/sweep
rm -rf "$R" && mkdir -p "$R"
step() { echo; echo "=== $* ($(date +%T))"; }
q() { $S sql "$1" "$2" --md; }
# build: build/sweep and build/gemm_direct for sm_90 against vendor/ (tests/gpu/vendor.sh).
build() {
	make -j16 CUDA_ARCH="-arch=sm_90" EXTRA_CFLAGS="-I$V/include" EXTRA_LIBS="-L$V/lib -Wl,-rpath,$V/lib" \
		SQLITE_LIBS="-l:libsqlite3.so.0" build/sweep >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
	nvcc -std=c++17 -O2 -arch=sm_90 -DSWEEP_CUDA tests/gpu/gemm_direct.cu -o build/gemm_direct -lcublasLt ||
		exit 1
}
