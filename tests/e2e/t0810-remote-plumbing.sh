#!/bin/bash
# t0810-remote-plumbing: what launch, status --hosts and pull run on each host, here without ssh hosts:
# `sweep status DB --json` (the totals, rate and ETA status --hosts shows), `sweep snapshot` of a database a
# run is writing, the ssh fields of an inventory, usage errors, and hosts that refuse the connection
# (127.0.0.1 port 1: no root, no sshd needed) reported by launch, status and pull with exit status 3.
. tests/e2e/lib.sh

cat >"$T/f.yaml" <<'Y'
sweep: f
kernel: debug.fail
params:
  mode: [ok, error]
  i: [1, 2, 3]
max_attempts: 2
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

cat >"$T/slow.yaml" <<'Y'
sweep: slow
kernel: sleep
params:
  ms: {from: 40, to: 79, step: 1}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 10, warmup: 0}
Y


json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d[sys.argv[2]])' "$@"; }

test_expect_success 'status --json: totals of a finished run with failures' '
	test_expect_code 3 "$SWEEP" run f.yaml --db f.db 2>run.err &&
	"$SWEEP" status f.db --json >j &&
	cat j &&
	test "$(wc -l <j)" = 1 &&
	test "$(json j sweeps)" = f &&
	test "$(json j cells)" = 6 && test "$(json j ok)" = 3 && test "$(json j quarantined)" = 3 &&
	test "$(json j planned)" = 0 && test "$(json j running)" = 0 &&
	test "$(json j failed)" = 6 &&
	test "$(json j run_status)" = incomplete &&
	test "$(json j run_ok)" = 3 &&
	test "$(json j eta)" = None &&
	# the rate: ok results of the run over its elapsed time
	python3 -c "import json; d = json.load(open(\"j\"))
assert d[\"elapsed\"] > 0 and abs(d[\"rate\"] - d[\"run_ok\"] / d[\"elapsed\"]) <= 1e-9 * d[\"rate\"], d" &&
	test "$(json j last)" = "$(sql f.db "SELECT max(started) FROM results")"
'

test_expect_success 'status --json and snapshot while a run writes the database' '
	run_bg "$SWEEP" run slow.yaml --db s.db 2>run.err &&
	pid=$BG_PID &&
	# wait (bounded: 300 x 0.1 s) until a few results are in
	for t in $(seq 1 300); do
		n=$(sql s.db "SELECT count(*) FROM results" 2>/dev/null || echo 0) &&
		if test "${n:-0}" -ge 3; then break; fi &&
		sleep 0.1 || return 1
	done &&
	test "$n" -ge 3 &&
	"$SWEEP" status s.db --json >j &&
	"$SWEEP" snapshot s.db snap.db >out &&
	kill -0 $pid &&
	cat j out &&
	test "$(json j run_status)" = running &&
	test "$(json j cells)" = 40 &&
	# the ETA is what is left (planned and running cells) at that rate
	python3 -c "import json; d = json.load(open(\"j\"))
assert d[\"rate\"] > 0 and abs(d[\"rate\"] - d[\"run_ok\"] / d[\"elapsed\"]) <= 1e-9 * d[\"rate\"], d
assert abs(d[\"eta\"] - (d[\"planned\"] + d[\"running\"]) / d[\"rate\"]) <= 1e-9 * d[\"eta\"], d" &&
	grep -qx "s.db: snapshot written to snap.db" out &&
	db_sound snap.db &&
	test "$(sql snap.db "PRAGMA journal_mode")" = delete &&
	test ! -e snap.db-wal &&
	n=$(sql snap.db "SELECT count(*) FROM results") &&
	test "$n" -ge 3 && test "$n" -lt 40 &&
	wait $pid &&
	test "$(sql s.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 40
'

test_expect_success 'snapshot refuses to overwrite, and what is not a sweep database' '
	before=$(sha256sum <snap.db) &&
	test_expect_code 1 "$SWEEP" snapshot s.db snap.db 2>err &&
	grep -q "snap.db. exists" err && test "$(sha256sum <snap.db)" = "$before" &&
	sqlite3 other.db "CREATE TABLE t(x)" &&
	# the wrong file named: exit 2, as from every command that reads a database (t0597)
	test_expect_code 2 "$SWEEP" snapshot other.db o2.db 2>err &&
	cat err && grep -q "not a sweep database" err && test ! -e o2.db &&
	test_expect_code 2 "$SWEEP" snapshot s.db 2>err &&
	grep -q "usage: sweep snapshot DB OUT.db" err
'

test_expect_success 'an inventory with ssh fields is listed; bad ones are refused with file:line:col' '
	cat >inv.yaml <<-\EOF &&
	defaults: {user: ubuntu, identity: ~/.ssh/x, ssh_options: [StrictHostKeyChecking=accept-new]}
	hosts:
	  - {name: a, address: 192.0.2.1, port: 2222, workdir: ~/bench, sweep_bin: /opt/sweep}
	  - {name: b, address: 192.0.2.2}
	EOF
	"$SWEEP" hosts list inv.yaml >out && cat out &&
	test "$(awk "NR > 1 { print \$1, \$2, \$3, \$4 }" out)" = "a a 192.0.2.1 1
b b 192.0.2.2 1" &&
	cat >bad.yaml <<-\EOF &&
	hosts:
	  - name: a
	    user: "-oProxyCommand=evil"
	    port: 99999
	    workdir: "x; rm -rf ~"
	    ssh_options: [ProxyCommand]
	EOF
	test_expect_code 2 "$SWEEP" hosts list bad.yaml 2>err &&
	cat err &&
	grep -q "^sweep: bad.yaml:3:11: user .-oProxyCommand=evil.: letters, digits" err &&
	grep -q "^sweep: bad.yaml:4:11: port must be a whole number from 1 to 65535, not .99999." err &&
	grep -q "^sweep: bad.yaml:5:14: workdir .x; rm -rf ~.: letters, digits" err &&
	grep -q "^sweep: bad.yaml:6:19: ssh option .ProxyCommand.: expected Name=value" err &&
	test "$(wc -l <err)" = 4
'

# A host that refuses at once: nothing listens on port 1 of this machine.
cat >"$T/refuse.yaml" <<'Y'
defaults:
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null]
hosts:
  - {name: closed, address: 127.0.0.1, port: 1}
Y

test_expect_success 'launch, status --hosts, pull and stop report a host that refuses ssh: exit 6' '
	test_expect_code 6 "$SWEEP" launch refuse.yaml slow.yaml >out 2>err &&
	cat out err &&
	grep -q "^closed: error: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	test_expect_code 6 "$SWEEP" status --hosts refuse.yaml >out 2>err &&
	cat out err &&
	grep -q "^closed  *-  *unreachable" out &&
	grep -q "^closed: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	test_expect_code 6 "$SWEEP" pull refuse.yaml --into p/pulled.db >out 2>err &&
	cat out err &&
	grep -q "^closed: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	grep -q "1 of 1 host not pulled" err &&
	test ! -e p/pulled.db && test ! -e p &&
	test_expect_code 6 "$SWEEP" stop refuse.yaml >out 2>err &&
	cat out err &&
	grep -q "^closed: .*Connection refused" out
'

test_expect_success 'usage errors: exit 2, nothing done' '
	while IFS="|" read -r args want; do
		test_expect_code 2 "$SWEEP" $args >out 2>err &&
		echo "$args: $(head -1 err)" &&
		test ! -s out && grep -q "^$want" err || return 1
	done <<-\EOF
	launch refuse.yaml|usage: sweep launch INVENTORY SPEC
	launch refuse.yaml slow.yaml --min-free lots|sweep: --min-free takes a size (e.g. 10G), not .lots.$
	launch refuse.yaml slow.yaml --timeout 0|sweep: --timeout takes seconds (more than 0), not .0.$
	launch refuse.yaml slow.yaml --hosts nosuch|sweep: no host .nosuch. in .refuse.yaml.$
	launch refuse.yaml nosuch.yaml|sweep: cannot open .nosuch.yaml.: No such file
	pull|usage: sweep pull INVENTORY
	pull refuse.yaml --sweep ../x|sweep: --sweep takes a sweep name, not .../x.$
	status --hosts refuse.yaml s.db|usage: sweep status DB
	status s.db --json --hosts refuse.yaml|usage: sweep status DB
	status --json|usage: sweep status DB
	EOF
'

test_expect_success 'deps-run (what launch --build and make demo install) has no Slurm, munge or sshd' '
	sh "$ROOT/tools/deps.sh" list run >run.pkgs &&
	sh "$ROOT/tools/deps.sh" list all >all.pkgs &&
	cat run.pkgs | tr "\n" " " &&
	grep -qx gcc run.pkgs && grep -qx make run.pkgs && grep -qx libopenmpi-dev run.pkgs &&
	! grep -q "slurm\|munge\|openssh\|ssh" run.pkgs &&
	grep -qx slurm-wlm all.pkgs && grep -qx munge all.pkgs && grep -qx openssh-server all.pkgs &&
	# make demo installs through deps-run only
	make -C "$ROOT" -n demo >demo.n 2>&1 &&
	test "$(grep -c "deps.sh" demo.n)" = 1 && grep -q "tools/deps.sh run$" demo.n &&
	test_expect_code 2 sh "$ROOT/tools/deps.sh" list nosuch
'

test_expect_success 'run --inventory and hosts label name the hostnames the inventory lacks' '
	printf "hosts:\n  - {name: elsewhere, hostname: not-this-machine}\n" >other.yaml &&
	cat >one.yaml <<-\Y &&
	sweep: one
	kernel: sleep
	params: {ms: [1]}
	timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
	Y
	"$SWEEP" run one.yaml --db one.db --inventory other.yaml 2>err &&
	cat err &&
	me=$(sql one.db "SELECT hostname FROM hosts") && test -n "$me" &&
	grep -qx "sweep: warning: 1 hostname of .one.db. is not in the inventory .other.yaml.: no labels for .$me." err &&
	"$SWEEP" hosts label one.db other.yaml >out &&
	grep -qx "one.db: labels of 0 hosts written; 1 hostname not in other.yaml: .$me." out
'
