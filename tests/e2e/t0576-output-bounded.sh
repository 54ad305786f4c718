#!/bin/bash
# t0576-output-bounded: nothing a program prints hangs a command cell or loses a value. A long output is
# read in linear time (160,000 JSON lines, one object of 100,000 keys: seconds, where they took minutes); a
# regex that backtracks past PCRE2's limits fails the cell at its first attempt naming itself and the line
# (never "hung"); values near the largest double are averaged, subnormal values stored, and a value no
# double holds fails the cell naming it.
. tests/e2e/lib.sh

# The cell's wall time is bounded by timeout below: a quadratic reader took over 133 s on the lines.
test_expect_success '160,000 JSON lines and one object of 100,000 keys: every value read, in seconds' '
	python3 -c "
import json
with open(\"lines.txt\", \"w\") as f:
    for i in range(160000):
        f.write(json.dumps({\"item\": \"i%d\" % i, \"v\": i * 0.5}) + \"\n\")
with open(\"obj.txt\", \"w\") as f:
    f.write(json.dumps({\"k%d\" % i: i for i in range(100000)}) + \"\n\")" &&
	printf "sweep: lines\ncommand: [cat, %s]\nmetrics: json\ntimeout: 60\n" "$T/lines.txt" >lines.yaml &&
	printf "sweep: obj\ncommand: [cat, %s]\nmetrics: json\ntimeout: 60\n" "$T/obj.txt" >obj.yaml &&
	timeout 60 "$SWEEP" run lines.yaml --db lines.db --quiet &&
	timeout 60 "$SWEEP" run obj.yaml --db obj.db --quiet &&
	test "$(sql lines.db "SELECT count(*) || \"|\" || sum(value) FROM items")" = "160000|6399960000.0" &&
	test "$(sql lines.db "SELECT value FROM items WHERE item = '\''i159999'\''")" = 79999.5 &&
	test "$(sql lines.db "SELECT value FROM metrics WHERE name = '\''v'\''")" = 39999.75 &&
	test "$(sql obj.db "SELECT count(*) FROM metrics WHERE name LIKE '\''k%'\''")" = 100000 &&
	test "$(sql obj.db "SELECT value FROM metrics WHERE name = '\''k99999'\''")" = 99999.0
'

test_expect_success 'a regex past its limits fails the cell at its first attempt, naming it and the line' '
	python3 -c "open(\"a.txt\", \"w\").write(\"a\" * 1000000 + \"cb\n\")" &&
	printf "%s\n" "sweep: rx" "command: [cat, $T/a.txt]" "metrics: {x: \"(a+a+)+b\"}" "max_attempts: 3" \
		"timeout: 60" >rx.yaml &&
	test_expect_code 3 timeout 60 "$SWEEP" run rx.yaml --db rx.db 2>err &&
	sql rx.db "SELECT state || attempts || \"|\" || error FROM cells" >rx.out &&
	grep -qF "quarantined1|metric '\''x'\'': regex '\''(a+a+)+b'\'' stopped at its limits (match limit exceeded): it backtracks too much on this line (stdout line 1: '\''aaaaaaaa" rx.out &&
	printf "%s\n" "sweep: rx2" "command: [sh, -c, \"head -c 100000 /dev/zero | tr '\''\\\\0'\'' a; echo cb\"]" \
		"metrics: {x: \"(a|aa)*b\"}" "timeout: 60" >rx2.yaml &&
	test_expect_code 3 timeout 60 "$SWEEP" run rx2.yaml --db rx2.db 2>err &&
	sql rx2.db "SELECT state || attempts || \"|\" || error FROM cells" >rx2.out &&
	grep -q "^quarantined1|metric .x.: regex .(a|aa)\*b. stopped at its limits" rx2.out
'

test_expect_success 'non-capturing groups: PCRE2 syntax' '
	printf "%s\n" "sweep: nc" "command: [echo, \"took 12.5 ms\"]" \
		"metrics: {t: {regex: \"took (?:about )?([0-9.]+ (?:ms|s))\", unit: s}}" >nc.yaml &&
	"$SWEEP" run nc.yaml --db nc.db --quiet &&
	test "$(sql nc.db "SELECT value FROM metrics WHERE name = '\''t'\''")" = 0.0125
'

cat >"$T/big.sh" <<'SH'
echo '{"v": 1.7e308, "s": 4.9e-324}'
echo '{"v": 1.7e308, "s": 4.9e-324}'
SH

test_expect_success 'two values of 1.7e308 average to 1.7e308; a subnormal value is stored, not NULL' '
	printf "%s\n" "sweep: big" "command: [sh, $T/big.sh]" "metrics: json" >big.yaml &&
	"$SWEEP" run big.yaml --db big.db --quiet &&
	test "$(sql big.db "SELECT status FROM results")" = ok &&
	test "$(sql big.db "SELECT name || \"=\" || quote(value) FROM metrics WHERE name <> '\''seconds'\'' ORDER BY name")" = \
		"$(printf "s=4.94065645841247e-324\nv=1.7e+308")"
'

test_expect_success 'a declared path metric past the largest double fails the cell, naming it' '
	printf "%s\n" "sweep: over" "command: [echo, \"{\\\"size\\\": 1e308, \\\"unit\\\": \\\"GB\\\"}\"]" \
		"metrics: {json: ., size: {path: size, unit_path: unit, unit: B}}" >over.yaml &&
	test_expect_code 3 "$SWEEP" run over.yaml --db over.db 2>err &&
	test "$(sql over.db "SELECT state || attempts || \"|\" || error FROM cells")" = \
		"quarantined1|metric '\''size'\'': '\''size'\'' out of range in '\''B'\'' (over 1.8e308) in record 1 of '\''.'\'' (stdout line 1: {\"size\":1e308,\"unit\":\"GB\"})" &&
	test "$(sql over.db "SELECT count(*) FROM metrics")" = 0
'


test_expect_success 'a line over 1 MiB fails the cell naming its number and the limit, never skipped' '
	printf "%s\n" "sweep: long" \
		"command: [sh, -c, \"echo t=1; head -c 1100000 /dev/zero | tr '\''\\\\0'\'' x; echo; echo t=5\"]" \
		"metrics: {t: {regex: \"^t=([0-9]+)\", match: last}}" "max_attempts: 3" >long.yaml &&
	test_expect_code 3 "$SWEEP" run long.yaml --db long.db 2>err &&
	test "$(sql long.db "SELECT state || attempts || \"|\" || error FROM cells")" = \
		"quarantined1|metric '\''t'\'': stdout line 2 is over 1 MiB, the longest line a regex reads" &&
	test "$(sql long.db "SELECT count(*) FROM metrics")" = 0
'
