#!/bin/bash
# t0530-drift: --drift shows each worker's control cell over time as a ratio to the median of its runs
# and flags unstable hosts (drift or noise over the threshold; a command's runs of one sample get their
# spread as the noise); --drop-first leaves the first run out; --exclude-unstable leaves them out of a
# report.
. tests/e2e/lib.sh
SIM="$ROOT/examples/simulate-hosts.sh"
export SWEEP

# ctl.sh MS sleeps MS ms and prints {"t": MS}. The control cell (MS = 300) on host drifty sleeps 120 ms
# longer at each call: its ratios to the median of its runs rise from under 0.8 to over 1.2.
cat >"$T/ctl.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0")/ctlstate; mkdir -p "$d"
ms=$1
if [ "$SIM_HOST" = drifty ] && [ "$ms" = 300 ]; then
	n=$(cat "$d/n" 2>/dev/null || echo 0); echo $((n + 1)) >"$d/n"
	ms=$((300 + 120 * n))
fi
sleep "$(echo "$ms" | awk '{ printf "%.3f", $1 / 1000 }')"
echo "{\"t\": $1}"
EOF
cat >"$T/ctl.yaml" <<EOF
sweep: ctl
command: [sh, $T/ctl.sh, "{ms}"]
metrics: json
params:
  ms: [1, 2, 3, 4, 5, 6]
per: host
control: {params: {ms: 300}, every: 2}
EOF

test_expect_success 'setup: a steady and a drifting host, controls every 2 cells' '
	"$SIM" d.db ctl.yaml steady 2>/dev/null && "$SIM" d.db ctl.yaml drifty 2>/dev/null &&
	test "$(sql d.db "SELECT count(*) FROM controls WHERE error IS NULL")" -ge 6
'

test_expect_success 'the drifting host is flagged, the steady one is not (threshold 25 %)' '
	"$SWEEP" report d.db --drift --threshold 25 --format csv >out 2>err &&
	head -1 out | grep -qx "host,run,worker,gpu,n,median_s,ratio_over_time,max_drift_%,noise_%,status" &&
	grep -q "^drifty,.*,UNSTABLE: drift [0-9.]*% > 25%$" out &&
	grep -q "^steady,.*,stable$" out &&
	# drifty: 300, 420, 540 ms ... against their median, rising through 1 (plus the same overhead each call)
	awk -F, "/^drifty/ { n = split(\$7, r, \" \"); ok = n >= 3 && r[1] < 0.8 && r[n] > 1.2
		for (i = 2; i <= n; i++) ok = ok && r[i] > r[i - 1]; exit !ok }" out &&
	grep -q "1 of 2 workers unstable" err &&
	# a command control run is one sample: its noise is the spread of the runs (relative stdev, in %)
	sql d.db "SELECT c.median FROM controls c JOIN workers w ON w.id = c.worker JOIN hosts h ON h.id = w.host
		WHERE h.hostname = '\''steady'\'' AND c.noise IS NULL ORDER BY c.started" >steady.med &&
	grep "^steady," out | cut -d, -f9 >steady.noise &&
	python3 -c "
import statistics
m = [float(x) for x in open(\"steady.med\")]
got = float(open(\"steady.noise\").read())
assert len(m) >= 3 and abs(got / (100 * statistics.stdev(m) / statistics.fmean(m)) - 1) < 1e-4, (m, got)"
'

test_expect_success '--exclude-unstable drops the flagged host from a report and says so' '
	"$SWEEP" report d.db --rows host --pool ms --metric t --format csv >all &&
	printf "host,n,t\ndrifty,6,3.5\nsteady,6,3.5\n" | cmp - all &&
	"$SWEEP" report d.db --rows host --pool ms --metric t --format csv --exclude-unstable --threshold 25 >kept 2>err &&
	printf "host,n,t\nsteady,6,3.5\n" | cmp - kept &&
	grep -q "note: excluding unstable host drifty (run [0-9]*, worker 0: drift" err
'

# Synthetic controls with known values, so the ratios and flags can be checked exactly (default 3 %):
#   calm:  medians 2.0, 2.02, 1.98, noise 0.01 each -> median 2, ratios 1, 1.01, 0.99, drift 1 % -> stable
#   slide: medians 1.0, 1.01, 1.02, 1.05             -> median 1.015, drift 1.05/1.015 - 1 = 3.4 % -> unstable
#   noisy: medians 1.0, 1.0, noise 0.01 then 0.05    -> drift 0, noise 5 %                -> unstable
test_expect_success 'exact ratios and flags on synthetic controls, default threshold 3 %' '
	sqlite3 d.db "
		INSERT INTO runs(id, sweep, started, status) VALUES (100, '\''ctl'\'', '\''2026-01-01T00:00:00Z'\'', '\''ok'\'');
		INSERT INTO hosts(id, hostname, facts, hash, seen) VALUES
			(100, '\''calm'\'', '\''{\"hostname\":\"calm\"}'\'', '\''h100'\'', '\''x'\''),
			(101, '\''slide'\'', '\''{\"hostname\":\"slide\"}'\'', '\''h101'\'', '\''x'\''),
			(102, '\''noisy'\'', '\''{\"hostname\":\"noisy\"}'\'', '\''h102'\'', '\''x'\'');
		INSERT INTO workers(id, run, rank, host, gpu) VALUES (100, 100, 0, 100, 0), (101, 100, 1, 101, 1),
			(102, 100, 2, 102, NULL);
		INSERT INTO controls(run, worker, sweep, params, started, median, noise, n) VALUES
			(100, 100, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:01Z'\'', 2.0, 0.01, 10),
			(100, 100, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:03Z'\'', 1.98, 0.01, 10),
			(100, 100, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:02Z'\'', 2.02, 0.01, 10),
			(100, 101, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:01Z'\'', 1.0, 0.001, 10),
			(100, 101, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:02Z'\'', 1.01, 0.001, 10),
			(100, 101, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:03Z'\'', 1.02, 0.001, 10),
			(100, 101, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:04Z'\'', 1.05, 0.001, 10),
			(100, 102, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:01Z'\'', 1.0, 0.01, 10),
			(100, 102, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:02Z'\'', 1.0, 0.05, 10),
			(100, 102, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:03Z'\'', NULL, NULL, 0);" &&
	"$SWEEP" report d.db --drift >md 2>/dev/null &&
	grep -q "median time as a ratio to the median of its runs; noise: the largest of a run, or for runs of one sample their spread; unstable when drift or noise passes 3%" md &&
	grep -Eq "^\| calm +\| +100 \| +0 \| +0 \| +3 \| +2.000 \| 1.000 1.010 0.9900 +\| +1.0 \| +1.0 \| stable +\|$" md &&
	grep -Eq "^\| slide +\| +100 \| +1 \| +1 \| +4 \| +1.015 \| 0.9852 0.9951 1.005 1.034 \| +3.4 \| +0.10 \| UNSTABLE: drift 3.4% > 3% +\|$" md &&
	grep -Eq "^\| noisy +\| +100 \| +2 \| +- \| +2 \| .*\| UNSTABLE: noise 5.0% > 3% +\|$" md
'

# A slow first run (a cold cache): 1.05, then 1.0, 1.002, 0.998, 1.001. Against the median of the runs it
# still stands out (4.9 %); --drop-first leaves it out: 0.2 %. Values by numpy (tests/unit/report_values.py
# checks the same rule).
test_expect_success '--drop-first leaves out each worker'\''s first control run' '
	sqlite3 d.db "
		INSERT INTO hosts(id, hostname, facts, hash, seen) VALUES
			(103, '\''cold'\'', '\''{\"hostname\":\"cold\"}'\'', '\''h103'\'', '\''x'\'');
		INSERT INTO workers(id, run, rank, host, gpu) VALUES (103, 100, 3, 103, NULL);
		INSERT INTO controls(run, worker, sweep, params, started, median, noise, n) VALUES
			(100, 103, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:01Z'\'', 1.05, 0.001, 10),
			(100, 103, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:02Z'\'', 1.0, 0.001, 10),
			(100, 103, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:03Z'\'', 1.002, 0.001, 10),
			(100, 103, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:04Z'\'', 0.998, 0.001, 10),
			(100, 103, '\''ctl'\'', '\''{}'\'', '\''2026-01-01T00:00:05Z'\'', 1.001, 0.001, 10);" &&
	"$SWEEP" report d.db --drift --format csv >all.csv 2>/dev/null &&
	grep -q "^cold,100,3,-,5,1.001,1.04895 0.999001 1.001 0.997003 1,4.8951,0.1,UNSTABLE: drift 4.9% > 3%$" all.csv &&
	"$SWEEP" report d.db --drift --drop-first --format csv >drop.csv 2>/dev/null &&
	grep -q "^cold,100,3,-,4,1.0005,0.9995 1.0015 0.997501 1.0005,0.249875,0.1,stable$" drop.csv &&
	"$SWEEP" report d.db --drift --drop-first >drop.md 2>/dev/null &&
	grep -q "ratio to the median of its runs (the first left out)" drop.md &&
	# cold is judged without its first run, so kept; drifty is left out, and steady too where a loaded
	# machine spreads its 300 ms runs by more than 3 % (then no row is left, and the report says so: not
	# what this test is about)
	{ "$SWEEP" report d.db --rows host --pool ms --metric t --exclude-unstable --drop-first --format csv \
		>kept 2>err || :; } &&
	grep -q "excluding unstable host drifty" err && ! grep -q "excluding unstable host cold" err &&
	{ "$SWEEP" report d.db --rows host --pool ms --metric t --exclude-unstable --format csv >all 2>err || :; } &&
	grep -q "excluding unstable host cold (run 100, worker 3: drift 4.9% > 3%)" err &&
	test_expect_code 2 "$SWEEP" report d.db --rows host --metric t --drop-first 2>err &&
	grep -qx "sweep: --drop-first goes with --drift or --exclude-unstable" err
'

test_expect_success 'a sweep without controls: --drift says how to get them; --exclude-unstable excludes none' '
	cat >plain.yaml <<-EOF &&
	sweep: plain
	command: [sh, -c, "echo {\\\\\"t\\\\\": 1}"]
	metrics: json
	params: {x: [1]}
	EOF
	"$SWEEP" run plain.yaml --db p.db 2>/dev/null &&
	test_expect_code 2 "$SWEEP" report p.db --drift >out 2>err &&
	grep -q "sweep '\''plain'\'' has no control results: add '\''control:'\'' to its spec" err && test ! -s out &&
	"$SWEEP" report p.db --rows x --metric t --exclude-unstable --format csv >o 2>err &&
	printf "x,n,t\n1,1,1\n" | cmp - o && grep -q "no control cells: no host can be judged" err
'
