#!/bin/sh
# decode-grid.sh: the decode-grid example end to end on one machine, its two hosts simulated.
#
# On two real hosts the same table comes from one mpirun across them (per: host runs every cell on each):
#   mpirun --hostfile H -np 2 --bind-to none build/sweep run sweeps/decode-grid.yaml
# Here examples/simulate-hosts.sh runs the sweep twice, once as node-a and once as node-b.
set -eu
cd "$(dirname "$0")/.."
SWEEP=${SWEEP:-build/sweep}
export SWEEP
db=${1:-results/decode-grid.db}
mkdir -p "$(dirname "$db")"
rm -f "$db" "$db-wal" "$db-shm"
for host in node-a node-b; do
	examples/simulate-hosts.sh "$db" sweeps/decode-grid.yaml "$host"
done
"$SWEEP" report "$db" --rows host,model,budget --metric tok_s --compare system=cache/baseline \
	--paired-by item --ci 95
