#!/bin/bash
# passes_rest.sh: whether the six passes of the 67 us GEMM (1024x6144x4096 bf16) drift with the card's
# heat: ROUNDS (default 6) rounds, each after a run of the GEMM grid so that the card starts warm, as in
# tests/gpu/precision.sh, of (a) the six passes in one `sweep run` (timing-passes.yaml: back to back) and
# (b) six `sweep run`s of one pass each, REST seconds (default 1) apart, in turn; with each pass's median,
# gate clock and the GPU temperature before it. Prints each round's spread, then each way's. Reads the
# card's state only.
set -u
cd "$(dirname "$0")/../.."
NAME=passes_rest
. tests/gpu/lib.sh
ROUNDS=${ROUNDS:-6} REST=${REST:-1}
[ -x "$S" ] || build
temp() { nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader,nounits; }
sed 's/^repeat: 6$/repeat: 1/' tests/gpu/specs/timing-passes.yaml >"$R/one.yaml"
for ((r = 1; r <= ROUNDS; r++)); do
	timeout 60 $S run tests/gpu/specs/timing-gemm.yaml --db "$R/warm-$r.db" >/dev/null 2>&1
	echo "round $r back-to-back temp_before $(temp)"
	timeout 60 $S run tests/gpu/specs/timing-passes.yaml --db "$R/b-$r.db" >/dev/null 2>&1
	echo "round $r back-to-back temp_after $(temp)"
	timeout 60 $S run tests/gpu/specs/timing-gemm.yaml --db "$R/warm2-$r.db" >/dev/null 2>&1
	for i in 1 2 3 4 5 6; do
		sleep "$REST"
		echo "round $r rested pass $i temp_before $(temp)"
		timeout 60 $S run "$R/one.yaml" --db "$R/s-$r-$i.db" >/dev/null 2>&1
	done
done
runs=()
for ((r = 1; r <= ROUNDS; r++)); do
	runs+=("back-to-back:$r:$R/b-$r.db" "rested:$r:$(printf "$R/s-$r-%s.db," 1 2 3 4 5 6)")
done
python3 bench/gpu/spreads.py "${runs[@]%,}"
