#!/bin/sh
# tree.sh: a command cell's program that leaves a tree behind it (tests/e2e/t0308-tree.sh,
# tests/unit/test_spawn.c). It starts a child; a child with a child of its own; an orphan (its parent
# exits at once); and an orphan that setsid() took out of the program's process group and session. All of
# them, and the program, ignore SIGTERM; only SIGKILL ends them. Once all are started it says "ready" on
# stdout and waits for ever. Find them by an environment variable the caller sets.
trap '' TERM
sleep 1000 &
sh -c 'sleep 1000 & wait' &
sh -c 'sleep 1000 >/dev/null 2>&1 &'
sh -c 'setsid sleep 1000 >/dev/null 2>&1 &'
echo ready
wait
