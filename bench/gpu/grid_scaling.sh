#!/bin/bash
# grid_scaling.sh: after the copy kernel's default became memcpy and the L2 flush gained its read: every
# kernel's check (good and corrupted outputs), sweeps/copy.yaml as shipped, and the 220-cell grid on 1 GPU
# then on 2, twice, for the wall-time ratio. Run after bench/gpu/vendor.sh with vendor/ copied along.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=grid_scaling
. tests/gpu/lib.sh
step build
build
build_check
step "every kernel's check, good and corrupted outputs (GPU 0)"
build/check_kernels 0 >"$R/check.log" 2>&1
grep -E '^not ok|PASSED|FAILED' "$R/check.log"; grep -c '^ok' "$R/check.log"; grep -E '^ok - copy' "$R/check.log"
step "sweeps/copy.yaml on 2 GPUs"
sweep_run 2 sweeps/copy.yaml "$R/copy.db"
q "$R/copy.db" "SELECT json_extract(params, '\$.bytes') / 1048576 AS MiB, json_extract(params, '\$.method') AS
	method, printf('%.1f', m.value) AS gbs, printf('%.2f%%', m.value / 48) AS of_4800, n, printf('%.2f%%',
	noise * 100) AS noise, w.gpu FROM results r JOIN cells c ON c.id = r.cell JOIN metrics m ON m.result = r.id
	AND m.name = 'gbs' JOIN workers w ON w.id = r.worker ORDER BY 1, 2"
step "the same 220-cell grid on 1 GPU, then on 2, twice"
for i in 1 2; do
	sweep_run 1 tests/gpu/specs/ev-grid.yaml "$R/grid1-$i.db"
	sweep_run 2 tests/gpu/specs/ev-grid.yaml "$R/grid2-$i.db"
done
tar -C "$R" -czf "$OUT/grid_scaling-dbs.tgz" $(cd "$R" && ls *.db) check.log
