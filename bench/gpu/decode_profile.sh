#!/bin/bash
# decode_profile.sh: Nsight Compute on decode_attn's two kernels (the split and the combine) for one decode
# step over 64K keys at batch 1 and 16, clocks left as they are (--clock-control none). The details go to
# $OUT/decode-ncu-*.txt. Run after bench/gpu/vendor.sh with vendor/ copied along.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=decode_profile
. tests/gpu/lib.sh
build
build_check
for b in 1 16; do
	step "batch $b"
	timeout 300 ncu --clock-control none --set full --kernel-name regex:attn_ --launch-skip 6 --launch-count 2 \
		build/check_kernels 0 cells decode_attn "{\"batch\": $b, \"kv_len\": 65536}" >"$OUT/decode-ncu-$b.txt" 2>&1
	grep -E 'attn_(split|combine)_kernel|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Compute \(SM\) Throughput|Grid Size|Waves Per SM|Eligible|Issued Warp' \
		"$OUT/decode-ncu-$b.txt" | head -60
done
