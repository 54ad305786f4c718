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
python3 - "$R" <<'PY'
import glob, sqlite3, statistics, sys
R = sys.argv[1]
def rows(paths):
    out = []
    for p in paths:
        out += sqlite3.connect(p).execute("SELECT median, sm_clock, wall FROM v_results WHERE status = 'ok'"
                                          " ORDER BY pass").fetchall()
    return out
by = {}
for r in range(1, 100):
    ways = (("back-to-back", [f"{R}/b-{r}.db"]), ("rested", [f"{R}/s-{r}-{i}.db" for i in range(1, 7)]))
    for way, paths in ways:
        if not glob.glob(paths[0]):
            continue
        x = rows(paths)
        m = [v[0] for v in x]
        s = (max(m) - min(m)) / min(m) * 100 if len(m) > 1 else float("nan")
        by.setdefault(way, []).append(s)
        print(f"{way} round {r}: spread {s:.3f} %  medians " + " ".join(f"{v[0] * 1e6:.2f}" for v in x)
              + "  MHz " + " ".join(f"{v[1] or 0:.0f}" for v in x)
              + "  wall " + " ".join(f"{v[2]:.2f}" for v in x))
for way, ss in by.items():
    print(f"{way}: spread {min(ss):.2f}-{max(ss):.2f} % (median {statistics.median(ss):.3f}),"
          f" {sum(s <= 0.5 for s in ss)} of {len(ss)} within 0.5 %")
PY
