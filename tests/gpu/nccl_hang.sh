#!/bin/bash
# nccl_hang.sh: an NCCL collective that hangs (one gang member never launches) is aborted at the timeout,
# the cell is marked timeout, and the gang goes on to the next cells.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=nccl_hang
. tests/gpu/lib.sh
build
timeout 120 mpirun -np 2 --bind-to none $S run tests/gpu/specs/ev-hang.yaml --db "$R/hang.db" 2>&1 | grep '^sweep: '
q "$R/hang.db" "SELECT json_extract(params, '\$.bytes') AS bytes, json_extract(params, '\$.hang') AS hang,
	r.status, printf('%.1f', r.wall) AS wall_s, r.error FROM results r JOIN cells c ON c.id = r.cell ORDER BY c.ord"
