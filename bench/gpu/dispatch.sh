#!/bin/bash
# dispatch.sh: on the GPU machine (16 cores), the executor's cost for short cells: null cells (debug.fail in
# mode ok, as `make bench`) on 3 and on 8 ranks, this build and the one in old/ in turn, five rounds each;
# then GPU cells that fail on purpose among good ones, to see the executor path on a GPU after the change.
# Run after bench/gpu/vendor.sh here, with vendor/ and old/ copied along. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=dispatch
. tests/gpu/lib.sh
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
step machine
nproc
nvidia-smi --query-gpu=index,name,clocks.sm,power.limit --format=csv
step build
build
build_old
cat >"$R/null.yaml" <<'Y'
sweep: null
kernel: debug.fail
params:
  mode: ok
  i: {from: 1, to: 1000, step: 1}
repeat: 100
timing: {min_samples: 1, min_time: 0, max_noise: 1e9, timeout: 1, warmup: 0, batch: 1}
Y
# rate BINARY NP: null cells committed per second by BINARY on NP ranks (its closing line's seconds; the
# count by its own sql, which reads its own schema).
rate() {
	rm -f "$R"/null.db*
	"$1" plan "$R/null.yaml" --db "$R/null.db" >/dev/null
	timeout 120 mpirun --bind-to none -np "$2" "$1" run "$R/null.yaml" --db "$R/null.db" 2>"$R/run.err"
	s=$(grep -o ' in [0-9.]* s' "$R/run.err" | tail -1 | tr -dc '0-9.')
	n=$("$1" sql "$R/null.db" "SELECT count(*) FROM results WHERE status = 'ok'" --csv | tail -1)
	echo "$n $s" | awk '{ printf "%.0f", $1 / $2 }'
}
for np in 3 8; do
	step "null cells on $np ranks: this build against old/ (cells/s)"
	[ -x old/build/sweep ] || { echo "no old/build/sweep"; break; }
	for i in 1 2 3 4 5; do
		o=$(rate old/build/sweep "$np")
		n=$(rate "$S" "$np")
		echo "round $i: old $o, new $n, new/old $(echo "$n $o" | awk '{ printf "%.3f", $1 / $2 }')"
	done
done
debug_gpu
cp "$R"/*.db "$OUT"/ 2>/dev/null
