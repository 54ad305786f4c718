#!/bin/bash
# passes.sh: six passes of the 67 us GEMM (1024x6144x4096 bf16) in one `sweep run`, three jobs each with
# the default timing and with longer sampling (warmup / min_time): how far apart the six medians are, and
# the wall per cell. Run after tests/gpu/precision.sh (which builds) or builds itself. Reads the card's
# state only.
set -u
cd "$(dirname "$0")/../.."
NAME=passes
. tests/gpu/lib.sh
[ -x "$S" ] || build
for v in "0.05 0.02" "0.025 0.045" "0.05 0.05" "0.05 0.1" "0.05 0.2"; do
	set -- $v
	for job in 1 2 3; do
		printf 'sweep: p\nkernel: gemm\nparams: {dtype: bf16, M: 1024, N: 6144, K: 4096}\nrepeat: 6\n' >"$R/p.yaml"
		printf 'timing: {warmup: %s, min_time: %s}\n' "$1" "$2" >>"$R/p.yaml"
		rm -f "$R"/p.db*
		timeout 60 $S run "$R/p.yaml" --db "$R/p.db" >/dev/null 2>&1
		$S sql "$R/p.db" "SELECT '$1' AS warmup, '$2' AS min_time,
			printf('%.3f', (max(median) - min(median)) / min(median) * 100) AS spread_pct,
			printf('%.3f', avg(wall)) AS wall_s, group_concat(printf('%.2f', median * 1e6), ' ') AS medians_us
			FROM v_results" --csv | tail -1
	done
done
