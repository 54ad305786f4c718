# netns/lib.sh: test hosts as network namespaces on one machine (root only). Sourced by end-to-end tests.
#
# netns_up N makes N namespaces named $NETNS_PREFIX-1 .. -N ("hosts"), each with a veth pair whose outer
# end is on a bridge of their own, and addresses in a private /24 used only among them (10.231.X.0/24, X
# from the process id so that two tests never share it). The machine's side of the bridge is .1; host i is
# .(10+i). It writes $NETNS_MAP ("address name" lines) for tests/netns/rsh and $NETNS_HOSTFILE (an Open
# MPI hostfile of every host with NETNS_SLOTS slots). netns_down deletes all of it; call it from a trap.
# Nothing here routes or forwards: traffic stays between the bridge and the namespaces.

NETNS_PREFIX=${NETNS_PREFIX:-swp$$}
NETNS_NET=10.231.$(($$ % 200 + 20))
NETNS_CIDR=$NETNS_NET.0/24
NETNS_BRIDGE=swb$$
NETNS_SLOTS=${NETNS_SLOTS:-2}
NETNS_N=0

netns_name() { echo "$NETNS_PREFIX-$1"; }
netns_addr() { echo "$NETNS_NET.$((10 + $1))"; }

# netns_up N DIR: make N hosts; the map and the hostfile go to DIR.
netns_up() {
	local n=$1 dir=$2 i ns
	NETNS_MAP=$dir/netns.map
	NETNS_HOSTFILE=$dir/hostfile
	: >"$NETNS_MAP"
	: >"$NETNS_HOSTFILE"
	ip link add "$NETNS_BRIDGE" type bridge || return 1
	ip addr add "$NETNS_NET.1/24" dev "$NETNS_BRIDGE" || return 1
	ip link set "$NETNS_BRIDGE" up || return 1
	for i in $(seq 1 "$n"); do
		ns=$(netns_name "$i")
		ip netns add "$ns" || return 1
		NETNS_N=$i
		ip link add "swv$$-$i" type veth peer name eth0 netns "$ns" || return 1
		ip link set "swv$$-$i" master "$NETNS_BRIDGE" up || return 1
		ip -n "$ns" addr add "$(netns_addr "$i")/24" dev eth0 || return 1
		ip -n "$ns" link set eth0 up || return 1
		ip -n "$ns" link set lo up || return 1
		echo "$(netns_addr "$i") $ns" >>"$NETNS_MAP"
		echo "$(netns_addr "$i") slots=$NETNS_SLOTS" >>"$NETNS_HOSTFILE"
	done
	# Both ends of every veth up; a bridge without STP forwards at once.
	for i in $(seq 1 "$n"); do
		netns_link_up "$i" || return 1
	done
}

# netns_test N: the start of a test script on N hosts: root and ip needed (test_needs); the hosts made (not
# ok, and out, when that fails), taken down when the script exits, their map exported for tests/netns/rsh.
netns_test() {
	test_needs "root (network namespaces)" test "$(id -u)" = 0
	test_needs "ip (iproute2)" command -v ip
	trap 'netns_down; rm -rf "$T"' EXIT
	netns_up "$1" "$T" || { echo "not ok - setup: network namespaces"; exit 1; }
	export SWEEP_NETNS_MAP=$NETNS_MAP
}

# netns_link_up I: wait until both ends of host I's veth are up (bounded: 50 x 0.1 s).
netns_link_up() {
	local tries=0
	until [ "$(cat "/sys/class/net/swv$$-$1/operstate" 2>/dev/null)" = up ] &&
	      ip -n "$(netns_name "$1")" -br link show eth0 | grep -qw UP; do
		tries=$((tries + 1))
		[ $tries -lt 50 ] || { echo "netns: host $1: link not up" >&2; return 1; }
		sleep 0.1
	done
}

# netns_cut I: host I drops off the network, as a pulled cable would: its veth goes down, nothing it
# sends or is sent arrives, and no connection is closed. netns_mend I brings it back.
netns_cut() { ip link set "swv$$-$1" down; }
netns_mend() { ip link set "swv$$-$1" up && netns_link_up "$1" && netns_reach "$1"; }

# netns_reach I: wait until host I opens a TCP connection to the machine's side of the bridge (bounded:
# 10 s). A host just mended may still hold the failed neighbour entries of its cut: without this, Open
# MPI's daemon there, started at once, sometimes could not connect back to mpirun.
netns_reach() {
	local port=$((20000 + $$ % 20000)) ok=1
	ip -n "$(netns_name "$1")" neigh flush all 2>/dev/null
	ip neigh flush dev "$NETNS_BRIDGE" 2>/dev/null
	python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8); s.settimeout(10)
try: s.accept()
except OSError: sys.exit(1)' "$NETNS_NET.1" "$port" &
	local listener=$!
	sleep 0.2
	local end=$(($(date +%s) + 10))
	while [ "$(date +%s)" -lt "$end" ]; do
		if ip netns exec "$(netns_name "$1")" timeout 1 bash -c "exec 3<>/dev/tcp/$NETNS_NET.1/$port" 2>/dev/null; then
			ok=0
			break
		fi
		sleep 0.2
	done
	wait "$listener" 2>/dev/null
	[ "$ok" = 0 ] || echo "netns: host $1: cannot reach $NETNS_NET.1 after 10 s" >&2
	return "$ok"
}

# netns_procs I: the commands of the processes left in host I's namespace, one line each.
netns_procs() {
	local pids
	pids=$(ip netns pids "$(netns_name "$1")" 2>/dev/null)
	[ -z "$pids" ] || ps -o comm= -p $pids 2>/dev/null
	return 0
}

# netns_kill I: SIGKILL every process in host I's namespace (bounded: 20 rounds).
netns_kill() {
	local ns=$(netns_name "$1") round pids
	for round in $(seq 1 20); do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] || return 0
		kill -9 $pids 2>/dev/null
		sleep 0.1
	done
	return 1
}

netns_down() {
	local i
	for i in $(seq 1 "$NETNS_N"); do
		netns_kill "$i"
		ip link del "swv$$-$i" 2>/dev/null
		ip netns del "$(netns_name "$i")" 2>/dev/null
	done
	ip link del "$NETNS_BRIDGE" 2>/dev/null
	NETNS_N=0
	return 0
}

# The options mpirun needs to reach these hosts, and no more: the agent, and TCP only on the test subnet (the
# hostfile is the caller's: $NETNS_HOSTFILE for all of them). No keepalive: a host cut off must end the run
# by sweep's own path, under the line a user types.
netns_mpirun_opts() {
	echo "--mca plm_rsh_agent $ROOT/tests/netns/rsh --mca oob_tcp_if_include $NETNS_CIDR" \
		"--mca btl_tcp_if_include $NETNS_CIDR --mca btl self,vader,tcp"
}
