#!/bin/bash
# counters.sh: on a GPU host, a spec's counters: read through ncu for a command cell (src/counters.c): a
# 2 GiB copy (tests/gpu/copy_once.cu, one kernel) must read and write 2 GiB of DRAM, within 1 %. When the
# driver refuses counters, prints what it answered (the result's one line) and exits 2: blocked, not
# failed. The CPU twin is tests/e2e/t0460-counters.sh (a fake ncu). Run after bench/gpu/vendor.sh here, with
# vendor/ copied along. Exits 1 when a figure is off. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=counters
. tests/gpu/lib.sh
step build
[ -x build/sweep ] || make_sweep . "$R/build.log" || { tail -30 "$R/build.log"; exit 1; }
nvcc -O3 -arch=sm_90 tests/gpu/copy_once.cu -o "$R/copy_once" || exit 1
command -v ncu || { echo "counters: no ncu here: nothing to check"; exit 2; }
ncu --version | tail -1

cat >"$R/counters.yaml" <<Y
sweep: counters
command: [$R/copy_once, "{gib}"]
params: {gib: [2]}
metrics: {bytes: "bytes=([0-9]+)"}
counters: [dram__bytes_read.sum, dram__bytes_write.sum, lts__t_sector_hit_rate.pct]
Y
step "a 2 GiB copy's DRAM bytes through ncu"
timeout 300 $S run "$R/counters.yaml" --db "$R/c.db" 2>&1 | grep '^sweep: '
q "$R/c.db" "SELECT m.name, m.value FROM metrics m ORDER BY m.name"
note=$($S sql "$R/c.db" "SELECT coalesce(stderr, '') FROM results" --csv | tail -1)
[ -n "$note" ] && echo "the result says: $note"
python3 - "$R/c.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = dict(db.execute("SELECT name, value FROM metrics"))
want = 2 * 2**30
if "dram__bytes_read.sum" not in m:
    print("counters: blocked: no counter was read (the result's line above says why)")
    sys.exit(2)
bad = 0
for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"):
    got = m.get(name, float("nan"))
    ok = abs(got / want - 1) <= 0.01
    bad += not ok
    print("%s: %.0f bytes, %.4f of 2 GiB: %s" % (name, got, got / want, "ok" if ok else "FAILED: over 1 %"))
sys.exit(1 if bad else 0)
P
