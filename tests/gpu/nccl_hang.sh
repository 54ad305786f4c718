#!/bin/bash
# nccl_hang.sh: an NCCL collective that hangs (one gang member never launches) is aborted at the timeout,
# the cell is marked timeout, and the gang goes on to the next cells. Exits 1 when it is not so: a cell
# with hang = 1 that is not a timeout within 30 s, or a cell with hang = -1 that is not ok.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=nccl_hang
. tests/gpu/lib.sh
build
timeout 120 mpirun -np 2 --bind-to none $S run tests/gpu/specs/ev-hang.yaml --db "$R/hang.db" 2>&1 | grep '^sweep: '
q "$R/hang.db" "SELECT json_extract(params, '\$.bytes') AS bytes, json_extract(params, '\$.hang') AS hang,
	r.status, printf('%.1f', r.wall) AS wall_s, r.error FROM results r JOIN cells c ON c.id = r.cell ORDER BY c.ord"
bad=$($S sql "$R/hang.db" "SELECT count(*) FROM cells c LEFT JOIN results r ON r.cell = c.id
	WHERE c.state != 'template' AND (r.id IS NULL OR CASE json_extract(c.params, '\$.hang')
	WHEN 1 THEN r.status != 'timeout' OR r.wall > 30 ELSE r.status != 'ok' END)" --csv | tail -1)
cells=$($S sql "$R/hang.db" "SELECT count(*) FROM cells WHERE state != 'template'" --csv | tail -1)
echo "nccl_hang: $bad of $cells cells not as expected"
[ "$cells" = 4 ] && [ "$bad" = 0 ]
