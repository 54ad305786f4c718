# lib.sh: what the GPU checks (tests/gpu/) and the evidence scripts (bench/gpu/) share, sourced by path
# after `cd` to the repository root with NAME set: the environment (root, NVLink multicast off), a log in
# $OUT/NAME.log, scratch in $R (/tmp/ev unless set), the build against the carried vendor/ folder, and
# helpers. Reads the cards' state only: never changes clocks, power limits or modes (SWEEP_NO_LOCK_CLOCKS;
# a script's --lock-clocks is refused here, lib.sh reading the script's own arguments).
# The lent cards' clocks must never change: a script given --lock-clocks stops here (exit 2), before its
# log or anything else, and sweep refuses --lock-clocks (and any lock or reset) under SWEEP_NO_LOCK_CLOCKS.
for a in "$@"; do
	if [ "$a" = --lock-clocks ]; then
		echo "$NAME: --lock-clocks is refused: the GPU machines' clocks must not change" >&2
		exit 2
	fi
done
export SWEEP_NO_LOCK_CLOCKS=1
OUT=${OUT:-/tmp/evidence-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/$NAME.log") 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
V=$PWD/vendor R=${R:-/tmp/ev} S=build/sweep
rm -rf "$R" && mkdir -p "$R"
step() { echo; echo "=== $* ($(date +%T))"; }
q() { $S sql "$1" "$2" --md; }
# make_sweep DIR LOG: DIR/build/sweep (DIR a copy of the tree) for sm_90 against vendor/
# (bench/gpu/vendor.sh), make's output in LOG; make's status.
make_sweep() {
	(cd "$1" && make -j16 CUDA_ARCH="-arch=sm_90" EXTRA_CFLAGS="-I$V/include" \
		EXTRA_LIBS="-L$V/lib -Wl,-rpath,$V/lib" SQLITE_LIBS="-l:libsqlite3.so.0" build/sweep) >"$2" 2>&1
}
# build_sweep: make_sweep of this tree into build/sweep, or the end of its log and exit 1.
build_sweep() {
	make_sweep . "$R/build.log" || { tail -30 "$R/build.log"; exit 1; }
}
# find_cupti: SWEEP_CUPTI_LIB exported for the CUPTI sweep loads when the loader has no libcupti.so.13: the
# first one found under /usr and /opt (a Python wheel's, nvidia-cuda-cupti), else a copy brought along in
# vendor/cupti (with libnvperf_host.so beside it). Prints which.
find_cupti() {
	if [ -z "${SWEEP_CUPTI_LIB:-}" ] && ! ldconfig -p | grep -q 'libcupti\.so\.13 '; then
		SWEEP_CUPTI_LIB=$( (find /usr /opt -name 'libcupti.so.13*' 2>/dev/null | sort
			ls "$V"/cupti/libcupti.so.13 2>/dev/null) | head -1)
		[ -n "$SWEEP_CUPTI_LIB" ] && export SWEEP_CUPTI_LIB
	fi
	echo "CUPTI: ${SWEEP_CUPTI_LIB:-libcupti.so.13, from the loader}"
}
# copy_tree DIR: DIR afresh, a copy of the tree without its builds and vendor/ (for a variant to build).
copy_tree() {
	rm -rf "$1" && mkdir -p "$1" &&
		tar cf - --exclude=./build --exclude=./vendor --exclude=./.git . | tar xf - -C "$1"
}
# build: build/sweep, build/gemm_direct and build/copy_variants for sm_90 against vendor/.
build() {
	build_sweep
	nvcc -std=c++17 -O2 -arch=sm_90 -DSWEEP_CUDA bench/gpu/gemm_direct.cu src/nvml.c -o build/gemm_direct \
		-lcublasLt -ldl || exit 1
	nvcc -std=c++17 -O3 -arch=sm_90 bench/gpu/copy_variants.cu -o build/copy_variants || exit 1
}
# build_old: old/build/sweep the same way, when old/ (`git archive` of an earlier commit) was carried along.
build_old() {
	[ -d old ] || return 0
	make_sweep old "$R/old.log" || tail -20 "$R/old.log"
}
# debug_gpu: GPU cells that fail on purpose (an illegal address, a trap) among good ones, through the
# executor: each bad one quarantined after its attempts with the CUDA error, the good ones ok, exit 3.
debug_gpu() {
	step "debug.gpu: an illegal address and a trap among good GPU cells (exit 3 expected)"
	timeout 120 $S run tests/gpu/specs/debug-gpu.yaml --db "$R/dbg.db" 2>&1 | tail -3
	echo "exit ${PIPESTATUS[0]}"
	q "$R/dbg.db" "SELECT json_extract(params, '\$.i') AS i, json_extract(params, '\$.mode') AS mode, state,
		attempts, error FROM cells ORDER BY 1"
	q "$R/dbg.db" "SELECT group_concat(attempt) AS attempts_of_failed FROM results WHERE status != 'ok'"
}
# build_check: build/check_kernels (tests/gpu/check_kernels.c) against build/cuda/libsweep.a; after build.
build_check() {
	local cuda
	cuda=$(dirname "$(dirname "$(command -v nvcc)")")
	gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-unused-parameter -DSWEEP_CUDA -I"$cuda/include" \
		-I"$V/include" tests/gpu/check_kernels.c build/cuda/libsweep.a -L"$V/lib" -Wl,-rpath,"$V/lib" -lyaml -ljansson -lpcre2-8 -lcrypto \
		-l:libsqlite3.so.0 -lhwloc -lopenblas $(mpicc --showme:link) -lpthread -ldl -lm -L"$cuda/lib64" \
		-Wl,-rpath,"$cuda/lib64" -lcudart_static -lnccl -lrt -lstdc++ -o build/check_kernels || exit 1
}
# sweep_run NP SPEC DB: `sweep run` under mpirun; prints the master's summary lines.
sweep_run() {
	timeout 200 mpirun -np "$1" --bind-to none $S run "$2" --db "$3" 2>&1 | grep -E '^sweep: ' | tail -2
}
