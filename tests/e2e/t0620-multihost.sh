#!/bin/bash
# t0620-multihost: three hosts as network namespaces on a bridge, each with a hostname of its own, and one
# mpirun across them (Open MPI starting its daemons through tests/netns/rsh, TCP only on the test subnet):
# per: host gives one result per host per cell, labelled from an inventory and pivoted by host; killing one
# host's processes mid-run and resuming on the two others finishes the sweep with nothing lost.
. tests/e2e/lib.sh
. tests/netns/lib.sh
test_needs mpirun command -v mpirun

netns_test 3
H1=$(netns_name 1) H2=$(netns_name 2) H3=$(netns_name 3)
MPIRUN="timeout -k 10 120 mpirun --bind-to none $(netns_mpirun_opts)"
ALL="--hostfile $NETNS_HOSTFILE"


cat >"$T/inv.yaml" <<EOF
hosts:
  - {name: $H1, address: $(netns_addr 1), slots: 2, labels: {class: consumer, price_per_hour: 0.2}}
  - {name: $H2, address: $(netns_addr 2), slots: 2, labels: {class: consumer, price_per_hour: 0.3}}
  - {name: $H3, address: $(netns_addr 3), slots: 2, labels: {class: server, price_per_hour: 2.5}}
EOF

cat >"$T/ph.yaml" <<'Y'
sweep: ph
kernel: sleep
params: {ms: [0, 1, 2, 3]}
per: host
timing: {min_samples: 6, min_time: 0, precision: 1e9, timeout: 2}
Y

test_expect_success 'the hosts: each namespace has its own hostname and address' '
	$MPIRUN $ALL -np 3 --map-by node hostname | sort >names &&
	printf "%s\n%s\n%s\n" "$H1" "$H2" "$H3" >want && cmp want names &&
	"$SWEEP" hosts hostfile inv.yaml | grep -v "^#" >hf && cmp hf "$NETNS_HOSTFILE"
'

test_expect_success 'per: host across three hosts: one result per host per cell' '
	$MPIRUN $ALL -np 6 "$SWEEP" run ph.yaml --db ph.db --inventory inv.yaml 2>err &&
	tail -2 err &&
	test "$(sql ph.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 12 &&
	test "$(sql ph.db "SELECT group_concat(h, '\'' '\'') FROM (SELECT replica || '\'':'\'' || count(*) AS h
		FROM cells WHERE state = '\''ok'\'' GROUP BY replica ORDER BY replica)")" = "$H1:4 $H2:4 $H3:4" &&
	# each replica ran on its own host
	test "$(sql ph.db "SELECT count(*) FROM v_results WHERE status = '\''ok'\'' AND host = replica")" = 12 &&
	test "$(sql ph.db "SELECT count(DISTINCT hostname) FROM hosts")" = 3 &&
	test "$(sql ph.db "SELECT count(*) FROM workers")" = 6
'

test_expect_success 'workers matched their hostnames to the inventory: labels in hosts.facts' '
	test "$(sql ph.db "SELECT group_concat(l, '\'' '\'') FROM (SELECT DISTINCT hostname || '\''='\'' ||
		json_extract(facts, '\''$.labels.class'\'') AS l FROM hosts ORDER BY 1)")" = \
		"$H1=consumer $H2=consumer $H3=server"
'

test_expect_success 'the report pivots by host and groups by label' '
	"$SWEEP" report ph.db --rows ms --cols host --metric seconds --format csv >rep &&
	cat rep &&
	test "$(head -1 rep)" = "ms,host=$H1,host=$H2,host=$H3" &&
	test "$(wc -l <rep)" = 5 &&
	# each row holds its own cells: the sleep kernel takes ms milliseconds on every host, never less
	# (which alone catches rows out of place), and seldom over 10 ms more (seconds, not a unit off; one
	# cell in ten may overshoot that far on a loaded machine)
	test "$(awk -F, "NR > 1 { for (i = 2; i <= 4; i++) { n++; low += (\$i < \$1 / 1000)
		high += (\$i > \$1 / 1000 + 0.01) } } END { print n, low + 0, (high <= n / 10) }" rep)" = "12 0 1" &&
	test "$(cut -d, -f1 rep | tr "\n" " ")" = "ms 0 1 2 3 " &&
	"$SWEEP" report ph.db --rows label.class --pool ms --metric seconds --format csv >rep2 &&
	cat rep2 &&
	test "$(cut -d, -f1,2 rep2 | tr "\n" " ")" = "label.class,n consumer,8 server,4 " &&
	# a class mean over ms 0 to 3: 1.5 ms and the overshoot
	test "$(awk -F, "NR > 1 && (\$3 < 0.0015 || \$3 > 0.0115)" rep2)" = ""
'

# docs/hosts-and-slurm.md's "one run per host, merged afterwards": a spec without per: host run alone on each
# host (no mpirun), the databases merged, labelled and pivoted by host.
cat >"$T/g.yaml" <<'Y'
sweep: g
kernel: sleep
params: {ms: [0, 1, 2]}
timing: {min_samples: 6, min_time: 0, precision: 1e9, timeout: 2}
Y

test_expect_success 'one run per host, merged afterwards: every host keeps its results' '
	for i in 1 2 3; do
		"$ROOT/tests/netns/rsh" "$(netns_addr $i)" \
			"cd $T && timeout 60 $SWEEP run g.yaml --db g-\$(hostname).db" 2>>runs.err || return 1
	done &&
	ls g-*.db >dbs &&
	printf "g-%s.db\n" "$H1" "$H2" "$H3" >want && cmp want dbs &&
	"$SWEEP" merge g.db g-*.db >merge.out &&
	cat merge.out &&
	test "$(grep -c ", 0 conflicts;" merge.out)" = 3 &&
	"$SWEEP" hosts label g.db inv.yaml &&
	test "$(sql g.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 9 &&
	test "$(sql g.db "SELECT count(*) FROM v_results WHERE status = '\''ok'\'' AND host = replica")" = 6 &&
	"$SWEEP" report g.db --rows ms --cols host --metric seconds --format csv >rep &&
	cat rep &&
	test "$(head -1 rep)" = "ms,host=$H1,host=$H2,host=$H3" &&
	test "$(cut -d, -f1 rep | tr "\n" " ")" = "ms 0 1 2 " &&
	# every host its own value in every row: the sleep, never less than ms
	test "$(awk -F, "NR > 1 { for (i = 2; i <= 4; i++) { n++; bad += (\$i == \"\" || \$i < \$1 / 1000) } }
		END { print n, bad + 0 }" rep)" = "9 0" &&
	"$SWEEP" report g.db --rows label.class --pool ms --metric seconds --format csv >rep2 &&
	test "$(cut -d, -f1,2 rep2 | tr "\n" " ")" = "label.class,n consumer,6 server,3 " &&
	# merged again, in another order: nothing new, no conflict
	"$SWEEP" merge g.db g-$H3.db g-$H1.db g-$H2.db >again.out &&
	cat again.out &&
	test "$(grep -c " 0 results new, 3 already there, 0 conflicts;" again.out)" = 3 &&
	test "$(sql g.db "SELECT count(*) FROM results")" = 9 &&
	# the merged database merged into another: the same nine, each in its host'\''s cell
	"$SWEEP" merge g2.db g-$H2.db g.db >m2.out &&
	cat m2.out &&
	test "$(sql g2.db "SELECT count(*) FROM results")" = 9 &&
	test "$(sql g2.db "SELECT count(*) FROM cells WHERE state = '\''planned'\''")" = 0 &&
	test "$(sql g2.db "SELECT count(DISTINCT host) FROM v_results")" = 3
'

cat >"$T/long.yaml" <<'Y'
sweep: long
kernel: sleep
params:
  ms: {from: 60, to: 139, step: 1}
  jitter: 0
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

test_expect_success 'one host killed mid-run; resumed on the two others: nothing lost' '
	run_bg $MPIRUN $ALL -np 6 "$SWEEP" run long.yaml --db k.db >/dev/null 2>kill.err &&
	job=$BG_PID &&
	# wait (bounded: 300 x 0.1 s) until host 3 has results, then kill everything in its namespace
	for i in $(seq 1 300); do
		n=$(sql k.db "SELECT count(*) FROM v_results WHERE host = '\''$H3'\''" 2>/dev/null || echo 0) &&
		if test "${n:-0}" -ge 2; then break; fi &&
		sleep 0.1 || return 1
	done &&
	echo "host 3 had $n results when killed" &&
	test "${n:-0}" -ge 2 &&
	netns_kill 3 &&
	test_must_fail wait $job &&
	tail -5 kill.err &&
	before=$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''") &&
	echo "ok cells before the resume: $before" &&
	test "$before" -lt 80 &&
	from3=$(sql k.db "SELECT count(*) FROM v_results WHERE host = '\''$H3'\'' AND status = '\''ok'\''") &&
	head -2 "$NETNS_HOSTFILE" >hf2 &&
	$MPIRUN -np 4 --hostfile hf2 "$SWEEP" run long.yaml --db k.db 2>err &&
	tail -1 err &&
	db_sound k.db &&
	test "$(sql k.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 80 &&
	# every cell exactly one ok result; what host 3 measured before it died is kept
	test "$(sql k.db "SELECT count(*) FROM cells c WHERE (SELECT count(*) FROM results r
		WHERE r.cell = c.id AND r.status = '\''ok'\'') != 1")" = 0 &&
	test "$(sql k.db "SELECT count(*) FROM v_results WHERE host = '\''$H3'\'' AND status = '\''ok'\''")" = \
		"$from3" &&
	test "$(sql k.db "SELECT count(DISTINCT host) FROM v_results WHERE run = 2")" = 2
'
