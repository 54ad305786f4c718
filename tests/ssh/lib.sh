# ssh/lib.sh: test hosts reached over ssh (root only). Sourced by end-to-end tests after tests/e2e/lib.sh.
#
# ssh_up N DIR makes N hosts with tests/netns/lib.sh (network namespaces on a bridge of their own, in a
# private /24 used only among them: 10.232.X.0/24 here) and starts in each its own sshd (Debian's
# openssh-server, `sshd -D -f CONFIG`) on the host's address only, under a hostname of its own (a UTS
# namespace whose hostname is the namespace's name, so every ssh session there says that name). One host
# key and one client key are made for the test in DIR/ssh; root logs in with the key only. SSH_KEY is the
# client's private key; ssh_client_opts prints the ssh options a client needs (no known_hosts of the
# machine is read or written). ssh_stop I stops host I's sshd (what runs there goes on); ssh_down removes
# everything: call it from a trap. Every wait is bounded.

. tests/netns/lib.sh

NETNS_NET=10.232.$(($$ % 200 + 20))
NETNS_CIDR=$NETNS_NET.0/24
SSH_DIR=
SSH_KEY=
SSH_N=0

ssh_client_opts() {
	echo "-o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null" \
		"-o LogLevel=ERROR -o IdentitiesOnly=yes -i $SSH_KEY"
}

# ssh_host I COMMAND: run COMMAND as root on host I.
ssh_host() {
	local i=$1
	shift
	# shellcheck disable=SC2046
	ssh $(ssh_client_opts) "root@$(netns_addr "$i")" "$@"
}

# ssh_sshd_pid I: the pid of host I's listening sshd, from its pid file.
ssh_sshd_pid() { cat "$SSH_DIR/sshd-$1.pid" 2>/dev/null; }

ssh_up() {
	local n=$1 dir=$2 i ns tries
	SSH_DIR=$dir/ssh
	SSH_KEY=$SSH_DIR/id
	mkdir -p "$SSH_DIR" || return 1
	# sshd's privilege separation folder (Debian's service makes it at boot; a container may lack it).
	[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd || return 1
	netns_up "$n" "$dir" || return 1
	ssh-keygen -q -t ed25519 -N '' -C sweep-test-host -f "$SSH_DIR/host_key" || return 1
	ssh-keygen -q -t ed25519 -N '' -C sweep-test-client -f "$SSH_KEY" || return 1
	cp "$SSH_KEY.pub" "$SSH_DIR/authorized_keys" || return 1
	for i in $(seq 1 "$n"); do
		ns=$(netns_name "$i")
		cat >"$SSH_DIR/sshd-$i.conf" <<EOF
ListenAddress $(netns_addr "$i")
Port 22
HostKey $SSH_DIR/host_key
AuthorizedKeysFile $SSH_DIR/authorized_keys
PidFile $SSH_DIR/sshd-$i.pid
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
X11Forwarding no
PrintMotd no
Subsystem sftp internal-sftp
EOF
		ip netns exec "$ns" unshare --uts /bin/sh -c \
			'hostname "$1" && exec /usr/sbin/sshd -D -f "$2" -E "$3"' sshd-test \
			"$ns" "$SSH_DIR/sshd-$i.conf" "$SSH_DIR/sshd-$i.log" </dev/null >/dev/null 2>&1 &
		SSH_N=$i
	done
	# Each answers with its own hostname (bounded: 50 x 0.2 s each).
	for i in $(seq 1 "$n"); do
		tries=0
		until [ "$(ssh_host "$i" hostname 2>/dev/null)" = "$(netns_name "$i")" ]; do
			tries=$((tries + 1))
			if [ $tries -ge 50 ]; then
				echo "ssh: host $i: sshd does not answer" >&2
				tail -5 "$SSH_DIR/sshd-$i.log" >&2
				return 1
			fi
			sleep 0.2
		done
	done
}

# ssh_stop I: stop host I's sshd and wait (bounded) until it is gone; sessions and runs there go on.
ssh_stop() {
	local pid tries=0
	pid=$(ssh_sshd_pid "$1")
	[ -n "$pid" ] || return 1
	kill "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -lt 50 ] || { kill -9 "$pid" 2>/dev/null; return 1; }
		sleep 0.1
	done
}

ssh_down() {
	local i pid
	for i in $(seq 1 "$SSH_N"); do
		pid=$(ssh_sshd_pid "$i")
		[ -z "$pid" ] || kill "$pid" 2>/dev/null
	done
	SSH_N=0
	# Everything still in the namespaces (launched runs included) goes with them.
	netns_down
}
