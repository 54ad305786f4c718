#!/bin/bash
# t0583-item-seconds: with items: and {item} in the command, each item's wall time is kept as its own
# seconds value (the median of its runs), so that report --compare pairs programs by item on time.
. tests/e2e/lib.sh

cat >"$T/wall.yaml" <<'Y'
sweep: wall
command: [sh, -c, 'sleep {item}; if [ {system} = slow ]; then sleep {item}; fi']
params:
  system: [slow, fast]
items: ["0.05", "0.15"]
Y

test_expect_success 'each item has its seconds: its run'\''s wall time, the cell'\''s own still the median' '
	"$SWEEP" run wall.yaml --db wall.db --quiet &&
	test "$(sql wall.db "SELECT count(*) FROM items WHERE metric = '\''seconds'\''")" = 4 &&
	# one run an item, in the order of items: the item'\''s seconds is that sample
	test "$(sql wall.db "SELECT count(*) FROM items i JOIN samples s ON s.result = i.result
		AND s.i = CASE i.item WHEN '\''0.05'\'' THEN 0 ELSE 1 END
		WHERE i.metric = '\''seconds'\'' AND i.value = s.seconds")" = 4 &&
	test "$(sql wall.db "SELECT count(*) FROM metrics m JOIN results r ON r.id = m.result
		WHERE m.name = '\''seconds'\'' AND m.value = r.median")" = 2 &&
	"$SWEEP" report wall.db --rows item --metric seconds --compare system=slow/fast --format csv >c.csv &&
	test "$(head -1 c.csv)" = "item,n,seconds_slow,seconds_fast,ratio,ci_lo,ci_hi" &&
	awk -F, "NR > 1 { if (\$2 != 1 || \$5 < 1.3) bad = 1; n++ } END { exit bad || n != 2 }" c.csv
'

# {{ and }} are literal braces: hyperfine's own {n} of --parameter-list, beside sweep's {ms}.
cat >"$T/braces.yaml" <<'Y'
sweep: braces
command: [hyperfine, -N, --runs, "3", --parameter-list, n, "1,2", --export-json, "{cell}.json",
          "sleep 0.0{{n}}{ms}"]
params:
  ms: [0, 5]
metrics:
  from: "{cell}.json"
  json: "results[*]"
  item: command
  mean: mean
Y

test_needs hyperfine hyperfine --version

test_expect_success '{{n}} reaches hyperfine as {n}: its parameter scan, an item a value, its means stored' '
	"$SWEEP" run braces.yaml --db braces.db --quiet &&
	test "$(sql braces.db "SELECT group_concat(item, \",\") FROM (SELECT DISTINCT item FROM items
		WHERE metric = '\''mean'\'' ORDER BY item)")" = "sleep 0.010,sleep 0.015,sleep 0.020,sleep 0.025" &&
	for f in *.json; do
		python3 -c "
import json, sys
for r in json.load(open(sys.argv[1]))[\"results\"]:
    print(r[\"command\"] + \"|\" + repr(r[\"mean\"]))" "$f" || return 1
	done | sort >want &&
	sql braces.db "SELECT item || \"|\" || value FROM items WHERE metric = '\''mean'\'' ORDER BY item" >got &&
	python3 -c "
import sys
w = dict(l.strip().split(\"|\") for l in open(\"want\"))
g = dict(l.strip().split(\"|\") for l in open(\"got\"))
assert w.keys() == g.keys() and all(abs(float(w[k]) - float(g[k])) <= 1e-12 * float(w[k]) for k in w), (w, g)"
'
