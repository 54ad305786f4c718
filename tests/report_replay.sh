#!/bin/bash
# report_replay.sh: every report the end-to-end tests make, made again by two builds and compared byte for
# byte: standard output, standard error, exit status and every file written (--out, a plot's .dat, .gp and
# picture). It proves that a change to the report code (src/report*.c, table.c, builtin/report.c, plot.c,
# compare.c) changed no report.
#
# Usage: tests/report_replay.sh [--base REV] [--keep DIR [--again]] [TEST.sh ...]
#   REV      the build to compare against (default main), built with `make CUDA=0` from `git archive REV`
#   TEST     the end-to-end tests to record (default: every tests/e2e/t*.sh that runs `report`, `plot` or
#            `compare`)
#   DIR      keep the corpus, the base build and the outputs there (default: a temporary folder)
#   --again  replay the corpus kept in DIR with today's build/sweep, recording nothing
# Needs build/sweep of the working tree (make CUDA=0 build/sweep) and what the chosen tests need.
#
# How: the tests run from a shadow of the repository whose build/sweep is a wrapper (written below) around
# the real binary. With SWEEP_REPORT_CORPUS=DIR set, the wrapper records each `sweep report`, `sweep plot`
# and `sweep compare` into DIR before running it: the arguments, and a copy of every file an argument
# names (the databases with their -wal and -shm, an --out file that is already there). Then each recorded invocation is
# replayed twice in the same empty folder, once with REV's binary and once with the working tree's, on
# fresh copies of the same files, with arguments rewritten to those copies (the same for both). The last
# line says how many invocations were compared and how many differ; the exit status is 1 when any does.
# A test that compares build/sweep with the binary it copies (t0800's launch --sync) fails in the shadow,
# whose build/sweep is the wrapper; the reports it makes are recorded all the same.
set -eu

# The wrapper's half (--record ARGS...): record one invocation, run in the test's folder, into
# $SWEEP_REPORT_CORPUS. Only the database (an argument that is no option's value) and --out name files:
# any other value that happens to name a file is an option's value and stays as it is.
record() {
	local d a v pre take= real k=0 out=0
	local -A seen=()
	d=$(mktemp -d "$SWEEP_REPORT_CORPUS/inv.XXXXXX")
	echo "${SWEEP_REPORT_TEST:-?}" >"$d/test"
	printf '%s' "$SWEEP_REPORT_PATH" >"$d/path"     # a test may hide programs (gnuplot) from sweep
	mkdir -p "$d/files" "$d/outs"
	printf '%s\0' "$1" >"$d/argv"
	shift
	for a in "$@"; do
		pre= v=$a
		if [ -n "$take" ]; then
			[ "$take" = --out ] && out=1 || out=2
			take=
		else
			case "$a" in
			--out=*) pre=--out= v=${a#--out=} out=1 ;;
			--*=*|--summary|--exclude-unstable|--drift|--score|--strict|--help|--logx|--logy|-h) out=2 ;;
			-*) take=$a out=2 ;;
			*) out=0 ;;
			esac
		fi
		if [ "$out" != 2 ] && [ -f "$v" ]; then
			real=$(realpath "$v")
			if [ -z "${seen[$real]:-}" ]; then
				k=$((k + 1))
				mkdir "$d/files/f$k"
				for s in "" -wal -shm; do
					[ ! -f "$v$s" ] || cp -p "$v$s" "$d/files/f$k/$(basename "$v")$s"
				done
				seen[$real]=f$k/$(basename "$v")
			fi
			v=${seen[$real]}
		elif [ "$out" = 1 ] && [ -n "$v" ] && [ ! -e "$v" ] && [ -d "$(dirname "$v")" ]; then
			k=$((k + 1))
			mkdir "$d/outs/o$k"
			v=o$k/$(basename "$v")
		fi
		printf '%s\0' "$pre$v" >>"$d/argv"
	done
}
if [ "${1:-}" = --record ]; then
	shift
	record "$@"
	exit 0
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BASE=main KEEP= AGAIN=0
while [ $# -gt 0 ]; do
	case "$1" in
	--base) BASE=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	--again) AGAIN=1; shift ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "report_replay.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	set -- $(grep -l -E '(SWEEP"? |sweep )(report|plot|compare) ' tests/e2e/t*.sh | sort)
fi
[ -x build/sweep ] ||
	{ echo "report_replay.sh: build/sweep is missing (make CUDA=0 build/sweep)" >&2; exit 2; }
W=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/report-replay.XXXXXX")}
mkdir -p "$W"
[ -n "$KEEP" ] || trap 'rm -rf "$W"' EXIT
W=$(cd "$W" && pwd)

# 1. The base build, from REV's tree alone (nothing of the working tree); kept when REV is the same commit.
rev=$(git rev-parse "$BASE^{commit}")
if [ "$(cat "$W/base/.rev" 2>/dev/null)" != "$rev" ] || [ ! -x "$W/base/build/sweep" ]; then
	echo "# building $BASE ($rev) into $W/base"
	rm -rf "$W/base" && mkdir -p "$W/base"
	git archive "$rev" | tar -x -C "$W/base"
	make -C "$W/base" -j2 CUDA=0 build/sweep >"$W/base.log" 2>&1 ||
		{ echo "report_replay.sh: cannot build $BASE (see $W/base.log)" >&2; exit 2; }
	echo "$rev" >"$W/base/.rev"
fi
cp build/sweep "$W/new-sweep"        # the working tree's, copied: a rebuild meanwhile changes nothing

# 2. The shadow repository: every entry a link to the real one, but build/sweep the recording wrapper.
S=$W/shadow
rm -rf "$S" && mkdir -p "$S/build"
for f in "$ROOT"/* "$ROOT"/.[!.]*; do
	[ -e "$f" ] && [ "$(basename "$f")" != build ] && ln -s "$f" "$S/$(basename "$f")"
done
for f in "$ROOT"/build/*; do
	[ "$(basename "$f")" != sweep ] && ln -s "$f" "$S/build/$(basename "$f")"
done
cat >"$S/build/sweep" <<EOF
#!/bin/bash
# The recording wrapper of tests/report_replay.sh: see there.
if [ -n "\${SWEEP_REPORT_CORPUS:-}" ] && { [ "\${1:-}" = report ] || [ "\${1:-}" = plot ] || [ "\${1:-}" = compare ]; }; then
	SWEEP_REPORT_PATH=\$PATH PATH=/usr/local/bin:/usr/bin:/bin:\$PATH /bin/bash "$ROOT/tests/report_replay.sh" \\
		--record "\$@" || echo "report_replay.sh: not recorded: \$*" >&2
fi
exec "$W/new-sweep" "\$@"
EOF
chmod +x "$S/build/sweep"

# 3. Record: run the tests from the shadow.
C=$W/corpus
[ "$AGAIN" = 1 ] && [ -d "$C" ] || { rm -rf "$C" && mkdir -p "$C"; }
for t in "$@"; do
	[ "$AGAIN" = 0 ] || break
	echo "# recording $t"
	(cd "$S" && SWEEP_REPORT_CORPUS=$C SWEEP_REPORT_TEST=$(basename "$t") timeout 900 bash "$t") \
		>"$W/$(basename "$t").log" 2>&1 || true
	grep -E '^not ok' "$W/$(basename "$t").log" | sed 's/^/#   /' || true
done

# 4. Replay each invocation with both binaries in the same folder, then compare.
run_one() {   # run_one INVOCATION BINARY OUTDIR
	local inv=$1 bin=$2 out=$3 rc=0
	local -a argv=()
	rm -rf "$W/run" && mkdir -p "$W/run" "$out"
	[ -d "$inv/files" ] && cp -a "$inv/files/." "$W/run/"
	[ -d "$inv/outs" ] && cp -a "$inv/outs/." "$W/run/"
	while IFS= read -r -d '' a; do argv+=("$a"); done <"$inv/argv"
	(cd "$W/run" && PATH=$(cat "$inv/path") && exec "$bin" "${argv[@]}") </dev/null \
		>"$out/stdout" 2>"$out/stderr" || rc=$?
	echo "$rc" >"$out/rc"
	# a PDF holds the time it was made: that one line is left out of the comparison
	find "$W/run" -name '*.pdf' -exec sed -i -e '/CreationDate/d' {} +
	mv "$W/run" "$out/files"
}
n=0 nd=0
: >"$W/diff"
for inv in "$C"/inv.*; do
	[ -f "$inv/argv" ] || continue
	n=$((n + 1))
	rm -rf "$inv/base" "$inv/new"
	run_one "$inv" "$W/base/build/sweep" "$inv/base"
	run_one "$inv" "$W/new-sweep" "$inv/new"
	if ! diff -r "$inv/base" "$inv/new" >"$inv/diff" 2>&1; then
		nd=$((nd + 1))
		{ echo "## $(cat "$inv/test"): $(tr '\0' ' ' <"$inv/argv")"; cat "$inv/diff"; } >>"$W/diff"
	fi
done
cat "$W/diff"
echo "$n invocations replayed with $BASE and the working tree: $nd differ"
[ "$n" -gt 0 ] && [ "$nd" = 0 ]
