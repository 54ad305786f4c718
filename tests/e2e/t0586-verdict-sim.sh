#!/bin/bash
# t0586-verdict-sim: sweep compare's verdicts on simulated data of known truth, end to end. Per row (a cell)
# 20 items, 3 passes a side; an item's value is its own level times a shift its whole pass shares (a run on
# a rented machine) times its own noise of 3 %. A/A (one program twice) with a 2 % run shift: at most 5 of
# 100 rows may be called faster or slower; a true 5 % slowdown with a 0.5 % run shift: at least 90 of 100
# rows slower. The test prints both rates (docs/report-statistics.md gives them).
. tests/e2e/lib.sh

# The data, seeded: data/SET/ROW/PASS holds the 20 lines a pass of the row prints. SET is aa-base, aa-new
# (the same truth), slow-base and slow-new (5 % slower).
cat >"$T/gen.py" <<'EOF'
import os, random
rng = random.Random(int(os.environ.get("SIM_SEED", "48")))
for name, slow, shift in (("aa", 1.0, 0.02), ("slow", 1.05, 0.005)):
    level = [[rng.uniform(1, 10) for _ in range(20)] for _ in range(100)]
    for side, factor in (("base", 1.0), ("new", slow)):
        for row in range(100):
            os.makedirs(f"data/{name}-{side}/{row}", exist_ok=True)
            for p in range(3):
                s = 1 + rng.gauss(0, shift)
                with open(f"data/{name}-{side}/{row}/{p}", "w") as f:
                    for i, mu in enumerate(level[row]):
                        v = mu * factor * s * (1 + rng.gauss(0, 0.03))
                        f.write('{"item": "i%d", "t": %.6f}\n' % (i, v))
EOF
# sim.sh ROW prints the next pass of ROW from the set named in the file set.
cat >"$T/sim.sh" <<'EOF'
#!/bin/sh
d=$(dirname "$0"); set=$(cat "$d/set"); mkdir -p "$d/state/$set"
f="$d/state/$set/$1"; n=$(cat "$f" 2>/dev/null || echo 0); echo $((n + 1)) >"$f"
cat "$d/data/$set/$1/$n"
EOF
cat >"$T/sim.yaml" <<EOF
sweep: sim
command: [sh, $T/sim.sh, "{row}"]
metrics: json
params:
  row: [$(seq -s ", " 0 99)]
repeat: 3
EOF

test_expect_success 'setup: four databases of 100 rows, 3 passes of 20 items each' '
	python3 gen.py &&
	for s in aa-base aa-new slow-base slow-new; do
		echo $s >set && "$SWEEP" run sim.yaml --db $s.db 2>err && grep -q "300 cells ok" err || return 1
	done &&
	test "$(sql aa-new.db "SELECT count(*) FROM items")" = 6000
'

# rate.sh CSV: "slower faster unchanged inconclusive" counts of its verdict column
cat >"$T/rate.sh" <<'EOF'
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verdict") v = i }
	NR > 1 { n[$v]++ } END { printf "%d %d %d %d\n", n["slower"], n["faster"], n["unchanged"], n["inconclusive"] }' "$1"
EOF

test_expect_success 'A/A, 3 % item noise, 2 % run shift: at most 5 of 100 rows faster or slower' '
	"$SWEEP" compare aa-base.db aa-new.db --metric t --better lower --format csv >aa.csv 2>err &&
	test "$(sed 1d aa.csv | wc -l)" = 100 &&
	set -- $(sh rate.sh aa.csv) &&
	echo "A/A: $1 slower, $2 faster, $3 unchanged, $4 inconclusive of 100 rows" &&
	test $(($1 + $2 + $3 + $4)) = 100 &&
	test $(($1 + $2)) -le 5
'

test_expect_success 'a true 5 % slowdown, 0.5 % run shift: at least 90 of 100 rows slower' '
	"$SWEEP" compare slow-base.db slow-new.db --metric t --better lower --format csv >slow.csv 2>err &&
	set -- $(sh rate.sh slow.csv) &&
	echo "5 % slower: $1 slower, $2 faster, $3 unchanged, $4 inconclusive of 100 rows" &&
	test $(($1 + $2 + $3 + $4)) = 100 &&
	test "$1" -ge 90 && test "$2" = 0
'
