#!/bin/bash
# t0230-timing: the stopping rule as a run stores it: which rule stopped each cell, launches per sample,
# warm-up, and max_samples bounding what one cell takes and writes.
. tests/e2e/lib.sh

# A cell whose target is out of reach: sleeps of up to 10 us one by one (their spread is the timer's and
# the scheduler's, never exactly repeated: no interval of width 0) and a precision of 1e-6.
cat >"$T/tight.yaml" <<'Y'
sweep: tight
kernel: sleep
params: {ms: 0, jitter: 0.01}
timing: {batch: 1, precision: 1e-6, timeout: 10}
Y

test_expect_success 'max_samples (default 10000) ends a cell whose target is out of reach, well inside its timeout' '
	"$SWEEP" run tight.yaml --db tight.db 2>err &&
	test "$(sql tight.db "SELECT n || \" \" || stop || \" \" || (wall < 10) || \" \" || precise
		FROM results")" = "10000 max_samples 1 0" &&
	test "$(sql tight.db "SELECT count(*) FROM samples")" = 10000 &&
	test "$(sql tight.db "SELECT launches FROM results")" = 1 &&
	test "$(stat -c %s tight.db)" -lt 5000000
'

cat >"$T/capped.yaml" <<'Y'
sweep: capped
kernel: sleep
params: {ms: [0, 1]}
timing: {max_samples: 40, min_time: 0, max_noise: 1e9, precision: 1e-9, timeout: 5}
Y

test_expect_success 'the stop rule, launches and warm-up are stored for every result, also in v_results' '
	"$SWEEP" run capped.yaml --db capped.db 2>err &&
	test "$(sql capped.db "SELECT json_extract(params, \"$.ms\") || \":\" || stop FROM v_results ORDER BY 1")" = "0:noise
1:noise" &&
	test "$(sql capped.db "SELECT count(*) FROM v_results WHERE warmup >= 0.05 AND warmup < 5")" = 2 &&
	test "$(sql capped.db "SELECT json_extract(params, \"$.ms\") || \":\" || (launches > 1) FROM v_results
		ORDER BY 1")" = "0:1
1:0"
'

cat >"$T/bad.yaml" <<'Y'
sweep: bad
kernel: sleep
params: {ms: 1}
timing: {min_samples: 50, max_samples: 20}
Y

test_expect_success 'min_samples over max_samples is a spec error at its line' '
	test_expect_code 2 "$SWEEP" plan bad.yaml --db bad.db 2>err &&
	grep -q "bad.yaml:4:.*min_samples 50 is over max_samples 20" err
'
