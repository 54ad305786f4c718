#!/bin/sh
# Install the Debian packages sweep needs, when any is missing. Idempotent and quiet when everything is
# there; needs root (or sudo) only when something must be installed.
#   tools/deps.sh run    what building and running sweep needs (a rented GPU host, `make demo`)
#   tools/deps.sh all    that, and what the tests start: Slurm, munge, sshd, network namespaces (default)
#   tools/deps.sh list run|all   print the packages, one a line, and install nothing
# `sweep launch --build` runs `make deps-run` (this with run) on rented hosts: no services there.
build="gcc make libyaml-dev libsqlite3-dev sqlite3 libhwloc-dev hwloc libopenblas-dev libopenmpi-dev libjansson-dev
libpcre2-dev
libssl-dev
openmpi-bin"
run="python3 gnuplot-nox procps"
# The programs the command-cell examples run (examples/tools): Google Benchmark (built with g++), hyperfine,
# fio, sysbench, pytest-benchmark; zstd, openssl, perf and iperf3, whose output the tests read as printed;
# GNU time checks what a run cost; chromium (headless) opens a report's HTML page; e2fsprogs and mount
# (losetup) let t0335 cut the power under a run on an ext4 image.
tests="clang python3-mpi4py iproute2 psmisc slurm-wlm munge openssh-server openssh-client e2fsprogs mount
g++ libbenchmark-dev hyperfine fio sysbench python3-pytest-benchmark time zstd openssl linux-perf iperf3
chromium"
list=
[ "$1" = list ] && { list=1; shift; }
case ${1:-all} in
run) pkgs="$build $run" ;;
all) pkgs="$build $run $tests" ;;
*) echo "usage: tools/deps.sh [list] [run|all]" >&2; exit 2 ;;
esac
if [ -n "$list" ]; then
	for p in $pkgs; do echo "$p"; done
	exit 0
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		{ echo "deps: apt-get install$missing failed" >&2; exit 1; }
fi
# pyperf is on PyPI only: the tests' python3 gets it there (examples/tools/pyperf.yaml).
pypi=""
[ "${1:-all}" = all ] && ! python3 -c "import pyperf" 2>/dev/null && pypi="pyperf"
if [ -n "$pypi" ]; then
	echo "deps: installing $pypi from PyPI"
	python3 -m pip install -q --disable-pip-version-check "$pypi" 2>/dev/null ||
		python3 -m pip install -q --disable-pip-version-check --break-system-packages "$pypi" ||
		{ echo "deps: pip install $pypi failed" >&2; exit 1; }
fi

