#!/usr/bin/env bash
# cli_framework.sh: frameworks as data at the command line.  --framework
# and the hand switches are echoed in the header and stored in the JSON;
# an unknown framework, a version that does not exist and a switch the
# framework lacks are one sentence and exit 2; validate predicts the
# cases of a file whose framework objects are wrong one way each, and
# says why for the ones it cannot.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run CODE NEEDLE ARGS...: expects exit CODE and NEEDLE in stdout+stderr.
run() {
	local code=$1 needle=$2 rc
	shift 2
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		echo "FAIL: exit $rc, want $code: pplan $*"
		cat "$tmp/err"
		fail=1
	elif ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
		echo "FAIL: no '$needle' in the output of: pplan $*"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

M="--model llama3-8b --gpus 8 --layout tp=8"
run 0 "# framework Megatron-Core 0.10-0.14 (default): flash attention, TP overlap pipelined" predict $M
run 0 "# framework NeMo 1.x (23.05-24.07): flash attention" predict $M --framework nemo:24.07
run 0 "2-byte gradients" predict $M --framework nemo:24.07
run 0 "TP overlap bulk" predict $M --tp-comm-overlap bulk
run 0 "unfused attention" predict $M --no-flash-attention
run 0 "2-byte gradients" predict $M --grad-reduce-dtype bf16
run 0 "DP reduction after the backward" predict $M --overlap-grad-reduce off
run 0 "--attention-backend unfused" predict $M --framework megatron-lm:2.5
run 2 "unknown framework 'megatron-xl' (known: megatron-lm, megatron-core" predict $M --framework megatron-xl
run 2 "has no version '0.99'" predict $M --framework megatron-core:0.99
run 2 "has no TP communication overlap" predict $M --framework megatron-lm:2.5 --tp-comm-overlap on
run 2 "--tp-comm-overlap must be on, off, bulk or pipelined" predict $M --tp-comm-overlap sometimes
run 2 "--grad-reduce-dtype must be fp32, bf16 or fp16" predict $M --grad-reduce-dtype fp64
run 2 "framework must be NAME or NAME:VERSION" predict $M --framework nemo:

# Stored in the JSON, with the switches as given.
run 0 "fits" predict $M --framework nemo:24.07 --tp-comm-overlap off --json "$tmp/p.json"
if [ "$(jq -r '.framework.name, .framework.tp_comm_overlap, .framework.switches.tp_comm_overlap, .framework.grad_reduce_dtype' "$tmp/p.json" | tr '\n' ' ')" != "nemo none none bf16 " ]; then
	echo "FAIL: framework in the prediction JSON:"; jq .framework "$tmp/p.json"; fail=1
fi
run 0 "# framework" search --model llama3-8b --gpus 8 --framework torchtitan --top 1 --json "$tmp/s.json"
[ "$(jq -r .framework.name "$tmp/s.json")" = torchtitan ] || { echo "FAIL: framework in the search JSON"; fail=1; }

# validate: never gives up on the file; each case its reason.
F="$S/tests/fixtures/cases/frameworks.json"
run 0 "predicted as other" validate "$F"
run 0 "framework nemo has no version '19.99'" validate "$F"
run 0 "cannot run this layout: framework has no context parallelism" validate "$F"
run 0 "2 of 4 cases predicted" validate "$F"

[ "$fail" -eq 0 ] && echo "cli_framework: all passed"
exit "$fail"
