#!/bin/bash
# t0800-launch: rented hosts without a shared network, as three network namespaces each running its own
# sshd (tests/ssh/lib.sh) under a hostname of its own, each with a workdir of its own: `sweep launch`
# (errors without --sync, --sync copies the binary and the spec and starts detached runs, a second launch
# finds them running), `sweep status --hosts` while they run, `sweep pull` while they run (every snapshot
# passes integrity_check) and after they finished (exactly one ok result per host per cell; pulling again
# adds nothing), and a host whose sshd is stopped: launch, status and pull report it and handle the others.
# r2's hostname is left out of the inventory, as on a rental site: launch learns it over ssh. `sweep stop`
# interrupts launched runs; status --hosts shows elapsed time and spend from price_per_hour.
. tests/e2e/lib.sh
. tests/ssh/lib.sh

test_needs "root (network namespaces, sshd)" test "$(id -u)" = 0
for p in /usr/sbin/sshd ssh scp ssh-keygen mpirun; do
	test_needs "$p" command -v "$p"
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
  - {name: r2, address: $(netns_addr 2), workdir: $T/w2, labels: {price_per_hour: 0.3}}
  - {name: r3, hostname: $H3, address: $(netns_addr 3), workdir: $T/w3, labels: {price_per_hour: 2.5}}
EOF

# 60 cells per host, two samples each, about 20 s (half that on r1, two ranks): long enough to be seen
# running and pulled mid-run.
cat >long.yaml <<'Y'
sweep: long
kernel: sleep
params:
  ms: {from: 20, to: 79, step: 1}
per: host
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 10, warmup: 0}
Y

# inventory FILE HOST...: an inventory of these host entries (YAML flow maps) with the defaults the tests
# below share: root with the test key, no host-key checks, ssh quiet but for errors.
inventory() {
	inv=$1 && shift &&
	{ printf 'defaults:\n  user: root\n  identity: %s\n' "$SSH_KEY" &&
	  echo '  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null, LogLevel=ERROR]' &&
	  echo 'hosts:' &&
	  printf '  - %s\n' "$@"; } >"$inv"
}

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

test_expect_success 'launch without --sync: no folder, no sweep binary: an error per host, exit 6' '
	mkdir -p w1 &&
	test_expect_code 6 "$SWEEP" launch inv.yaml long.yaml >out 2>err &&
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
	test_expect_code 6 "$SWEEP" launch inv.yaml long.yaml --hosts r1 --min-free 1P >out 2>err &&
	cat out &&
	# 1P is 2^40 KiB
	grep -qx "r1: error: disk full: [0-9]* KiB free for $T/w1/results, under 1099511627776 KiB" out &&
	test ! -e w1/results/long.pid && rm -rf w1
'

test_expect_success 'launch --sync: binary and spec copied, a detached run started on every host' '
	"$SWEEP" launch inv.yaml long.yaml --sync >out 2>err &&
	cat out err &&
	for i in 1 2 3; do
		h=$(eval echo \$H$i) &&
		grep -q "^r$i: started, pid [0-9]* on $h (log $T/w$i/results/long.log)" out &&
		# the launch records the hostname it learnt (r2: the inventory leaves it out)
		test "$(cat w$i/results/long.host)" = "$h" &&
		test "$(cat w$i/results/long.start)" -le "$(date +%s)" &&
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
	test "$(awk "NR > 1 && \$1 != \"spend:\" { split(\$4, d, \"/\"); print \$1, (d[1] >= 3), \$7 }" st)" = "r1 1 0
r2 1 0
r3 1 0"
'

test_expect_success 'pull while they run: consistent snapshots, merged' '
	"$SWEEP" pull inv.yaml --into merged.db >out 2>err &&
	cat out err &&
	sum=0 &&
	for i in 1 2 3; do
		db_sound pulled/r$i/long.db &&
		test "$(sql pulled/r$i/long.db "PRAGMA journal_mode")" = delete &&
		test ! -e pulled/r$i/long.db-wal &&
		n=$(sql pulled/r$i/long.db "SELECT count(*) FROM results WHERE status = $(q ok)") &&
		echo "r$i: $n ok results in its snapshot" &&
		test "$n" -ge 3 && test "$n" -lt 60 &&
		test "$(sql pulled/r$i/long.db "SELECT count(*) FROM results")" = "$n" &&
		grep -qx "r$i: long: 60 cells, $n results new, 0 already there, 0 conflicts -> merged.db" out &&
		sum=$((sum + n)) &&
		# the run was still going when its snapshot was taken
		kill -0 "$(cat w$i/results/long.pid)" &&
		! ls w$i/results/.long.pull-* 2>/dev/null || return 1
	done &&
	db_sound merged.db &&
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

test_expect_success 'status --hosts: elapsed time and spend from price_per_hour, per host and in total' '
	# the runs took seconds: say they started 1h30m, 1h and 12m before they ended
	for i in 1 2 3; do
		test -s w$i/results/long.end || return 1
	done &&
	echo $(( $(cat w1/results/long.end) - 5400 )) >w1/results/long.start &&
	echo $(( $(cat w2/results/long.end) - 3600 )) >w2/results/long.start &&
	echo $(( $(cat w3/results/long.end) - 720 )) >w3/results/long.start &&
	"$SWEEP" status --hosts inv.yaml >st &&
	cat st &&
	head -1 st | grep -q "last result  *elapsed  *spend$" &&
	# 1.5 h at 0.2/h, 1 h at 0.3/h, 0.2 h at 2.5/h
	test "$(awk "NR > 1 && \$1 != \"spend:\" { print \$1, \$(NF - 1), \$NF }" st)" = "r1 1h30m 0.30
r2 1h00m 0.30
r3 12m00s 0.50" &&
	grep -qx "spend: r1 0.30 (1h30m at 0.2/h), r2 0.30 (1h00m at 0.3/h), r3 0.50 (12m00s at 2.5/h); total 1.10" st
'

test_expect_success 'pull after they finished: exactly one ok result per host per cell' '
	"$SWEEP" pull inv.yaml --into merged.db >out 2>err &&
	cat out &&
	# what is new and what the pull mid-run brought make the 60 results of each host
	test "$(awk "/ long: 60 cells, / { print \$1, \$5 + \$8 }" out)" = "r1: 60
r2: 60
r3: 60" &&
	db_sound merged.db &&
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
	# (and a column precise: two samples a cell give no interval of their median)
	test "$(head -1 rep)" = "ms,label.name=r1,label.name=r2,label.name=r3,precise" && test "$(wc -l <rep)" = 61 &&
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
	test "$(grep -c "long: 60 cells, 0 results new, [0-9]* already there, 0 conflicts" out)" = 3 &&
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
	grep -q "^r2  *slow  *stopped " st && test "$(wc -l <st)" = 3 && grep -q "^spend: r2 0.00 (" st &&
	"$SWEEP" launch inv.yaml slow.yaml --hosts r2 >out &&
	cat out && grep -q "^r2: started, pid" out &&
	test "$(cat w2/results/slow.pid)" != "$pid" &&
	test "$(grep -c "^--- sweep launch" w2/results/slow.log)" = 2 &&
	kill -9 -- -"$(cat w2/results/slow.pid)"
'

cat >stoppable.yaml <<'Y'
sweep: stoppable
kernel: sleep
params: {ms: {from: 300, to: 339, step: 1}}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# results_of I: the results host I's stoppable database holds.
results_of() { sql "$T/w$1/results/stoppable.db" "SELECT count(*) FROM results" 2>/dev/null || echo 0; }

test_expect_success 'sweep stop HOST: that host'"'"'s run interrupted within --timeout, the other goes on' '
	"$SWEEP" launch inv.yaml stoppable.yaml --hosts r2,r3 --sync >out &&
	cat out && test "$(grep -c ": started, pid" out)" = 2 &&
	p2=$(cat w2/results/stoppable.pid) && p3=$(cat w3/results/stoppable.pid) &&
	# bounded: 300 x 0.1 s until r2 has 2 results
	for t in $(seq 1 300); do
		if test "$(results_of 2)" -ge 2; then break; fi &&
		sleep 0.1 || return 1
	done &&
	start=$(date +%s) &&
	"$SWEEP" stop inv.yaml r2 --timeout 20 >out 2>err &&
	cat out err &&
	test $(( $(date +%s) - start )) -le 25 &&
	grep -qx "r2: stoppable: stopped (exit [0-9]*); .sweep launch. again resumes it" out &&
	test "$(wc -l <out)" = 1 &&
	# gone, or a zombie nobody reaps (an orphan of the ssh session in this container)
	test -z "$(ps -o stat= -p "$p2" | grep -v Z)" &&
	test -n "$(ps -o stat= -p "$p3" | grep -v Z)" &&
	test -s w2/results/stoppable.exit && test -f w2/results/stoppable.stopped &&
	"$SWEEP" status --hosts inv.yaml --sweep stoppable --only r2,r3 >st &&
	cat st &&
	grep -q "^r2  *stoppable  *interrupted " st && grep -q "^r3  *stoppable  *running " st &&
	# what it measured is kept
	n=$(results_of 2) && test "$n" -ge 2 && test "$n" -lt 40
'

test_expect_success 'sweep stop again: nothing running there; launch resumes the stopped run' '
	"$SWEEP" stop inv.yaml r2 --sweep stoppable >out &&
	cat out && grep -qx "r2: stoppable: not running" out &&
	n=$(results_of 2) &&
	"$SWEEP" launch inv.yaml stoppable.yaml --hosts r2 >out &&
	cat out && grep -q "^r2: started, pid" out &&
	test ! -e w2/results/stoppable.stopped &&
	"$SWEEP" stop inv.yaml --sweep stoppable --timeout 20 >out &&
	cat out &&
	grep -qx "r2: stoppable: stopped (exit [0-9]*); .sweep launch. again resumes it" out &&
	grep -qx "r3: stoppable: stopped (exit [0-9]*); .sweep launch. again resumes it" out &&
	grep -qx "r1: stoppable: not running" out &&
	test "$(sql w2/results/stoppable.db "SELECT count(*) FROM runs")" = 2 &&
	test "$(results_of 2)" -ge "$n" &&
	test_expect_code 2 "$SWEEP" stop inv.yaml nosuch 2>err &&
	grep -q "no host .nosuch." err
'

test_expect_success 'a hostname the inventory gets wrong is named; sweep hosts label names those it lacks' '
	sed "s/hostname: $H1,/hostname: wrong-name,/" inv.yaml >wrong.yaml &&
	test_expect_code 6 "$SWEEP" launch wrong.yaml stoppable.yaml --hosts r1 --sync >out 2>err &&
	cat out &&
	line=$(grep -n "name: r1," wrong.yaml | cut -d: -f1) &&
	grep -qx "r1: error: its hostname is .$H1., but wrong.yaml:$line:[0-9]* says hostname .wrong-name. (correct it, or leave it out for launch to learn it)" out &&
	test ! -e w1/results/stoppable.pid &&
	cp merged.db relabel.db &&
	"$SWEEP" hosts label relabel.db wrong.yaml >out &&
	cat out &&
	grep -qx "relabel.db: labels of 1 host written; 2 hostnames not in wrong.yaml: .$H1., .$H2." out &&
	"$SWEEP" pull wrong.yaml --hosts r1 --sweep long --into relabel2.db >out &&
	cat out &&
	grep -qx "r1: its hostname is .$H1., but wrong.yaml:$line:[0-9]* says hostname .wrong-name.: its results are not labelled (correct it, or leave it out)" out &&
	grep -q "^r1: long: 60 cells, 60 results new" out
'

cat >six.yaml <<'Y'
sweep: six
kernel: sleep
params: {ms: [1, 2, 3, 4, 5, 6]}
per: host
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# six_done: r2's run of six has ended, waited for at most 30 s.
six_done() {
	for t in $(seq 1 300); do
		if test -s "$T/w2/results/six.exit"; then return 0; fi
		sleep 0.1
	done
	return 1
}

test_expect_success 'status --hosts and pull count the sweep'"'"'s own cells; its time runs from the first launch' '
	"$SWEEP" launch inv.yaml six.yaml --hosts r2 --sync >out && cat out &&
	six_done && test "$(cat w2/results/six.exit)" = 0 &&
	# a probe of the host into the same database: a sweep of its own, not six'"'"'s
	"$SWEEP" hosts probe --db w2/results/six.db >/dev/null 2>&1 &&
	test "$(sql w2/results/six.db "SELECT count(DISTINCT sweep) FROM cells")" = 2 &&
	"$SWEEP" status --hosts inv.yaml --only r2 --sweep six >st && cat st &&
	grep -q "^r2  *six  *finished  *6/6 " st &&
	"$SWEEP" pull inv.yaml --hosts r2 --sweep six --into six.db >out && cat out &&
	grep -qx "r2: six: 6 cells, 6 results new, 0 already there, 0 conflicts -> six.db" out &&
	# say its first launch was an hour before it ended; launched again (it has nothing left to run),
	# its time still counts from that first launch, to its new end
	first=$(( $(cat w2/results/six.end) - 3600 )) && echo "$first" >w2/results/six.start &&
	"$SWEEP" launch inv.yaml six.yaml --hosts r2 >out && cat out &&
	grep -q "^r2: started" out &&
	six_done &&
	test "$(cat w2/results/six.start)" = "$first" &&
	"$SWEEP" status --hosts inv.yaml --only r2 --sweep six >st && cat st &&
	test "$(awk "\$1 == \"r2\" { print \$(NF - 1), \$NF }" st)" = "1h00m 0.30"
'

test_expect_success 'pull --into keeps one database per sweep: several on the hosts need --sweep' '
	test_expect_code 2 "$SWEEP" pull inv.yaml --hosts r1,r2 --into all.db >out 2>err &&
	cat out err &&
	grep -q "^sweep: the hosts hold the sweeps long, .*stoppable.*: --into .all.db. takes one of them (--sweep NAME), or leave --into out for each to go to results/NAME.db; nothing was merged" err &&
	test ! -e all.db &&
	! ls w1/results/.*.pull-* w2/results/.*.pull-* 2>/dev/null &&
	"$SWEEP" pull inv.yaml --hosts r1,r2 --sweep stoppable --into all.db >out && cat out &&
	test "$(sql all.db "SELECT group_concat(name) FROM sweeps")" = stoppable
'

# A sweep binary whose snapshots take 3 s more: a pull is cut then, mid-way (hosts share this disk).
printf '#!/bin/sh\n"%s" "$@"; rc=$?\n[ "$1" != snapshot ] || sleep 3\nexit $rc\n' "$SWEEP" >"$T/slowsnap.sh"
chmod +x "$T/slowsnap.sh"

# snap_on I: host I has a pull's snapshot of long (bounded by its callers).
snap_on() { ls "$T"/w$1/results/.long.pull-*.db >/dev/null 2>&1; }

test_expect_success 'a pull cut short leaves no snapshot on the host: the host removes it itself' '
	inventory snap.yaml "{name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, sweep_bin: $T/slowsnap.sh}" &&
	run_bg "$SWEEP" pull snap.yaml --sweep long --into cut.db --timeout 5 &&
	for t in $(seq 1 100); do if snap_on 1; then break; fi && sleep 0.1 || return 1; done &&
	snap_on 1 &&
	kill -9 "$BG_PID" &&
	# gone within the pull'"'"'s time (5 s) and the grace after it (15 s), from the snapshot on
	for t in $(seq 1 300); do if ! snap_on 1; then break; fi && sleep 0.1 || return 1; done &&
	! snap_on 1 &&
	test ! -e cut.db
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

# A binary that runs here but not on the hosts: this one with its libyaml renamed, found here through
# LD_LIBRARY_PATH only (as a binary linked against this machine's libraries meets a bare GPU image), in a
# clone of the checkout, which is the source launch builds from.
yaml_lib=$(ldd "$SWEEP" | awk "/libyaml-0.so.2/ { print \$3 }")
mkdir -p "$T/lib" && ln -s "$yaml_lib" "$T/lib/libyaml-0.so.X"
cat >quick.yaml <<'Y'
sweep: quick
kernel: sleep
params: {ms: [400, 401, 402, 403]}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

test_expect_success 'launch --sync: a copy that cannot run there falls back to a build from the same commit' '
	git clone -q "$ROOT" src && commit=$(git -C src rev-parse HEAD) &&
	mkdir -p src/build && cp "$SWEEP" src/build/sweep &&
	perl -pi -e "s/libyaml-0\\.so\\.2\\0/libyaml-0.so.X\\0/g" src/build/sweep &&
	test_expect_code 127 src/build/sweep --version &&
	LD_LIBRARY_PATH=$T/lib src/build/sweep --version &&
	LD_LIBRARY_PATH=$T/lib src/build/sweep launch inv.yaml quick.yaml --hosts r3 --sync --make CUDA=0 \
		>out 2>err &&
	cat out err &&
	c12=$(echo "$commit" | cut -c1-12) &&
	grep -qx "r3: started, pid [0-9]* on $H3 (built $c12 (CUDA=0) there: the copied binary cannot run (libyaml-0.so.X => not found); log $T/w3/results/quick.log)" out &&
	# the binary there is the one built from the commit, and it runs there
	! cmp src/build/sweep w3/build/sweep && ssh_host 3 "$T/w3/build/sweep --version" &&
	# kept under the commit and a hash of the make variables, which .built names
	key=$(cd w3/.sweep-build && ls -d "$commit"-*) && echo "$key" | grep -qx "$commit-[0-9a-f]\{8\}" &&
	test "$(cat w3/.sweep-build/$key/.built)" = "$commit CUDA=0" &&
	test ! -e w3/.sweep-build/$key.tar.gz && test ! -e w3/.sweep-build/$key.part &&
	test ! -e w3/build/sweep.sweep-part-* &&
	grep -q "^--- sweep launch --build $commit CUDA=0 " w3/results/build-$key.log &&
	grep -q "^cc .*-c src/launch.c" w3/results/build-$key.log &&
	! grep -q "SWEEP_CUDA" w3/results/build-$key.log &&
	# the run it started goes through (bounded: 300 x 0.1 s)
	for t in $(seq 1 300); do
		if test -s w3/results/quick.exit; then break; fi &&
		sleep 0.1 || return 1
	done &&
	test "$(cat w3/results/quick.exit)" = 0 &&
	test "$(sql w3/results/quick.db "SELECT count(*) FROM results WHERE status = $(q ok)")" = 4
'

test_expect_success 'launch --build: built once a commit and make set; no git checkout: refused before any host' '
	commit=$(git -C src rev-parse HEAD) && c12=$(echo "$commit" | cut -c1-12) &&
	key=$(cd w3/.sweep-build && ls -d "$commit"-*) &&
	start=$(date +%s) &&
	LD_LIBRARY_PATH=$T/lib src/build/sweep launch inv.yaml slow.yaml --hosts r3 --build --make CUDA=0 >out 2>err &&
	cat out err &&
	test $(( $(date +%s) - start )) -le 60 &&
	grep -q "^r3: started, pid [0-9]* on $H3 (reused the build of $c12 (CUDA=0) there; log " out &&
	test "$(grep -c "^--- sweep launch --build" w3/results/build-$key.log)" = 1 &&
	kill -9 -- -"$(cat w3/results/slow.pid)" &&
	# another set of make variables is another build: this one fails, and says so
	cp w3/build/sweep built-before &&
	test_expect_code 6 env LD_LIBRARY_PATH=$T/lib src/build/sweep launch inv.yaml slow.yaml --hosts r3 --build \
		--make CC=nosuchcc --make CUDA=0 >out 2>err &&
	cat out err &&
	bad=$(cd w3/.sweep-build && ls -d "$commit"-* | grep -vx "$key") && echo "$bad" | grep -qx "$commit-[0-9a-f]*" &&
	test ! -e w3/.sweep-build/$bad.tar.gz &&
	grep -q "^r3: error: the build failed, see $T/w3/results/build-$bad.log" out &&
	grep -q "^--- sweep launch --build $commit CC=nosuchcc CUDA=0 " w3/results/build-$bad.log &&
	grep -q "nosuchcc" w3/results/build-$bad.log &&
	test ! -e w3/.sweep-build/$bad/.built && cmp built-before w3/build/sweep &&
	cp "$SWEEP" lone-sweep &&
	test_expect_code 1 ./lone-sweep launch inv.yaml slow.yaml --build >out 2>err &&
	cat err && test ! -s out &&
	grep -q "build: no source for this binary (.$T/lone-sweep. is not in a git checkout" err &&
	test_expect_code 2 "$SWEEP" launch inv.yaml slow.yaml --build --make "CUDA=0;rm" 2>err &&
	grep -q "make takes NAME=VALUE" err
'

test_expect_success 'sweep stop: a run that ignores SIGTERM is reported still running after --timeout' '
	printf "#!/bin/sh\ntrap \"\" TERM\nsleep 60\n" >deaf.sh && chmod +x deaf.sh &&
	inventory deaf.yaml \
		"{name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, sweep_bin: $T/deaf.sh}" &&
	cp quick.yaml w1/ &&
	"$SWEEP" launch deaf.yaml quick.yaml >out && cat out && grep -q "^r1: started, pid" out &&
	pid=$(cat w1/results/quick.pid) &&
	start=$(date +%s) &&
	test_expect_code 6 "$SWEEP" stop deaf.yaml --sweep quick --timeout 2 >out 2>err &&
	cat out err &&
	took=$(( $(date +%s) - start )) && echo "took $took s" && test $took -le 10 &&
	grep -qx "r1: quick: still running 2 s after SIGTERM, pid $pid" out &&
	grep -q "1 of 1 host not stopped" err &&
	kill -9 -- -"$pid"
'

test_expect_success 'two inventory hosts with one hostname: launch warns that their results would mix' '
	inventory twin.yaml \
		"{name: one, address: $(netns_addr 1), workdir: $T/t1}" \
		"{name: two, address: $(netns_addr 1), workdir: $T/t2}" &&
	"$SWEEP" launch twin.yaml quick.yaml --sync >out 2>err &&
	cat out err &&
	grep -q "^one: started, pid [0-9]* on $H1 " out && grep -q "^two: started, pid [0-9]* on $H1 " out &&
	grep -qx "sweep: warning: .one. and .two. both say their hostname is .$H1.: their results cannot be told apart (give each container a hostname of its own)" err &&
	# bounded: 300 x 0.1 s for both to end
	for t in $(seq 1 300); do
		if test -s t1/results/quick.exit && test -s t2/results/quick.exit; then break; fi &&
		sleep 0.1 || return 1
	done &&
	test "$(cat t1/results/quick.exit t2/results/quick.exit)" = "0
0"
'

test_expect_success 'one host'"'"'s sshd stopped: launch reports it and starts the others' '
	ssh_stop 3 &&
	test_expect_code 6 "$SWEEP" launch inv.yaml short.yaml --sync >out 2>err &&
	cat out err &&
	grep -q "^r1: started" out && grep -q "^r2: started" out &&
	grep -q "^r3: error: unreachable: .*Connection refused" out &&
	cmp progs/cell.sh w1/progs/cell.sh && cmp progs/cell.sh w2/progs/cell.sh && test ! -e w3/progs &&
	grep -q "1 of 3 hosts not started" err
'

test_expect_success 'status --hosts reports it unreachable and shows the others' '
	test_expect_code 6 "$SWEEP" status --hosts inv.yaml >st 2>err &&
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
	test_expect_code 6 "$SWEEP" pull inv.yaml --sweep short --into short.db >out 2>err &&
	cat out err &&
	grep -q "^r3: unreachable: .*Connection refused" out &&
	grep -q "^r1: short: 4 cells, 4 results new" out &&
	grep -q "^r2: short: 4 cells, 4 results new" out &&
	grep -q "1 of 3 hosts not pulled" err &&
	test "$(sql short.db "SELECT group_concat(h, $(q " ")) FROM (SELECT host || $(q :) || count(*) AS h
		FROM v_results WHERE status = $(q ok) GROUP BY host ORDER BY host)")" = "$H1:4 $H2:4" &&
	test "$(sql short.db "SELECT group_concat(v) FROM (SELECT m.value AS v FROM metrics m JOIN v_results r
		ON r.id = m.result WHERE m.name = $(q v) AND r.host = $(q "$H1") ORDER BY v)")" = \
		"10.0,20.0,30.0,40.0"
'

test_expect_success 'a host that does not answer at all is given up on within --timeout' '
	inventory ghost.yaml \
		"{name: ghost, address: $NETNS_NET.99, workdir: $T/wg}" \
		"{name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1}" &&
	start=$(date +%s) &&
	test_expect_code 6 "$SWEEP" status --hosts ghost.yaml --timeout 3 >st 2>err &&
	took=$(( $(date +%s) - start )) &&
	cat st err && echo "took $took s" &&
	test $took -le 10 &&
	grep -q "^ghost  *-  *unreachable" st && grep -q "^r1  *long  *finished" st
'

test_expect_success 'a run that fails at once is an error with the end of its log; status says failed' '
	printf "#!/bin/sh\necho \"fake: cannot load libcudart.so.12\" >&2\nexit 127\n" >fake.sh &&
	chmod +x fake.sh &&
	inventory fake.yaml \
		"{name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, sweep_bin: $T/fake.sh}" &&
	test_expect_code 6 "$SWEEP" launch fake.yaml short.yaml >out 2>err &&
	cat out err &&
	grep -q "^r1: error: sweep run exited 127 at once; the end of $T/w1/results/short.log:" out &&
	grep -q "^    fake: cannot load libcudart.so.12" out &&
	"$SWEEP" status --hosts fake.yaml --sweep short >st &&
	cat st &&
	grep -q "^r1  *short  *failed (exit 127) " st
'

test_expect_success 'launch --lock-clocks: sweep run --lock-clocks on the host; clocks: without it is refused before any host' '
	printf "#!/bin/sh\necho \"\$*\" >%s/args\nexit 3\n" "$T" >args.sh && chmod +x args.sh &&
	inventory args.yaml \
		"{name: r1, hostname: $H1, address: $(netns_addr 1), workdir: $T/w1, sweep_bin: $T/args.sh}" &&
	printf "sweep: clk\nkernel: sleep\nparams: {ms: [1]}\nclocks: {sm: 1410}\n" >clk.yaml &&
	cp clk.yaml "$T/w1/" &&
	test_expect_code 2 "$SWEEP" launch args.yaml clk.yaml >out 2>err &&
	grep -q "^sweep: clk.yaml: .clocks:. locks the GPU clocks of every worker; give --lock-clocks to consent" err &&
	test ! -e "$T/w1/results/clk.log" && test ! -e args &&
	sh -c "\"\$0\" launch args.yaml clk.yaml --lock-clocks >out 2>err; echo \$? >rc" "$SWEEP" &&
	cat out err rc && cat "$T/w1/results/clk.log" &&
	test "$(cat args)" = "run clk.yaml --db results/clk.db --progress=30 --lock-clocks" &&
	grep -q "^--- sweep launch .*: $T/args.sh run clk.yaml --db results/clk.db --lock-clocks$" "$T/w1/results/clk.log"
'
