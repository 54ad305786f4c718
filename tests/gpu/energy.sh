#!/bin/bash
# energy.sh: on a GPU host, each result's watts (sweep's NVML total energy counter over its samples' span,
# src/measure.c) against NVML's instantaneous power read every 10 ms by a process of its own
# (tests/gpu/power_sampler.py) over the same span: within 5 % for every cell whose span lasts 0.1 s or more.
# The span is taken as the cell's last n x launches x mean seconds (its samples' own time) before its end
# (started + wall). The CPU twin is tests/unit/test_measure.c (test_energy: a fake timer's counter) and
# tests/unit/test_nvml.c (the counter through the fake NVML). Run after bench/gpu/vendor.sh here, with vendor/
# copied along. Exits 1 when a cell is off or none was compared. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=energy
. tests/gpu/lib.sh
step build
build_sweep
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,power.draw --format=csv

cat >"$R/energy.yaml" <<'Y'
sweep: energy
kernel: copy
params:
  cell:
    - {bytes: 2G, method: memcpy}
    - {bytes: 2G, method: kernel}
    - {bytes: 256M, method: memcpy}
    - {bytes: 64M, method: memcpy}
timing: {min_time: 1, max_noise: 1, timeout: 10}
Y
cat >"$R/energy-gemm.yaml" <<'Y'
sweep: energy-gemm
kernel: gemm
params:
  cell:
    - {M: 8192, N: 8192, K: 8192}
    - {M: 4096, N: 4096, K: 4096}
    - {M: 8192, N: 6144, K: 4096}
  dtype: bf16
timing: {min_time: 1, max_noise: 1, timeout: 10}
Y
# A short one: its span is under 0.1 s, shown and not held to 5 %.
cat >"$R/energy-short.yaml" <<'Y'
sweep: energy-short
kernel: copy
params: {bytes: 64M}
timing: {min_samples: 10, min_time: 0.02, max_noise: 1, timeout: 10}
Y

step "sweep's energy beside a 10 ms power sampler"
python3 tests/gpu/power_sampler.py "$R/power.txt" 0 0.01 &
sampler=$!
sleep 1
for s in energy energy-gemm energy-short; do
	timeout 200 $S run "$R/$s.yaml" --db "$R/e.db" 2>&1 | grep '^sweep: '
done
sleep 0.5
kill -TERM $sampler
wait $sampler
echo "$(wc -l <"$R/power.txt") power readings"

step "compare"
$S sql "$R/e.db" "SELECT r.id, c.sweep, c.params, r.started, r.wall, r.n, r.launches, r.mean, r.median,
	(SELECT value FROM metrics WHERE result = r.id AND name = 'watts') AS watts,
	(SELECT value FROM metrics WHERE result = r.id AND name = 'joules') AS joules
	FROM results r JOIN cells c ON c.id = r.cell WHERE r.status = 'ok' ORDER BY r.id" --csv >"$R/results.csv"
python3 - "$R/results.csv" "$R/power.txt" <<'P'
import csv, datetime, sys
rows = list(csv.DictReader(open(sys.argv[1])))
power = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
bad = compared = 0
print("| cell | span s | sweep W | sampled W (n) | ratio | J/launch | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    start = datetime.datetime.strptime(r["started"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    end = start + float(r["wall"])
    span = int(r["n"]) * int(r["launches"]) * float(r["mean"])
    got = [w for t, w in power if end - span <= t <= end]
    watts = float(r["watts"]) if r["watts"] else float("nan")
    ref = sum(got) / len(got) if got else float("nan")
    ratio = watts / ref if got else float("nan")
    if span < 0.1:
        verdict = "span under 0.1 s: shown only"
    elif not got or not r["watts"]:
        verdict = "FAILED: nothing to compare"
        bad += 1
    else:
        compared += 1
        ok = abs(ratio - 1) <= 0.05
        bad += not ok
        verdict = "ok" if ok else "FAILED: over 5 %"
    print("| %s %s | %.3f | %.1f | %.1f (%d) | %.4f | %s | %s |" % (r["sweep"], r["params"], span, watts, ref,
          len(got), ratio, r["joules"] or "-", verdict))
print("energy: %d cells compared, %d off" % (compared, bad))
sys.exit(1 if bad or not compared else 0)
P
