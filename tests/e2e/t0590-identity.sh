#!/bin/bash
# t0590-identity: a command sweep's identity holds the content of the files it runs and reads (its program
# found as spawn finds it, the files its arguments name, inputs:), so an edited program stops the run; each
# result keeps what it was measured under, which report --conditions and --ledger print.
. tests/e2e/lib.sh

hash_of() { echo "sha256:$(sha256sum "$1" | cut -d" " -f1)"; }

cat >"$T/prog.sh" <<'Y'
echo "t=$1"
Y
for v in 1 2; do echo "echo v=$v" >"$T/prog_$v.sh"; done
mkdir -p "$T/sub"
echo 1 >"$T/sub/data.txt"
printf '%s\n' "sweep: id" "command: [sh, prog.sh, '{n}']" "params: {n: [1, 2]}" 'metrics: {t: "t=([0-9]+)"}' \
	>"$T/id.yaml"
printf '%s\n' "sweep: each" "command: [sh, 'prog_{v}.sh']" "params: {v: [1, 2]}" 'metrics: {t: "v=([0-9])"}' \
	>"$T/each.yaml"
printf '%s\n' "sweep: in" "command: [cat, data.txt]" "inputs: [data.txt, big.bin]" 'metrics: {t: "([0-9]+)"}' \
	>"$T/sub/in.yaml"

test_expect_success 'an edited program stops the run (exit 2) naming it with its old and new hash' '
	"$SWEEP" run id.yaml --db id.db 2>err &&
	old=$(hash_of prog.sh) &&
	test "$(sql id.db "SELECT json_extract(inputs, '\''$.\"prog.sh\"'\'') FROM sweeps")" = "$old" &&
	test "$(sql id.db "SELECT json_extract(inputs, '\''$.sh'\'') FROM runs")" = "$(hash_of "$(command -v sh)")" &&
	echo "# edited" >>prog.sh &&
	test_expect_code 2 "$SWEEP" run id.yaml --db id.db 2>err &&
	grep -F "'\''prog.sh'\'': $old -> $(hash_of prog.sh)" err &&
	grep -q "Nothing was run" err &&
	test "$(sql id.db "SELECT count(*) FROM results")" = 2 &&
	test "$(sql id.db "SELECT count(*) FROM runs")" = 1
'

test_expect_success '--replan supersedes the results of the old program and measures again' '
	"$SWEEP" run id.yaml --db id.db --replan 2>err &&
	grep -q "2 results superseded, 2 cells to measure again" err &&
	test "$(sql id.db "SELECT count(*) FROM results WHERE status = '\''superseded'\'' AND run = 1")" = 2 &&
	test "$(sql id.db "SELECT count(*) FROM results WHERE status = '\''ok'\'' AND run = 2")" = 2 &&
	new=$(hash_of prog.sh) &&
	test "$(sql id.db "SELECT json_extract(inputs, '\''$.\"prog.sh\"'\'') FROM runs WHERE id = 2")" = "$new" &&
	test "$(sql id.db "SELECT json_extract(inputs, '\''$.\"prog.sh\"'\'') FROM sweeps")" = "$new" &&
	"$SWEEP" run id.yaml --db id.db 2>err &&
	grep -q "this run: 0 results ok" err
'

test_expect_success 'a word with placeholders: each file it names once filled is part of the identity' '
	"$SWEEP" run each.yaml --db each.db 2>err &&
	test "$(sql each.db "SELECT json_extract(inputs, '\''$.\"prog_2.sh\"'\'') FROM sweeps")" = "$(hash_of prog_2.sh)" &&
	echo "# edited" >>prog_2.sh &&
	test_expect_code 2 "$SWEEP" run each.yaml --db each.db 2>err &&
	grep -F "'\''prog_2.sh'\'': " err &&
	! grep -F "prog_1.sh" err
'

test_expect_success 'inputs: from the spec folder; a file over 64 MiB by size and mtime, said; a change stops' '
	truncate -s 65M sub/big.bin &&
	touch -d "2026-01-02 03:04:05" sub/big.bin &&
	"$SWEEP" run sub/in.yaml --db in.db 2>err &&
	grep -q "sweep: in: .big.bin. is over 64 MiB: identified by its size and modification time" err &&
	test "$(sql in.db "SELECT json_extract(inputs, '\''$.\"big.bin\"'\'') FROM runs")" = \
		"size:68157440 mtime:$(stat -c %Y sub/big.bin).000000000" &&
	test "$(sql in.db "SELECT json_extract(inputs, '\''$.\"data.txt\"'\'') FROM runs")" = "$(hash_of sub/data.txt)" &&
	echo 2 >sub/data.txt &&
	test_expect_code 2 "$SWEEP" run sub/in.yaml --db in.db 2>err &&
	grep -F "'\''data.txt'\'': " err &&
	"$SWEEP" run sub/in.yaml --db in.db --replan 2>err &&
	touch -d "2026-01-03 03:04:05" sub/big.bin &&
	test_expect_code 2 "$SWEEP" run sub/in.yaml --db in.db 2>err &&
	grep -F "'\''big.bin'\'': size:68157440 mtime:" err &&
	rm sub/big.bin &&
	test_expect_code 2 "$SWEEP" run sub/in.yaml --db in.db 2>err &&
	grep -q "sub/in.yaml: inputs: .big.bin. is not a file that can be read" err
'

test_expect_success 'each run keeps the version and commit of sweep; each worker its conditions as read here' '
	"$SWEEP" --version >v &&
	test "$(sql id.db "SELECT DISTINCT '\''sweep '\'' || version || '\'' commit '\'' || revision FROM runs")" = \
		"$(sed "s/ (schema.*//" v)" &&
	test "$(sql id.db "SELECT DISTINCT json_extract(conditions, '\''$.aslr'\'') FROM workers")" = \
		"$(cat /proc/sys/kernel/randomize_va_space)" &&
	test "$(sql id.db "SELECT count(*) FROM workers WHERE json_type(conditions, '\''$.loadavg'\'') IN ('\''real'\'', '\''integer'\'')
		AND json_extract(conditions, '\''$.loadavg'\'') >= 0")" = 3 &&
	test "$(sql id.db "SELECT count(*) FROM workers")" = 3 &&
	if test -r /sys/devices/system/cpu/isolated; then
		test "$(sql id.db "SELECT DISTINCT json_extract(conditions, '\''$.isolated_cpus'\'') FROM workers")" = \
			"$(cat /sys/devices/system/cpu/isolated)"
	fi &&
	gov=/sys/devices/system/cpu/cpufreq/policy0/scaling_governor &&
	if test -r $gov; then want=$(cat $gov); else want=; fi &&
	test "$(sql id.db "SELECT DISTINCT coalesce(json_extract(conditions, '\''$.cpu_governor'\''), '\'''\'') FROM workers")" = "$want"
'

test_expect_success 'report --conditions: the common conditions once, those that vary per row' '
	"$SWEEP" run id.yaml --db cond.db 2>err &&
	a=$(hash_of prog.sh) &&
	sql cond.db "UPDATE sweeps SET inputs = NULL" &&
	echo "# again" >>prog.sh &&
	b=$(hash_of prog.sh) &&
	"$SWEEP" run id.yaml --db cond.db --force --where "n = 2" 2>err &&
	"$SWEEP" report cond.db --rows n --metric t --conditions --format csv >out &&
	grep -x "file sh,$(hash_of "$(command -v sh)")" out &&
	grep -x "aslr,$(cat /proc/sys/kernel/randomize_va_space)" out &&
	! grep -q "^file prog.sh," out &&
	grep -q "^n,results,file prog.sh" out &&
	grep -x "1,1,$a.*" out &&
	grep -x "2,3,$b.*" out &&
	"$SWEEP" report cond.db --rows n --metric t --conditions --out c.md &&
	test "$(grep -c "^| file prog.sh " c.md)" = 0 &&
	grep -q "^| n  *| results | file prog.sh" c.md &&
	grep -q "^median of t over passes" c.md &&
	grep -q "^measured under: conditions common to all 2 results of sweep id in cond.db" c.md
'

test_expect_success '--ledger: a line per number, value for value what sweep sql gives, with its conditions' '
	"$SWEEP" report cond.db --rows n --metric t --ledger l.csv >/dev/null &&
	"$SWEEP" report cond.db --rows n --metric t --ledger l.jsonl >/dev/null &&
	"$SWEEP" sql cond.db "SELECT m.result, c.key, m.value FROM metrics m JOIN results r ON r.id = m.result
		JOIN cells c ON c.id = r.cell WHERE m.name = '\''t'\'' AND r.status = '\''ok'\'' ORDER BY 1" --csv >want &&
	test "$(wc -l <l.csv)" = 3 &&
	a=$(sql cond.db "SELECT json_extract(inputs, '\''$.\"prog.sh\"'\'') FROM runs WHERE id = 1") &&
	b=$(hash_of prog.sh) &&
	python3 -c "
import csv, json
want = list(csv.reader(open(\"want\")))[1:]
led = list(csv.DictReader(open(\"l.csv\")))
assert [[r[\"result\"], r[\"key\"], r[\"value\"]] for r in led] == want, (led, want)
assert all(r[\"db\"] == \"cond.db\" and r[\"sweep\"] == \"id\" and r[\"metric\"] == \"t\" for r in led)
assert [r[\"file prog.sh\"] for r in led] == [\"$a\", \"$b\"], led
rows = [json.loads(l) for l in open(\"l.jsonl\")]
assert [[str(r[\"result\"]), r[\"key\"]] for r in rows] == [w[:2] for w in want], rows
assert [r[\"value\"] for r in rows] == [float(w[2]) for w in want]
assert [r[\"params\"] for r in rows] == [{\"n\": 1}, {\"n\": 2}]
aslr = int(open(\"/proc/sys/kernel/randomize_va_space\").read())
assert all(r[\"conditions\"][\"aslr\"] == aslr for r in rows)
assert [r[\"conditions\"][\"file prog.sh\"] for r in rows] == [\"$a\", \"$b\"]
"'
