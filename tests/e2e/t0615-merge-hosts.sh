#!/bin/bash
# t0615-merge-hosts: a result belongs to the host that measured it. A spec without per: host, run alone on
# three hosts and merged, keeps every host's results (each in its host's cell), in any order of merging,
# merged twice or through another merged database; only a second result of one cell from the same host
# is a conflict.
. tests/e2e/lib.sh

# as_host NAME CMD...: CMD under a hostname of its own (a UTS namespace; root only, as the tests run).
as_host() { unshare --uts sh -c 'hostname "$0" && exec "$@"' "$@"; }
# per_host DB: "host params median" of every ok result, sorted.
per_host() { sql "$1" "SELECT host || ' ' || params || ' ' || median FROM v_results WHERE status = 'ok'
	ORDER BY host, params"; }

cat >"$T/g.yaml" <<'Y'
sweep: g
kernel: sleep
params: {ms: [0, 1, 2]}
timing: {min_samples: 6, min_time: 0, precision: 1e9, timeout: 2}
Y

test_expect_success 'setup: the per: any sweep run alone on three hosts, and once more on the first' '
	for h in ha hb hc; do
		as_host $h "$SWEEP" run g.yaml --db $h.db 2>/dev/null || return 1
	done &&
	as_host ha "$SWEEP" run g.yaml --db ha2.db 2>/dev/null &&
	test "$(sql hb.db "SELECT hostname FROM hosts")" = hb
'

test_expect_success 'merged: every host keeps its three results, side by side with --cols host' '
	"$SWEEP" merge m.db ha.db hb.db hc.db >out &&
	cat out &&
	test "$(grep -c ", 0 conflicts;" out)" = 3 &&
	grep -q "^hb.db: 3 results measured by another host than the output.s kept in that host.s own cells$" out &&
	test "$(sql m.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 9 &&
	# the first host in the cells of the sweep, the others in their own, named as per: host names them
	test "$(sql m.db "SELECT group_concat(r, '\'' '\'') FROM (SELECT replica || '\'':'\'' || host || '\'':'\'' ||
		count(*) AS r FROM v_results WHERE status = '\''ok'\'' GROUP BY replica, host ORDER BY replica)")" = \
		":ha:3 hb:hb:3 hc:hc:3" &&
	test "$(sql m.db "SELECT count(*) FROM cells WHERE state != '\''ok'\''")" = 0 &&
	db_sound m.db &&
	"$SWEEP" report m.db --rows ms --cols host --metric seconds --format csv >rep &&
	cat rep &&
	test "$(head -1 rep)" = "ms,host=ha,host=hb,host=hc" &&
	test "$(awk -F, "NR > 1 { for (i = 2; i <= 4; i++) { n++; bad += (\$i == \"\" || \$i < \$1 / 1000) } }
		END { print n, bad + 0 }" rep)" = "9 0" &&
	# each value is the one its host measured
	for h in ha hb hc; do
		per_host $h.db >want.$h &&
		per_host m.db | grep "^$h " >got.$h &&
		cmp want.$h got.$h || return 1
	done
'

test_expect_success 'merged again, in another order, or through a merged database: the same nine' '
	per_host m.db >want &&
	"$SWEEP" merge m.db hc.db ha.db hb.db >again &&
	test "$(grep -c " 0 results new, 3 already there, 0 conflicts;" again)" = 3 &&
	"$SWEEP" merge m2.db hc.db hb.db ha.db >/dev/null &&
	per_host m2.db >got2 && cmp want got2 &&
	# hb first holds the sweep'\''s cells; the merged database then brings ha into a cell of its own and
	# hb'\''s results already there (its cell, empty, is dropped)
	"$SWEEP" merge m3.db hb.db m.db >m3.out &&
	cat m3.out &&
	per_host m3.db >got3 && cmp want got3 &&
	test "$(sql m3.db "SELECT count(*) FROM cells WHERE state != '\''ok'\''")" = 0 &&
	test "$(sql m3.db "SELECT count(*) FROM results")" = 9 &&
	"$SWEEP" merge m3.db m.db ha.db hb.db hc.db >m3.again &&
	test "$(sql m3.db "SELECT count(*) FROM results")" = 9
'

test_expect_success 'a second result of a cell from the same host is a conflict, kept apart' '
	"$SWEEP" merge m.db ha2.db >c.out &&
	cat c.out &&
	grep -q "^ha2.db: 3 cells (0 new), 0 results new, 0 already there, 3 conflicts;" c.out &&
	test "$(sql m.db "SELECT count(*) FROM conflicts")" = 3 &&
	test "$(sql m.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 9 &&
	test "$(sql m.db "SELECT count(DISTINCT c.replica) FROM conflicts x JOIN cells c ON c.id = x.cell")" = 1
'
