#!/bin/bash
# spans.sh: the managed span (CRITERION_MANAGED_SPAN, the seconds of samples a cell on a clock the card
# manages takes at least) against the six passes' spread: one build per span in SPANS (default "0.2 0.6"),
# each a copy of the tree with the constant changed (built side by side), then ROUNDS (default 8) rounds
# of tests/gpu/specs/timing-passes.yaml through each build in turn (the order rotating), after one run of
# the GEMM grid (through the first span's build) so that the card starts warm, as the passes do in
# tests/gpu/precision.sh. Prints each run's medians, clocks and walls, then each span's spreads. Reads the
# card's state only.
set -u
cd "$(dirname "$0")/../.."
NAME=spans
. tests/gpu/lib.sh
SPANS=${SPANS:-0.2 0.6} ROUNDS=${ROUNDS:-8}
step "one build per span, at once"
for v in $SPANS; do
	(copy_tree "/tmp/span-$v" &&
		sed -i "s/^#define CRITERION_MANAGED_SPAN .*/#define CRITERION_MANAGED_SPAN $v/" \
			"/tmp/span-$v/src/criterion.h" &&
		make_sweep "/tmp/span-$v" "$R/build-$v.log" || { tail -20 "$R/build-$v.log"; exit 1; }) &
done
for v in $SPANS; do wait -n || exit 1; done
read -ra spans <<<"$SPANS"
S=/tmp/span-${spans[0]}/build/sweep
step "the GEMM grid, to start warm"
timeout 60 $S run tests/gpu/specs/timing-gemm.yaml --db "$R/warm.db" 2>&1 | tail -1
step "$ROUNDS rounds of the six passes with each span in turn"
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#spans[@]}; i++)); do
		v=${spans[(i + r) % ${#spans[@]}]}
		timeout 60 "/tmp/span-$v/build/sweep" run tests/gpu/specs/timing-passes.yaml --db "$R/p-$v-$r.db" \
			>/dev/null 2>&1
	done
done
runs=()
for ((r = 1; r <= ROUNDS; r++)); do
	for v in $SPANS; do runs+=("span $v:$r:$R/p-$v-$r.db"); done
done
python3 bench/gpu/spreads.py "${runs[@]}"
