#!/bin/bash
# t0584-iperf3: iperf3 -P 2 -J on 127.0.0.1 writes keys twice (sock_bufsize, sndbuf_actual and rcvbuf_actual
# in "start"): the strict reader refuses the document, naming the key; duplicate_keys: last or first read
# it, and each stored value is compared with the same run's JSON (python's json keeps a key's last value;
# its first is read with object_pairs_hook).
. tests/e2e/lib.sh

test_needs iperf3 iperf3 --version

PORT=$((20000 + $$ % 20000))
# iperf3_spec NAME [duplicate_keys: MODE]: one client run of 1 s, two streams, its JSON kept as NAME.json.
iperf3_spec() {
	printf "%s\n" "sweep: $1" \
		"command: [sh, -c, \"iperf3 -c 127.0.0.1 -p $PORT -P 2 -t 1 -J | tee $T/$1.json\"]" \
		"metrics:" "  json: ." ${2:+"  duplicate_keys: $2"} "  bps: end.sum_received.bits_per_second" \
		"  sndbuf: start.sndbuf_actual" "max_attempts: 2" >"$1.yaml"
}
# json_value NAME PATH first|last: the value at PATH (dots) in NAME.json, a key's first or last value.
json_value() {
	python3 -c "
import json, sys
keep = sys.argv[3]
def pairs(ps):
    d = {}
    for k, v in ps:
        if keep == \"last\" or k not in d:
            d[k] = v
    return d
v = json.load(open(sys.argv[1] + \".json\"), object_pairs_hook=pairs)
for k in sys.argv[2].split(\".\"):
    v = v[k]
print(repr(float(v)))" "$1" "$2" "$3"
}

# same MODE METRIC PATH: the metric stored from MODE.json is the value iperf3 wrote at PATH (its MODE one),
# to the 15 digits sqlite3 prints.
same() {
	want=$(json_value "$1" "$3" "$1") &&
	got=$(sql "$1.db" "SELECT value FROM metrics WHERE name = '$2'") &&
	python3 -c "import sys; g, w = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g - w) > 1e-12 * abs(w))" "$got" "$want" ||
	{ echo "$1 $2: stored $got, iperf3 wrote $want"; return 1; }
}

test_expect_success 'iperf3 -P 2 -J: refused by default naming the key, read with duplicate_keys: last or first' '
	cd "$T" && run_bg timeout 60 iperf3 -s -p "$PORT" && server=$BG_PID &&
	wait_for 10 sh -c "ss -ltn | grep -q \":$PORT \"" &&
	iperf3_spec strict && test_expect_code 3 "$SWEEP" run strict.yaml --db strict.db 2>err &&
	sql strict.db "SELECT state || attempts || \"|\" || error FROM cells" >state &&
	grep -q "^quarantined1|metrics: not JSON: duplicate key .sock_bufsize. at line" state &&
	iperf3_spec last last && "$SWEEP" run last.yaml --db last.db --quiet &&
	iperf3_spec first first && "$SWEEP" run first.yaml --db first.db --quiet &&
	kill "$server" && { wait_gone "$server" || :; } &&
	same last bps end.sum_received.bits_per_second && same last sndbuf start.sndbuf_actual &&
	same first bps end.sum_received.bits_per_second && same first sndbuf start.sndbuf_actual
'
