#!/usr/bin/env bash
# cli_errors.sh: bad input to the real pplan binary.  DESIGN.md: "2 bad
# input or an impossible request (message on stderr, nothing written)".
# For every case below: exit status exactly 2, exactly one line on stderr
# that starts with "pplan" and names the problem, nothing on stdout, and
# no --json report (nor its temporary file) left behind.  Never a crash.
# Bad files live in tests/fixtures/bad/ (see its README.md).
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
BAD=$S/tests/fixtures/bad
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
J=$tmp/report.json
passed=0
failed=0

# bad NEEDLE ARGS...: runs pplan ARGS... --json $J and checks the contract.
# nojson NEEDLE ARGS...: the same without appending --json (for argument
# lists that --json would change).
check() {
	local needle=$1 rc nerr why=""
	shift
	rm -f "$J" "$J".tmp.*
	# Every answer here takes milliseconds; a hang is a failure too.
	timeout 10 "$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	nerr=$(wc -l <"$tmp/err")
	if [ "$rc" -eq 124 ]; then
		why="no answer within 10 s"
	elif [ "$rc" -ne 2 ]; then
		why="exit status $rc, want 2"
	elif [ "$nerr" -ne 1 ]; then
		why="$nerr lines on stderr, want 1"
	elif [ "$(head -c 5 "$tmp/err")" != "pplan" ]; then
		why="stderr does not start with 'pplan'"
	elif ! grep -qF -- "$needle" "$tmp/err"; then
		why="stderr does not name '$needle'"
	elif [ -s "$tmp/out" ] && [ "$stdout_ok" -eq 0 ]; then
		why="something on stdout"
	elif [ -e "$J" ] || compgen -G "$J.tmp.*" >/dev/null; then
		why="a --json report was written"
	fi
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		echo "FAIL: pplan $*"
		echo "      $why"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
		sed 's/^/      stdout: /' "$tmp/out" | head -5
	else
		passed=$((passed + 1))
	fi
}
stdout_ok=0
bad() {
	local needle=$1
	shift
	check "$needle" "$@" --json "$J"
}
nojson() {
	check "$@"
}
# impossible NEEDLE ARGS...: a valid request nothing can satisfy: as bad(),
# but the analysis of why (the strategy families) may be on stdout.
impossible() {
	stdout_ok=1
	bad "$@"
	stdout_ok=0
}

M8="--model llama3-8b --gpus 8"

# ---- malformed and truncated JSON files ----------------------------------
bad "model-malformed.json" search --model "$BAD/model-malformed.json" --gpus 8
bad "model-truncated.json" search --model "$BAD/model-truncated.json" --gpus 8
bad "model-malformed.json" predict --model "$BAD/model-malformed.json" --gpus 8 --layout tp=8
bad "cluster-malformed.json" search --params 7B --cluster "$BAD/cluster-malformed.json" --gpus 16
bad "cluster-truncated.json" search --params 7B --cluster "$BAD/cluster-truncated.json" --gpus 16
bad "tpu-v5p" search --params 7B --cluster "$BAD/cluster-unknown-gpu.json" --gpus 8
bad "no-such-model.json" search --model "$tmp/no-such-model.json" --gpus 8
bad "malformed JSON" search --model "$S/tests/fixtures/hf/bad-truncated.json" --gpus 8

# ---- unknown names ---------------------------------------------------------
bad "gpt5-10t" search --model gpt5-10t --gpus 8
bad "z9000" search --params 7B --gpus 8 --gpu z9000
bad "dgx-z1" search --params 7B --gpus 8 --cluster dgx-z1
bad "fp4" search $M8 --precision fp4
bad "frobnicate" frobnicate
bad "--frobnicate" search $M8 --frobnicate
bad "--frobnicate" predict $M8 --layout tp=8 --frobnicate

# ---- zero, negative and malformed sizes ------------------------------------
bad "--gpus" search --params 7B --gpus 0
bad "--gpus" search --params 7B --gpus -8
bad "--gpus" search --params 7B --gpus abc
bad "--gpus" search --params 7B --gpus 8.5
# 12 is not a whole number of 8-GPU DGX H100 nodes.
bad "12" search --params 7B --gpus 12
bad "12" predict --model llama3-8b --gpus 12 --layout tp=4
# GPU counts past what an int of nodes holds: 2^35 = 8 x 2^32 GPUs wrap
# to 0 nodes, 2^34 to a negative count, 8e13 runs the search for ever.
bad "34359738368 GPUs" search --params 70B --gpus 34359738368
bad "17179869184 GPUs" predict --params 70B --gpus 17179869184 --layout tp=8
bad "80000000000000 GPUs" search --params 70B --gpus 80000000000000
bad "--params" search --params 0 --gpus 8
bad "--params" search --params -70B --gpus 8
bad "--params" search --params seventy --gpus 8
bad "--seq" search $M8 --seq 0
bad "--global-batch" search $M8 --global-batch 0
bad "--global-batch" search $M8 --global-batch -64
bad "--tokens-per-step" search $M8 --tokens-per-step 0
# 1000 tokens is not a whole number of 8192-token sequences.
bad "--tokens-per-step" search $M8 --tokens-per-step 1000
bad "--max-memory-gib" search $M8 --max-memory-gib 0
bad "--max-memory-gib" search $M8 --max-memory-gib -1
# An H100 has 79.2 GiB, not 200.
bad "--max-memory-gib" search $M8 --max-memory-gib 200
bad "--top" search $M8 --top 0
bad "--gpus is required" search --model llama3-8b
bad "no model" search --gpus 8
bad "--layout is required" predict $M8
nojson "--gpus" search --params 7B --gpus

# ---- layouts that do not divide, unknown and repeated keys ------------------
# llama3-8b: 32 heads, 8 kv heads, 32 layers.
bad "32 attention heads" predict --model llama3-8b --gpus 24 --layout tp=3
bad "32 layers" predict --model llama3-8b --gpus 56 --layout pp=7
# On 8 GPUs, tp=3 cannot multiply out: 3 x 1 x 1 x 1 != 8.
bad "tp*pp*dp*cp" predict $M8 --layout tp=3
bad "tp*pp*dp*cp" predict $M8 --layout tp=2,dp=2
# 32 layers / pp 4 = 8 per stage, not divisible by vp 3.
bad "vp=3" predict --model llama3-8b --gpus 32 --layout pp=4,vp=3
# gbs 24 is not a multiple of mbs 2 x dp 8.
bad "gbs=24" predict $M8 --layout dp=8,mbs=2,gbs=24
# 6 microbatches are not a multiple of pp 4 for interleaving.
bad "multiple of pp" predict --model llama3-8b --gpus 32 --layout pp=4,vp=2,dp=8,gbs=48
bad "ep=" predict $M8 --layout dp=8,ep=2
bad "unknown key 'foo'" predict $M8 --layout foo=2
bad "'tp' given twice" predict $M8 --layout tp=2,tp=2
bad "zero must be 0, 1, 2 or 3" predict $M8 --layout tp=8,zero=4
bad "sp=on needs tp > 1" predict $M8 --layout tp=1,sp=on
bad "tp must be a positive whole number" predict $M8 --layout tp=0
# 2^80 GPUs: the product of the degrees must not overflow.
bad "is more than" predict $M8 --layout tp=1048576,pp=1048576,dp=1048576,cp=1048576
bad "is more than" predict --model llama3-8b --layout tp=1048576,pp=1048576,dp=1048576,cp=1048576
bad "not key=value" predict $M8 --layout tp
bad "recompute must be" predict $M8 --layout tp=8,recompute=sometimes
bad "schedule must be" predict $M8 --layout pp=8,schedule=pipedream
bad "unknown key 'foo'" simulate $M8 --layout pp=8,foo=1

# ---- conflicting options: one sentence naming both --------------------------
bad "--model and --params" search --model llama3-8b --params 7B --gpus 8
bad "--global-batch and --tokens-per-step" search $M8 --global-batch 64 --tokens-per-step 524288
bad "--cluster and --gpu" search $M8 --cluster dgx-h100 --gpu h100-sxm
bad "conflict" predict $M8 --layout tp=8,gbs=64 --global-batch 64

# ---- impossible requests ------------------------------------------------------
# A100s have no fp8 tensor cores.
bad "fp8" search --params 7B --gpus 8 --gpu a100-80gb --precision fp8
bad "fp8" search --params 7B --gpus 8 --cluster dgx-a100 --precision fp8
bad "fp8" predict --model llama3-8b --gpus 8 --cluster dgx-a100 --precision fp8 --layout tp=8

# Llama 2 70B on one DGX H100: 18 bytes x 68.98e9 parameters / 8 GPUs
# = 144.6 GiB of model states per GPU at best; an H100 has 79.2 GiB.
impossible "no layout of llama2-70b fits on 8 GPUs" search --model llama2-70b --gpus 8

# ---- pplan validate of bad files -------------------------------------------------
bad "no-such-cases.json" validate "$tmp/no-such-cases.json"
bad "cases-malformed.json" validate "$BAD/cases-malformed.json"
bad "cases-truncated.json" validate "$BAD/cases-truncated.json"
bad "cases-empty-file.json" validate "$BAD/cases-empty-file.json"
bad "cases-no-schema.json" validate "$BAD/cases-no-schema.json"
bad "cases-empty.json" validate "$BAD/cases-empty.json"
bad "cases-unknown-gpu.json" validate "$BAD/cases-unknown-gpu.json"
bad "--frobnicate" validate "$BAD/cases-good.json" --frobnicate

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
