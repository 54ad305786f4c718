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
