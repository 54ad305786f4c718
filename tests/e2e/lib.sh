# lib.sh: sourced by every end-to-end test. Gives test_expect_success, expected-failure helpers, a scratch
# folder, sql, and waits on background runs. Run from the repository root; each test prints "ok - name" or
# "not ok - name".
set -u
ROOT=$(pwd)
SWEEP="$ROOT/build/sweep"
T=$(mktemp -d "${TMPDIR:-/tmp}/sweep-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1

# test_expect_success NAME 'shell code': ok when the code exits 0. The code must be one && chain (as in
# git's t/): tests/chainlint.py checks it first and a broken chain is "not ok" without running it, since a
# failure before the break would go unseen. The body runs in a subshell in $T with errexit; it is not the
# condition of an `if` (where bash ignores errexit). On failure the last commands run (xtrace) and the
# last lines of output are shown. TEST_CHAIN_LINT=0 skips the lint (the harness's own test uses it).
test_expect_success() {
	local name=$1 code=$2 lint rc
	if [ "${TEST_CHAIN_LINT:-1}" != 0 ] &&
		! lint=$(printf '%s\n' "$code" | python3 "$ROOT/tests/chainlint.py" -); then
		echo "not ok - $name"
		echo "# broken &&-chain, not run: $lint"
		return 0
	fi
	(
		set -e
		cd "$T"
		exec 9>"$T/.trace"
		BASH_XTRACEFD=9
		set -x
		eval "$code"
	) >"$T/.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "ok - $name"
		sed 's/^/# /' "$T/.out" | tail -30
	else
		echo "not ok - $name (exit $rc)"
		echo "# last commands:"
		tail -8 "$T/.trace" | cut -c1-300 | sed 's/^/#   /'
		echo "# output:"
		sed 's/^/# /' "$T/.out" | tail -30
	fi
	return 0
}

# test_needs WHAT CMD...: the test goes on when CMD succeeds (this machine has WHAT: root, mpirun, sshd,
# Slurm's daemons). When it does not, the test ends here, saying what is missing: run by hand, as a skip
# ("ok - # SKIP"); under make check (SWEEP_CHECK=1), which installs everything, as a failure, never a skip.
test_needs() {
	local what=$1
	shift
	"$@" >/dev/null 2>&1 && return 0
	if [ "${SWEEP_CHECK:-0}" = 1 ]; then
		echo "not ok - setup: $what is missing (make check needs it: tools/deps.sh installs it)"
		exit 1
	fi
	echo "ok - # SKIP $what is missing"
	exit 0
}

# test_must_fail CMD...: CMD exits non-zero, but not by a signal, 126 or 127 (a crash or a missing
# program is not the failure a test expects).
test_must_fail() {
	local rc=0
	"$@" || rc=$?
	if [ "$rc" = 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then
		echo "test_must_fail: died of signal $((rc - 128)): $*" >&2
		return 1
	elif [ "$rc" = 126 ] || [ "$rc" = 127 ]; then
		echo "test_must_fail: could not run ($rc): $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N CMD...: CMD exits with status N exactly.
test_expect_code() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "test_expect_code: want exit $want, got $rc: $*" >&2
		return 1
	fi
	return 0
}

# wait_for SECONDS COMMAND...: run COMMAND every 0.2 s until it succeeds; 1 when time runs out.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# rank_pid DB RANK: the pid of that MPI rank of the run writing DB (named by its --db), or nothing.
rank_pid() {
	local p
	for p in $(pgrep -f "run .*--db $1" || :); do
		if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
			echo "$p"
			return 0
		fi
	done
	return 0
}

# run_bg CMD...: start CMD in the background, its pid in BG_PID (a body's && chain cannot hold a '&').
run_bg() { "$@" & BG_PID=$!; }

# wait_running DB: until a cell of DB is running (10 s at most).
wait_running() {
	for _ in $(seq 1 100); do
		test "$(sql "$1" "SELECT count(*) FROM cells WHERE state = 'running'" 2>/dev/null)" -ge 1 2>/dev/null && return 0
		sleep 0.1
	done
	echo "no cell running in $1 after 10 s" >&2
	return 1
}

# wait_file PATH: until PATH exists (4 s at most, looking every 20 ms).
wait_file() {
	for _ in $(seq 1 200); do
		test -e "$1" && return 0
		sleep 0.02
	done
	echo "no $1 after 4 s" >&2
	return 1
}

# wait_gone PID: wait for a background job (60 s at most, then SIGKILL); its exit status.
wait_gone() {
	for _ in $(seq 1 600); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null || :
	wait "$1"
}

# sql DB 'SELECT ...': one value per line, columns separated by |.
sql() { sqlite3 -batch -noheader "$1" "$2"; }
# state_n DB STATE: cells in that state; status_n DB STATUS: results with that status; last_run DB: the
# status of the latest run.
state_n() { sql "$1" "SELECT count(*) FROM cells WHERE state = '$2'"; }
status_n() { sql "$1" "SELECT count(*) FROM results WHERE status = '$2'"; }
last_run() { sql "$1" "SELECT status FROM runs ORDER BY id DESC LIMIT 1"; }

# db_sound DB: SQLite finds DB intact, and no row names a cell, run, worker or result that is not there (a
# run writes without foreign-key checks: store_dispatching).
db_sound() {
	test "$(sql "$1" "PRAGMA integrity_check")" = ok &&
	test -z "$(sql "$1" "PRAGMA foreign_key_check")"
}
