#!/bin/bash
# t0520-limit: --limit EXPR from parameters, metrics and host probes; the share; --summary by a label;
# hosts without the probe; expressions refused.
. tests/e2e/lib.sh
SIM="$ROOT/examples/simulate-hosts.sh"
export SWEEP

# speed.sh BYTES prints tok_s = F / (BYTES / 1e9) with F = 40 on alpha, 30 on beta, 10 on gamma.
cat >"$T/speed.sh" <<'EOF'
#!/bin/sh
case $SIM_HOST in alpha) f=40 ;; beta) f=30 ;; *) f=10 ;; esac
echo "{\"tok_s\": $((f * 1000000000 / $1))}"
EOF
cat >"$T/lim.yaml" <<EOF
sweep: lim
command: [sh, $T/speed.sh, "{bytes_per_token}"]
metrics: json
params:
  bytes_per_token: [1000000000, 2000000000]
  k: [3]
per: host
EOF

test_expect_success 'setup: three simulated hosts, two with a read-bandwidth probe' '
	"$SIM" l.db lim.yaml alpha --label class=server --probe host_read_gbs=100:GB/s 2>/dev/null &&
	"$SIM" l.db lim.yaml beta --label class=consumer --probe host_read_gbs=45:GB/s 2>/dev/null &&
	"$SIM" l.db lim.yaml gamma --label class=consumer 2>/dev/null &&
	# a later probe of beta replaces the earlier one; a GPU probe of alpha does not apply to CPU results
	sqlite3 l.db "INSERT INTO probes(host, gpu, name, value, unit) SELECT id, NULL, '\''host_read_gbs'\'', 50,
		'\''GB/s'\'' FROM hosts WHERE hostname = '\''beta'\'';
		INSERT INTO probes(host, gpu, name, value, unit) SELECT id, 0, '\''host_read_gbs'\'', 999, '\''GB/s'\''
		FROM hosts WHERE hostname = '\''alpha'\''" &&
	test "$(sql l.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 6
'

# By hand: limit = host_read_gbs * 1e9 / bytes_per_token, share = tok_s / limit
#   alpha: 1e9 -> tok_s 40, limit 100, share 0.4;  2e9 -> 20, 50, 0.4
#   beta:  1e9 -> tok_s 30, limit 50,  share 0.6;  2e9 -> 15, 25, 0.6
#   gamma: no probe: limit and share unknown
test_expect_success 'the limit and share per row, computed by hand; hosts without the probe are named' '
	"$SWEEP" report l.db --rows host,bytes_per_token --metric tok_s \
		--limit "host_read_gbs * 1e9 / bytes_per_token" --format csv >out 2>err &&
	cat >want <<-\EOF &&
	host,bytes_per_token,n,tok_s,limit,share
	alpha,1000000000,1,40,100,0.4
	alpha,2000000000,1,20,50,0.4
	beta,1000000000,1,30,50,0.6
	beta,2000000000,1,15,25,0.6
	gamma,1000000000,1,10,,
	gamma,2000000000,1,5,,
	EOF
	cmp want out &&
	grep -q "note: no probe '\''host_read_gbs'\'' for host gamma: the limit and share of its rows are '\''-'\''" err
'

# By hand, one value per host (the mean of its rows), the default unit: consumer beta 22.5 tok/s, limit
# 37.5, share 0.6; gamma 7.5, no limit; server alpha 30, 75, 0.4.
test_expect_success '--summary=label.class: one value per host, then median, min, max, mean, t interval, n' '
	"$SWEEP" report l.db --rows host,bytes_per_token --metric tok_s --format csv --summary=label.class \
		--limit "host_read_gbs * 1e9 / bytes_per_token" >sum 2>err &&
	cat >want <<-\EOF &&
	stat,host,bytes_per_token,label.class,n,tok_s,limit,share
	,beta,1000000000,consumer,1,30,50,0.6
	,beta,2000000000,consumer,1,15,25,0.6
	,gamma,1000000000,consumer,1,10,,
	,gamma,2000000000,consumer,1,5,,
	,alpha,1000000000,server,1,40,100,0.4
	,alpha,2000000000,server,1,20,50,0.4
	median,,,consumer,,15,37.5,0.6
	min,,,consumer,,7.5,37.5,0.6
	max,,,consumer,,22.5,37.5,0.6
	mean,,,consumer,,15,37.5,0.6
	ci95 lo,,,consumer,,-80.2965,,
	ci95 hi,,,consumer,,110.297,,
	n,,,consumer,,2,1,1
	median,,,server,,30,75,0.4
	min,,,server,,30,75,0.4
	max,,,server,,30,75,0.4
	mean,,,server,,30,75,0.4
	ci95 lo,,,server,,,,
	ci95 hi,,,server,,,,
	n,,,server,,1,1,1
	EOF
	cmp want sum &&
	python3 "$ROOT/tests/summary_check.py" sum --group label.class --unit host >check &&
	cat check && grep -qx "checked 32 summary cells" check &&
	grep -qx "sweep: warning: the summary of .consumer. rests on 1 unit (n, one value per host), fewer than 5: its 95% interval is rough or missing (marked)" err &&
	"$SWEEP" report l.db --rows host --pool bytes_per_token --metric tok_s --summary=label.class \
		--limit "host_read_gbs * 1e9 / bytes_per_token" >md 2>/dev/null &&
	grep -Eq "^\| median \(server\) +\| +\| +\| +30.00  \| +75.00 \| +0.400 \|$" md &&
	grep -Eq "^\| ci95 lo \(consumer\) +\| +\| +\| -80.30$(printf "\342\200\241") \| +- \| +- \|$" md &&
	head -1 md | grep -q "; summary per label.class over host: one value per host, the mean of its rows (n counts them): median, min, max, mean and its 95% Student t interval$"
'

# Each row its own unit: the numbers a summary over rows gave, n counting rows; a unit must be a row key.
test_expect_success '--unit row: every row a unit; --unit KEY must be a row key' '
	"$SWEEP" report l.db --rows host,bytes_per_token --metric tok_s --format csv --summary=label.class \
		--unit row --limit "host_read_gbs * 1e9 / bytes_per_token" >rows.csv 2>err &&
	python3 "$ROOT/tests/summary_check.py" rows.csv --group label.class >check &&
	grep -qx "checked 42 summary cells" check &&
	# share 0.6 and 0.6: no spread, the interval is the point; n counts rows with a value (gamma has none)
	grep -qx "ci95 lo,,,consumer,,-2.18717,-121.328,0.6" rows.csv &&
	grep -qx "n,,,consumer,,4,2,2" rows.csv &&
	grep -q "^note: the summary takes each row as a unit, and rows share a host" err &&
	"$SWEEP" report l.db --rows host,bytes_per_token --metric tok_s --format csv --summary --unit bytes_per_token \
		--limit "host_read_gbs * 1e9 / bytes_per_token" >bpt.csv 2>/dev/null &&
	python3 "$ROOT/tests/summary_check.py" bpt.csv --unit bytes_per_token >check &&
	grep -qx "n,,,,2,2,2" bpt.csv &&
	test_expect_code 2 "$SWEEP" report l.db --rows host --metric tok_s --summary --unit label.class 2>err &&
	grep -q "^sweep: --unit label.class: a summary.s unit is a row key, so that each row belongs to one (the row keys: host, bytes_per_token); add it to --rows, or --unit row for each row$" err &&
	test_expect_code 2 "$SWEEP" report l.db --rows host --metric tok_s --unit host 2>err &&
	grep -qx "sweep: --unit goes with --summary" err
'

# share.sh K prints tok_s 10, 30, 20, 1000 for K = 1..4; the limit (from K) is 100, 50, 25 and none.
cat >"$T/share.yaml" <<'EOF2'
sweep: share
command: [sh, -c, 'case {k} in 1) v=10 ;; 2) v=30 ;; 3) v=20 ;; *) v=1000 ;; esac; echo "{\"tok_s\": $v}"']
metrics: json
params: {k: [1, 2, 3, 4]}
EOF2

test_expect_success 'the share is stat(metric) / stat(limit) of the results with both, as the title says' '
	"$SWEEP" run share.yaml --db sh.db 2>/dev/null &&
	lim="CASE WHEN k = 1 THEN 100 WHEN k = 2 THEN 50 WHEN k = 3 THEN 25 END" &&
	"$SWEEP" report sh.db --pool k --metric tok_s --limit "$lim" --format csv >med 2>/dev/null &&
	# the median of all 4 tok_s (25) and of the 3 limits (50); the share: median(10, 30, 20) / 50 = 0.4,
	# not the median of the ratios (0.6)
	printf "n,tok_s,limit,share\n4,25,50,0.4\n" | cmp - med &&
	"$SWEEP" report sh.db --pool k --metric tok_s --limit "$lim" --stat mean --format csv >mean 2>/dev/null &&
	# mean: 20 / (175 / 3) = 0.342857, not the mean of the ratios (0.5)
	printf "n,tok_s,limit,share\n4,265,58.3333,0.342857\n" | cmp - mean &&
	"$SWEEP" report sh.db --pool k --metric tok_s --limit "$lim" >md 2>/dev/null &&
	head -1 md | grep -qx "median of tok_s over passes and k, limit = $lim, share = median(tok_s) / median(limit) of the results with both, sweep share"
'

test_expect_success 'a limit from metrics and parameters; division is real on integer parameters' '
	"$SWEEP" report l.db --rows host --pool bytes_per_token --metric tok_s --limit "tok_s * 2" --format csv >m 2>/dev/null &&
	grep -qx "alpha,2,30,60,0.5" m &&
	"$SWEEP" report l.db --rows host --pool bytes_per_token --metric tok_s --limit "k / 2" --format csv --where "host = '\''beta'\''" \
		>k 2>/dev/null &&
	printf "host,n,tok_s,limit,share\nbeta,2,22.5,1.5,15\n" | cmp - k
'

test_expect_success 'unknown names and anything but a plain expression are refused, exit 2' '
	test_expect_code 2 "$SWEEP" report l.db --rows host --metric tok_s --limit "hbm_gbs * 2" >o1 2>e1 &&
	grep -q "unknown name '\''hbm_gbs'\'' in --limit (parameters: bytes_per_token, k; metrics: seconds, tok_s; probes: host_read_gbs;" e1 &&
	test_expect_code 2 "$SWEEP" report l.db --rows host --metric tok_s --limit "1; DROP TABLE probes" >o2 2>e2 &&
	grep -q "unexpected '\'';'\'' at column 2 of --limit" e2 &&
	test_expect_code 2 "$SWEEP" report l.db --rows host --metric tok_s --limit "(SELECT max(value) FROM probes)" \
		>o3 2>e3 &&
	grep -q "unknown name '\''SELECT'\'' in --limit" e3 &&
	test_expect_code 2 "$SWEEP" report l.db --rows host --cols k --metric tok_s --limit "k" >o4 2>e4 &&
	grep -q "with --limit put the keys into --rows" e4 &&
	# a refused report prints no table
	test ! -s o1 && test ! -s o2 && test ! -s o3 && test ! -s o4 &&
	test "$(sql l.db "SELECT count(*) FROM probes")" = 4
'

cat >"$T/real.yaml" <<'EOF2'
sweep: real
command: [sh, -c, 'echo "{\"tok_s\": 10}"']
metrics: json
params: {bytes_per_token: [1000000000]}
EOF2

test_expect_success 'with the probe sweep hosts probe measured on this host (its own sweep is not chosen)' '
	"$SWEEP" run real.yaml --db h.db 2>/dev/null &&
	"$SWEEP" hosts probe --cpu --db h.db >/dev/null 2>&1 &&
	gbs=$(sql h.db "SELECT value FROM probes WHERE name = '\''host_read_gbs'\''") && test -n "$gbs" &&
	"$SWEEP" report h.db --rows host --metric tok_s --limit "host_read_gbs * 1e9 / bytes_per_token" \
		--format csv >out &&
	want=$(awk -v g="$gbs" -v h="$(hostname)" "BEGIN { printf \"%s,1,10,%.6g,%.6g\", h, g, 10 / g }") &&
	test "$(tail -1 out)" = "$want"
'
