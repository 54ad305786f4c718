#!/bin/bash
# t0640-scale: the seed's 25-machine table on one machine. 25 hosts as network namespaces (one slot each),
# one mpirun across them: the read-bandwidth probe on every host, then a per: host sweep of the same
# kernel, and the share of each host's probed limit as a 25-row table with a summary per class (mean and
# 95 % t interval checked apart). Then a per: gpu sweep on `mpirun -np 64` (CPU only: one replica per
# rank) completes. Kept small (8 MiB reads, a few samples): the machine has two cores.
. tests/e2e/lib.sh
. tests/netns/lib.sh

test_needs "root (network namespaces)" test "$(id -u)" = 0
test_needs mpirun command -v mpirun
N=25
trap 'netns_down; rm -rf "$T"' EXIT
NETNS_SLOTS=1 netns_up $N "$T" || { echo "not ok - setup: network namespaces"; exit 1; }
export SWEEP_NETNS_MAP=$NETNS_MAP
MPIRUN="timeout -k 10 150 mpirun --bind-to none $(netns_mpirun_opts) --hostfile $NETNS_HOSTFILE"

# Three classes: hosts 1-10 consumer, 11-20 server, 21-25 cloud.
{
	echo "hosts:"
	for i in $(seq 1 $N); do
		if [ $i -le 10 ]; then c=consumer; elif [ $i -le 20 ]; then c=server; else c=cloud; fi
		echo "  - {name: $(netns_name $i), address: $(netns_addr $i), labels: {class: $c}}"
	done
} >"$T/inv.yaml"

cat >"$T/read.yaml" <<'Y'
sweep: read
kernel: cpu.read
params: {bytes: 8M}
per: host
timing: {min_samples: 6, min_time: 0, precision: 1e9, timeout: 20, warmup: 0}
Y

test_expect_success "one mpirun over $N hosts: the probe, then a per: host sweep" '
	start=$(date +%s) &&
	$MPIRUN -np $N "$SWEEP" hosts probe --cpu --read-bytes 8M --db s.db >probe.out 2>probe.err &&
	tail -1 probe.out &&
	test "$(sql s.db "SELECT count(DISTINCT host) FROM probes WHERE name = '\''host_read_gbs'\''
		AND value > 0")" = $N &&
	$MPIRUN -np $N "$SWEEP" run read.yaml --db s.db --inventory inv.yaml 2>run.err &&
	tail -1 run.err &&
	echo "probe and sweep: $(($(date +%s) - start)) s" &&
	test "$(sql s.db "SELECT count(*) FROM cells WHERE sweep = '\''read'\'' AND state = '\''ok'\''")" = $N &&
	test "$(sql s.db "SELECT count(*) FROM v_results WHERE sweep = '\''read'\'' AND status = '\''ok'\''
		AND host = replica")" = $N &&
	test "$(sql s.db "SELECT count(DISTINCT json_extract(facts, '\''$.labels.class'\'')) FROM hosts")" = 3
'

test_expect_success 'the 25-row share table with class summaries, values checked apart' '
	"$SWEEP" report s.db --rows host --metric gbs --limit host_read_gbs --summary=label.class \
		--format csv >share.csv 2>share.err &&
	cat share.csv &&
	head -1 share.csv | grep -qx "stat,host,label.class,n,gbs,limit,share" &&
	test "$(grep -c "^,swp" share.csv)" = $N &&
	# each row: its limit is its host'\''s probe, and the share is gbs / limit
	sql s.db "SELECT h.hostname, p.value FROM probes p JOIN hosts h ON h.id = p.host" >limits &&
	python3 - <<-\EOF &&
	import csv
	lim = dict(l.strip().split("|") for l in open("limits"))
	rows = [r for r in csv.DictReader(open("share.csv")) if r["host"].startswith("swp")]
	assert len(rows) == 25 and len({r["host"] for r in rows}) == 25, rows
	for r in rows:
	    want = float(lim[r["host"]])
	    assert abs(float(r["limit"]) / want - 1) < 1e-5, (r, want)
	    assert abs(float(r["share"]) / (float(r["gbs"]) / want) - 1) < 1e-4, r
	EOF
	# one row a host: the summary is over hosts, whether each row or each host is the unit
	python3 "$ROOT/tests/summary_check.py" share.csv --group label.class --unit host >check &&
	cat check &&
	# 3 classes x 7 statistics x 3 columns (gbs, limit, share)
	grep -qx "checked 63 summary cells" check &&
	test "$(grep "^n," share.csv | cut -d, -f3,5 | tr "\n" " ")" = "cloud,5 consumer,10 server,10 " &&
	! grep -q "warning\|share a host" share.err
'

cat >"$T/g.yaml" <<'Y'
sweep: g
kernel: sleep
params: {ms: [0, 1]}
per: gpu
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 5, warmup: 0}
Y

test_expect_success 'per: gpu on mpirun -np 64 (CPU only): a replica per rank, every cell ok' '
	timeout -k 10 150 mpirun --bind-to none -np 64 "$SWEEP" run g.yaml --db g.db 2>err &&
	tail -1 err &&
	test "$(sql g.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 128 &&
	test "$(sql g.db "SELECT count(DISTINCT replica) FROM cells WHERE state = '\''ok'\''")" = 64 &&
	# each replica measured by one worker, both of its cells
	test "$(sql g.db "SELECT count(*) FROM (SELECT c.replica FROM results r JOIN cells c ON c.id = r.cell
		WHERE r.status = '\''ok'\'' GROUP BY c.replica HAVING count(DISTINCT r.worker) = 1
		AND count(*) = 2)")" = 64 &&
	test "$(sql g.db "SELECT count(DISTINCT worker) FROM results WHERE status = '\''ok'\''")" = 64
'
