#!/bin/bash
# t0240-progress: runs talk: progress on stderr by default (every 30 s when not a terminal, or every
# SECONDS with --progress), under mpirun from rank 0 only, with the cell running longest; --quiet prints
# errors only.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
MPIRUN="timeout -k 10 120 mpirun --bind-to none"

cat >"$T/slow.yaml" <<'Y'
sweep: slow
kernel: sleep
params: {ms: [400, 1], jitter: [0, 0.0001, 0.0002]}
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 5, warmup: 0}
Y

test_expect_success 'not a terminal, no option: the closing progress line and the summary' '
	"$SWEEP" run slow.yaml --db a.db 2>err &&
	grep -q "^6/6 cells  [0-9.]* cells/s  eta -  failures 0" err &&
	grep -q "^sweep: slow: 6 cells ok" err &&
	test "$(grep -c "cells/s" err)" = 1
'

test_expect_success 'under mpirun -np 3, --progress=0.2: periodic lines from rank 0 alone, naming the longest cell' '
	$MPIRUN -np 3 "$SWEEP" run slow.yaml --db b.db --progress=0.2 2>err &&
	cat err &&
	grep -q "^[0-5]/6 cells .* longest {\"ms\":400,\"jitter\":[0-9.e-]*} on rank [0-2] for [0-9]*s$" err &&
	test "$(grep -c "^6/6 cells" err)" = 1 &&
	test "$(grep -c "^sweep: slow: 6 cells ok" err)" = 1
'

cat >"$T/bad.yaml" <<'Y'
sweep: bad
kernel: debug.fail
params: {mode: [ok, error]}
max_attempts: 1
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

test_expect_success '--quiet: nothing on stderr when all is well; with cells left failed, only the lines that say so' '
	"$SWEEP" run slow.yaml --db c.db --quiet 2>err &&
	test ! -s err &&
	test_expect_code 3 "$SWEEP" run bad.yaml --db d.db --quiet 2>err &&
	test "$(sed -n "1s/ in [0-9.]* s;/;/p" err)" = "sweep: bad: 1 cells ok, 1 quarantined, 0 not run; this run: 1 results ok, 1 failed attempts; 1 cells ok short of their precision" &&
	grep -q "^sweep: bad: 1 cells quarantined: .*; to measure them again: sweep retry d.db --sweep bad --state quarantined, then run again$" err &&
	test "$(wc -l <err)" = 2
'

cat >"$T/short.yaml" <<'Y'
sweep: short
kernel: sleep
params: {ms: 0, jitter: [0.01, 0.011]}
timing: {batch: 1, precision: 1e-9, timeout: 0.2}
Y

# make bench reads a run's seconds from its closing line with tests/bench.sh's run_seconds; a closing line
# that grew a clause once left its overhead figure empty, unnoticed.
test_expect_success 'the closing line gives its seconds to make bench (tests/bench.sh run_seconds), clauses after them and all' '
	"$SWEEP" run short.yaml --db e.db 2>err &&
	grep -q "^sweep: short: 2 cells ok, .* failed attempts in [0-9.]* s; 2 cells ok short of their precision$" err &&
	eval "$(grep "^run_seconds()" "$ROOT/tests/bench.sh")" &&
	s=$(run_seconds err) &&
	test -n "$s" &&
	grep -q " in $s s; " err &&
	echo "$s" | grep -Eq "^[0-9]+([.][0-9]+)?$"
'
