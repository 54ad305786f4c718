#!/bin/bash
# t0400-probe: sweep hosts probe measures host ceilings into probes, under mpirun too (several sweeps on
# the same workers in one job), and probing again measures again.
. tests/e2e/lib.sh

test_expect_success 'a probe stores host_read_gbs for this host' '
	"$SWEEP" hosts probe --cpu --db p.db >out 2>err &&
	grep -q "probes stored in p.db" out &&
	test "$(sql p.db "SELECT count(*) FROM probes WHERE name = '\''host_read_gbs'\'' AND unit = '\''GB/s'\''
		AND value > 0.1")" = 1 &&
	test "$(sql p.db "SELECT h.hostname FROM probes p JOIN hosts h ON h.id = p.host")" = "$(hostname)"
'

test_expect_success 'under mpirun, probing again adds a new measurement' '
	timeout 120 mpirun --bind-to none -np 2 "$SWEEP" hosts probe --cpu --db p.db >out 2>err &&
	test "$(sql p.db "SELECT count(*) FROM probes WHERE name = '\''host_read_gbs'\''")" = 2 &&
	test "$(sql p.db "SELECT count(DISTINCT run) FROM probes")" = 2
'

test_expect_success 'hosts probe --help and bad options' '
	"$SWEEP" hosts --help >help &&
	grep -q "^  sweep hosts probe \[--db PATH\] \[--cpu\]: " help &&
	test_expect_code 2 "$SWEEP" hosts probe --bogus --db b.db 2>err &&
	grep -q "unrecognized option '\''--bogus'\''" err && ! test -e b.db
'
