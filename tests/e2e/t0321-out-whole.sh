#!/bin/bash
# t0321-out-whole: an output is written to a temporary file beside it and renamed into place, checked by
# what its name opens: a symbolic link swapped in while a report runs, a hard link to a side file, a
# snapshot named like a "file:" URI or a full disk never damage a database or an existing output.
. tests/e2e/lib.sh

sum() { md5sum <"$1"; }

# 60 cells whose ledger (one line a result, with its parameters) is some kilobytes.
{
	echo "sweep: tok"
	echo "command: [sh, -c, 'echo \"{\\\"tok_s\\\": \$((3 * {batch}))}\"']"
	echo "metrics: json"
	echo "params:"
	echo "  batch: [$(seq -s ', ' 1 60)]"
} >"$T/tok.yaml"

# flip NAME TARGET: until killed, NAME is by turns a plain file and a symbolic link to TARGET, swapped in
# by a rename (a few microseconds apart: a report's check and its write see different files).
flip() {
	exec python3 -c '
import os, sys
name, target = sys.argv[1], sys.argv[2]
with open(name + ".plain", "w") as f:
    f.write("plain\n")
while True:
    os.symlink(target, name + ".link")
    os.rename(name + ".link", name)
    os.link(name + ".plain", name + ".new")
    os.rename(name + ".new", name)
' "$1" "$2"
}

# reports N: N reports of s.db to out.csv and its ledger to led.csv, each refused or written.
reports() {
	for _ in $(seq 1 "$1"); do
		"$SWEEP" report s.db --rows batch --metric tok_s --out out.csv --ledger led.csv >/dev/null 2>&1 || :
	done
}

test_expect_success 'setup' '
	"$SWEEP" run tok.yaml --db o.db 2>/dev/null &&
	test "$(status_n o.db ok)" = 60 &&
	"$SWEEP" report o.db --rows batch --metric tok_s --out ok.csv &&
	test "$(sed -n 2p ok.csv)" = "1,1,3" && test "$(wc -l <ok.csv)" = 61
'

test_expect_success 'a symbolic link to the database swapped in while reports run never writes through it' '
	cp o.db s.db && before=$(sum s.db) &&
	run_bg flip out.csv s.db && f1=$BG_PID &&
	run_bg flip led.csv s.db && f2=$BG_PID &&
	reports 100 &&
	kill $f1 $f2 && { wait $f1 $f2 || :; } &&
	test "$(sum s.db)" = "$before" &&
	db_sound s.db && test "$(status_n s.db ok)" = 60 &&
	test -z "$(ls -a | grep "^\.out\.csv\.\|^\.led\.csv\.")" &&
	rm -f out.csv* led.csv*
'

test_expect_success 'a hard link to the writer note, a log or a database is refused as an output' '
	ln o.db-writer note.csv &&
	test_expect_code 1 "$SWEEP" report o.db --rows batch --metric tok_s --out note.csv 2>err &&
	grep -q "^sweep: --out .note.csv. is the writer file of the database .o.db.: not overwriting it$" err &&
	test_expect_code 1 "$SWEEP" report o.db --rows batch --metric tok_s --ledger note.csv 2>err &&
	grep -q "^sweep: --ledger .note.csv. is the writer file of the database .o.db.: not overwriting it$" err &&
	test ! -s o.db-writer && test "$(stat -c %h o.db-writer)" = 2 &&
	echo keep >mine.txt && ln mine.txt other.csv &&
	test_expect_code 1 "$SWEEP" report o.db --rows batch --metric tok_s --out other.csv 2>err &&
	grep -q "^sweep: --out .other.csv. has 2 names (hard links), perhaps a file SQLite or sweep keeps: not overwriting it$" err &&
	test "$(cat mine.txt)" = keep
'

test_expect_success 'a snapshot named file:NAME is that file, never the URI: a log is not overwritten' '
	"$SWEEP" run tok.yaml --db w.db 2>/dev/null &&
	printf "\067\177\006\202\000\055\342\030 a log" >w.db-wal && before=$(sum w.db-wal) &&
	"$SWEEP" snapshot o.db "file:w.db-wal" >out &&
	test "$(sum w.db-wal)" = "$before" &&
	test "$(status_n ./file:w.db-wal ok)" = 60 && db_sound ./file:w.db-wal &&
	test_expect_code 1 "$SWEEP" snapshot o.db "file:w.db-wal" 2>err &&
	grep -q "^sweep: .file:w.db-wal. exists: the snapshot is written to a new file$" err &&
	test "$(status_n ./file:w.db-wal ok)" = 60
'

test_needs "root (mounting a tmpfs)" test "$(id -u)" = 0
mkdir "$T/small"
mount -t tmpfs -o size=256k sweeptest "$T/small" || { echo "not ok - setup: tmpfs"; exit 1; }
trap 'umount -l "$T/small"; rm -rf "$T"' EXIT

test_expect_success 'a disk that fills during a report or a snapshot leaves the old output whole' '
	echo precious >small/out.csv && echo precious >small/led.csv &&
	{ dd if=/dev/zero of=small/fill bs=4k 2>/dev/null || :; } &&
	# the ledger (some kilobytes) needs more room than the old file it replaces
	test_expect_code 1 "$SWEEP" report o.db --rows batch --metric tok_s --ledger small/led.csv 2>err &&
	grep -q "^sweep: cannot write .small/led.csv.: No space left on device$" err &&
	test "$(cat small/led.csv)" = precious &&
	test_expect_code 1 "$SWEEP" report o.db --rows batch --metric tok_s --out small/out.csv 2>err &&
	grep -q "^sweep: cannot write .small/out.csv.: No space left on device$" err &&
	test "$(cat small/out.csv)" = precious &&
	test_expect_code 1 "$SWEEP" snapshot o.db small/snap.db 2>err &&
	grep -q "cannot snapshot .o.db. into .small/snap.db." err &&
	test "$(ls -A small)" = "$(printf "fill\nled.csv\nout.csv")" &&
	rm small/fill &&
	"$SWEEP" report o.db --rows batch --metric tok_s --out small/out.csv &&
	cmp ok.csv small/out.csv
'
