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

test_expect_success '--summary=label.class: median, min, max, mean, its t interval and n per class' '
	"$SWEEP" report l.db --rows host,bytes_per_token --metric tok_s --format csv --summary=label.class \
		--limit "host_read_gbs * 1e9 / bytes_per_token" >sum 2>/dev/null &&
	cat >want <<-\EOF &&
	host,bytes_per_token,label.class,n,tok_s,limit,share
	beta,1000000000,consumer,1,30,50,0.6
	beta,2000000000,consumer,1,15,25,0.6
	gamma,1000000000,consumer,1,10,,
	gamma,2000000000,consumer,1,5,,
	alpha,1000000000,server,1,40,100,0.4
	alpha,2000000000,server,1,20,50,0.4
	median (consumer),,,,12.5,37.5,0.6
	min (consumer),,,,5,25,0.6
	max (consumer),,,,30,50,0.6
	median (server),,,,30,75,0.4
	min (server),,,,20,50,0.4
	max (server),,,,40,100,0.4
	EOF
	grep -v "^\(mean\|ci95\|n\) " sum >sum3 &&
	cmp want sum3 && cat sum &&
	python3 "$ROOT/tests/summary_check.py" sum >check &&
	cat check && grep -qx "checked 42 summary cells" check &&
	# share 0.6 and 0.6: no spread, the interval is the point; n counts rows with a value (gamma has none)
	grep -qx "ci95 lo (consumer),,,,-2.18717,-121.328,0.6" sum &&
	grep -qx "n (consumer),,,,4,2,2" sum &&
	"$SWEEP" report l.db --rows host --pool bytes_per_token --metric tok_s --summary=label.class \
		--limit "host_read_gbs * 1e9 / bytes_per_token" >md 2>/dev/null &&
	grep -Eq "^\| median \(server\) +\| +\| +\| +30.00 \| +75.00 \| +0.400 \|$" md
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
