#!/bin/bash
# bind.sh: on the GPU machine, what `sweep hosts bind` answers for 1 and 2 ranks (CUDA's GPUs, then the
# topology's with --gpus auto), then the binding the workers of a live `sweep run` took on 1 and 2 ranks,
# with the build in old/ (the commit before, when carried along) and with this one: the same cpus mean the
# live binding did not change. Also the GPU's local cpus in sysfs and hwloc's view of the machine (its XML
# into $OUT when lstopo is there). CPU twin: the last test of tests/e2e/t0650-hosts-bind.sh.
# Run after bench/gpu/vendor.sh here, with vendor/ (and old/) copied along. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=bind
. tests/gpu/lib.sh
step machine
nproc
nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv
for id in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
	p=$(echo "$id" | tr 'A-Z' 'a-z')
	p=/sys/bus/pci/devices/${p#0000}
	echo "$id: local_cpulist $(cat "$p/local_cpulist" 2>&1), numa_node $(cat "$p/numa_node" 2>&1)"
done
if command -v lstopo-no-graphics >/dev/null; then
	lstopo-no-graphics --of console --no-caches | grep -v ' PU L#'
	lstopo-no-graphics --of xml >"$OUT/bind-topology.xml"
fi
step build
build
build_old
cat >"$R/bind.yaml" <<'Y'
sweep: bind
kernel: debug.gpu
params:
  mode: ok
  i: [0, 1, 2, 3]
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 5}
Y
for np in 1 2; do
	step "sweep hosts bind --ranks-per-node $np (CUDA's GPUs, then --gpus auto)"
	$S hosts bind --ranks-per-node $np
	$S hosts bind --ranks-per-node $np --gpus auto
	for b in old/build/sweep "$S"; do
		[ -x "$b" ] || { echo "no $b"; continue; }
		step "$b run on $np ranks: the workers' binding"
		rm -f "$R"/bind.db*
		timeout 200 mpirun -np $np --bind-to none "$b" run "$R/bind.yaml" --db "$R/bind.db" 2>&1 | tail -1
		"$b" sql "$R/bind.db" "SELECT rank, gpu, binding FROM workers ORDER BY rank" --md
	done
done
