#!/bin/bash
# Run every test program or script named on the command line; each prints "ok - ..." / "not ok - ..."
# lines. A program that exits non-zero without printing a "not ok" line counts one failure. Ends with
# the line "N passed, N failed" and exits non-zero when anything failed.
pass=0 fail=0
log=${TEST_LOGS:-build/test-logs}
mkdir -p "$log"
for t in "$@"; do
	name=$(echo "$t" | tr '/' '_')
	start=$(date +%s)
	case "$t" in
	*.sh) timeout 900 bash "$t" >"$log/$name.log" 2>&1 ;;
	*) timeout 300 "$t" >"$log/$name.log" 2>&1 ;;
	esac
	rc=$?
	p=$(grep -c '^ok - ' "$log/$name.log")
	f=$(grep -c '^not ok - ' "$log/$name.log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "not ok - $t exited $rc" >>"$log/$name.log"
	fi
	pass=$((pass + p)) fail=$((fail + f))
	printf '%-48s %4d passed %3d failed %4ds\n' "$t" "$p" "$f" $(($(date +%s) - start))
	[ "$f" = 0 ] || grep -E '^not ok - ' "$log/$name.log" | head -20 | sed 's/^/    /'
	[ "$f" = 0 ] || { echo "    --- last lines of $log/$name.log:"; tail -15 "$log/$name.log" | sed 's/^/    /'; }
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
