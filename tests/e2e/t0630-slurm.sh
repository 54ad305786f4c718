#!/bin/bash
# t0630-slurm: a real one-node Slurm cluster (munge, slurmctld, slurmd started here, as root): `sweep submit`
# renders the job script (--dry-run), submits it and prints the job id; the job fills the database and
# `sweep status` shows its state; an array of 3 shards plus `sweep merge` gives the cells of one job; a job
# requeued mid-run (scontrol requeue) resumes and ends with every cell exactly once.
. tests/e2e/lib.sh
. tests/slurm/lib.sh

test_needs "root (a Slurm cluster)" test "$(id -u)" = 0
for p in munged slurmctld slurmd sbatch squeue scontrol mpirun; do
	test_needs "$p" command -v "$p"
done
trap 'slurm_down; rm -rf "$T"' EXIT
if ! slurm_up "$T/slurm"; then
	echo "not ok - setup: slurm daemons"
	tail -20 "$T"/slurm/log/* 2>/dev/null
	exit 1
fi
# A job's environment is the submitter's: Open MPI as root, oversubscribed.
cd "$T"

cat >grid.yaml <<'Y'
sweep: grid
kernel: sleep
params:
  ms: [0, 1, 2]
  jitter: [0, 0.5, 1, 1.5]
timing: {min_samples: 2, min_time: 0, max_noise: 1, timeout: 2}
Y

test_expect_success 'submit --dry-run prints the job script and submits nothing' '
	"$SWEEP" submit grid.yaml --db one.db --ntasks-per-node 2 --time 5:00 --dry-run >script &&
	cat script &&
	grep -qx "#SBATCH --job-name=sweep-grid" script &&
	grep -qx "#SBATCH --nodes=1" script &&
	grep -qx "#SBATCH --ntasks-per-node=2" script &&
	grep -qx "#SBATCH --time=5:00" script &&
	grep -qx "#SBATCH --requeue" script &&
	! grep -q "gpus-per-node" script &&
	! grep -q "{{" script &&
	grep -qx "#SBATCH --output=$T/grid-%j.log" script &&
	grep -qx "cd $T || exit 1" script &&
	# a sweep of kernels has the node to itself; each of the 2 ranks gets 1 of the 2 CPUs sinfo tells
	test "$(sinfo -h -o %c)" = 2 &&
	grep -qx "#SBATCH --exclusive" script &&
	grep -qx "#SBATCH --cpus-per-task=1" script &&
	# a single job: no shards, the database itself, no branch for arrays, no help for template editors
	grep -q "^mpirun .* $SWEEP run $T/grid.yaml --db $T/one.db  *--progress=60 --log \"\$log\"  *&$" script &&
	# Slurm signals the script: it hands them on to mpirun as SIGUSR1, and waits for it
	grep -qx "#SBATCH --signal=B:USR1@60" script &&
	grep -qx "trap '\''kill -USR1 \$mpirun 2>/dev/null'\'' TERM INT USR1" script &&
	grep -qx "while wait \"\$mpirun\"; rc=\$?; kill -0 \"\$mpirun\" 2>/dev/null; do :; done" script &&
	! grep -q "shard\|SLURM_ARRAY\|^if \|^##\|placeholder\|curly" script &&
	test "$(grep -c "^#" script)" = "$(grep -c "^#SBATCH " script | awk "{ print \$1 + 1 }")" &&
	bash -n script &&
	! test -e one.db &&
	test -z "$(squeue -h -o %i)"
'

test_expect_success 'submit --dry-run --array: shard databases, the task id from Slurm' '
	"$SWEEP" submit grid.yaml --db arr.db --array 3 --gpus-per-node 4 --partition p1 --account a1 \
		--dry-run >s2 2>err2 &&
	grep -qx "#SBATCH --array=0-2" s2 &&
	grep -qx "#SBATCH --gpus-per-node=4" s2 && grep -qx "#SBATCH --ntasks-per-node=4" s2 &&
	grep -qx "#SBATCH --partition=p1" s2 && grep -qx "#SBATCH --account=a1" s2 &&
	grep -q "^mpirun .* run $T/grid.yaml --db $T/arr.shard-\"\$SLURM_ARRAY_TASK_ID\".db --shard=\"\$SLURM_ARRAY_TASK_ID\"/3 --progress=60" s2 &&
	! grep -q "^if \|^##" s2 &&
	# no partition p1 for sinfo to tell the CPUs of: no --cpus-per-task, and a warning says so
	! grep -q "cpus-per-task" s2 &&
	grep -q "sinfo told no CPUs per node: no --cpus-per-task in the script (give --cpus-per-task N)" err2 &&
	test_expect_code 2 "$SWEEP" submit grid.yaml --partition "a b" --dry-run >out 2>err &&
	grep -qx "sweep: --partition .a b.: no spaces, quotes or ... on an #SBATCH line" err &&
	test ! -s out &&
	printf "#!/bin/sh\n{{sbatch}}\necho {{nope}}\n" >bad.sbatch &&
	test_expect_code 2 "$SWEEP" submit grid.yaml --template bad.sbatch --dry-run >out 2>err &&
	grep -qx "sweep: bad.sbatch:3: unknown placeholder .{{nope}}. (did you mean .{{name}}.?)" err &&
	test ! -s out &&
	test -z "$(squeue -h -o %i)"
'

cat >cmd.yaml <<'Y'
sweep: cmd
command: [echo, "{n}"]
params: {n: [1, 2]}
Y

test_expect_success 'submit --dry-run: --exclusive for kernels unless --no-exclusive, for commands when asked' '
	"$SWEEP" submit cmd.yaml --db c.db --dry-run >s3 &&
	! grep -q "exclusive" s3 &&
	# one rank on the node: both CPUs
	grep -qx "#SBATCH --cpus-per-task=2" s3 &&
	"$SWEEP" submit cmd.yaml --db c.db --exclusive --cpus-per-task 7 --dry-run >s4 &&
	grep -qx "#SBATCH --exclusive" s4 && grep -qx "#SBATCH --cpus-per-task=7" s4 &&
	"$SWEEP" submit grid.yaml --db one.db --no-exclusive --dry-run >s5 &&
	! grep -q "exclusive" s5 &&
	test_expect_code 2 "$SWEEP" submit grid.yaml --cpus-per-task 0 --dry-run 2>err &&
	grep -q "cpus-per-task takes a whole number from 1, not .0." err &&
	! test -e c.db && ! test -e one.db
'

test_expect_success 'sbatch refuses the job: exit 1, no database or shard left behind, an old one kept' '
	test_expect_code 1 "$SWEEP" submit grid.yaml --db gone.db --array 2 --partition nosuch >out 2>err &&
	cat err &&
	grep -q "sbatch failed" err && test ! -s out &&
	test -z "$(ls gone* 2>/dev/null)" && ! ls *.sbatch* *.sh 2>/dev/null &&
	"$SWEEP" plan grid.yaml --db kept.db >/dev/null 2>&1 &&
	ls kept*.db >before &&
	test_expect_code 1 "$SWEEP" submit grid.yaml --db kept.db --array 2 --partition nosuch >out 2>err &&
	ls kept*.db >after && cat after &&
	cmp before after && ! grep -q shard after &&
	test "$(sql kept.db "SELECT count(*) FROM cells WHERE state != '\''template'\''")" = 12
'

test_expect_success 'submit: a job id, the job runs the sweep, status shows the job' '
	job=$("$SWEEP" submit grid.yaml --db one.db --ntasks-per-node 2 --time 5:00 2>err) &&
	cat err && echo "job $job" &&
	echo "$job" | grep -qx "[0-9][0-9]*" &&
	echo "$job" >job1 &&
	test "$(slurm_wait "$job" 120)" = COMPLETED &&
	cat grid-$job.log &&
	test "$(sql one.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 12 &&
	test "$(sql one.db "SELECT count(*) FROM workers")" = 2 &&
	test "$(sql one.db "SELECT job, restarts FROM slurm_runs")" = "$job|0" &&
	test "$(sql one.db "SELECT job, shards FROM slurm_jobs")" = "$job|0" &&
	"$SWEEP" status one.db >st &&
	cat st &&
	grep -q "slurm jobs:" st &&
	test "$(sed -n "/^slurm jobs:/,\$p" st | awk -v j="$job" "\$1 == j { print \$2, \$4, \$5, \$6 }")" = \
		"grid 0 1 COMPLETED"
'

test_expect_success 'an array of 3 shards plus sweep merge: the cells of the single job' '
	job=$("$SWEEP" submit grid.yaml --db arr.db --array 3 --ntasks-per-node 2 2>err) &&
	cat err &&
	grep -q "sweep merge arr.db arr.shard-0.db arr.shard-1.db arr.shard-2.db" err &&
	slurm_wait "$job" 180 >states &&
	cat states &&
	test "$(grep -c COMPLETED states)" = 3 &&
	n=0 && for i in 0 1 2; do
		c=$(sql arr.shard-$i.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''") &&
		test "$(sql arr.shard-$i.db "SELECT count(*) FROM cells")" = "$c" &&
		test "$(sql arr.shard-$i.db "SELECT count(DISTINCT task) FROM slurm_runs WHERE task = $i")" = 1 &&
		n=$((n + c)) || return 1
	done &&
	test $n = 12 &&
	"$SWEEP" merge arr.db arr.shard-0.db arr.shard-1.db arr.shard-2.db &&
	sql one.db "SELECT key FROM cells WHERE state = '\''ok'\'' ORDER BY key" >k1 &&
	sql arr.db "SELECT key FROM cells WHERE state = '\''ok'\'' ORDER BY key" >k3 &&
	test "$(wc -l <k1)" = 12 && cmp k1 k3 &&
	test "$(sql arr.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 12 &&
	# the runs of the tasks came with the merge: status shows them under the job
	"$SWEEP" status arr.db >st && cat st &&
	grep -q " 3  *3  ${job}_0 COMPLETED, ${job}_1 COMPLETED, ${job}_2 COMPLETED *$" st &&
	test "$(sql arr.db "SELECT group_concat(job || '\'':'\'' || task) FROM (SELECT job, task FROM slurm_runs
		ORDER BY task)")" = "$job:0,$job:1,$job:2" &&
	# so does a database made by the merge alone
	"$SWEEP" merge fresh.db arr.shard-0.db arr.shard-1.db arr.shard-2.db >/dev/null &&
	"$SWEEP" status fresh.db >st && cat st &&
	grep -q "^ *$job  *grid  *-  *-  *3  *${job}_0 COMPLETED, ${job}_1 COMPLETED, ${job}_2 COMPLETED *$" st &&
	db_sound fresh.db
'

# A cell that fails until a file is there: quarantined at its first failure.
cat >check.sh <<'EOF'
#!/bin/sh
[ "$1" != 3 ] || [ -e fixed ] || { echo "check: the file 'fixed' is missing" >&2; exit 3; }
echo "{\"v\": $1}"
EOF
cat >fix.yaml <<'Y'
sweep: fix
command: [sh, check.sh, "{n}"]
metrics: json
params: {n: [1, 2, 3, 4, 5, 6]}
max_attempts: 1
Y

# cell_of DB N: the state and attempts of cell n = N in DB.
cell_of() { sql "$1" "SELECT state, attempts FROM cells WHERE json_extract(params, '$.n') = $2"; }

test_expect_success 'retry holds for an array: resubmitted, the shards run the retried cell, merge keeps it ok' '
	job=$("$SWEEP" submit fix.yaml --db fx.db --array 2 --ntasks-per-node 1 2>err) &&
	slurm_wait "$job" 180 >states && cat states &&
	"$SWEEP" merge fx.db fx.shard-0.db fx.shard-1.db >out && cat out &&
	test "$(cell_of fx.db 3)" = "quarantined|1" &&
	test "$(sql fx.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 5 &&
	"$SWEEP" retry fx.db >out && cat out &&
	grep -q "^fix: 1 quarantined or failed cells back to planned" out &&
	test "$(cell_of fx.db 3)" = "planned|0" &&
	: >fixed &&
	job2=$("$SWEEP" submit fix.yaml --db fx.db --array 2 --ntasks-per-node 1 2>err) &&
	cat err &&
	test "$(slurm_wait "$job2" 180 | sort -u)" = COMPLETED &&
	cat fix-${job2}_*.log &&
	# the shard that holds the cell took the retry from the sweep database and ran it, once
	shard=$(for i in 0 1; do test "$(cell_of fx.shard-$i.db 3)" != "" && echo $i; done) &&
	test "$(cell_of fx.shard-$shard.db 3)" = "ok|1" &&
	test "$(sql fx.shard-$shard.db "SELECT count(*) FROM results r JOIN cells c ON c.id = r.cell
		WHERE json_extract(c.params, '\''$.n'\'') = 3 AND r.status = '\''ok'\''")" = 1 &&
	"$SWEEP" merge fx.db fx.shard-0.db fx.shard-1.db >out && cat out &&
	test "$(cell_of fx.db 3)" = "ok|1" &&
	test "$(sql fx.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 6 &&
	test "$(sql fx.db "SELECT count(*) FROM cells c WHERE (SELECT count(*) FROM results r
		WHERE r.cell = c.id AND r.status = '\''ok'\'') != 1")" = 0 &&
	# the failed attempt of the first array is kept, as history
	test "$(sql fx.db "SELECT count(*) FROM results WHERE status != '\''ok'\''")" = 1 &&
	# merged again: nothing changes, the cell stays ok
	"$SWEEP" merge fx.db fx.shard-0.db fx.shard-1.db >out &&
	test "$(cell_of fx.db 3)" = "ok|1" &&
	db_sound fx.db
'

cat >bad.yaml <<'Y'
sweep: bad
kernel: debug.fail
params:
  mode: [error]
  on: ["i=2"]
  i: [1, 2, 3, 4, 5, 6]
timing: {min_samples: 1, min_time: 0, max_noise: 1}
max_attempts: 1
Y

test_expect_success 'an array task that quarantines a cell names it in its log, and the retry command' '
	job=$("$SWEEP" submit bad.yaml --db bad.db --array 2 --ntasks-per-node 2 2>err) &&
	slurm_wait "$job" 120 | sort >states &&
	cat states &&
	test "$(tr "\n" " " <states)" = "COMPLETED FAILED " &&
	grep -l "cells quarantined" bad-${job}_*.log >logs &&
	test "$(wc -l <logs)" = 1 &&
	log=$(cat logs) &&
	shard=${log#bad-${job}_} && shard=${shard%.log} &&
	grep "^sweep: bad: " "$log" &&
	grep -qx "sweep: bad: 1 cells quarantined: {\"mode\":\"error\",\"on\":\"i=2\",\"i\":2,\"ms\":0} (launch: debug.fail: failing on purpose); to measure them again: sweep retry $T/bad.shard-$shard.db --sweep bad --state quarantined, then run again" "$log"
'

cat >slow.yaml <<'Y'
sweep: slow
kernel: sleep
params:
  ms: {from: 100, to: 139, step: 1}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# some_done DB: the database has 4 results or more.
some_done() { test "$(sqlite3 "$1" "SELECT count(*) FROM results" 2>/dev/null || echo 0)" -ge 4; }

test_expect_success 'a job requeued mid-run resumes and finishes with every cell exactly once' '
	job=$("$SWEEP" submit slow.yaml --db rq.db --ntasks-per-node 2 2>err) &&
	# requeue once a few cells are done (bounded wait), well before the 40 are
	wait_for 60 some_done rq.db &&
	before=$(sql rq.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''") &&
	echo "requeued with $before cells ok" &&
	test "$before" -lt 40 &&
	scontrol requeue "$job" &&
	test "$(slurm_wait "$job" 180)" = COMPLETED &&
	grep -v "^[0-9]*/" slow-$job.log | tail -8 &&
	grep -q "DUE TO JOB REQUEUE" slow-$job.log &&
	# sweep said so itself before the job went
	grep -q "^sweep: slow: interrupted by SIG[A-Z0-9]*\( or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM)\)\{0,1\}: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume$" slow-$job.log &&
	test "$(sql rq.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 40 &&
	test "$(sql rq.db "SELECT count(*) FROM cells c WHERE (SELECT count(*) FROM results r
		WHERE r.cell = c.id AND r.status = '\''ok'\'') != 1")" = 0 &&
	test "$(sql rq.db "SELECT count(*) FROM runs")" = 2 &&
	# the first run stopped at the requeue, keeping what it did; the second did the rest
	test "$(sql rq.db "SELECT count(*) FROM results WHERE run = 1 AND status = '\''ok'\''")" -ge "$before" &&
	test "$(sql rq.db "SELECT count(*) FROM results WHERE run = 2 AND status = '\''ok'\''")" -gt 0 &&
	test "$(sql rq.db "SELECT group_concat(restarts) FROM (SELECT restarts FROM slurm_runs ORDER BY run)")" = \
		"0,1" &&
	db_sound rq.db
'

# attempts_used DB: 0 when every cell has as many attempts as it has results (none charged for nothing).
attempts_used() { sql "$1" "SELECT count(*) FROM cells c WHERE c.attempts != (SELECT count(*) FROM results r
	WHERE r.cell = c.id)"; }

# sweep: what status prints for a resubmit, run here.
sweep() { "$SWEEP" "$@"; }

test_expect_success 'scancel --batch --signal=TERM reaches sweep: its line in the log; status says how to resume' '
	job=$("$SWEEP" submit slow.yaml --db sc.db --ntasks-per-node 2 --no-requeue 2>err) &&
	wait_for 60 some_done sc.db &&
	scancel --batch --signal=TERM "$job" &&
	test "$(slurm_wait "$job" 60)" = FAILED &&
	grep -v "^[0-9]*/" slow-$job.log | tail -4 &&
	grep -q "^sweep: slow: interrupted by SIGUSR1: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume$" slow-$job.log &&
	test "$(sql sc.db "SELECT status FROM runs")" = interrupted &&
	test "$(attempts_used sc.db)" = 0 &&
	left=$(sql sc.db "SELECT count(*) FROM cells WHERE state = '\''planned'\''") &&
	test "$left" -gt 0 &&
	"$SWEEP" status sc.db >st &&
	sed -n "/^to resume/,\$p" st >resume &&
	cat resume &&
	test "$(head -1 resume)" = "to resume (no run is writing the database; the latest, run 1, interrupted):" &&
	test "$(sed -n 2p resume)" = "  $left cells to do" &&
	test "$(sed -n 3p resume)" = "  Slurm job $job is FAILED; resubmit it: cd $T && sweep submit --db sc.db --ntasks-per-node 2 --no-requeue slow.yaml" &&
	test "$(sed -n 4p resume)" = "  or run it again as run 1 was: sweep run --db $T/sc.db --progress=60 --log $T/slow-$job.log $T/slow.yaml" &&
	# the resubmit, as printed: the sweep finishes, each cell once
	cmd=$(sed -n "s/^  Slurm job .*; resubmit it: //p" resume) &&
	again=$(eval "$cmd" 2>err2 | tail -1) &&
	test "$(slurm_wait "$again" 120)" = COMPLETED &&
	test "$(sql sc.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 40 &&
	test "$(attempts_used sc.db)" = 0 &&
	"$SWEEP" status sc.db >st2 &&
	! grep -q "^to resume" st2
'

test_expect_success 'scancel JOB: sweep'\''s line lands in the log before the job goes' '
	job=$("$SWEEP" submit slow.yaml --db pc.db --ntasks-per-node 2 --no-requeue 2>err) &&
	wait_for 60 some_done pc.db &&
	scancel "$job" &&
	test "$(slurm_wait "$job" 60)" = CANCELLED &&
	grep -v "^[0-9]*/" slow-$job.log | tail -4 &&
	grep -q "^sweep: slow: interrupted by SIG[A-Z0-9]*\( or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM)\)\{0,1\}: [0-9]* cells in flight went back to planned (no attempt charged); run the same command again to resume$" slow-$job.log &&
	test "$(sql pc.db "SELECT status FROM runs")" = interrupted &&
	test "$(attempts_used pc.db)" = 0
'

test_expect_success 'a job killed outright: status says the run is gone and how to resume' '
	job=$("$SWEEP" submit slow.yaml --db kc.db --ntasks-per-node 2 --no-requeue 2>err) &&
	wait_for 60 some_done kc.db &&
	# as the OOM killer or a lost node would: mpirun and the ranks at once, no word said
	kill -9 $(pgrep -f "db $T/kc.db") &&
	slurm_wait "$job" 60 &&
	test "$(sql kc.db "SELECT status FROM runs")" = running &&
	"$SWEEP" status kc.db >st &&
	sed -n "/^to resume/,\$p" st >resume &&
	cat resume &&
	test "$(head -1 resume)" = "to resume (no run is writing the database; the latest, run 1, is gone (was running)):" &&
	grep -q "^  Slurm job $job is [A-Z]*; resubmit it: cd $T && sweep submit --db kc.db --ntasks-per-node 2 --no-requeue slow.yaml$" resume &&
	grep -qx "  or run it again as run 1 was: sweep run --db $T/kc.db --progress=60 --log $T/slow-$job.log $T/slow.yaml" resume
'

test_expect_success 'a cancelled array: status on its database says what each shard has left and the resubmission' '
	job=$("$SWEEP" submit slow.yaml --db ca.db --array 2 --ntasks-per-node 1 --no-requeue --no-exclusive 2>err) &&
	wait_for 60 some_done ca.shard-0.db &&
	scancel "$job" &&
	slurm_wait "$job" 60 >states &&
	test "$(grep -c CANCELLED states)" = 2 &&
	"$SWEEP" status ca.db >st &&
	sed -n "/^to resume/,\$p" st >resume &&
	cat resume &&
	test "$(head -1 resume)" = "to resume (no run is writing the database; its runs were in its Slurm jobs):" &&
	test "$(sed -n 2p resume)" = "  40 cells to do" &&
	test "$(sed -n 3p resume)" = "  Slurm job $job is ${job}_0 CANCELLED, ${job}_1 CANCELLED; resubmit it: cd $T && sweep submit --db ca.db --array 2 --ntasks-per-node 1 --no-requeue --no-exclusive slow.yaml" &&
	left0=$(sql ca.shard-0.db "SELECT count(*) FROM cells WHERE state IN ('\''planned'\'', '\''running'\'')") &&
	n0=$(sql ca.shard-0.db "SELECT count(*) FROM cells") &&
	test "$left0" -gt 0 && test "$left0" -lt "$n0" &&
	grep -qx "    shard 0: $left0 of $n0 cells to do ('\''ca.shard-0.db'\'')" resume &&
	grep -q "^  the array'\''s 2 shards have [0-9]* of 40 cells to do" resume &&
	! grep -q "run it again" resume &&
	# a shard'\''s database points to the array, not to a local sweep run --shard
	"$SWEEP" status ca.shard-0.db >st0 &&
	sed -n "/^to resume/,\$p" st0 >resume0 &&
	cat resume0 &&
	grep -qx "  Slurm job $job is ${job}_0 CANCELLED, ${job}_1 CANCELLED; this database is its array task 0'\''s: resubmit the array: cd $T && sweep submit --db ca.db --array 2 --ntasks-per-node 1 --no-requeue --no-exclusive slow.yaml" resume0 &&
	! grep -q "shard=" resume0 &&
	# the resubmission, as printed: every shard finishes
	cmd=$(sed -n "s/^  Slurm job .*; resubmit it: //p" resume) &&
	again=$(eval "$cmd" 2>err2 | tail -1) &&
	slurm_wait "$again" 180 >states2 &&
	test "$(grep -c COMPLETED states2)" = 2 &&
	test "$(sql ca.shard-0.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = "$n0" &&
	test "$(sql ca.shard-1.db "SELECT count(*) FROM cells WHERE state != '\''ok'\''")" = 0
'
