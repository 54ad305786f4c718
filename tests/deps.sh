#!/bin/sh
# Install the Debian packages sweep needs to build and test, when any is missing. Idempotent and quiet when
# everything is there; needs root (or sudo) only when something must be installed.
pkgs="gcc make clang libyaml-dev libsqlite3-dev sqlite3 libjansson-dev libssl-dev libhwloc-dev hwloc
libopenblas-dev libopenmpi-dev openmpi-bin python3 python3-mpi4py gnuplot-nox iproute2 procps psmisc slurm-wlm
munge openssh-server openssh-client"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends $missing >/dev/null ||
	{ echo "deps: apt-get install$missing failed" >&2; exit 1; }
