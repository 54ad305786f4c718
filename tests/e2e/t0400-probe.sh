#!/bin/bash
# t0400-probe: sweep hosts probe measures host ceilings into probes, under mpirun too (several sweeps on
# the same workers in one job), and probing again measures again.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun

test_expect_success 'a probe stores host_read_gbs for this host' '
	"$SWEEP" hosts probe --cpu --db p.db >out 2>err &&
	grep -q "probes stored in p.db" out &&
	test "$(sql p.db "SELECT count(*) FROM probes WHERE name = '\''host_read_gbs'\'' AND unit = '\''GB/s'\''
		AND value > 0.1")" = 1 &&
	test "$(sql p.db "SELECT h.hostname FROM probes p JOIN hosts h ON h.id = p.host")" = "$(hostname)"
'

test_expect_success 'under mpirun, probing again adds a new measurement' '
	timeout -k 10 120 mpirun --bind-to none -np 2 "$SWEEP" hosts probe --cpu --db p.db >out 2>err &&
	test "$(sql p.db "SELECT count(*) FROM probes WHERE name = '\''host_read_gbs'\''")" = 2 &&
	test "$(sql p.db "SELECT count(DISTINCT run) FROM probes")" = 2
'

test_expect_success 'report never offers the probe sweeps as the sweep to choose' '
	test "$(sql p.db "SELECT count(*) FROM sweeps WHERE name LIKE '\''probe.%'\''")" = 2 &&
	test_expect_code 2 "$SWEEP" report p.db --rows bytes --metric gbs 2>e1 &&
	grep -q "'\''p.db'\'' holds no sweep yet (only the probe sweeps of .sweep hosts probe." e1 &&
	printf "sweep: planned\nkernel: sleep\nparams: {ms: [0, 1]}\n" >planned.yaml &&
	"$SWEEP" plan planned.yaml --db p.db >/dev/null &&
	# the one sweep besides the probes is chosen, though it has no results yet
	test_expect_code 2 "$SWEEP" report p.db --rows ms --metric seconds 2>e2 &&
	grep -q "no metric '\''seconds'\'' in the results of sweep '\''planned'\''" e2 &&
	test_expect_code 2 "$SWEEP" report p.db --sweep nope --rows ms --metric seconds 2>e3 &&
	grep -q "no sweep '\''nope'\'' in '\''p.db'\'' (it has: planned)$" e3 &&
	# asked for by name, a probe sweep is reported
	name=$(sql p.db "SELECT name FROM sweeps WHERE name LIKE '\''probe.%'\'' LIMIT 1") &&
	"$SWEEP" report p.db --sweep "$name" --rows bytes --metric gbs --format csv >r4 &&
	test "$(wc -l <r4)" = 2
'

test_expect_success 'a busy host: the probe stops at its sampling budget, not its noise target, and says so' '
	# a spinning process (bounded: 30 s) keeps this machine busy
	run_bg timeout 30 sh -c "while :; do :; done" && spin=$BG_PID &&
	"$SWEEP" hosts probe --cpu --db busy.db >out 2>err &&
	kill $spin &&
	cat err &&
	grep -q "probes stored in busy.db" out &&
	test "$(sql busy.db "SELECT count(*) FROM probes WHERE name = '\''host_read_gbs'\'' AND value > 0.1")" = 1 &&
	sql busy.db "SELECT n, noise, wall FROM results" &&
	# the budget is 10 samples and 0.5 s: sampling stopped at the first sample that met both (or at the
	# 10 s timeout when setting up 1 GB took most of it), never later waiting for 2 % noise
	test "$(sql busy.db "SELECT r.n <= 10 OR (SELECT sum(seconds) FROM samples s WHERE s.result = r.id
		AND s.i < r.n - 1) < 0.5 FROM results r WHERE status = '\''ok'\''")" = 1 &&
	noisy=$(sql busy.db "SELECT noise > 0.02 FROM results WHERE status = '\''ok'\''") &&
	if test "$noisy" = 1; then
		grep -q "warning: probe host_read_gbs on $(hostname): noise [0-9.]* % over the 2 % of a quiet machine" err
	else
		! grep -q "warning: probe" err
	fi
'

test_expect_success 'hosts probe --help and bad options' '
	"$SWEEP" hosts --help >help &&
	grep -q "^  sweep hosts probe \[--db PATH\] \[--cpu\] \[--read-bytes SIZE\]: " help &&
	test_expect_code 2 "$SWEEP" hosts probe --bogus --db b.db 2>err &&
	grep -q "unrecognized option '\''--bogus'\''" err && ! test -e b.db &&
	test_expect_code 2 "$SWEEP" hosts probe --read-bytes 12Q --db b.db 2>err &&
	grep -q "read-bytes takes a size from 4K to 1T (such as 64M), not '\''12Q'\''" err && ! test -e b.db &&
	"$SWEEP" hosts probe --cpu --read-bytes 8M --db small.db >/dev/null 2>&1 &&
	test "$(sql small.db "SELECT DISTINCT params FROM cells")" = "{\"bytes\":8388608}"
'
