# slurm/lib.sh: a real one-node Slurm cluster on this machine, for end-to-end tests (root only).
#
# slurm_up DIR starts munged (a key made for the test, a private socket), slurmctld and slurmd in the
# foreground (-D) in the background of the test, with a generated slurm.conf, state and spool under DIR,
# and exports SLURM_CONF so that sbatch, squeue and scontrol talk to this cluster only. The node is this
# machine ($(hostname), CPUs from nproc); ports come from the process id. slurm_down cancels the jobs,
# waits for them and stops the daemons (call it from a trap). Every wait is bounded (wait_for, e2e/lib.sh).

SLURM_PIDS=""
SLURM_DIR=""

slurm_up() {
	local dir=$1 host port
	host=$(hostname)
	port=$((20000 + ($$ % 4000) * 2))
	SLURM_DIR=$dir
	mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || return 1
	chmod 711 "$dir/munge"
	head -c 1024 /dev/urandom >"$dir/munge/munge.key" && chmod 400 "$dir/munge/munge.key" || return 1
	munged -F --force --socket="$dir/munge/sock" --key-file="$dir/munge/munge.key" \
		--log-file="$dir/log/munged.log" --pid-file="$dir/munge/pid" --seed-file="$dir/munge/seed" \
		>"$dir/log/munged.out" 2>&1 &
	SLURM_PIDS="$!"
	wait_for 10 test -S "$dir/munge/sock" || { echo "slurm: munged did not start" >&2; return 1; }
	# cred_expire is also how long a requeued job waits before it may start again (default 120 s).
	cat >"$dir/slurm.conf" <<CONF
ClusterName=sweeptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock,cred_expire=5
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
MinJobAge=600
KillWait=3
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	slurmd -D -f "$SLURM_CONF" >"$dir/log/slurmd.out" 2>&1 &
	SLURM_PIDS="$SLURM_PIDS $!"
	if ! wait_for 30 slurm_idle; then
		echo "slurm: the node did not come up" >&2
		tail -5 "$dir"/log/*.out >&2
		return 1
	fi
}

slurm_idle() { [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; }

# slurm_done JOB: no task of JOB is pending, running or completing any more.
slurm_done() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && scontrol -o show job "$1" >/dev/null 2>&1; }

# slurm_wait JOB SECONDS: wait until JOB (every task of an array) has ended; print its states.
slurm_wait() {
	wait_for "$2" slurm_done "$1" || { echo "slurm: job $1 still in the queue after $2 s" >&2; return 1; }
	slurm_states "$1"
}

# slurm_states JOB: "COMPLETED" once per task, a line each.
slurm_states() { scontrol -o show job "$1" | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p'; }

slurm_down() {
	local p
	[ -n "$SLURM_PIDS" ] || return 0
	scancel --full $(squeue -h -o %i 2>/dev/null | tr '\n' ' ') 2>/dev/null
	wait_for 30 test -z "$(squeue -h -o %i 2>/dev/null)"
	for p in $SLURM_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $SLURM_PIDS; do
		wait_for 10 sh -c "! kill -0 $p 2>/dev/null" || kill -9 "$p" 2>/dev/null
	done
	SLURM_PIDS=""
	return 0
}
