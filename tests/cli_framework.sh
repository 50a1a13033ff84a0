#!/usr/bin/env bash
# cli_framework.sh: frameworks as data at the command line.  --framework
# and the hand switches are echoed in the header and stored in the JSON;
# a version a row does not list is priced as the nearest earlier one and
# said so in the framework line; an unknown framework, a version that is
# no version number and a switch the framework lacks are one sentence and
# exit 2; validate predicts the cases of a file whose framework objects
# are wrong one way each, and says why for the ones it cannot.
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
run 0 "# framework Megatron-Core 0.10-0.19 (default): flash attention, TP overlap pipelined" predict $M
run 0 "# framework NeMo 1.x (23.05-24.07): flash attention" predict $M --framework nemo:24.07
run 0 "2-byte gradients" predict $M --framework nemo:24.07
run 0 "TP overlap bulk" predict $M --tp-comm-overlap bulk
run 0 "unfused attention" predict $M --no-flash-attention
run 0 "2-byte gradients" predict $M --grad-reduce-dtype bf16
run 0 "DP reduction after the backward" predict $M --overlap-grad-reduce off
run 0 "--attention-backend unfused" predict $M --framework megatron-lm:2.5
run 2 "unknown framework 'megatron-xl' (known: megatron-lm, megatron-core" predict $M --framework megatron-xl
# Versions as users write them: the row, and the header says how it was read.
run 0 "# framework Megatron-Core 0.10-0.19: flash attention" predict $M --framework megatron-core:0.99
run 0 "; Megatron-Core 0.21 is newer than any row pplan knows: priced as 0.19 (Megatron-Core 0.10-0.19)" predict $M --framework megatron-core:0.21
run 0 "# framework NeMo 2.0 (24.09-25.07): flash attention" predict $M --framework nemo:25.04.rc2
run 0 "; NeMo 25.04.rc2 read as 25.04" predict $M --framework nemo:25.04.rc2
run 0 "; Megatron-Bridge 25.11 is the NeMo 25.11 container: priced as 0.2 (Megatron-Bridge 0.1-0.6)" predict $M --framework megatron-bridge:25.11
run 0 "; Megatron-Core 0.3 is older than any row pplan knows: priced as 0.4" predict $M --framework megatron-core:0.3
run 0 "; flash attention needs Ampere or newer" predict --model llama3-8b --gpus 8 --gpu v100-sxm2 --layout tp=8 --framework megatron-core:0.21
run 0 "Megatron-Core 0.21 is newer than any row" predict --model llama3-8b --gpus 8 --gpu v100-sxm2 --layout tp=8 --framework megatron-core:0.21
run 2 "framework megatron-core: 'banana' is not a version number (known: 0.4" predict $M --framework megatron-core:banana
if "$B" predict $M --framework megatron-core:0.14 2>&1 | grep -q "read as\|pplan knows"; then
	echo "FAIL: a listed version is noted"; fail=1
fi
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

# The MoE dispatcher: the flex dispatcher is said and emitted as Megatron's flags.
run 0 "MoE flex dispatcher (DeepEP)" predict --model qwen3-30b-a3b --gpus 16 --layout ep=16 --moe-dispatcher flex
run 0 "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep" predict --model qwen3-30b-a3b --gpus 16 --layout ep=16 --moe-dispatcher flex --emit megatron
run 0 "--moe-token-dispatcher-type alltoall" predict --model qwen3-30b-a3b --gpus 16 --layout ep=16 --emit megatron
run 2 "--moe-dispatcher must be alltoall, allgather or flex" predict --model qwen3-30b-a3b --gpus 16 --layout ep=16 --moe-dispatcher banana

# validate: never gives up on the file; each case its reason.
F="$S/tests/fixtures/cases/frameworks.json"
run 0 "predicted as other" validate "$F"
run 0 "NeMo 19.99 is older than any row pplan knows" validate "$F"
run 0 "cannot run this layout: framework has no context parallelism" validate "$F"
run 0 "3 of 4 cases predicted" validate "$F"

[ "$fail" -eq 0 ] && echo "cli_framework: all passed"
exit "$fail"
