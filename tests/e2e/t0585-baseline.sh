#!/bin/bash
# t0585-baseline: `sweep compare BASE NEW`: two databases of one sweep, paired cell by cell, the ratio
# NEW/BASE with its interval over passes and a verdict; --fail-above gates (exit 4); a cell or host on one
# side only is said, never dropped; conditions that differ are said; --better and a metric without a
# direction; the superseded results of --force against the new ones.
. tests/e2e/lib.sh

# prog.sh is the program measured. It prints what it measured itself, so that the verdicts do not hang on
# this machine's load: a latency (100 ms in version 1, 15 % more in version 2) and a throughput (its
# inverse, declared higher-better), each moved by a jitter of at most 1 % that cycles with the calls, and
# a score without a unit (10, then 12), so without a direction. version LAT SCORE SHIFT writes one version
# (SHIFT: where its jitter's cycle starts).
cat >"$T/prog.in" <<'EOF'
#!/bin/sh
f=$(dirname "$0")/calls-$1; k=$(cat "$f" 2>/dev/null || echo 0); echo $((k + 1)) >"$f"
j=$(echo "1.000 1.010 0.990 1.005" | cut -d" " -f$(((k + SHIFT) % 4 + 1)))
awk -v j="$j" -v l=LAT -v s=SCORE 'BEGIN { printf "lat=%.4f ms tput=%.4f score=%d\n", l * j, 5000 / (l * j), s }'
EOF
version() { sed "s/LAT/$1/; s/SCORE/$2/; s/SHIFT/$3/" "$T/prog.in" >"$T/prog.sh"; }
cat >"$T/s.yaml" <<EOF
sweep: cmpb
command: [sh, $T/prog.sh, "{n}"]
metrics:
  lat: {regex: "lat=([0-9.]+ ms)", unit: ms}
  tput: {regex: "tput=([0-9.]+)", better: higher}
  score: "score=([0-9]+)"
params:
  n: [1, 2]
repeat: 4
EOF

test_expect_success 'setup: version 1 measured twice, version 2 once (2 cells, 4 passes)' '
	version 100 10 0 && "$SWEEP" run s.yaml --db base.db 2>err && grep -q "8 cells ok" err &&
	"$SWEEP" run s.yaml --db same.db 2>err && grep -q "8 cells ok" err &&
	version 115 12 1 && "$SWEEP" run s.yaml --db new.db 2>err && grep -q "8 cells ok" err &&
	test "$(sql new.db "SELECT group_concat(v, '\'' '\'') FROM (SELECT DISTINCT value AS v FROM metrics
		WHERE name = '\''lat'\'' ORDER BY 1)")" = "113.85 115.0 115.575 116.15"
'

# The ratio by hand: per cell, the mean over its 4 passes of NEW's lat over BASE's.
cat >"$T/ratio.py" <<'EOF'
import csv, sqlite3, sys
def means(db):
    q = ("SELECT json_extract(c.params, '$.n'), avg(m.value) FROM results r JOIN cells c ON c.id = r.cell"
         " JOIN metrics m ON m.result = r.id AND m.name = 'lat' WHERE r.status = 'ok' GROUP BY 1")
    return dict(sqlite3.connect(db).execute(q).fetchall())
b, n = means(sys.argv[1]), means(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[3])))
assert len(rows) == 2, rows
for r in rows:
    k = int(r["n"])
    assert r["pairs"] == "4", r
    assert abs(float(r["lat_base"]) / b[k] - 1) < 1e-5 and abs(float(r["lat_new"]) / n[k] - 1) < 1e-5, r
    assert abs(float(r["ratio"]) / (n[k] / b[k]) - 1) < 1e-5, (r, n[k] / b[k])
    assert float(r["ci_lo"]) <= float(r["ratio"]) <= float(r["ci_hi"]), r
    print(r["verdict"], float(r["ratio"]), float(r["ci_lo"]), float(r["ci_hi"]))
EOF

test_expect_success 'a 15 % slower program: slower, the interval above 1, exit 4 with --fail-above 5' '
	test_expect_code 4 "$SWEEP" compare base.db new.db --metric lat --fail-above 5 --format csv \
		>slow.csv 2>err &&
	head -1 slow.csv | grep -qx "n,host,pairs,lat_base,lat_new,ratio,ci_lo,ci_hi,verdict,caveat" &&
	test "$(cut -d, -f10 slow.csv | sed 1d | sort -u)" = "fewer than 5 pairs (4)" &&
	python3 ratio.py base.db new.db slow.csv >got &&
	test "$(cut -d" " -f1 got | sort -u)" = slower &&
	awk "{ if (!(\$2 > 1.1 && \$2 < 1.2 && \$3 > 1.05)) exit 1 }" got &&
	grep -q "note: 2 rows are slower by more than --fail-above 5%" err &&
	! grep -q "only in" err &&
	# the one condition the two sides differ in: the program measured, by its hash
	test "$(grep -c "conditions differ" err)" = 1 &&
	grep -q "^note: conditions differ: file .*/prog.sh: base sha256:[0-9a-f]*, new sha256:[0-9a-f]*$" err
'

test_expect_success 'without --fail-above the verdict is printed and the exit is 0; the title names the units' '
	"$SWEEP" compare base.db new.db --metric lat >slow.md 2>/dev/null &&
	grep -q "units by pass (ratio of means, 95% paired percentile bootstrap over passes" slow.md &&
	grep -q "lower is better, verdict past 2%" slow.md &&
	grep -Eq "^\| +1 \| [^|]+\| +4 \| +100\.[0-9]+ \| +115\.[0-9]+ \| 1\.[0-9]+ \[1\.[0-9]+, 1\.[0-9]+\][^|]*\| slower +\|$" slow.md
'

test_expect_success 'the same program measured twice: unchanged, exit 0 with --fail-above 5' '
	"$SWEEP" compare base.db same.db --metric lat --fail-above 5 --format csv >same.csv 2>err &&
	python3 ratio.py base.db same.db same.csv >got &&
	test "$(cut -d" " -f1 got | sort -u)" = unchanged &&
	! grep -q "fail-above" err
'

# new.db is 15 % slower to the jitter's cycle (the same four values a side): its interval holds 1.15.
test_expect_success 'four verdicts: past the threshold, within it, or inconclusive; --fail-above only past PCT' '
	"$SWEEP" compare base.db new.db --metric lat --threshold 15 --fail-above 15 --format csv >t15.csv 2>err &&
	test "$(cut -d, -f9 t15.csv | sort -u | tr "\n" " ")" = "inconclusive verdict " &&
	awk -F, "NR > 1 { if (!(\$7 < 1.15 && \$8 > 1.15 && \$7 > 1.1)) exit 1 }" t15.csv &&
	! grep -q "fail-above" err &&
	"$SWEEP" compare base.db new.db --metric lat --threshold 30 --fail-above 30 --format csv >t30.csv &&
	test "$(cut -d, -f9 t30.csv | sort -u | tr "\n" " ")" = "unchanged verdict " &&
	test_expect_code 4 "$SWEEP" compare base.db new.db --metric lat --threshold 10 --fail-above 10 \
		--format csv >t10.csv 2>err &&
	test "$(cut -d, -f9 t10.csv | sort -u | tr "\n" " ")" = "slower verdict " &&
	grep -q "note: 2 rows are slower by more than --fail-above 10%" err
'

test_expect_success 'every format: text, latex, json (numbers apart, the verdict as text)' '
	"$SWEEP" compare base.db new.db --metric lat --format text >t 2>/dev/null &&
	grep -Eq "^n +host +pairs +lat_base +lat_new +new/base \[95% CI\] +verdict" t &&
	"$SWEEP" compare base.db new.db --metric lat --format latex >tex 2>/dev/null &&
	grep -q "slower" tex &&
	"$SWEEP" compare base.db new.db --metric lat --format json >j 2>/dev/null &&
	python3 -c "
import json; d = json.load(open(\"j\")); rows = d[\"rows\"] if isinstance(d, dict) else d
assert len(rows) == 2 and all(r[\"verdict\"] == \"slower\" and r[\"ratio\"] > 1.05 for r in rows), rows
assert all(100 < r[\"lat_base\"] < 101 and 115 < r[\"lat_new\"] < 116 for r in rows), rows
"
'

test_expect_success '--better higher turns the verdict round: the same numbers are faster, exit 0' '
	"$SWEEP" compare base.db new.db --metric lat --better higher --fail-above 5 --format csv >hi.csv &&
	test "$(cut -d, -f9 hi.csv | sort -u | tr "\n" " ")" = "faster verdict "
'

test_expect_success 'a direction from the spec: better: higher on tput, whose drop is a slowdown' '
	test_expect_code 4 "$SWEEP" compare base.db new.db --metric tput --fail-above 5 --format csv >tp.csv &&
	test "$(cut -d, -f9 tp.csv | sort -u | tr "\n" " ")" = "slower verdict " &&
	"$SWEEP" compare base.db new.db --metric tput >tp.md 2>/dev/null &&
	grep -q "higher is better" tp.md
'

test_expect_success 'a metric without a direction: ratios, no verdict, and how to give one' '
	"$SWEEP" compare base.db new.db --metric score --fail-above 5 --format csv >sc.csv 2>err &&
	grep -q "^1,[^,]*,4,10,12,1.2,1.2,1.2,," sc.csv &&
	grep -q "no verdict: which way is .score. better? give --better lower|higher" err &&
	test_expect_code 4 "$SWEEP" compare base.db new.db --metric score --better lower --fail-above 5 \
		--format csv >sc.csv 2>err &&
	grep -q "^2,[^,]*,4,10,12,1.2,1.2,1.2,slower," sc.csv
'

# A host on one side only: in a copy of new.db the results of cell n=2 are moved to a worker of another
# host (a row added by hand, as a merge from that host would add it).
test_expect_success 'a host on one side only: each of its cells is named on stderr, the rest is paired' '
	sqlite3 new.db ".backup hosts.db" &&
	sqlite3 hosts.db "INSERT INTO hosts(hostname, facts, hash, seen) VALUES (
			'\''elsewhere'\'', '\''{\"hostname\": \"elsewhere\"}'\'', '\''h-elsewhere'\'', '\''now'\'');
		INSERT INTO workers(run, rank, host, gpu) SELECT run, 99, last_insert_rowid(), -1 FROM workers LIMIT 1;
		UPDATE results SET worker = last_insert_rowid() WHERE cell IN (SELECT id FROM cells
			WHERE json_extract(params, '\''$.n'\'') = 2)" &&
	me=$(sql base.db "SELECT hostname FROM hosts LIMIT 1") &&
	"$SWEEP" compare base.db hosts.db --metric lat --format csv >h.csv 2>err &&
	test "$(wc -l <h.csv)" = 2 && grep -q "^1,$me,4," h.csv &&
	grep -q "note: only in new: n=2 host=elsewhere (lat 115.144 over 4 units)" err &&
	grep -q "note: only in base: n=2 host=$me (lat 100.125 over 4 units)" err &&
	grep -q "note: 1 cells only in base, 1 only in new (listed above), left out of the table" err &&
	grep -q "note: conditions differ: host: base $me, new elsewhere, $me" err &&
	"$SWEEP" compare base.db hosts.db --metric lat >h.md 2>/dev/null &&
	head -1 h.md | grep -q "; 1 cell only in base and 1 only in new left out (named on stderr)$"
'

# This week's rental against last week's: every result of NEW on another host. Nothing pairs by host: an
# error (exit 2) that says so, never an empty table that passes the gate; --pair-by params pairs them.
test_expect_success 'no cell pairs: exit 2 naming the keys that differ and --pair-by params, which pairs them' '
	sqlite3 new.db ".backup moved.db" &&
	sqlite3 moved.db "INSERT INTO hosts(hostname, facts, hash, seen) VALUES (
			'\''rental'\'', '\''{\"hostname\": \"rental\"}'\'', '\''h-rental'\'', '\''now'\'');
		INSERT INTO workers(run, rank, host, gpu) SELECT run, 99, last_insert_rowid(), -1 FROM workers LIMIT 1;
		UPDATE results SET worker = last_insert_rowid()" &&
	me=$(sql base.db "SELECT hostname FROM hosts LIMIT 1") &&
	test_expect_code 2 "$SWEEP" compare base.db moved.db --metric lat --fail-above 5 >none.csv 2>err &&
	test ! -s none.csv &&
	grep -qx "sweep: no cell of one side pairs with one of the other: they differ in host (base: $me; new: rental); --pair-by params pairs cells by their parameters alone (the hosts. difference is said among the conditions)" err &&
	test_expect_code 4 "$SWEEP" compare base.db moved.db --metric lat --fail-above 5 --pair-by params \
		--format csv >p.csv 2>err &&
	head -1 p.csv | grep -qx "n,pairs,lat_base,lat_new,ratio,ci_lo,ci_hi,verdict,caveat" &&
	test "$(cut -d, -f2,8 p.csv | sed 1d | tr "\n" " ")" = "4,slower 4,slower " &&
	grep -q "note: conditions differ: host: base $me, new rental$" err &&
	! grep -q "only in" err &&
	"$SWEEP" compare base.db moved.db --metric lat --pair-by params >p.md 2>/dev/null &&
	head -1 p.md | grep -q "cells paired by parameters, units by pass" &&
	"$SWEEP" compare base.db new.db --metric lat --pair-by params,host >ph.md 2>/dev/null &&
	head -1 ph.md | grep -q "cells paired by parameters and host, units by pass" &&
	test_expect_code 2 "$SWEEP" compare base.db new.db --metric lat --pair-by gpu 2>err &&
	grep -qx "sweep: --pair-by takes params or params,host, not .gpu." err
'

# Another version of sweep measured NEW: runs.version is edited by hand to say so (this version of sweep
# leaves it empty: '-').
test_expect_success 'conditions that differ are said above the table, one line each' '
	sqlite3 same.db ".backup ver.db" &&
	sqlite3 ver.db "UPDATE runs SET version = '\''9.9.9-test'\''" &&
	"$SWEEP" compare base.db ver.db --metric seconds --format csv >/dev/null 2>err &&
	old=$(sql base.db "SELECT DISTINCT coalesce(version, '\''-'\'') FROM runs") &&
	grep -qx "note: conditions differ: sweep version: base $old, new 9.9.9-test" err &&
	test "$(grep -c "conditions differ" err)" = 1
'

test_expect_success '--superseded: the results a --replan (or --force) replaced against the new ones, in one database' '
	sqlite3 base.db ".backup f.db" &&
	# prog.sh is version 2 now: the sweep of f.db ran version 1, so a run stops until told to replan
	test_expect_code 2 "$SWEEP" run s.yaml --db f.db --force 2>err &&
	grep -q "prog.sh.: sha256:[0-9a-f]* -> sha256:[0-9a-f]*. Nothing was run" err &&
	"$SWEEP" run s.yaml --db f.db --replan 2>err &&
	grep -q "8 results superseded, 8 cells to measure again" err &&
	test_expect_code 4 "$SWEEP" compare f.db --superseded --metric lat --fail-above 5 --format csv \
		>f.csv 2>err &&
	test "$(cut -d, -f9 f.csv | sort -u | tr "\n" " ")" = "slower verdict " &&
	test "$(cut -d, -f4 f.csv | sed 1d)" = "$(cut -d, -f4 slow.csv | sed 1d)" &&
	# the caption says what the base is: the superseded results of the same file
	"$SWEEP" compare f.db --superseded --metric lat >f.md 2>err &&
	grep -q "^lat of sweep [^,]*, f.db over its superseded results: " f.md
'

# One pass, three timed runs a cell: the units are the runs' samples, paired by index.
sed -e "/^repeat:/d" -e "s/^params:/runs: 3\nparams:/" \
	"$T/s.yaml" >"$T/runs.yaml"

test_expect_success 'one value a cell but timed samples: the samples are paired, the title says so' '
	"$SWEEP" run runs.yaml --db r1.db 2>/dev/null && "$SWEEP" run runs.yaml --db r2.db 2>/dev/null &&
	"$SWEEP" compare r1.db r2.db --metric ms --format csv >r.csv 2>err &&
	test "$(cut -d, -f3 r.csv | tr "\n" " ")" = "pairs 3 3 " &&
	"$SWEEP" compare r1.db r2.db --metric ms >r.md 2>/dev/null &&
	grep -q "units by sample index (ratio of means, 95% paired percentile bootstrap over samples, 10000 resamples, seed 1, plus the variation between passes)" r.md &&
	# one pass a side: run-to-run variation is not measured, said on stderr and in the table
	grep -qx "sweep: warning: one pass: n=1 host=[^ ]* (one pass a side); n=2 host=[^ ]* (one pass a side); run-to-run variation is not measured, the interval holds the units. alone: give the sweep .repeat: 2. or more to measure it (marked)" err &&
	grep -q "^| *1 | [^|]*| *3 | [^|]*| [^|]*| [^|]*\][^|]*$(printf "\342\200\241") |" r.md &&
	grep -q "^$(printf "\342\200\241") .*one pass a side: run-to-run variation not measured (.repeat: 2. or more measures it) (see the warnings)$" r.md &&
	"$SWEEP" compare r1.db r2.db --metric lat --format csv >l.csv 2>err &&
	test "$(cut -d, -f3,7,8,9 l.csv | sed 1d | tr "\n" " ")" = "1,,, 1,,, " &&
	grep -q "note: n=1 host=[^:]*: 1 pair: no interval, no verdict" err
'

test_expect_success 'bad input: two databases with --superseded, a bad --better, no metric (exit 2)' '
	test_expect_code 2 "$SWEEP" compare base.db new.db --superseded --metric seconds 2>err &&
	grep -q "superseded compares one database with itself" err &&
	test_expect_code 2 "$SWEEP" compare base.db new.db --metric seconds --better faster 2>err &&
	grep -q "better takes lower or higher, not .faster." err &&
	test_expect_code 2 "$SWEEP" compare base.db new.db 2>err &&
	grep -q "which metric" err &&
	"$SWEEP" compare --help >h && grep -q "usage: sweep compare BASE NEW" h
'

