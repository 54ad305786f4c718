#!/bin/bash
# decode_passes.sh: decode_attn with cp.async stages, through `sweep run` (ev-decode.yaml: 64K keys, batch 1,
# 4 and 16, two passes). Run after bench/gpu/vendor.sh with vendor/ copied along. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=decode_passes
. tests/gpu/lib.sh
build
sweep_run 1 tests/gpu/specs/ev-decode.yaml "$R/decode.db"
q "$R/decode.db" "SELECT pass, json_extract(params, '\$.batch') AS batch, printf('%.1f', median * 1e6) AS us,
	printf('%.1f', m.value) AS gbs, n, status FROM v_results JOIN metrics m ON m.result = v_results.id AND
	m.name = 'gbs' ORDER BY 2, 1"
q "$R/decode.db" "SELECT count(*) AS cells, printf('%.4f', median(r)) AS median_pass2_over_pass1 FROM (SELECT
	b.median / a.median AS r FROM v_results a JOIN v_results b ON a.params = b.params AND a.pass = 0 AND
	b.pass = 1 AND a.status = 'ok' AND b.status = 'ok')"
