#!/bin/bash
# t0650-hosts-bind: `sweep hosts bind` answers for the servers of tests/data/topo-*.xml (every rank's GPU,
# cpus, NUMA node and sharing, as text and JSON), says what its numbers would hide, refuses bad input,
# and on this machine gives exactly the binding the workers of a live `sweep run` take.
. tests/e2e/lib.sh
test_needs mpirun command -v mpirun
D="$ROOT/tests/data"
MPIRUN="timeout -k 10 120 mpirun --bind-to none"
# Ranks of the live run: two where this machine has two cpus, so that they split it.
NP=$(( $(getconf _NPROCESSORS_ONLN) >= 2 ? 2 : 1 ))

cat >"$T/want-8" <<'EOF'
rank  gpu           cpus            numa  shared
   0  0000:18:00.0  0-13,112-125       0       1
   1  0000:2a:00.0  14-27,126-139      0       1
   2  0000:3a:00.0  28-41,140-153      0       1
   3  0000:5d:00.0  42-55,154-167      0       1
   4  0000:9a:00.0  56-69,168-181      1       1
   5  0000:ab:00.0  70-83,182-195      1       1
   6  0000:ba:00.0  84-97,196-209      1       1
   7  0000:db:00.0  98-111,210-223     1       1
EOF

# The 16 ranks of the 8-GPU server with SMT off: 7 cores each, package 0 holding ranks 0-3 and 8-11.
cat >"$T/want-16.json" <<'EOF'
[{"rank":0,"gpu":"0000:18:00.0","cpus":"0-6","numa":"0","shared":1},
 {"rank":1,"gpu":"0000:2a:00.0","cpus":"7-13","numa":"0","shared":1},
 {"rank":2,"gpu":"0000:3a:00.0","cpus":"14-20","numa":"0","shared":1},
 {"rank":3,"gpu":"0000:5d:00.0","cpus":"21-27","numa":"0","shared":1},
 {"rank":4,"gpu":"0000:9a:00.0","cpus":"56-62","numa":"1","shared":1},
 {"rank":5,"gpu":"0000:ab:00.0","cpus":"63-69","numa":"1","shared":1},
 {"rank":6,"gpu":"0000:ba:00.0","cpus":"70-76","numa":"1","shared":1},
 {"rank":7,"gpu":"0000:db:00.0","cpus":"77-83","numa":"1","shared":1},
 {"rank":8,"gpu":"0000:18:00.0","cpus":"28-34","numa":"0","shared":1},
 {"rank":9,"gpu":"0000:2a:00.0","cpus":"35-41","numa":"0","shared":1},
 {"rank":10,"gpu":"0000:3a:00.0","cpus":"42-48","numa":"0","shared":1},
 {"rank":11,"gpu":"0000:5d:00.0","cpus":"49-55","numa":"0","shared":1},
 {"rank":12,"gpu":"0000:9a:00.0","cpus":"84-90","numa":"1","shared":1},
 {"rank":13,"gpu":"0000:ab:00.0","cpus":"91-97","numa":"1","shared":1},
 {"rank":14,"gpu":"0000:ba:00.0","cpus":"98-104","numa":"1","shared":1},
 {"rank":15,"gpu":"0000:db:00.0","cpus":"105-111","numa":"1","shared":1}]
EOF

cat >"$T/live.yaml" <<'Y'
sweep: live
kernel: debug.fail
params:
  mode: ok
  i: [0, 1, 2, 3]
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2}
Y

# cpus_of: the cpus of each binding text on stdin ("cores 0 (cpus 0, numa 0)"), one a line.
cpus_of() { sed -E 's/.*cpus ([0-9,-]+)[,)].*/\1/'; }
# json_cpus: the cpus of each rank of a `hosts bind --json` answer on stdin, one a line.
json_cpus() { python3 -c 'import json, sys; print("\n".join(r["cpus"] for r in json.load(sys.stdin)))'; }

test_expect_success 'an 8-GPU server, 8 ranks: each GPU of a package gets a quarter of its cores' '
	"$SWEEP" hosts bind --topology "$D/topo-2s8g.xml" --ranks-per-node 8 >out 2>err &&
	cmp want-8 out &&
	test ! -s err
'

test_expect_success '--json: one object of rank, gpu, cpus, numa and shared per rank, by value' '
	"$SWEEP" hosts bind --topology "$D/topo-2s8g-nosmt.xml" --ranks-per-node 16 --gpus auto --json >out &&
	cmp want-16.json out &&
	python3 -c "import json, sys; a = json.load(open(\"out\")); sys.exit(not all(sorted(r) ==
		[\"cpus\", \"gpu\", \"numa\", \"rank\", \"shared\"] for r in a) or len(a) != 16)"
'

test_expect_success 'the notes: no GPU, a GPU the topology lacks, cpus shared, ranks left unbound' '
	"$SWEEP" hosts bind --topology "$D/topo-asym.xml" --ranks-per-node 2 >out &&
	test "$(grep -c "^ *[01]  *-  " out)" = 2 &&
	grep -qx "note: no GPU (the topology has no NVIDIA display or 3D controller): the ranks split the whole machine" out &&
	"$SWEEP" hosts bind --topology "$D/topo-2s8g.xml" --ranks-per-node 2 --gpus 18:00.0,0000:77:00.0 >out &&
	grep -q "^   1  0000:77:00.0  0-223         0-1        2$" out &&
	grep -qx "note: GPU 0000:77:00.0 has no locality in the topology: its ranks (1) split the whole machine" out &&
	"$SWEEP" hosts bind --topology "$D/topo-1s4g.xml" --ranks-per-node 40 >out &&
	grep -qx "note: ranks 0-39: 40 ranks on 32 cpus, up to 2 on one" out &&
	"$SWEEP" hosts bind --topology "$D/topo-1s4g.xml" --ranks-per-node 65 --json >out 2>err &&
	test "$(json_cpus <out | sort -u)" = 0-63 &&
	grep -qx "sweep: warning: 65 ranks on 64 online cpus: sweep run leaves them unbound (it pins ranks only when each can have a cpu of its own)" err
'

test_expect_success 'bad input: exit 2 and what is wrong' '
	test_expect_code 2 "$SWEEP" hosts bind --topology nope.xml --ranks-per-node 2 2>err &&
	grep -q "^sweep: cannot read the topology .nope.xml.: No such file or directory$" err &&
	test_expect_code 2 "$SWEEP" hosts bind --topology live.yaml --ranks-per-node 2 2>err &&
	grep -q "^sweep: cannot load the topology .live.yaml.: not an hwloc XML file" err &&
	test_expect_code 2 "$SWEEP" hosts bind --ranks-per-node 2 --gpus 0000:1b:00.0,1g:00.0 2>err &&
	grep -q "^sweep: --gpus takes auto or PCI bus ids such as 0000:1b:00.0, separated by commas, not .1g:00.0.$" err &&
	test_expect_code 2 "$SWEEP" hosts bind --ranks-per-node 0 2>err &&
	grep -q "^sweep: --ranks-per-node takes a number from 1 to 4096, not .0.$" err &&
	test_expect_code 2 "$SWEEP" hosts bind --topology "$D/topo-2s8g.xml" 2>err &&
	grep -q "^sweep: .sweep hosts bind. needs --ranks-per-node N$" err &&
	"$SWEEP" hosts --help >help &&
	grep -q "sweep hosts bind --ranks-per-node N \[--topology FILE.xml\]" help
'

test_expect_success 'this machine: the answer is the binding the workers of a live run take' '
	"$SWEEP" hosts bind --ranks-per-node 1 --json | json_cpus >want1 &&
	"$SWEEP" run live.yaml --db l1.db 2>/dev/null &&
	sql l1.db "SELECT binding FROM workers ORDER BY rank" | cpus_of >got1 &&
	cmp want1 got1 &&
	"$SWEEP" hosts bind --ranks-per-node $NP --json | json_cpus >want &&
	$MPIRUN -np $NP "$SWEEP" run live.yaml --db l2.db 2>/dev/null &&
	sql l2.db "SELECT binding FROM workers ORDER BY rank" >bindings &&
	cpus_of <bindings >got &&
	cmp want got &&
	test "$(wc -l <got)" = $NP
'
