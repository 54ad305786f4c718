#!/bin/bash
# t0110-spec-errors: a bad spec gets one line per problem, each with file:line:col, exit code 2, and no
# database.
. tests/e2e/lib.sh

bad() { # bad NAME 'expected message after "sweep: " (grep -E)' <<spec
	cat >"$T/$1.yaml"
	test_expect_success "bad spec: $1" "
		test_expect_code 2 \"\$SWEEP\" run $1.yaml --db $1.db 2>err &&
		cat err &&
		grep -E -q \"^sweep: $2\" err && ! grep -E -v \"^sweep: $1.yaml:[0-9]+:[0-9]+: \" err &&
		! test -e $1.db && ! test -e results/
	"
}

bad unknown-key 'unknown-key.yaml:2:1: .*kernal.*did you mean .kernel' <<'Y'
sweep: x
kernal: sleep
Y
bad unknown-kernel "unknown-kernel.yaml:2:9: .*cpu.gem.*did you mean .cpu.gemm" <<'Y'
sweep: x
kernel: cpu.gem
Y
bad undeclared-param "undeclared-param.yaml:4:3: .*'MM'.*did you mean 'M'" <<'Y'
sweep: x
kernel: cpu.gemm
params:
  MM: [1, 2]
Y
bad empty-axis 'empty-axis.yaml:4:6: empty axis .M' <<'Y'
sweep: x
kernel: cpu.gemm
params:
  M: []
Y
bad wrong-type 'wrong-type.yaml:3:9: .*integer.*repeat.*two' <<'Y'
sweep: x
kernel: sleep
repeat: two
Y
bad placeholder 'placeholder.yaml:2:17: .*\{modle\}.*did you mean .\{model\}' <<'Y'
sweep: x
command: [echo, "{modle}"]
params: {model: [a, b]}
Y
bad command-timing 'command-timing.yaml:3:9: .timing. of a command sweep needs .min_runs: N.' <<'Y'
sweep: x
command: [true]
timing: {warmup: 1, min_samples: 10}
Y
bad command-l2 "command-l2.yaml:4:27: 'l2' means nothing for a command" <<'Y'
sweep: x
command: [true]
min_runs: 5
timing: {max_noise: 0.01, l2: hot}
Y
bad metric-match "metric-match.yaml:3:53: invalid value 'evry' for 'match' \\(expected one\\|first\\|last\\|each\\)" <<'Y'
sweep: x
command: [true]
metrics: {t: {regex: 'BM_([a-z]+) ([0-9]+)', match: evry}}
Y
bad metric-path "metric-path.yaml:3:28: invalid path 'jobs\\[0\\.read' for 'iops'" <<'Y'
sweep: x
command: [true]
metrics: {json: '.', iops: 'jobs[0.read'}
Y
bad exclude-key 'exclude-key.yaml:5:6: .*dtyp.*did you mean .dtype' <<'Y'
sweep: x
kernel: cpu.gemm
params: {dtype: [f32, f64]}
exclude:
  - {dtyp: f64}
Y
bad zipped-keys 'zipped-keys.yaml:6:7: .*other keys than the first' <<'Y'
sweep: x
kernel: cpu.gemm
params:
  shape:
    - {N: 1, K: 2}
    - {N: 1, M: 2}
Y
bad yaml-syntax 'yaml-syntax.yaml:3:19: ' <<'Y'
sweep: x
kernel: sleep
params: {ms: [1, 2}
Y
bad choice 'choice.yaml:4:16: .*f16.*expected f32\|f64' <<'Y'
sweep: x
kernel: cpu.gemm
params:
  dtype: [f32, f16]
Y

test_expect_success 'a missing spec file is exit 2 with its name' '
	test_expect_code 2 "$SWEEP" run nope.yaml 2>err &&
	grep -q "cannot open '\''nope.yaml'\''" err && ! test -e results/
'
