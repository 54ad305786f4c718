#!/bin/bash
# t0800-launch: rented hosts without a shared network, as three network namespaces each running its own
# sshd (tests/ssh/lib.sh) under a hostname of its own, each with a workdir of its own: `sweep launch`
# (errors without --sync, --sync copies the binary and the spec and starts detached runs, a second launch
# finds them running), `sweep status --hosts` while they run, `sweep pull` while they run (every snapshot
# passes integrity_check) and after they finished (exactly one ok result per host per cell; pulling again
# adds nothing), and a host whose sshd is stopped: launch, status and pull report it and handle the others.
. tests/e2e/lib.sh
. tests/ssh/lib.sh

if [ "$(id -u)" != 0 ]; then
	echo "ok - # SKIP network namespaces and sshd need root"
	exit 0
fi
for p in /usr/sbin/sshd ssh scp ssh-keygen; do
	command -v "$p" >/dev/null ||
		{ echo "not ok - setup: $p is missing (tools/deps.sh installs it)"; exit 1; }
done
trap 'ssh_down; rm -rf "$T"' EXIT
ssh_up 3 "$T" || { echo "not ok - setup: sshd in network namespaces"; exit 1; }
H1=$(netns_name 1) H2=$(netns_name 2) H3=$(netns_name 3)
cd "$T"

cat >inv.yaml <<EOF
defaults:
  user: root
  identity: $SSH_KEY
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null, LogLevel=ERROR, IdentitiesOnly=yes]
  labels: {provider: netns}
hosts:
  - {name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, slots: 2, labels: {price_per_hour: 0.2}}
  - {name: r2, hostname: $H2, address: $(netns_addr 2), workdir: $T/w2, labels: {price_per_hour: 0.3}}
  - {name: r3, hostname: $H3, address: $(netns_addr 3), workdir: $T/w3, labels: {price_per_hour: 2.5}}
EOF

# 60 cells per host, about 12 s: long enough to be seen running and pulled mid-run.
cat >long.yaml <<'Y'
sweep: long
kernel: sleep
params:
  ms: {from: 20, to: 79, step: 1}
per: host
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 10, warmup: 0}
Y

# ok_on I: ok results in host I's own database (the hosts' folders are on this machine's disk).
ok_on() {
	sql "$T/w$1/results/long.db" "SELECT count(*) FROM results WHERE status = 'ok'" 2>/dev/null || echo 0
}
q() { echo "'$1'"; }

test_expect_success 'the hosts: three sshds, each its own address and hostname' '
	test "$(ssh_host 1 hostname)" = "$H1" &&
	test "$(ssh_host 2 hostname)" = "$H2" &&
	test "$(ssh_host 3 hostname)" = "$H3" &&
	test "$(ssh_host 2 "ip -br addr show eth0" | awk "{print \$3}")" = "$(netns_addr 2)/24"
'

test_expect_success 'launch without --sync: no folder, no sweep binary: an error per host, exit 3' '
	mkdir -p w1 &&
	test_expect_code 3 "$SWEEP" launch inv.yaml long.yaml >out 2>err &&
	cat out err &&
	grep -q "^r1: error: no sweep binary .build/sweep. in $T/w1 on the host" out &&
	grep -q "^r2: error: no folder $T/w2 on the host" out &&
	grep -q "^r3: error: no folder $T/w3 on the host" out &&
	grep -q "3 of 3 hosts not started" err &&
	test ! -e w1/results/long.pid
'

test_expect_success 'launch --hosts with an unknown name is refused before any host is touched' '
	test_expect_code 2 "$SWEEP" launch inv.yaml long.yaml --hosts r1,nosuch >out 2>err &&
	cat out err &&
	grep -q "no host .nosuch." err && test ! -s out
'

test_expect_success 'launch --min-free refuses a host whose disk is too full' '
	mkdir -p w1/build && cp "$SWEEP" w1/build/sweep && cp long.yaml w1/ &&
	test_expect_code 3 "$SWEEP" launch inv.yaml long.yaml --hosts r1 --min-free 1P >out 2>err &&
	cat out &&
	# 1P is 2^40 KiB
	grep -qx "r1: error: disk full: [0-9]* KiB free for $T/w1/results, under 1099511627776 KiB" out &&
	test ! -e w1/results/long.pid && rm -rf w1
'

test_expect_success 'launch --sync: binary and spec copied, a detached run started on every host' '
	"$SWEEP" launch inv.yaml long.yaml --sync >out 2>err &&
	cat out err &&
	for i in 1 2 3; do
		grep -q "^r$i: started, pid [0-9]* (log $T/w$i/results/long.log)" out &&
		cmp "$SWEEP" w$i/build/sweep && test -x w$i/build/sweep &&
		cmp long.yaml w$i/long.yaml &&
		pid=$(cat w$i/results/long.pid) && kill -0 "$pid" &&
		# a session of its own: the run outlived the ssh session that started it
		test "$(ps -o sid= -p "$pid" | tr -d " ")" = "$pid" &&
		! ls w$i/build/*.sweep-part-* 2>/dev/null || return 1
	done &&
	test "$(wc -l <out)" = 3
'

test_expect_success 'launch again while they run: already running, nothing started twice' '
	"$SWEEP" launch inv.yaml long.yaml --sync >out 2>err &&
	cat out &&
	for i in 1 2 3; do
		grep -q "^r$i: already running, pid $(cat w$i/results/long.pid)$" out || return 1
	done &&
	test "$(grep -c "^--- sweep launch" w1/results/long.log)" = 1
'

test_expect_success 'status --hosts while they run: one table, every host running' '
	# wait (bounded: 300 x 0.1 s) until every host has a few results (mpirun takes a moment to start on r1)
	for t in $(seq 1 300); do
		if test "$(ok_on 1)" -ge 3 && test "$(ok_on 2)" -ge 3 && test "$(ok_on 3)" -ge 3; then break; fi &&
		sleep 0.1 || return 1
	done &&
	"$SWEEP" status --hosts inv.yaml >st &&
	cat st &&
	head -1 st | grep -q "host.*sweep.*state.*done.*rate.*eta.*failed.*last result" &&
	for i in 1 2 3; do
		grep -q "^r$i  *long  *running  *[0-9]*/60 " st || return 1
	done &&
	# every host has done the 3 cells waited for, and none failed
	test "$(awk "NR > 1 { split(\$4, d, \"/\"); print \$1, (d[1] >= 3), \$7 }" st)" = "r1 1 0
r2 1 0
r3 1 0"
'

test_expect_success 'pull while they run: consistent snapshots, merged' '
	"$SWEEP" pull inv.yaml --into merged.db >out 2>err &&
	cat out err &&
	sum=0 &&
	for i in 1 2 3; do
		test "$(sql pulled/r$i/long.db "PRAGMA integrity_check")" = ok &&
		test "$(sql pulled/r$i/long.db "PRAGMA journal_mode")" = delete &&
		test ! -e pulled/r$i/long.db-wal &&
		n=$(sql pulled/r$i/long.db "SELECT count(*) FROM results WHERE status = $(q ok)") &&
		echo "r$i: $n ok results in its snapshot" &&
		test "$n" -ge 3 && test "$n" -lt 60 &&
		test "$(sql pulled/r$i/long.db "SELECT count(*) FROM results")" = "$n" &&
		grep -qx "r$i: long: 120 cells, $n results new, 0 already there, 0 conflicts -> merged.db" out &&
		sum=$((sum + n)) &&
		# the run was still going when its snapshot was taken
		kill -0 "$(cat w$i/results/long.pid)" &&
		! ls w$i/results/.long.pull-* 2>/dev/null || return 1
	done &&
	test "$(sql merged.db "PRAGMA integrity_check")" = ok &&
	test "$(sql merged.db "SELECT count(DISTINCT host) FROM v_results")" = 3 &&
	test "$(sql merged.db "SELECT count(*) FROM v_results WHERE status = $(q ok)")" = "$sum"
'

test_expect_success 'the runs finish (status --hosts says so, bounded)' '
	# bounded: 240 x 1 s
	for t in $(seq 1 240); do
		"$SWEEP" status --hosts inv.yaml >st &&
		if test "$(grep -c " long  *finished  *60/60 " st)" = 3; then break; fi &&
		sleep 1 || return 1
	done &&
	cat st &&
	test "$(grep -c " long  *finished  *60/60 " st)" = 3 &&
	for i in 1 2 3; do test "$(cat w$i/results/long.exit)" = 0 || return 1; done
'

test_expect_success 'pull after they finished: exactly one ok result per host per cell' '
	"$SWEEP" pull inv.yaml --into merged.db >out 2>err &&
	cat out &&
	# what is new and what the pull mid-run brought make the 60 results of each host
	test "$(awk "/ long: 120 cells, / { print \$1, \$5 + \$8 }" out)" = "r1: 60
r2: 60
r3: 60" &&
	test "$(sql merged.db "PRAGMA integrity_check")" = ok &&
	test "$(sql merged.db "SELECT count(*) FROM cells WHERE state = $(q template)")" = 60 &&
	test "$(sql merged.db "SELECT count(*) FROM cells WHERE state = $(q ok)")" = 180 &&
	test "$(sql merged.db "SELECT count(*) FROM cells WHERE state NOT IN ($(q ok), $(q template))")" = 0 &&
	test "$(sql merged.db "SELECT group_concat(h, $(q " ")) FROM (SELECT host || $(q :) || count(*) AS h
		FROM v_results WHERE status = $(q ok) GROUP BY host ORDER BY host)")" = "$H1:60 $H2:60 $H3:60" &&
	# each host ran its own replicas, once each
	test "$(sql merged.db "SELECT count(*) FROM v_results
		WHERE status = $(q ok) AND host = replica")" = 180 &&
	test "$(sql merged.db "SELECT count(*) FROM cells c WHERE state = $(q ok) AND
		(SELECT count(*) FROM results r WHERE r.cell = c.id AND r.status = $(q ok)) != 1")" = 0 &&
	test "$(sql merged.db "SELECT count(*) FROM conflicts")" = 0 &&
	# slots: 2 ran two ranks under mpirun there, one rank elsewhere
	test "$(sql pulled/r1/long.db "SELECT count(*) FROM workers")" = 2 &&
	test "$(sql pulled/r2/long.db "SELECT count(*) FROM workers")" = 1 &&
	grep -q "^--- sweep launch .*: mpirun -np 2 --bind-to none build/sweep run long.yaml" w1/results/long.log &&
	# the inventory labels the hosts
	test "$(sql merged.db "SELECT group_concat(l, $(q " ")) FROM (SELECT hostname || $(q =) ||
		json_extract(facts, $(q '\$.labels.name')) AS l FROM hosts ORDER BY hostname)")" = \
		"$H1=r1 $H2=r2 $H3=r3" &&
	"$SWEEP" report merged.db --rows ms --cols label.name --metric seconds --format csv >rep &&
	head -2 rep &&
	test "$(head -1 rep)" = "ms,label.name=r1,label.name=r2,label.name=r3" && test "$(wc -l <rep)" = 61 &&
	# each row holds its own cells: the sleep kernel takes ms milliseconds on every host, never less
	# (which alone catches rows out of place), and seldom over 10 ms more (seconds, not a unit off; one
	# cell in ten may overshoot that far on a loaded machine)
	test "$(awk -F, "NR > 1 { for (i = 2; i <= 4; i++) { n++; low += (\$i < \$1 / 1000)
		high += (\$i > \$1 / 1000 + 0.01) } } END { print n, low + 0, (high <= n / 10) }" rep)" = "180 0 1"
'

test_expect_success 'pulling again adds nothing' '
	before=$(sqlite3 merged.db .dump | sha256sum) &&
	"$SWEEP" pull inv.yaml --into merged.db >out 2>err &&
	cat out &&
	test "$(grep -c "long: 120 cells, 0 results new, [0-9]* already there, 0 conflicts" out)" = 3 &&
	test "$(sqlite3 merged.db .dump | sha256sum)" = "$before"
'

cat >slow.yaml <<'Y'
sweep: slow
kernel: sleep
params: {ms: [500, 501, 502, 503, 504, 505, 506, 507]}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

test_expect_success 'a run killed on its host is shown stopped, and launch starts it again' '
	"$SWEEP" launch inv.yaml slow.yaml --hosts r2 --sync >out &&
	cat out && grep -q "^r2: started, pid" out &&
	pid=$(cat w2/results/slow.pid) &&
	kill -9 -- -"$pid" &&
	for t in $(seq 1 100); do
		if ! kill -0 "$pid" 2>/dev/null; then break; fi &&
		sleep 0.1 || return 1
	done &&
	! kill -0 "$pid" 2>/dev/null &&
	"$SWEEP" status --hosts inv.yaml --only r2 --sweep slow >st &&
	cat st &&
	grep -q "^r2  *slow  *stopped " st && test "$(wc -l <st)" = 2 &&
	"$SWEEP" launch inv.yaml slow.yaml --hosts r2 >out &&
	cat out && grep -q "^r2: started, pid" out &&
	test "$(cat w2/results/slow.pid)" != "$pid" &&
	test "$(grep -c "^--- sweep launch" w2/results/slow.log)" = 2 &&
	kill -9 -- -"$(cat w2/results/slow.pid)"
'

# A command sweep: --sync copies the script its command names, to the same place under the workdir.
mkdir -p "$T/progs"
cat >"$T/progs/cell.sh" <<'EOF'
#!/bin/sh
echo "{\"v\": $(($1 * 10))}"
EOF
cat >short.yaml <<'Y'
sweep: short
command: [sh, progs/cell.sh, "{n}"]
metrics: json
params: {n: [1, 2, 3, 4]}
per: host
Y

test_expect_success 'one host'"'"'s sshd stopped: launch reports it and starts the others' '
	ssh_stop 3 &&
	test_expect_code 3 "$SWEEP" launch inv.yaml short.yaml --sync >out 2>err &&
	cat out err &&
	grep -q "^r1: started" out && grep -q "^r2: started" out &&
	grep -q "^r3: error: unreachable: .*Connection refused" out &&
	cmp progs/cell.sh w1/progs/cell.sh && cmp progs/cell.sh w2/progs/cell.sh && test ! -e w3/progs &&
	grep -q "1 of 3 hosts not started" err
'

test_expect_success 'status --hosts reports it unreachable and shows the others' '
	test_expect_code 3 "$SWEEP" status --hosts inv.yaml >st 2>err &&
	cat st err &&
	grep -q "^r3  *-  *unreachable" st &&
	grep -q "^r3: unreachable: .*Connection refused" st &&
	grep -q "^r1  *long  *finished  *60/60" st && grep -q "^r2  *long  *finished  *60/60" st &&
	grep -q "^r1  *short " st && grep -q "^r2  *short " st
'

test_expect_success 'pull reports it and still pulls the others' '
	# the short runs end within seconds (bounded wait: 600 x 0.1 s)
	for t in $(seq 1 600); do
		if test -s w1/results/short.exit && test -s w2/results/short.exit; then break; fi &&
		sleep 0.1 || return 1
	done &&
	test_expect_code 3 "$SWEEP" pull inv.yaml --sweep short --into short.db >out 2>err &&
	cat out err &&
	grep -q "^r3: unreachable: .*Connection refused" out &&
	grep -q "^r1: short: 8 cells, 4 results new" out &&
	grep -q "^r2: short: 8 cells, 4 results new" out &&
	grep -q "1 of 3 hosts not pulled" err &&
	test "$(sql short.db "SELECT group_concat(h, $(q " ")) FROM (SELECT host || $(q :) || count(*) AS h
		FROM v_results WHERE status = $(q ok) GROUP BY host ORDER BY host)")" = "$H1:4 $H2:4" &&
	test "$(sql short.db "SELECT group_concat(v) FROM (SELECT m.value AS v FROM metrics m JOIN v_results r
		ON r.id = m.result WHERE m.name = $(q v) AND r.host = $(q "$H1") ORDER BY v)")" = \
		"10.0,20.0,30.0,40.0"
'

test_expect_success 'a host that does not answer at all is given up on within --timeout' '
	cat >ghost.yaml <<EOF &&
defaults:
  user: root
  identity: $SSH_KEY
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null]
hosts:
  - {name: ghost, address: $NETNS_NET.99, workdir: $T/wg}
  - {name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1}
EOF
	start=$(date +%s) &&
	test_expect_code 3 "$SWEEP" status --hosts ghost.yaml --timeout 3 >st 2>err &&
	took=$(( $(date +%s) - start )) &&
	cat st err && echo "took $took s" &&
	test $took -le 10 &&
	grep -q "^ghost  *-  *unreachable" st && grep -q "^r1  *long  *finished" st
'

test_expect_success 'a run that fails at once is an error with the end of its log; status says failed' '
	printf "#!/bin/sh\necho \"fake: cannot load libcudart.so.12\" >&2\nexit 127\n" >fake.sh &&
	chmod +x fake.sh &&
	cat >fake.yaml <<EOF &&
defaults:
  user: root
  identity: $SSH_KEY
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null]
hosts:
  - {name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, sweep_bin: $T/fake.sh}
EOF
	test_expect_code 3 "$SWEEP" launch fake.yaml short.yaml >out 2>err &&
	cat out err &&
	grep -q "^r1: error: sweep run exited 127 at once; the end of $T/w1/results/short.log:" out &&
	grep -q "^    fake: cannot load libcudart.so.12" out &&
	"$SWEEP" status --hosts fake.yaml --sweep short >st &&
	cat st &&
	grep -q "^r1  *short  *failed (exit 127) " st
'
