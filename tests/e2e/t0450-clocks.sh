#!/bin/bash
# t0450-clocks: a spec's clocks: locks each worker's GPU clocks through NVML, only with sweep run
# --lock-clocks, before the worker's first cell, records what was asked and reached with every result and
# among the conditions, and puts the driver's defaults back however the worker ends: the end, an
# interrupt, an executor that crashed, a refusal. All against the fake NVML (tests/unit/fake_nvml.c, loaded
# through SWEEP_NVML_LIB as the driver's library would be), which logs every call that sets or resets a
# clock; CPU kernels' cells hold the lock as GPU cells would: the lock is the worker's.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
test_needs "the fake NVML (make build/tests/fake/libnvidia-ml.so.1)" test -f "$ROOT/build/tests/fake/libnvidia-ml.so.1"
export SWEEP_NVML_LIB="$ROOT/build/tests/fake/libnvidia-ml.so.1" FAKE_NVML_LOG="$T/nvml.log" FAKE_NVML_GPUS=2
MPIRUN="timeout -k 10 120 mpirun --bind-to none"

cat >"$T/lock.yaml" <<'Y'
sweep: lock
kernel: cpu.copy
params:
  bytes: [4K, 8K, 16K, 32K]
clocks: {sm: 1410, memory: 2619}
timing: {min_samples: 3, min_time: 0, max_noise: 1, warmup: 0}
Y
sed -e 's/^clocks: .*/clocks: {sm: base}/' "$T/lock.yaml" >"$T/base.yaml"

# calls NAME [GPU]: how many times the log holds that call (on that GPU), with success.
calls() { grep -c "^nvmlDevice$1 ${2:-[0-9]*} .*= 0$" "$FAKE_NVML_LOG" || :; }

test_expect_success 'clocks: without --lock-clocks is refused with that word, before anything' '
	rm -f nvml.log &&
	test_expect_code 2 "$SWEEP" run lock.yaml --db refused.db 2>err &&
	grep -q "^sweep: lock.yaml: '\''clocks:'\'' locks the GPU clocks of every worker; give --lock-clocks to consent" err &&
	test ! -e nvml.log &&
	test "$(sql refused.db "SELECT count(*) FROM results" 2>/dev/null || echo 0)" = 0
'

test_expect_success 'sweep submit: clocks: needs --lock-clocks, which the job passes to sweep run; refused where forbidden' '
	test_expect_code 2 "$SWEEP" submit lock.yaml --db sub.db --dry-run >job 2>err &&
	grep -q "^sweep: lock.yaml: .clocks:. locks the GPU clocks of every worker; give --lock-clocks to consent" err &&
	test ! -s job && test ! -e sub.db &&
	"$SWEEP" submit lock.yaml --db sub.db --dry-run --lock-clocks >job 2>err &&
	grep -q " run $T/lock.yaml --db $T/sub.db .* --lock-clocks *&\$" job &&
	test_expect_code 2 env SWEEP_NO_LOCK_CLOCKS=1 "$SWEEP" submit lock.yaml --db sub.db --dry-run --lock-clocks \
		>job 2>err &&
	grep -q "^sweep: --lock-clocks is refused: SWEEP_NO_LOCK_CLOCKS is set" err && test ! -s job
'

test_expect_success 'clocks: values are checked where they are written' '
	rm -f nvml.log &&
	printf "sweep: x\nkernel: cpu.copy\nclocks: {sm: fast, memory: base}\n" >bad.yaml &&
	test_expect_code 2 "$SWEEP" run bad.yaml --lock-clocks 2>err &&
	grep -q "^sweep: bad.yaml:3:14: expected MHz or .base. for .clocks.sm., got .fast.$" err &&
	grep -q "^sweep: bad.yaml:3:28: .clocks.memory. takes MHz, not .base." err &&
	printf "sweep: x\nkernel: cpu.copy\nclocks: {}\n" >none.yaml &&
	test_expect_code 2 "$SWEEP" run none.yaml --lock-clocks 2>err &&
	grep -q "clocks. names no clock" err &&
	test ! -e nvml.log
'

test_expect_success 'one process: locked before the first cell, recorded with every result, put back at the end' '
	rm -f nvml.log &&
	"$SWEEP" run lock.yaml --db one.db --lock-clocks 2>err &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 0
nvmlDeviceSetMemoryLockedClocks 0 2619 2619 = 0
nvmlDeviceResetGpuLockedClocks 0 = 0
nvmlDeviceResetMemoryLockedClocks 0 = 0" &&
	test "$(sql one.db "SELECT count(*) || '\''|'\'' || group_concat(DISTINCT lock_sm || '\''/'\'' || locked_sm || '\''/'\'' ||
		lock_mem || '\''/'\'' || locked_mem) FROM v_results WHERE status = '\''ok'\''")" = "4|1410.0/1410.0/2619.0/2619.0" &&
	test "$(sql one.db "SELECT json_extract(conditions, '\''$.lock_sm'\'') || '\''/'\'' ||
		json_extract(conditions, '\''$.locked_sm'\'') FROM workers")" = "1410/1410" &&
	"$SWEEP" report one.db --metric locked_sm --rows bytes >rep &&
	grep -q "1410" rep &&
	rm nvml.log
'

test_expect_success 'sm: base locks at NVML'\''s base limit and says base among the conditions' '
	rm -f nvml.log &&
	"$SWEEP" run base.yaml --db base.db --lock-clocks 2>err &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 4294967041 4294967041 = 0
nvmlDeviceResetGpuLockedClocks 0 = 0" &&
	test "$(sql base.db "SELECT json_extract(conditions, '\''$.lock_sm'\'') FROM workers")" = base &&
	test "$(sql base.db "SELECT DISTINCT coalesce(lock_sm, '\''-'\'') || '\''/'\'' || locked_sm FROM v_results")" = "-/1590.0" &&
	rm nvml.log
'

test_expect_success 'mpirun -np 3: every worker locks its own GPU and puts it back' '
	rm -f nvml.log &&
	$MPIRUN -np 3 "$SWEEP" run lock.yaml --db three.db --lock-clocks 2>err &&
	test "$(calls SetGpuLockedClocks 0)" = 2 && test "$(calls SetGpuLockedClocks 1)" = 1 &&
	test "$(calls ResetGpuLockedClocks 0)" = 2 && test "$(calls ResetGpuLockedClocks 1)" = 1 &&
	test "$(calls SetMemoryLockedClocks)" = 3 && test "$(calls ResetMemoryLockedClocks)" = 3 &&
	test "$(sql three.db "SELECT count(*) FROM workers WHERE json_extract(conditions, '\''$.lock_mem'\'') = 2619")" = 3 &&
	rm nvml.log
'

cat >"$T/crash.yaml" <<'Y'
sweep: crash
kernel: debug.fail
params:
  cell:
    - {mode: ok, i: 0}
    - {mode: segv, i: 1}
    - {mode: ok, i: 2}
max_attempts: 1
clocks: {sm: 1500}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 1, warmup: 0}
Y

test_expect_success 'an executor that crashes leaves the lock held; the worker puts it back at its end' '
	rm -f nvml.log &&
	test_expect_code 3 "$SWEEP" run crash.yaml --db crash.db --lock-clocks 2>err &&
	grep -q "1 quarantined" err &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 1500 1500 = 0
nvmlDeviceResetGpuLockedClocks 0 = 0" &&
	test "$(sql crash.db "SELECT count(*) FROM v_results WHERE status = '\''ok'\'' AND locked_sm = 1500")" = 2 &&
	rm nvml.log
'

cat >"$T/slow.yaml" <<'Y'
sweep: slow
kernel: sleep
params:
  ms: [400]
  jitter: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007]
max_attempts: 1
clocks: {sm: 1410}
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
Y

test_expect_success 'an interrupt puts the clocks back' '
	rm -f nvml.log &&
	run_bg "$SWEEP" run slow.yaml --db int.db --lock-clocks 2>err1 &&
	wait_running int.db &&
	kill -INT $BG_PID &&
	test_expect_code 5 wait_gone $BG_PID &&
	test "$(last_run int.db)" = interrupted &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 0
nvmlDeviceResetGpuLockedClocks 0 = 0" &&
	rm nvml.log
'

test_expect_success 'without permission the run stops before its first cell, saying so' '
	rm -f nvml.log &&
	FAKE_NVML_DENY=1 test_expect_code 1 "$SWEEP" run lock.yaml --db denied.db --lock-clocks 2>err &&
	grep -q "^sweep: cannot lock the SM clock of NVML GPU 0: no permission (Insufficient Permissions): locking clocks needs root" err &&
	test "$(sql denied.db "SELECT count(*) FROM results")" = 0 &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 4" &&
	rm nvml.log &&
	FAKE_NVML_DENY=memory test_must_fail $MPIRUN -np 2 "$SWEEP" run lock.yaml --db denied2.db --lock-clocks 2>err &&
	test "$(sql denied2.db "SELECT count(*) FROM results")" = 0 &&
	test "$(calls SetGpuLockedClocks)" = "$(calls ResetGpuLockedClocks)" &&
	test "$(grep -c "SetMemoryLockedClocks .* = 4$" nvml.log)" -ge 1 &&
	rm nvml.log
'

test_expect_success 'a worker killed outright leaves the lock; sweep hosts unlock puts the defaults back' '
	rm -f nvml.log &&
	run_bg "$SWEEP" run slow.yaml --db kill.db --lock-clocks 2>err &&
	wait_running kill.db &&
	kill -KILL $BG_PID &&
	test_expect_code 137 wait_gone $BG_PID &&
	test "$(cat nvml.log)" = "nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 0" &&
	"$SWEEP" hosts unlock >out &&
	test "$(cat out)" = "NVML GPU 0: SM and memory clocks back to the driver'\''s defaults
NVML GPU 1: SM and memory clocks back to the driver'\''s defaults" &&
	test "$(calls ResetGpuLockedClocks 0)" = 1 && test "$(calls ResetMemoryLockedClocks 1)" = 1 &&
	rm nvml.log &&
	"$SWEEP" hosts unlock --gpu 1 >out &&
	test "$(cat nvml.log)" = "nvmlDeviceResetGpuLockedClocks 1 = 0
nvmlDeviceResetMemoryLockedClocks 1 = 0" &&
	test_expect_code 2 "$SWEEP" hosts unlock --gpu 2 2>err &&
	grep -q "^sweep: --gpu 2: NVML sees 2 GPUs" err &&
	SWEEP_NVML_LIB=/nonexistent/libnvidia-ml.so.1 test_expect_code 1 "$SWEEP" hosts unlock 2>err &&
	grep -q "NVML is not there" err
'

# refuses_lock SCRIPT: a GPU check given --lock-clocks stops at once (exit 2) saying why, before it builds
# or touches anything (its log and scratch go to $T).
refuses_lock() {
	(cd "$ROOT" && OUT="$T/gpu-out" R="$T/gpu-r" test_expect_code 2 timeout 20 bash "$1" --lock-clocks) >"$T/err" 2>&1 &&
	grep -q -- "--lock-clocks is refused: the GPU machines. clocks must not change" "$T/err"
}

test_expect_success 'SWEEP_NO_LOCK_CLOCKS refuses every lock; the GPU checks set it and refuse --lock-clocks' '
	rm -f nvml.log &&
	SWEEP_NO_LOCK_CLOCKS=1 test_expect_code 2 "$SWEEP" run lock.yaml --db nolock.db --lock-clocks 2>err &&
	grep -q "^sweep: --lock-clocks is refused: SWEEP_NO_LOCK_CLOCKS is set" err &&
	SWEEP_NO_LOCK_CLOCKS=1 test_expect_code 1 "$SWEEP" hosts unlock 2>err &&
	grep -q "SWEEP_NO_LOCK_CLOCKS is set" err &&
	test ! -e nvml.log &&
	for s in $(ls "$ROOT"/tests/gpu/*.sh | grep -v /lib.sh); do refuses_lock "$s" || return 1; done &&
	grep -q "^export SWEEP_NO_LOCK_CLOCKS=1" "$ROOT/tests/gpu/lib.sh" &&
	grep -q "^export SWEEP_NO_LOCK_CLOCKS=1" "$ROOT/tests/gpu/smoke.sh"
'
