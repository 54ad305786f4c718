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
	set +e; "$SWEEP" run f.yaml --db f.db 2>/dev/null; rc=$?; set -e
	test $rc = 3 &&
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
	python3 -c "import json; d = json.load(open(\"j\")); assert d[\"rate\"] > 0 and d[\"elapsed\"] > 0" &&
	test "$(json j last)" = "$(sql f.db "SELECT max(started) FROM results")"
'

test_expect_success 'status --json and snapshot while a run writes the database' '
	"$SWEEP" run slow.yaml --db s.db 2>/dev/null &
	pid=$!
	for t in $(seq 1 300); do
		n=$(sql s.db "SELECT count(*) FROM results" 2>/dev/null || echo 0)
		[ "${n:-0}" -ge 3 ] && break
		sleep 0.1
	done &&
	"$SWEEP" status s.db --json >j &&
	"$SWEEP" snapshot s.db snap.db >out &&
	kill -0 $pid &&
	cat j out &&
	test "$(json j run_status)" = running &&
	test "$(json j cells)" = 40 &&
	python3 -c "import json; d = json.load(open(\"j\")); assert d[\"eta\"] > 0 and d[\"rate\"] > 0, d" &&
	grep -qx "s.db: snapshot written to snap.db" out &&
	test "$(sql snap.db "PRAGMA integrity_check")" = ok &&
	test "$(sql snap.db "PRAGMA journal_mode")" = delete &&
	test ! -e snap.db-wal &&
	n=$(sql snap.db "SELECT count(*) FROM results") &&
	test "$n" -ge 3 && test "$n" -lt 40 &&
	wait $pid &&
	test "$(sql s.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 40
'

test_expect_success 'snapshot refuses to overwrite, and what is not a sweep database' '
	before=$(sha256sum <snap.db) &&
	set +e; "$SWEEP" snapshot s.db snap.db 2>err; rc=$?; set -e
	test $rc = 1 && grep -q "snap.db. exists" err && test "$(sha256sum <snap.db)" = "$before" &&
	sqlite3 other.db "CREATE TABLE t(x)" &&
	set +e; "$SWEEP" snapshot other.db o2.db 2>err; rc=$?; set -e
	cat err && test $rc = 1 && grep -q "not a sweep database" err && test ! -e o2.db &&
	set +e; "$SWEEP" snapshot s.db 2>err; rc=$?; set -e
	test $rc = 2 && grep -q "usage: sweep snapshot DB OUT.db" err
'

test_expect_success 'an inventory with ssh fields is listed; bad ones are refused with file:line:col' '
	cat >inv.yaml <<-\EOF &&
	defaults: {user: ubuntu, identity: ~/.ssh/x, ssh_options: [StrictHostKeyChecking=accept-new]}
	hosts:
	  - {name: a, address: 192.0.2.1, port: 2222, workdir: ~/bench, sweep_bin: /opt/sweep}
	  - {name: b, address: 192.0.2.2}
	EOF
	"$SWEEP" hosts list inv.yaml >out && cat out && test "$(wc -l <out)" = 3 &&
	cat >bad.yaml <<-\EOF &&
	hosts:
	  - name: a
	    user: "-oProxyCommand=evil"
	    port: 99999
	    workdir: "x; rm -rf ~"
	    ssh_options: [ProxyCommand]
	EOF
	set +e; "$SWEEP" hosts list bad.yaml 2>err; rc=$?; set -e
	cat err && test $rc = 2 &&
	grep -q "^sweep: bad.yaml:3:11: user .-oProxyCommand=evil.: letters, digits" err &&
	grep -q "^sweep: bad.yaml:4:11: port must be a whole number from 1 to 65535, not .99999." err &&
	grep -q "^sweep: bad.yaml:5:14: workdir .x; rm -rf ~.: letters, digits" err &&
	grep -q "^sweep: bad.yaml:6:19: ssh option .ProxyCommand.: expected Name=value" err
'

# A host that refuses at once: nothing listens on port 1 of this machine.
cat >"$T/refuse.yaml" <<'Y'
defaults:
  ssh_options: [StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null]
hosts:
  - {name: closed, address: 127.0.0.1, port: 1}
Y

test_expect_success 'launch, status --hosts and pull report a host that refuses ssh' '
	set +e; "$SWEEP" launch refuse.yaml slow.yaml >out 2>err; rc=$?; set -e
	cat out err && test $rc = 3 &&
	grep -q "^closed: error: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	set +e; "$SWEEP" status --hosts refuse.yaml >out 2>err; rc=$?; set -e
	cat out err && test $rc = 3 &&
	grep -q "^closed  *-  *unreachable" out &&
	grep -q "^closed: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	set +e; "$SWEEP" pull refuse.yaml --into p/pulled.db >out 2>err; rc=$?; set -e
	cat out err && test $rc = 3 &&
	grep -q "^closed: unreachable: ssh: connect to host 127.0.0.1 port 1: Connection refused" out &&
	grep -q "1 of 1 host not pulled" err &&
	test ! -e p/pulled.db && test ! -e p
'

test_expect_success 'usage errors: exit 2, nothing done' '
	for args in "launch refuse.yaml" "launch refuse.yaml slow.yaml --min-free lots" \
		"launch refuse.yaml slow.yaml --timeout 0" "launch refuse.yaml slow.yaml --hosts nosuch" \
		"launch refuse.yaml nosuch.yaml" "pull" "pull refuse.yaml --sweep ../x" \
		"status --hosts refuse.yaml s.db" "status s.db --json --hosts refuse.yaml" "status --json"; do
		set +e; "$SWEEP" $args >out 2>err; rc=$?; set -e
		echo "$args: $rc $(head -1 err)"
		test $rc = 2 && test ! -s out || exit 1
	done
'
