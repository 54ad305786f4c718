#!/bin/sh
# roofline.sh: the roofline example end to end on one machine, its five machines simulated.
#
# On real machines: run the sweep on each (mpirun across them, or one run per host and `sweep merge`), probe
# their read bandwidth (`sweep hosts probe`), label them in the inventory (hosts/*.yaml: class: consumer or
# server), then the same report. Here examples/simulate-hosts.sh plays each machine in turn, records the
# machine's bandwidth as its host_read_gbs probe and its class as a label.
set -eu
cd "$(dirname "$0")/.."
SWEEP=${SWEEP:-build/sweep}
export SWEEP
db=${1:-results/roofline.db}
mkdir -p "$(dirname "$db")"
rm -f "$db" "$db-wal" "$db-shm"
for m in desk-7950x desk-14900k mini-m2pro srv-epyc9654 srv-xeon8480; do
	gbs=$(python3 examples/roofline_sim.py --host "$m" --probe host_read_gbs)
	class=$(python3 examples/roofline_sim.py --host "$m" --probe class)
	examples/simulate-hosts.sh "$db" sweeps/roofline.yaml "$m" --label "class=$class" \
		--probe "host_read_gbs=$gbs:GB/s"
done
"$SWEEP" report "$db" --rows host,model --metric tok_s --limit 'host_read_gbs * 1e9 / bytes_per_token' \
	--summary=label.class --unit host
