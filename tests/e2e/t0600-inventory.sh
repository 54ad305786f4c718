#!/bin/bash
# t0600-inventory: host inventories: hostfiles (all hosts, by label), checked files with file:line:col
# errors, labels written into hosts.facts by `sweep hosts label` and `sweep run --inventory`, reports by
# label.
. tests/e2e/lib.sh

HOST=$(hostname)
cat >"$T/inv.yaml" <<EOF
defaults:
  slots: 2
  labels: {provider: own}
hosts:
  - name: here
    hostname: $HOST
    labels: {class: consumer, price_per_hour: 0.5}
    notes: the test machine
  - name: far
    hostname: far.example
    address: 10.231.0.12
    slots: 8
    labels: {class: server, provider: rented}
EOF

test_expect_success 'hostfile: one "ADDRESS slots=N" line per host, defaults applied' '
	"$SWEEP" hosts hostfile inv.yaml >hf &&
	grep -v "^#" hf >lines &&
	printf "%s slots=2\n10.231.0.12 slots=8\n" "$HOST" >want &&
	cmp want lines &&
	grep -q "^# here$" hf && grep -q "^# far$" hf
'

test_expect_success 'hostfile --label keeps the hosts with every label given; --out writes a file' '
	"$SWEEP" hosts hostfile inv.yaml --label class=server --out hf2 >out &&
	test ! -s out &&
	test "$(grep -v "^#" hf2)" = "10.231.0.12 slots=8" &&
	"$SWEEP" hosts hostfile inv.yaml --label provider=own --label class=consumer >hf3 &&
	test "$(grep -v "^#" hf3)" = "$HOST slots=2" &&
	test_must_fail "$SWEEP" hosts hostfile inv.yaml --label class=none 2>err &&
	grep -q "^sweep: no host of .inv.yaml. has every label asked for$" err
'

test_expect_success 'the example inventory is valid and lists its three hosts' '
	"$SWEEP" hosts list "$ROOT/hosts/example.yaml" >list &&
	test "$(grep -c "price_per_hour" list)" = 3 &&
	test "$(grep -vc "^#" <("$SWEEP" hosts hostfile "$ROOT/hosts/example.yaml"))" = 3
'

test_expect_success 'a bad inventory: every problem as file:line:col, exit 2' '
	cat >bad.yaml <<-\EOF &&
	hosts:
	  - name: a
	    slot: 2
	    labels: {name: x, bad-name: 1}
	  - {name: a}
	  - name: b c
	  - name: d
	    slots: 0
	EOF
	test_expect_code 2 "$SWEEP" hosts list bad.yaml >out 2>err &&
	cat err && test ! -s out &&
	grep -q "^sweep: bad.yaml:3:5: unknown key .slot. in a host (did you mean .slots.?)" err &&
	grep -q "^sweep: bad.yaml:4:14: the label .name. is the host.s name" err &&
	grep -q "^sweep: bad.yaml:4:23: label name .bad-name." err &&
	grep -q "^sweep: bad.yaml:5:12: host .a. is listed twice (first at 2:5)" err &&
	grep -q "^sweep: bad.yaml:6:11: name .b c." err &&
	grep -q "^sweep: bad.yaml:8:12: slots must be a whole number from 1" err &&
	test "$(wc -l <err)" = 6 &&
	printf "hosts: []\n" >empty.yaml &&
	test_expect_code 2 "$SWEEP" hosts list empty.yaml 2>err2 &&
	grep -q "empty.yaml:1:8: the .hosts. list is empty" err2 &&
	printf "hosts:\n  - name: x\n   bad: [\n" >syntax.yaml &&
	test_expect_code 2 "$SWEEP" hosts list syntax.yaml 2>err3 &&
	grep -q "^sweep: syntax.yaml:3:4: did not find expected " err3 &&
	printf "hosts:\n  - name: x\n    slots: [1, 2\n" >flow.yaml &&
	test_expect_code 2 "$SWEEP" hosts list flow.yaml 2>err4 &&
	grep -q "flow.yaml:4:1: did not find expected .,. or .]. (while parsing a flow sequence at 3:12)" err4 &&
	printf "hosts:\n  - name: x\n---\nhosts: []\n" >two.yaml &&
	test_expect_code 2 "$SWEEP" hosts list two.yaml 2>err5 &&
	grep -q "two.yaml:4:1: a second YAML document: an inventory holds one" err5
'

cat >"$T/ph.yaml" <<'Y'
sweep: ph
kernel: sleep
params: {ms: [0, 1]}
per: host
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'sweep run --inventory writes the labels of its host into hosts.facts' '
	"$SWEEP" run ph.yaml --db l.db --inventory inv.yaml 2>err &&
	test "$(sql l.db "SELECT json_extract(facts, '\''$.labels.class'\''),
		json_extract(facts, '\''$.labels.name'\''),
		json_extract(facts, '\''$.labels.price_per_hour'\''), json_extract(facts, '\''$.labels.provider'\'')
		FROM hosts")" = "consumer|here|0.5|own" &&
	test "$(sql l.db "SELECT json_extract(facts, '\''$.labels.notes'\'') FROM hosts")" = "the test machine" &&
	# the facts as measured stay: hostname, cores
	test "$(sql l.db "SELECT json_extract(facts, '\''$.hostname'\'') FROM hosts")" = "$HOST" &&
	sql l.db "SELECT json_extract(facts, '\''$.cores'\'') FROM hosts" | grep -q "^[0-9][0-9]*$"
'

test_expect_success 'a resumed run keeps the host row (same hash) and its labels' '
	"$SWEEP" run ph.yaml --db l.db 2>err &&
	test "$(sql l.db "SELECT count(*) FROM hosts")" = 1 &&
	test "$(sql l.db "SELECT json_extract(facts, '\''$.labels.class'\'') FROM hosts")" = consumer
'

test_expect_success 'sweep hosts label labels a database after the fact; a changed inventory relabels' '
	"$SWEEP" run ph.yaml --db u.db 2>/dev/null &&
	test -z "$(sql u.db "SELECT json_extract(facts, '\''$.labels'\'') FROM hosts")" &&
	"$SWEEP" hosts label u.db inv.yaml >out &&
	grep -q "labels of 1 host written; 0 hostnames not in inv.yaml" out &&
	test "$(sql u.db "SELECT json_extract(facts, '\''$.labels.class'\'') FROM hosts")" = consumer &&
	test_expect_code 2 "$SWEEP" hosts label nothere.db inv.yaml 2>err &&
	grep -q "cannot open .nothere.db." err && ! test -e nothere.db &&
	sed "s/class: consumer/class: desk/" inv.yaml >inv2.yaml &&
	"$SWEEP" hosts label u.db inv2.yaml >/dev/null &&
	test "$(sql u.db "SELECT json_extract(facts, '\''$.labels.class'\'') FROM hosts")" = desk
'

test_expect_success 'hostnames match up to the domain: node7 is node7.cluster.example' '
	printf "hosts:\n  - name: n\n    hostname: %s.cluster.example\n    labels: {class: short}\n" \
		"$HOST" >dom.yaml &&
	"$SWEEP" hosts label u.db dom.yaml >out &&
	grep -q "^u.db: labels of 1 host written; 0 hostnames not in dom.yaml$" out &&
	test "$(sql u.db "SELECT json_extract(facts, '\''$.labels.class'\'') FROM hosts")" = short
'

test_expect_success 'a report groups by label.NAME' '
	"$SWEEP" report l.db --rows label.class,ms --metric seconds --format csv >rep &&
	cat rep &&
	test "$(head -1 rep | cut -d, -f1)" = label.class &&
	printf "consumer,0,1\nconsumer,1,1\n" >want &&
	grep -v "^label.class," rep | cut -d, -f1-3 | cmp want -
'
