#!/bin/bash
# bench_report.sh: reports on a database of 1,000,000 results must finish in under 1 s each (LIMIT=S sets
# another bound).
# Builds the database with SQL (a recursive CTE in one transaction: about half a minute), then times a
# pivot, a filtered report, a --limit with probes and a paired --compare. Exits 1 when one is too slow.
# Usage: tests/bench_report.sh [N_RESULTS] (default 1000000); KEEP=1 keeps the database. BASE=BINARY also
# times another build (such as main's) on the same database, each report RUNS times each (3 unless set),
# alternately, and prints the ratio of the medians, this build's over BASE's.
set -eu
N=${1:-1000000}
LIMIT=${LIMIT:-1}
SWEEP=${SWEEP:-build/sweep}
BASE=${BASE:-}
D=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$D"' EXIT
DB=$D/bench.db

# The schema comes from sweep itself, so the database is what a run would have made.
cat >"$D/s.yaml" <<'EOF'
sweep: bench
kernel: sleep
params: {ms: [0]}
EOF
"$SWEEP" plan "$D/s.yaml" --db "$DB" >/dev/null

# N cells of 2 dtypes x 100 M x 100 N x N/20000 passes, one ok result each on one of 8 hosts, with the
# metrics seconds and gflops and one per-item value (30 problems) for --compare.
start=$(date +%s.%N)
sqlite3 -batch "$DB" >/dev/null <<EOF
PRAGMA journal_mode = WAL;
PRAGMA synchronous = OFF;
BEGIN;
DELETE FROM cells;
INSERT INTO runs(id, sweep, started, status) VALUES (1, 'bench', '2026-01-01T00:00:00Z', 'ok');
WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < 7)
INSERT INTO hosts(id, hostname, facts, hash, seen)
	SELECT i + 1, 'node' || i, json_object('hostname', 'node' || i, 'labels',
		json_object('class', CASE WHEN i < 4 THEN 'consumer' ELSE 'server' END)), 'h' || i, 'x' FROM h;
INSERT INTO workers(id, run, rank, host, gpu) SELECT id, 1, id - 1, id, NULL FROM hosts;
INSERT INTO probes(host, gpu, name, value, unit) SELECT id, NULL, 'host_read_gbs', 50 + 10 * id, 'GB/s' FROM hosts;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $N - 1)
INSERT INTO cells(id, sweep, key, params, pass, replica, ord, state)
	SELECT i + 1, 'bench', printf('%016x', i),
		json_object('dtype', CASE i % 2 WHEN 0 THEN 'f32' ELSE 'f64' END, 'M', 64 * (1 + (i / 2) % 100),
			'N', 64 * (1 + (i / 200) % 100)),
		i / 20000, '', i, 'ok' FROM c;
INSERT INTO results(id, cell, run, worker, status, attempt, started, wall, n, median, noise, noise_ok, precise)
	SELECT id, id, 1, 1 + id % 8, 'ok', 1, '2026-01-01T00:00:01Z', 0.01, 10,
		1e-3 * (1 + (id % 97) / 100.0), 0.001, 1, 1 FROM cells;
INSERT INTO metrics(result, name, value) SELECT id, 'seconds', median FROM results;
INSERT INTO metrics(result, name, value) SELECT id, 'gflops', 2.0 * 64 * 64 * 64 / median / 1e9 FROM results;
INSERT INTO items(result, item, metric, value) SELECT id, 'p' || (((id - 1) / 200) % 30), 'gflops',
	2.0 * 64 * 64 * 64 / median / 1e9 FROM results;
COMMIT;
EOF
printf 'built %d results in %.1f s: %s\n' "$N" "$(echo "$(date +%s.%N) - $start" | bc)" "$(du -h "$DB" | cut -f1)"

fail=0
# once BIN ARGS...: the seconds one report takes (its output in $D/out), or nothing when it failed.
once() {
	local bin=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$bin" report "$DB" "$@" >"$D/out" 2>"$D/err" || return 1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
RUNS=${RUNS:-3}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
timed() {
	local name=$1 s b ratio="" t=() u=()
	shift
	if [ -n "$BASE" ]; then
		for _ in $(seq "$RUNS"); do
			u+=("$(once "$BASE" "$@")") && t+=("$(once "$SWEEP" "$@")") ||
				{ echo "$name: failed"; cat "$D/err"; fail=1; return; }
		done
		s=$(median "${t[@]}") b=$(median "${u[@]}")
		ratio=$(printf '  %.3f of base (%.2f s)' "$(echo "$s / $b" | bc -l)" "$b")
	else
		s=$(once "$SWEEP" "$@") || { echo "$name: failed"; cat "$D/err"; fail=1; return; }
	fi
	printf '%-44s %6.2f s  (%d lines)%s\n' "$name" "$s" "$(wc -l <"$D/out")" "$ratio"
	if [ "$(echo "$s > $LIMIT" | bc)" = 1 ]; then
		echo "  too slow: over $LIMIT s"
		fail=1
	fi
}
timed "pivot dtype,M x N, median gflops" --rows dtype,M --cols N --metric gflops
timed "rows host, geomean, csv" --rows host --pool dtype,M,N --metric gflops --stat geomean --format csv
timed "where M >= 3200 AND dtype = 'f32'" --rows M --pool N --metric seconds --where "M >= 3200 AND dtype = 'f32'"
timed "limit from probes, summary by class" --rows host --pool dtype,M,N --metric gflops \
	--limit "host_read_gbs * 1e9 / (M * 8)" --summary=label.class
timed "compare dtype f32/f64 by item, rows M" --rows M --pool N --metric gflops --compare dtype=f32/f64 \
	--paired-by item --boot 2000
exit $fail
