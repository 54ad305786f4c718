#!/bin/bash
# conditions.sh: on a GPU host, the conditions each worker records at its start (workers.conditions) against
# what nvidia-smi says of the same card: driver, SM and memory clocks, application clocks and their defaults,
# the power limit in force; and the report's --conditions block. The CPU twin is tests/e2e/t0590-identity.sh
# (ASLR, load average, isolated CPUs, governor against /proc and /sys). Run after bench/gpu/vendor.sh here,
# with vendor/ copied along. Reads the card's state only.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=conditions
. tests/gpu/lib.sh
step build
build

step "a GPU sweep's conditions"
cat >"$R/cond.yaml" <<'Y'
sweep: cond
kernel: debug.gpu
params: {i: [0, 1]}
timing: {min_samples: 5, min_time: 0.01, max_noise: 1, timeout: 5}
Y
$S run "$R/cond.yaml" --db "$R/cond.db" --quiet
q "$R/cond.db" "SELECT w.rank, w.gpu, w.gpu_uuid, w.conditions FROM workers w"
q "$R/cond.db" "SELECT id, version, revision FROM runs"
nvidia-smi --query-gpu=uuid,driver_version,clocks.sm,clocks.mem,clocks.applications.graphics,clocks.applications.memory,clocks.default_applications.graphics,clocks.default_applications.memory,enforced.power.limit \
	--format=csv,noheader,nounits

step "recorded against nvidia-smi (one line per GPU; want: every field 'same')"
$S sql "$R/cond.db" "SELECT w.gpu_uuid, json_extract(w.conditions, '\$.driver'),
	json_extract(w.conditions, '\$.sm_app_clock_mhz'), json_extract(w.conditions, '\$.mem_app_clock_mhz'),
	json_extract(w.conditions, '\$.power_limit_w'), json_extract(w.conditions, '\$.app_clocks_set')
	FROM workers w" --csv | tail -n +2 | while IFS=, read -r uuid drv sm_app mem_app power set; do
	IFS=, read -r _ sdrv _ _ ssm_app smem_app sdef_sm sdef_mem spower < <(nvidia-smi --id="$uuid" \
		--query-gpu=uuid,driver_version,clocks.sm,clocks.mem,clocks.applications.graphics,clocks.applications.memory,clocks.default_applications.graphics,clocks.default_applications.memory,enforced.power.limit \
		--format=csv,noheader,nounits | tr -d ' ')
	# JSON's true and false come out of json_extract as 1 and 0
	case $set in 1 | true) set=true ;; *) set=false ;; esac
	want_set=false
	[ "$ssm_app" != "$sdef_sm" ] || [ "$smem_app" != "$sdef_mem" ] && want_set=true
	same() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 == b + 0 || a == b) ? "same" : "DIFFERENT " a " vs " b }'; }
	echo "$uuid driver $(same "$drv" "$sdrv") sm_app $(same "$sm_app" "$ssm_app") mem_app $(same "$mem_app" "$smem_app")" \
		"power $(same "$power" "$spower") app_clocks_set $( [ "$set" = "$want_set" ] && echo same || echo "DIFFERENT $set vs $want_set")"
done | tee "$R/cmp.txt"
fail=0
grep -q DIFFERENT "$R/cmp.txt" && fail=1

step "report --conditions"
$S report "$R/cond.db" --rows i --metric seconds --conditions || fail=1
exit $fail
