#!/bin/sh
# simulate-hosts.sh: run a per-host sweep as if on another machine, to show multi-machine reports on one.
#
#   examples/simulate-hosts.sh DB SPEC NAME [--label KEY=VALUE]... [--probe NAME=VALUE[:UNIT]]...
#
# Runs `sweep run SPEC --db DB` with SIM_HOST=NAME in the environment (the example programs read it),
# then renames this machine's host row and per-host cells in DB to NAME, adds the labels to the host's facts
# (what the inventory does on a cluster) and records the probes (what `sweep hosts probe` measures).
# The spec must be `per: host`. Only for examples and tests: on real machines run `sweep run` on each.
set -eu
SWEEP=${SWEEP:-build/sweep}
[ $# -ge 3 ] || { echo "usage: $0 DB SPEC NAME [--label KEY=VALUE]... [--probe NAME=VALUE[:UNIT]]..." >&2; exit 2; }
db=$1 spec=$2 name=$3
shift 3
ok() { printf '%s' "$1" | grep -Eq '^[A-Za-z0-9_.:-]+$'; }
ok "$name" || { echo "$0: host name '$name': letters, digits, _ . : - only" >&2; exit 2; }
labels="" probes=""
while [ $# -gt 0 ]; do
	case "$1" in
	--label) kv=$2; ok "${kv%%=*}" && ok "${kv#*=}" || { echo "$0: bad label '$kv'" >&2; exit 2; }
		labels="$labels${labels:+, }'${kv%%=*}', '${kv#*=}'"; shift 2 ;;
	--probe) kv=$2; p=${kv%%=*} v=${kv#*=} u=""
		case "$v" in *:*) u=${v#*:} v=${v%%:*} ;; esac
		ok "$p" && printf '%s' "$v" | grep -Eq '^[0-9.eE+-]+$' && { [ -z "$u" ] || printf "%s" "$u" | grep -Eq "^[A-Za-z0-9_./-]+$"; } ||
			{ echo "$0: bad probe '$kv'" >&2; exit 2; }
		probes="$probes INSERT INTO probes(host, gpu, name, value, unit, measured)
			SELECT id, NULL, '$p', $v, '$u', strftime('%Y-%m-%dT%H:%M:%fZ') FROM hosts WHERE hostname = '$name';"
		shift 2 ;;
	*) echo "$0: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
sweep=$(sed -n 's/^sweep:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$spec" | head -1)
real=$(hostname)
rc=0
SIM_HOST=$name "$SWEEP" run "$spec" --db "$db" --quiet || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || exit "$rc"
# The cells run here get NAME's replica and a key of their own, so the next simulated host runs them
# again; the host row gets another hash, so the next run makes a new one for this machine.
sqlite3 -batch "$db" "BEGIN;
	UPDATE cells SET replica = '$name', key = key || '@$name' WHERE sweep = '$sweep' AND replica = '$real';
	UPDATE hosts SET hostname = '$name', hash = hash || '@$name',
		facts = json_set(facts, '\$.hostname', '$name', '\$.labels', json_object($labels))
		WHERE hostname = '$real';
	$probes
	COMMIT;"
exit "$rc"
