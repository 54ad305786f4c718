#!/bin/bash
# t0130-cannot-run: what a run says of cells it could not measure: a reason whole on its closing line (its
# first line, cut only between words).
. tests/e2e/lib.sh

test_expect_success 'a quarantined cell'\''s reason is its whole first line on the closing line' '
	printf "%s\n" "sweep: longr" \
		"command: [sh, -c, \"echo '\''cuda: CUDA driver version is insufficient for CUDA runtime version, so nothing ran here'\'' >&2; exit 1\"]" \
		"metrics: {v: \"v=([0-9]+)\"}" "max_attempts: 1" >long.yaml &&
	test_expect_code 3 "$SWEEP" run long.yaml --db long.db 2>err &&
	grep -F "1 cells quarantined: {} (exit 1: cuda: CUDA driver version is insufficient for CUDA runtime version, so nothing ran here); to measure them again" err
'

test_expect_success 'a program no worker has: exit 2 before any attempt, naming the program, host and PATH' '
	printf "%s\n" "sweep: nope" "command: [no-such-prog-t0130, x]" "metrics: {v: \"v=([0-9]+)\"}" \
		"params: {n: [1, 2, 3]}" >nope.yaml &&
	test_expect_code 2 "$SWEEP" run nope.yaml --db nope.db 2>err &&
	grep -F "no worker of this run can run sweep '\''nope'\'': program '\''no-such-prog-t0130'\'' not found on host '\''$(hostname)'\'' (PATH searched: $PATH)" err &&
	grep -q "sweep: nope: nothing was attempted" err &&
	test "$(sql nope.db "SELECT group_concat(state || attempts, \" \") FROM cells")" = "planned0 planned0 planned0" &&
	test "$(sql nope.db "SELECT count(*) FROM results")" = 0
'

test_expect_success 'a relative program missing beside the spec: the folder it was looked for in is named' '
	mkdir -p sub &&
	printf "%s\n" "sweep: rel" "command: [./bench.sh]" "metrics: {v: \"v=([0-9]+)\"}" >sub/rel.yaml &&
	test_expect_code 2 "$SWEEP" run sub/rel.yaml --db rel.db 2>err &&
	grep -F "program '\''./bench.sh'\'' is not an executable file in '\''$T/sub'\''" err &&
	printf "#!/bin/sh\necho v=7\n" >sub/bench.sh && chmod +x sub/bench.sh &&
	"$SWEEP" run sub/rel.yaml --db rel2.db 2>err &&
	test "$(sql rel2.db "SELECT state || attempts FROM cells")" = ok1
'

test_expect_success 'under mpirun a worker without the program takes no cell; the others measure every cell once' '
	test_needs mpirun command -v mpirun &&
	mkdir -p bin && printf "#!/bin/sh\necho v=\$1\n" >bin/t0130-prog && chmod +x bin/t0130-prog &&
	printf "%s\n" "sweep: some" "command: [t0130-prog, \"{n}\"]" "metrics: {v: \"v=([0-9]+)\"}" \
		"params: {n: [1, 2, 3, 4, 5, 6]}" >some.yaml &&
	timeout -k 10 120 mpirun --bind-to none -np 1 -x PATH="$T/bin:$PATH" "$SWEEP" run some.yaml --db some.db : \
		-np 1 -x PATH="$PATH" "$SWEEP" run some.yaml --db some.db 2>err &&
	grep -F "rank 1 takes no cell: program '\''t0130-prog'\'' not found" err &&
	test "$(sql some.db "SELECT group_concat(DISTINCT state || attempts) FROM cells")" = ok1 &&
	test "$(sql some.db "SELECT DISTINCT w.rank FROM results r JOIN workers w ON w.id = r.worker")" = 0
'

# A CUDA build (make check builds one where nvcc is) on a machine without a GPU (CI, a laptop).
if ! "$SWEEP" kernels 2>/dev/null | grep -q "^copy:" || [ -e /dev/nvidia0 ]; then
	echo "ok - # SKIP GPU cells on a machine without a GPU: a CUDA build on a machine without one is needed"
else
	test_expect_success 'GPU cells are handed to no worker without a GPU: they wait, and the closing line says so' '
		printf "%s\n" "sweep: gpu" "kernel: copy" "params: {bytes: [1M, 4M]}" >gpu.yaml &&
		test_expect_code 3 "$SWEEP" run gpu.yaml --db gpu.db 2>err &&
		grep -F "sweep: gpu: 2 cells wait for a GPU (1 worker of this run had none: kernel '\''copy'\'' runs on a GPU and host '\''$(hostname)'\'' has none)" err &&
		test "$(sql gpu.db "SELECT group_concat(state || attempts, \" \") FROM cells")" = "planned0 planned0"
	'
fi
