#!/bin/sh
# metrics.sh: output for command-cell tests (tests/unit/test_command.c).
#   metrics.sh json         JSON lines with items, lines without, and lines that are not measurements
#   metrics.sh item ITEM    two JSON lines for ITEM; reads $SCALE from the environment
#   metrics.sh text         lines for the regex metric map
#   metrics.sh many N       N JSON lines {"x": i} for i = 1..N, and N lines of noise on stderr
#   metrics.sh bad LINE     a good JSON line, then LINE (a metric line that must fail the cell)
#   metrics.sh none         output without any JSON line
case "$1" in
json)
	echo 'starting'
	echo '{"item": "a", "acc": 1, "tok": 10}'
	echo '{"item": "b", "acc": 0, "tok": 30}'
	echo '  {"item": 3, "acc": 0.5}'
	echo '{"note": "no numbers here"}'
	echo '{"rate": 100}'
	echo '{"rate": 200, "flag": true, "name": "x"}'
	echo 'not json {"rate": 999}'
	echo '{"item": "c", "acc": 1}'
	printf '{"item": "a", "acc": 0}'
	;;
item)
	echo "{\"v\": $(($2 * ${SCALE:-1}))}"
	echo "{\"item\": \"fixed\", \"w\": $2}"
	;;
text)
	echo 'run 1: time: 1.5 ms'
	echo 'time: 2.5 ms, then time: 3.0 ms'
	echo 'throughput=10.0 GB/s time: bogus'
	;;
many)
	i=1
	while [ "$i" -le "$2" ]; do
		echo "{\"x\": $i}"
		echo "error line $i with some padding to make it longer" >&2
		i=$((i + 1))
	done
	;;
bad)
	echo '{"ok": 1}'
	printf '%s\n' "$2"
	;;
none)
	echo 'nothing to measure'
	;;
*)
	echo "usage: metrics.sh json|item ITEM|text|many N" >&2
	exit 2
	;;
esac
