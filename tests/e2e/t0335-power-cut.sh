#!/bin/bash
# t0335-power-cut: a result a run has committed survives a power cut. The run writes to an ext4 file system
# on a loop device; mid-run the file system is shut down without flushing its journal or its dirty pages
# (EXT4_IOC_SHUTDOWN with EXT4_GOING_FLAGS_NOLOGFLUSH, what xfstests' godown does to model a crash): from
# then on every write fails and nothing that was not yet on the device gets there, as when power is lost.
# What the device had (the image file) is then checked (e2fsck), mounted again, and must hold every result
# the run had committed before the cut, which another reader counted.
. tests/e2e/lib.sh

test_needs "root (loop devices, mount)" test "$(id -u)" = 0
test_needs mpirun command -v mpirun
test_needs "losetup (mount)" command -v losetup
test_needs "mkfs.ext4, e2fsck (e2fsprogs)" command -v e2fsck
test_needs "mkfs.ext4 (e2fsprogs)" command -v mkfs.ext4
truncate -s 128M "$T/disk.img" && mkfs.ext4 -q -F "$T/disk.img" || { echo "not ok - setup: mkfs.ext4"; exit 1; }
test_needs "a free loop device" losetup -f
LOOP=$(losetup -f --show "$T/disk.img") || { echo "not ok - setup: losetup"; exit 1; }
mkdir "$T/mnt"
mount -t ext4 "$LOOP" "$T/mnt" || { losetup -d "$LOOP"; echo "not ok - setup: mount"; exit 1; }
# The test mounts the image again on whichever loop device is free: detach every one that has it.
trap 'umount "$T/mnt" 2>/dev/null; for l in $(losetup -n -O NAME -j "$T/disk.img"); do losetup -d "$l"; done
	rm -rf "$T"' EXIT

# 400 cells of 10 to 29 ms on two ranks: several seconds, long enough to cut the power under the run.
cat >"$T/cut.yaml" <<'Y'
sweep: cut
kernel: sleep
params:
  ms: {from: 10, to: 29, step: 1}
  jitter: {from: 0, to: 0.019, step: 0.001}
timing: {min_samples: 1, min_time: 0, max_noise: 1, timeout: 2, warmup: 0}
Y

# ok_n DB: results ok that a reader sees committed (0 while the database is being made).
ok_n() { sql "$1" "SELECT count(*) FROM results WHERE status = 'ok'" 2>/dev/null || echo 0; }

# shutdown DIR: the file system of DIR stops at once, its journal and dirty pages not written.
shutdown_fs() {
	python3 -c 'import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x8004587D, struct.pack("I", 2))  # EXT4_IOC_SHUTDOWN, EXT4_GOING_FLAGS_NOLOGFLUSH' "$1"
}

test_expect_success 'the power is cut mid-run: every result committed before the cut is there after' '
	run_bg timeout 120 mpirun --bind-to none -np 2 "$SWEEP" run cut.yaml --db mnt/c.db 2>err &&
	job=$BG_PID &&
	# some results first (bounded: 300 x 0.1 s), then their count, then the cut at once
	for i in $(seq 1 300); do
		if test "$(ok_n mnt/c.db)" -ge 60; then break; fi &&
		sleep 0.1 || return 1
	done &&
	kept=$(ok_n mnt/c.db) &&
	shutdown_fs mnt &&
	echo "committed before the cut: $kept" &&
	test "$kept" -ge 60 &&
	test_must_fail wait $job &&
	umount mnt &&
	losetup -d "$LOOP" &&
	# 0: clean, 1: errors mended (the journal replayed); more is a file system sweep cannot be blamed for
	{ e2fsck -fy disk.img >fsck.out 2>&1 || test $? -le 1; } &&
	LOOP=$(losetup -f --show disk.img) &&
	mount -t ext4 "$LOOP" mnt &&
	after=$(ok_n mnt/c.db) &&
	echo "after the cut: $after of $kept" &&
	test "$after" -ge "$kept" &&
	db_sound mnt/c.db
'
