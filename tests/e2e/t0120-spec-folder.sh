#!/bin/bash
# t0120-spec-folder: a spec's relative paths mean its own folder (db:, the program, the files a command
# names, inputs:, a metrics from: file), whatever folder the run starts from; workdir: moves where commands
# run; text axes keep the spec's order in tables, pivots and plots, numeric axes sort as numbers.
. tests/e2e/lib.sh

mkdir -p "$T/specs/data" "$T/elsewhere"
printf 'x%.0s' $(seq 1 1000) >"$T/specs/data/data-1k.bin"
printf 'y%.0s' $(seq 1 3000) >"$T/specs/data-3k.bin"
cat >"$T/specs/size.sh" <<'EOF2'
#!/bin/sh
# the bytes of the file it is given, on stdout and into a file beside it
n=$(wc -c <"$1") && echo "bytes=$n" && echo "{\"bytes\": $n}" >"out-$2.json"
EOF2
chmod +x "$T/specs/size.sh"
cat >"$T/specs/hash.yaml" <<'Y'
sweep: hash
db: hash.db
command: [./size.sh, "{file}", "{cell}"]
params:
  file: [data/data-1k.bin, data-3k.bin]
inputs: [data/data-1k.bin]
metrics: {bytes: "^bytes=([0-9]+)$"}
Y

test_expect_success 'run from another folder: every relative path of the spec means the spec'\''s folder' '
	cd elsewhere &&
	"$SWEEP" run ../specs/hash.yaml 2>err &&
	test "$(head -n 1 err)" = "sweep: hash: commands run in $T/specs" &&
	grep -q "2 cells ok, 0 quarantined, 0 not run" err &&
	test ! -e hash.db && test -f ../specs/hash.db &&
	test "$(sql ../specs/hash.db "SELECT group_concat(v, \" \") FROM (SELECT json_extract(c.params, \"$.file\")
		|| \"=\" || m.value AS v FROM metrics m JOIN results r ON r.id = m.result JOIN cells c
		ON c.id = r.cell WHERE m.name = \"bytes\" ORDER BY 1)")" = "data-3k.bin=3000.0 data/data-1k.bin=1000.0" &&
	test "$(ls ../specs/out-*.json | wc -l)" = 2 && test "$(ls)" = err &&
	# the program and the inputs file are part of the sweep'\''s identity, found in that folder too
	test "$(sql ../specs/hash.db "SELECT json_extract(inputs, \"$.\"\"./size.sh\"\"\") IS NOT NULL
		AND json_extract(inputs, \"$.\"\"data/data-1k.bin\"\"\") IS NOT NULL FROM runs")" = 1
'

test_expect_success 'the same run from the spec'\''s own folder finds the same database, with nothing left' '
	cd specs && "$SWEEP" run hash.yaml 2>err &&
	grep -q "this run: 0 results ok" err &&
	test "$(sql hash.db "SELECT count(*) FROM runs")" = 2
'

cat >"$T/specs/wd.yaml" <<'Y'
sweep: wd
db: wd.db
workdir: data
command: [sh, -c, "echo bytes=$(wc -c < {file}); pwd > where.txt"]
params:
  file: [data-1k.bin]
inputs: [data-1k.bin]
metrics: {bytes: "bytes=([0-9]+)"}
Y

test_expect_success 'workdir: commands run there (relative to the spec'\''s folder), the database stays beside the spec' '
	cd elsewhere && "$SWEEP" run ../specs/wd.yaml 2>err &&
	test "$(head -n 1 err)" = "sweep: wd: commands run in $T/specs/data" &&
	test "$(sql ../specs/wd.db "SELECT value FROM metrics WHERE name = '\''bytes'\''")" = 1000.0 &&
	test "$(cat ../specs/data/where.txt)" = "$T/specs/data"
'

test_expect_success 'a workdir that is not there: refused before any cell, naming it' '
	sed "s/^workdir: data/workdir: nowhere/" specs/wd.yaml >specs/wd2.yaml &&
	test_expect_code 2 "$SWEEP" run specs/wd2.yaml --db wd2.db 2>err &&
	grep -q "the folder '\''workdir'\'' names as the commands run in, '\''specs/nowhere'\'': No such file or directory" err &&
	test "$(sql wd2.db "SELECT count(*) FROM results" 2>/dev/null || echo none)" != 1
'

cat >"$T/sizes.yaml" <<'Y'
sweep: sizes
command: [sh, -c, "echo v={v}"]
params:
  size: [small, medium, large, huge]
  blk: [1M, 4M, 16M, 64M]
  n: [10, 2]
  v: 3
metrics: {v: "v=([0-9]+)"}
Y

test_expect_success 'text axes keep the spec'\''s order in rows, pivot columns and formats; numbers sort as numbers' '
	"$SWEEP" run sizes.yaml --db sizes.db 2>/dev/null &&
	"$SWEEP" report sizes.db --rows size,n --cols blk --metric v --format csv >pivot.csv 2>/dev/null &&
	test "$(head -n 1 pivot.csv)" = "size,n,blk=1M,blk=4M,blk=16M,blk=64M" &&
	test "$(sed 1d pivot.csv | cut -d, -f1,2 | tr "\n" " ")" = \
		"small,2 small,10 medium,2 medium,10 large,2 large,10 huge,2 huge,10 " &&
	"$SWEEP" report sizes.db --rows blk --pool size,n --metric v --format json >rows.json 2>/dev/null &&
	test "$(python3 -c "import json,sys; print(\" \".join(r[\"blk\"] for r in json.load(open(\"rows.json\"))))")" = \
		"1M 4M 16M 64M" &&
	"$SWEEP" plot sizes.db --x size --y v --series blk --pool n --out p.svg >/dev/null 2>&1 &&
	test "$(grep -v "^#" p.dat | awk "NF { print \$3 }" | head -n 4 | tr "\n" " ")" = "small medium large huge " &&
	test "$(grep "^# " p.dat | sed 1d | tr "\n" " ")" = "# 1M # 4M # 16M # 64M "
'

test_expect_success 'a --where on a text axis still matches its values exactly' '
	"$SWEEP" report sizes.db --rows size --pool blk,n --where "size = '\''large'\''" --metric v --format csv >w.csv 2>/dev/null &&
	test "$(sed 1d w.csv | cut -d, -f1)" = large
'

