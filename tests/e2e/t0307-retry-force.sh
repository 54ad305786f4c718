#!/bin/bash
# t0307-retry-force: the closing line names the quarantined cells and the retry command; sweep retry
# (--state, --where) puts cells back with their attempts reset; run --force --where measures again,
# keeping the old result as superseded.
. tests/e2e/lib.sh

cat >"$T/f.yaml" <<'Y'
sweep: f
kernel: debug.fail
params:
  mode: [error]
  on: ["i=2"]
  i: [1, 2, 3]
timing: {min_samples: 1, min_time: 0, max_noise: 1}
max_attempts: 1
Y

# The closing line of a run that leaves quarantined cells names them (the first few, then a count) and the
# command that puts them back; that command, run as printed, does.
cat >"$T/q.yaml" <<'Y'
sweep: q
kernel: debug.fail
params:
  mode: [error]
  on: ["i=2"]
  i: [1, 2]
  ms: [0, 1, 2, 3, 4]
timing: {min_samples: 1, min_time: 0, max_noise: 1}
max_attempts: 1
Y

test_expect_success 'the closing line names the quarantined cells and the retry command, which works' '
	mkdir -p "with space" &&
	test_expect_code 3 "$SWEEP" run q.yaml --db "with space/q.db" --quiet 2>err &&
	cat err &&
	grep -q "^sweep: q: 5 cells ok, 5 quarantined, 0 not run;" err &&
	line=$(grep "^sweep: q: 5 cells quarantined: " err) &&
	# the first three by their parameters, the error once while it repeats, then a count
	test "${line%%; to measure*}" = "sweep: q: 5 cells quarantined: {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":0} (launch: debug.fail: failing on purpose), {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":1}, {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":2} and 2 more" &&
	cmd=${line#*; to measure them again: } &&
	cmd=${cmd%, then run again} &&
	test "$cmd" = "sweep retry '\''with space/q.db'\'' --sweep q --state quarantined" &&
	eval "\"\$SWEEP\" ${cmd#sweep }" >out &&
	grep -q "^q: 5 quarantined cells back to planned" out &&
	test "$(sql "with space/q.db" "SELECT count(*) FROM cells WHERE state = '\''planned'\'' AND attempts = 0")" = 5
'

test_expect_success 'sweep retry puts quarantined cells back with their attempts reset, and says how many' '
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db &&
	test "$(state_n f.db quarantined)" = 1 &&
	"$SWEEP" retry f.db --state failed >out0 && grep -q "^f: 0 failed cells back to planned" out0 &&
	"$SWEEP" retry f.db --where "i = 3" >out1 && grep -q "^f: 0 " out1 &&
	test "$(state_n f.db quarantined)" = 1 &&
	"$SWEEP" retry f.db --where "i = 2" --state quarantined >out2 &&
	grep -q "^f: 1 quarantined cells back to planned, attempts reset" out2 &&
	test "$(sql f.db "SELECT state || attempts || coalesce(error, '\''-'\'') FROM cells WHERE id = 2")" = "planned0-" &&
	test_expect_code 2 "$SWEEP" retry f.db --where "nope = 1" &&
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db 2>err &&
	grep -q "this run: 0 results ok, 1 failed attempts" err
'

test_expect_success 'run --force --where measures again, keeping the old result as superseded; reports use the newest' '
	old=$(sql f.db "SELECT id FROM results WHERE status = '\''ok'\'' AND cell = 1") &&
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db --force --where "i = 1" 2>err &&
	grep -q -- "--force: 1 cells to measure again (1 ok results kept as superseded)" err &&
	test "$(sql f.db "SELECT status FROM results WHERE id = $old")" = superseded &&
	test "$(sql f.db "SELECT count(*) FROM results WHERE cell = 1 AND status = '\''ok'\'' AND id > $old")" = 1 &&
	"$SWEEP" report f.db --rows i --metric seconds --format csv >rep &&
	test "$(grep -c "^1," rep)" = 1 &&
	test_expect_code 2 "$SWEEP" run f.yaml --db f.db --where "i = 1"
'
