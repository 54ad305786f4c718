# lib.sh: sourced by every end-to-end test. Gives test_expect_success, a scratch folder and helpers.
# Run from the repository root; each test prints "ok - name" or "not ok - name".
set -u
ROOT=$(pwd)
SWEEP="$ROOT/build/sweep"
T=$(mktemp -d "${TMPDIR:-/tmp}/sweep-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1

# test_expect_success NAME 'shell code': runs the code in a subshell with errexit; ok when it exits 0.
test_expect_success() {
	local name=$1 code=$2
	if (set -e; cd "$T"; eval "$code") >"$T/.out" 2>&1; then
		echo "ok - $name"
		sed 's/^/# /' "$T/.out" | tail -30
	else
		echo "not ok - $name"
		sed 's/^/# /' "$T/.out" | tail -30
	fi
}

# sql DB 'SELECT ...': one value per line, columns separated by |.
sql() { sqlite3 -batch -noheader "$1" "$2"; }
