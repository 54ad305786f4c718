#!/bin/bash
# t0577-help-exits: every exit code a command's --help names is the code src/exitcode.h gives that outcome.
# Each mention is listed below with the outcome it names; a digit in a sentence about exiting that no entry
# covers fails the test too, so that a new mention is checked when it is written.
. tests/e2e/lib.sh

cat >"$T/exits.py" <<'EOF'
import re, subprocess, sys
sweep, header = sys.argv[1], sys.argv[2]
codes = dict((k, int(v)) for k, v in re.findall(r"\b(EXIT_[A-Z]+) = (\d+)", open(header).read()))
assert len(codes) == 7, codes
# (command, a pattern whose group is the code, the outcome it names)
MENTIONS = [
    ("plan", r"\(exit (\d), saying what changed\)", "EXIT_USAGE"),
    ("plan", r"being written by a run is refused \(exit (\d)\)", "EXIT_FAIL"),
    ("run", r"Exit: (\d) every cell ok", "EXIT_OK"),
    ("run", r", (\d) some cells failed or were not run", "EXIT_CELLS"),
    ("run", r", (\d) bad input", "EXIT_USAGE"),
    ("run", r", (\d) interrupted", "EXIT_INTERRUPTED"),
    ("run", r", (\d) other errors", "EXIT_FAIL"),
    ("run", r"the run stops \(exit (\d)\) saying what changed", "EXIT_USAGE"),
    ("run", r"a second is refused \(exit (\d)\)", "EXIT_FAIL"),
    ("run", r"recorded as interrupted [^;]*; exit (\d);", "EXIT_INTERRUPTED"),
    ("run", r"a spec with clocks: is refused without it \(exit (\d)\)", "EXIT_USAGE"),
    ("retry", r"Exit: (\d) done", "EXIT_OK"),
    ("retry", r", (\d) bad options", "EXIT_USAGE"),
    ("retry", r", (\d) other errors", "EXIT_FAIL"),
    ("status", r"Exit (\d) when a host was unreachable or could not be read", "EXIT_UNREACHABLE"),
    ("status", r"no sweep database exits (\d), as in every command", "EXIT_USAGE"),
    ("report", r"\(exit (\d) when a group missed it", "EXIT_WORSE"),
    ("report", r"lines\); it never writes over an SQLite file \(exit (\d)\)", "EXIT_FAIL"),
    ("report", r"DB itself \(exit (\d)\)", "EXIT_FAIL"),
    ("report", r"it says so and exits (\d), as a report with nothing to show", "EXIT_USAGE"),
    ("compare", r"exit: (\d), or", "EXIT_OK"),
    ("compare", r", or (\d) with --fail-above PCT when some row is shown slower", "EXIT_WORSE"),
    ("compare", r"(\d) for bad input or when no cell pairs", "EXIT_USAGE"),
    ("compare", r"(\d) for a failure", "EXIT_FAIL"),
    ("launch", r"Exit: (\d) every host started", "EXIT_OK"),
    ("launch", r", (\d) some host was unreachable or did not start", "EXIT_UNREACHABLE"),
    ("stop", r"Exit: (\d) every signalled sweep ended", "EXIT_OK"),
    ("stop", r", (\d) a host was unreachable", "EXIT_UNREACHABLE"),
    ("pull", r"Exit (\d) when some host was unreachable or not pulled", "EXIT_UNREACHABLE"),
    ("pull", r", (\d) when --into would take several sweeps", "EXIT_USAGE"),
]
# digits in a sentence about exiting that are no code of sweep's: a rank's number, mpirun's own status
NOT_CODES = [
    ("run", r"the exit status is mpirun's \((\d) once mpirun is signalled\)"),
]
out = subprocess.run([sweep, "--help"], capture_output=True, text=True).stdout
commands = re.findall(r"^  ([a-z]+) ", out, re.M)
assert "compare" in commands and "run" in commands, commands
bad, checked = [], 0
for cmd in commands:
    text = " ".join(subprocess.run([sweep, cmd, "--help"], capture_output=True, text=True).stdout.split())
    covered = set()
    for c, pat, name in MENTIONS:
        if c != cmd:
            continue
        m = re.search(pat, text)
        if not m:
            bad.append(f"{cmd}: no '{pat}' in its help")
            continue
        covered.add(m.start(1))
        checked += 1
        if int(m.group(1)) != codes[name]:
            bad.append(f"{cmd}: '{m.group(0)}' names {m.group(1)}; exitcode.h's {name} is {codes[name]}")
    for c, pat in NOT_CODES:
        m = re.search(pat, text) if c == cmd else None
        if m:
            covered.add(m.start(1))
    # every lone digit of a sentence that speaks of exiting must be one of the mentions above
    for s in re.finditer(r"[^.]*\bexit(?:s|:)?\b[^.]*", text, re.I):
        for d in re.finditer(r"(?<![\w.%-])\d(?![\w.%])", s.group(0)):
            if s.start() + d.start() not in covered:
                bad.append(f"{cmd}: an exit code no entry checks: ...{s.group(0)[max(0, d.start() - 40):d.end() + 30]}...")
print(f"{checked} exit codes named in {len(commands)} commands' help checked")
if bad:
    print("\n".join(bad))
    sys.exit(1)
EOF

test_expect_success 'each exit code a --help names is exitcode.h'\''s for the outcome it names' '
	python3 exits.py "$SWEEP" "$ROOT/src/exitcode.h" >out &&
	grep -qx "30 exit codes named in [0-9]* commands. help checked" out
'
