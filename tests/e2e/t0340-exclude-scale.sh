#!/bin/bash
# t0340-exclude-scale: excludes cost the cells plus the excludes, not their product: 200,000 points with
# 20,000 excludes plan in about the CPU time of none (each cell was matched against every exclude: 40x),
# and exactly the excluded points are left out.
. tests/e2e/lib.sh

test_needs "GNU time (time)" test -x /usr/bin/time

# spec N: 500 x 400 points and N excludes, distinct points that name both keys.
spec() {
	printf '%s\n' "sweep: x" "command: [\"true\", \"{i}\", \"{j}\"]" "params:" \
		"  i: {from: 1, to: 500, step: 1}" "  j: {from: 1, to: 400, step: 1}"
	[ "$1" -gt 0 ] || return 0
	echo "exclude:"
	awk -v n="$1" 'BEGIN { for (e = 0; e < n; e++) printf "  - {i: %d, j: %d}\n", e % 500 + 1,
		(int(e / 500) * 37 + e) % 400 + 1 }'
}
spec 0 >"$T/none.yaml"
spec 20000 >"$T/many.yaml"

# cpu SPEC DB: the CPU seconds (user and system) of planning SPEC into DB, in hundredths.
cpu() {
	/usr/bin/time -f "%U %S" -o cpu.txt "$SWEEP" plan "$1" --db "$2" >/dev/null &&
	awk '{ printf "%d\n", ($1 + $2) * 100 + 0.5 }' cpu.txt
}

test_expect_success '20,000 excludes plan in about the time of none, leaving out exactly them' '
	none=$(cpu none.yaml none.db) &&
	many=$(cpu many.yaml many.db) &&
	echo "CPU: none $none, 20,000 excludes $many (hundredths of a second)" &&
	test "$many" -le $((none * 2 + 50)) &&
	test "$(sql many.db "SELECT count(*) FROM cells")" = 180000 &&
	test "$(sql many.db "SELECT count(*) FROM cells WHERE params = '\''{\"i\":1,\"j\":1}'\''")" = 0 &&
	test "$(sql many.db "SELECT count(*) FROM cells WHERE params = '\''{\"i\":1,\"j\":2}'\''")" = 1 &&
	test "$(sql many.db "SELECT count(*) FROM cells WHERE params = '\''{\"i\":2,\"j\":2}'\''")" = 0 &&
	test "$(sql many.db "SELECT count(*) FROM cells WHERE params = '\''{\"i\":1,\"j\":138}'\''")" = 0
'
