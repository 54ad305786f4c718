#!/bin/bash
# t0000-harness: the harness itself. A body fails on its first failing command, a broken && chain is
# refused, the expected-failure helpers fail when they should, and tests/run.sh then exits non-zero.
. tests/e2e/lib.sh

# A test script with planted failures, run from the repository root like the real ones.
cat >"$T/planted.sh" <<'P'
. tests/e2e/lib.sh
test_expect_success 'middle line fails' '
	false
	true
'
test_expect_success 'a chain that fails in its middle' '
	true &&
	false &&
	true
'
test_expect_success 'broken chain' '
	true &&
	echo ran-after-break >"$MARK"
	true
'
test_expect_success 'test_must_fail on a command that succeeds' '
	test_must_fail true
'
test_expect_success 'test_must_fail on a command killed by a signal' '
	test_must_fail sh -c "kill -SEGV \$\$"
'
test_expect_success 'test_expect_code with another code' '
	test_expect_code 2 sh -c "exit 3"
'
test_expect_success 'a loop that loses a failure' '
	for i in 1 2; do
		test $i = 2
	done
'
test_expect_success 'good: expected failures pass' '
	test_must_fail false &&
	test_expect_code 3 sh -c "exit 3" &&
	for i in 1 2; do
		test $i -gt 0 || return 1
	done &&
	echo fine
'
P

test_expect_success 'planted failures are not ok, the good body is ok, nothing after a break ran' '
	(cd "$ROOT" && MARK="$T/marker" bash "$T/planted.sh") >out &&
	grep "^ok - \|^not ok - " out >lines &&
	cat >want <<-\W &&
	not ok - middle line fails
	not ok - a chain that fails in its middle (exit 1)
	not ok - broken chain
	not ok - test_must_fail on a command that succeeds (exit 1)
	not ok - test_must_fail on a command killed by a signal (exit 1)
	not ok - test_expect_code with another code (exit 1)
	not ok - a loop that loses a failure
	ok - good: expected failures pass
	W
	diff want lines &&
	grep -q "broken &&-chain, not run: line 3 of the body: a command not joined by &&" out &&
	grep -q "not end with .|| return 1" out &&
	test ! -e marker
'

# Without the lint, errexit alone still stops a body at a failing line of its own; a failure before a
# break in a chain is what only the lint can catch.
test_expect_success 'without the lint: errexit stops at the failing middle line' '
	(cd "$ROOT" && MARK="$T/marker" TEST_CHAIN_LINT=0 bash "$T/planted.sh") >out &&
	grep "^ok - \|^not ok - " out | head -3 >lines &&
	cat >want <<-\W &&
	not ok - middle line fails (exit 1)
	not ok - a chain that fails in its middle (exit 1)
	ok - broken chain
	W
	diff want lines &&
	test -e marker
'

test_expect_success 'tests/run.sh counts them and exits non-zero' '
	(cd "$ROOT" && TEST_LOGS="$T/logs" MARK="$T/marker" test_must_fail tests/run.sh "$T/planted.sh") >run.out &&
	tail -1 run.out >last &&
	echo "1 passed, 7 failed" | diff - last
'

test_expect_success 'tests/run.sh counts a program that dies without a not-ok line as a failure' '
	printf "#!/bin/sh\necho \"ok - one\"\nexit 4\n" >dies.sh &&
	(cd "$ROOT" && TEST_LOGS="$T/logs" test_expect_code 1 tests/run.sh "$T/dies.sh") >run.out &&
	tail -1 run.out >last &&
	echo "1 passed, 1 failed" | diff - last
'

test_expect_success 'the lint finds every broken chain of the real tests (none)' '
	python3 "$ROOT/tests/chainlint.py" "$ROOT"/tests/e2e/t*.sh
'

# A test whose machine lacks something: by hand it is skipped saying what is missing; under make check
# (SWEEP_CHECK=1), which installs everything, it fails. Either way nothing after test_needs runs.
cat >"$T/needs.sh" <<'P'
. tests/e2e/lib.sh
test_needs "a thing no machine has" false
echo "ok - ran after a missing thing"
P

test_expect_success 'test_needs: a skip by hand, a failure under make check, never a run' '
	(cd "$ROOT" && SWEEP_CHECK=0 bash "$T/needs.sh") >hand &&
	echo "ok - # SKIP a thing no machine has is missing" | diff - hand &&
	(cd "$ROOT" && SWEEP_CHECK=1 test_expect_code 1 bash "$T/needs.sh") >check &&
	echo "not ok - setup: a thing no machine has is missing (make check needs it: tools/deps.sh installs it)" |
		diff - check &&
	(cd "$ROOT" && TEST_LOGS="$T/logs" SWEEP_CHECK=1 test_expect_code 1 tests/run.sh "$T/needs.sh") >run.out &&
	tail -1 run.out | grep -qx "0 passed, 1 failed"
'
