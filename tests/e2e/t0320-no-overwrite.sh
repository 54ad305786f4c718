#!/bin/bash
# t0320-no-overwrite: no command writes over a database or its side files: report's and plot's --out,
# plot's data and script, snapshot's and merge's output and hostfile's --out are refused when they name a
# database, its -wal, -shm, -journal or -writer (by name, through a link, or by SQLite's first bytes), or
# the database being read (any link to it); a run whose log a report was pointed at ends sound.
. tests/e2e/lib.sh

sum() { md5sum <"$1"; }
# report DB OUT: a report of DB written to OUT
report() { "$SWEEP" report "$1" --rows batch --metric tok_s --out "$2"; }

cat >"$T/tok.yaml" <<'EOF'
sweep: tok
command: [sh, -c, 'echo "{\"tok_s\": $((3 * {batch}))}"']
metrics: json
params:
  batch: [1, 2, 4, 8]
EOF
cat >"$T/slow.yaml" <<'EOF'
sweep: slow
kernel: sleep
params:
  ms: [200]
  jitter: [0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.01, 0.011]
timing: {min_samples: 1, min_time: 0, max_noise: 1, warmup: 0}
max_attempts: 1
EOF
# The first bytes of a write-ahead log and of a rollback journal.
printf '\067\177\006\202\000\055\342\030' >"$T/wal.bin"
printf '\331\325\005\371\040\241\143\327' >"$T/journal.bin"

test_expect_success 'setup' '
	"$SWEEP" run tok.yaml --db o.db 2>/dev/null &&
	report o.db ok.csv &&
	printf "batch,n,tok_s\n1,1,3\n2,1,6\n4,1,12\n8,1,24\n" | cmp - ok.csv &&
	test -e o.db-writer
'

test_expect_success 'report --out: no -wal, -shm, -journal or -writer of a database, there or not (exit 1)' '
	before=$(sum o.db) &&
	# a reader leaves an empty log and its index: gone while no one has the database open
	rm -f o.db-wal o.db-shm &&
	for tail in -wal -shm -journal -writer; do
		test_expect_code 1 report o.db o.db$tail 2>err &&
		grep -q "^sweep: --out .o.db$tail. is the ${tail#-} file of the database .*/o.db.: not overwriting it$" err ||
		return 1
	done &&
	! test -e o.db-journal && test ! -s o.db-writer &&
	# a reader of ours leaves them (read-only, it cannot remove them): the index is known by its bytes
	"$SWEEP" status o.db >/dev/null && test -s o.db-shm &&
	test_expect_code 1 report o.db o.db-shm 2>err &&
	grep -q "^sweep: --out .o.db-shm. is an SQLite shared-memory index: not overwriting it$" err &&
	ln -s o.db-wal to-wal.txt &&
	test_expect_code 1 report o.db to-wal.txt 2>err &&
	grep -q "^sweep: --out .to-wal.txt. is the wal file of the database" err && test ! -s o.db-wal &&
	cp wal.bin log.txt && cp journal.bin jn.txt &&
	test_expect_code 1 report o.db log.txt 2>err &&
	grep -q "^sweep: --out .log.txt. is an SQLite write-ahead log: not overwriting it$" err &&
	test_expect_code 1 report o.db jn.txt 2>err &&
	grep -q "^sweep: --out .jn.txt. is an SQLite rollback journal: not overwriting it$" err &&
	cmp wal.bin log.txt && cmp journal.bin jn.txt &&
	ln o.db same.txt &&
	test_expect_code 1 report o.db same.txt 2>err &&
	grep -q "^sweep: --out .same.txt. is the database being read: not overwriting it$" err &&
	rm same.txt &&
	test "$(sum o.db)" = "$before"
'

test_expect_success 'a report pointed at a live run'\''s log or index is refused; the run ends sound' '
	run_bg "$SWEEP" run slow.yaml --db "$T/live.db" &&
	first=$BG_PID &&
	wait_running live.db &&
	test -s live.db-wal &&
	test_expect_code 1 "$SWEEP" report live.db --rows jitter --metric seconds --out live.db-wal 2>err &&
	grep -q "^sweep: --out .live.db-wal. is an SQLite write-ahead log: not overwriting it$" err &&
	test_expect_code 1 "$SWEEP" report live.db --rows jitter --metric seconds --out live.db-shm 2>err &&
	grep -q "^sweep: --out .live.db-shm. is an SQLite shared-memory index: not overwriting it$" err &&
	test_expect_code 1 "$SWEEP" report live.db --rows jitter --metric seconds --out live.db-writer 2>err &&
	grep -q "^sweep: --out .live.db-writer. is the writer file of the database" err &&
	grep -q "sweep run" live.db-writer &&
	test_expect_code 0 wait_gone $first &&
	test "$(sql live.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 12 &&
	test "$(sql live.db "SELECT sum(attempts) FROM cells")" = 12 &&
	test "$(sql live.db "SELECT count(*) FROM results WHERE status = '\''ok'\''")" = 12 &&
	db_sound live.db
'

test_expect_success 'plot writes neither its picture, its data nor its script over a database (exit 1)' '
	"$SWEEP" snapshot o.db pd.dat >/dev/null && before=$(sum pd.dat) &&
	test_expect_code 1 "$SWEEP" plot pd.dat --x batch --y tok_s --out pd.png 2>err &&
	grep -q "^sweep: the plot.s data .pd.dat. is the database being read: not overwriting it$" err &&
	test "$(sum pd.dat)" = "$before" && ! test -e pd.gp && ! test -e pd.png &&
	"$SWEEP" snapshot o.db other.gp >/dev/null && before=$(sum other.gp) &&
	test_expect_code 1 "$SWEEP" plot o.db --x batch --y tok_s --out other.svg 2>err &&
	grep -q "^sweep: the plot.s script .other.gp. is an SQLite database: not overwriting it$" err &&
	test "$(sum other.gp)" = "$before" && ! test -e other.dat &&
	cp wal.bin w.dat &&
	test_expect_code 1 "$SWEEP" plot o.db --x batch --y tok_s --out w.png 2>err &&
	grep -q "^sweep: the plot.s data .w.dat. is an SQLite write-ahead log: not overwriting it$" err &&
	cmp wal.bin w.dat &&
	ln -s o.db pic.png &&
	test_expect_code 1 "$SWEEP" plot o.db --x batch --y tok_s --out pic.png 2>err &&
	grep -q "^sweep: --out .pic.png. is the database being read: not overwriting it$" err &&
	! test -e pic.dat &&
	"$SWEEP" plot o.db --x batch --y tok_s --out fine.svg >out &&
	grep -q "^wrote fine.svg (data fine.dat, script fine.gp)$" out
'

test_expect_success 'snapshot is never written as a side file of a database, nor through a dangling link' '
	rm -f o.db-wal o.db-shm &&
	test_expect_code 1 "$SWEEP" snapshot o.db o.db-wal 2>err &&
	grep -q "^sweep: the snapshot .o.db-wal. is the wal file of the database .*/o.db.: not overwriting it$" err &&
	! test -e o.db-wal &&
	test_expect_code 1 "$SWEEP" snapshot o.db pd.dat-journal 2>err &&
	grep -q "is the journal file of the database .*/pd.dat." err && ! test -e pd.dat-journal &&
	ln -s nowhere.db dangling.db &&
	test_expect_code 1 "$SWEEP" snapshot o.db dangling.db 2>err &&
	grep -q "^sweep: the snapshot .dangling.db. is a symbolic link to a missing file: not writing through it$" err &&
	! test -e nowhere.db
'

test_expect_success 'merge: the output is no input, no side file of a database, no log (exit 1, as a report --out)' '
	"$SWEEP" run tok.yaml --db in.db 2>/dev/null && before=$(sum in.db) &&
	test_expect_code 1 "$SWEEP" merge in.db-wal in.db 2>err &&
	grep -q "^sweep: the output .in.db-wal. is the wal file of the database .*/in.db.: not overwriting it$" err &&
	! test -e in.db-wal &&
	test -e in.db-writer && test ! -s in.db-writer &&
	test_expect_code 1 "$SWEEP" merge in.db-writer in.db 2>err &&
	grep -q "is the writer file of the database" err && test ! -s in.db-writer &&
	cp wal.bin log.db &&
	test_expect_code 1 "$SWEEP" merge log.db in.db 2>err &&
	grep -q "^sweep: the output .log.db. is an SQLite write-ahead log: not overwriting it$" err &&
	cmp wal.bin log.db &&
	ln -s in.db in-link.db &&
	test_expect_code 1 "$SWEEP" merge in-link.db in.db 2>err &&
	grep -q "^sweep: the output .in-link.db. is the database being read: not overwriting it$" err &&
	test "$(sum in.db)" = "$before" &&
	"$SWEEP" merge merged.db in.db >/dev/null &&
	test "$(sql merged.db "SELECT count(*) FROM cells WHERE state = '\''ok'\''")" = 4
'

test_expect_success 'hostfile --out is never a database or its side file (exit 1)' '
	printf "hosts:\n  - name: n1\n    hostname: n1.example\n    address: 10.0.0.1\n    slots: 2\n" >inv.yaml &&
	before=$(sum o.db) &&
	test_expect_code 1 "$SWEEP" hosts hostfile inv.yaml --out o.db 2>err &&
	grep -q "^sweep: --out .o.db. is an SQLite database: not overwriting it$" err &&
	test_expect_code 1 "$SWEEP" hosts hostfile inv.yaml --out o.db-journal 2>err &&
	grep -q "is the journal file of the database" err && ! test -e o.db-journal &&
	test "$(sum o.db)" = "$before" &&
	"$SWEEP" hosts hostfile inv.yaml --out hf &&
	grep -q "^10.0.0.1 slots=2$" hf
'
