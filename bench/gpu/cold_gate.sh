#!/bin/bash
# cold_gate.sh: one decode step (batch 1, 1K keys: about 12.5 us) under a cold L2 at fixed batches of 1 to
# 64 launches a sample, as built (at most COLD_MAX_LAUNCHES behind one gate) and in a copy built without
# the gate before a cold batch; each cell's median, interval, samples and wall. What it showed is in
# src/criterion.h and docs/measured.md: the step's time repeats in a cycle of four timed samples, so a
# fixed batch can leave its median between two levels until the timeout; sweep's default timing averages
# consecutive samples instead (precision.sh). Reads the card's state only.
set -u
cd "$(dirname "$0")/../.."
NAME=cold_gate
. tests/gpu/lib.sh
step build
build
copy_tree /tmp/nogate
python3 - <<'P'
p = '/tmp/nogate/src/measure_cuda.cu'
s = open(p).read()
old = """		gate_kernel<<<1, 1, 0, s->stream>>>(s->gate_dev, GATE_TIMEOUT_NS);
		LAUNCH_CHECK(ctx);
		rc = cuda_enqueue_cold(s, k, ctx, n);"""
assert old in s
open(p, 'w').write(s.replace(old, "		rc = cuda_enqueue_cold(s, k, ctx, n);"))
P
make_sweep /tmp/nogate "$R/nogate.log" || { tail "$R/nogate.log"; exit 1; }
for v in gate nogate; do
	bin=$S
	[ $v = nogate ] && bin=/tmp/nogate/build/sweep
	step "$v: decode by launches a sample, cold L2"
	for k in "1 1024 1" "1 1024 4" "1 1024 9" "1 1024 16" "1 1024 64" "1 4096 16" "8 1024 16"; do
		set -- $k
		printf 'sweep: %s-%s-%s-%s\nkernel: decode_attn\nparams: {batch: %s, kv_len: %s}\ntiming: {batch: %s, timeout: 4}\n' \
			$v $1 $2 $3 $1 $2 $3 >"$R/x.yaml"
		timeout 30 $bin run "$R/x.yaml" --db "$R/$v.db" 2>&1 | tail -1
	done
	q "$R/$v.db" "SELECT sweep, round(median * 1e6, 3) AS us, round(ci_lo * 1e6, 3) AS lo,
		round(ci_hi * 1e6, 3) AS hi, n, launches, round(wall, 3) AS wall, stop FROM v_results ORDER BY id"
	cp "$R/$v.db" "$OUT/"
done
