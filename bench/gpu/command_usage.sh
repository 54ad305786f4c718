#!/bin/bash
# command_usage.sh: on a GPU host, what a command cell's peak RSS counts: Linux counts in a program's peak
# that of the process that started it, and the executor of a CUDA build has initialised the driver. Runs
# /usr/bin/python3 (-c pass, and one holding 200 MB) as command cells and under GNU time, and prints the
# executor's own resident size as its command sees it. The CPU twin is tests/e2e/t0575-commands.sh (its
# peak RSS against GNU time). Run after bench/gpu/vendor.sh here, with vendor/ copied along.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=command_usage
. tests/gpu/lib.sh
step build
build

step "the executor as its command sees it (its parent)"
cat >"$R/parent.yaml" <<'Y'
sweep: parent
command: [sh, -c, 'grep -E "^(VmHWM|VmRSS|RssAnon|RssFile)" /proc/$PPID/status']
Y
$S run "$R/parent.yaml" --db "$R/parent.db" --quiet
q "$R/parent.db" "SELECT stdout FROM results"

step "peak RSS (kB): command cells against GNU time"
for prog in "pass" "b = bytearray(200 * 2 ** 20)"; do
	printf 'sweep: rss\ncommand: [/usr/bin/python3, -c, "%s"]\nruns: 5\n' "$prog" \
		>"$R/rss.yaml"
	rm -f "$R/rss.db"*
	$S run "$R/rss.yaml" --db "$R/rss.db" --quiet
	echo "python3 -c '$prog': sweep $($S sql "$R/rss.db" "SELECT peak_rss / 1024 FROM v_results" --csv | tail -1)" \
		"GNU time $(/usr/bin/time -f %M /usr/bin/python3 -c "$prog" 2>&1)"
done
