#!/usr/bin/env bash
# cli_commands.sh: the happy paths of the real pplan binary.  `pplan
# search` prints a table in the nccl-tests manner (a names row and a
# units row) and one line per strategy family; every subcommand's --json
# writes the schema docs/design.md names ("JSON contracts").  Only grep checks
# the JSON here (no python or jq as a test dependency); the reports are
# parsed with cJSON by the Criterion tests (test_search.c: pplan.search/1,
# test_cost.c: pplan.prediction/1, test_cases.c: pplan.validation/1).
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
ko() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# run ARGS...: pplan ARGS... must exit 0 with nothing on stderr.
run() {
	local rc
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		ko "exit $rc: pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
		return 1
	fi
	if [ -s "$tmp/err" ]; then
		ko "stderr not empty: pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
		return 1
	fi
	ok
}

# has FILE ERE WHAT: FILE has a line matching the extended regex.
has() {
	if grep -Eq -- "$2" "$1"; then ok; else ko "$3 (no /$2/ in $(basename "$1"))"; fi
}

# json_key FILE KEY: pplan's JSON has a "KEY": member somewhere.
json_key() {
	has "$1" "\"$2\":" "key $2"
}

# ---- pplan search -------------------------------------------------------------
if run search --params 70B --gpus 512 --json "$tmp/search.json"; then
	out=$tmp/search.txt
	cp "$tmp/out" "$out"
	# The effective configuration, as '#' lines.
	has "$out" "^# model +llama3-70b \\(the dense zoo model nearest --params 70B\\)" "the nearest model is said"
	has "$out" "^# cluster .*512 x h100-sxm" "the cluster is echoed"
	has "$out" "^# rejected:.*out of memory" "rejections counted by reason"
	# Names row, then the units row right below it.
	has "$out" "^# +rank +layout +step +tokens/s +TFLOP/s +MFU" "table names row"
	if grep -A1 -E "^# +rank +layout" "$out" | tail -1 |
		grep -Eq "^# .*\(s\).*\(tok/s\).*\(%\).*\(GiB\)"; then
		ok
	else
		ko "no units row under the names row"
	fi
	# Ten ranked rows by default.
	n=$(grep -cE "^ +[0-9]+ +tp[0-9]+ pp[0-9]+ dp[0-9]+" "$out")
	if [ "$n" -eq 10 ]; then ok; else ko "$n table rows, want 10"; fi
	has "$out" "^Strategy families" "a Strategy families block"
	has "$out" "^  DP only[[:space:]]" "family DP only"
	has "$out" "^  TP only[[:space:]]" "family TP only"
	has "$out" "^  PP only[[:space:]]" "family PP only"
	has "$out" "^  TP\+DP[[:space:]]" "family TP+DP"
	has "$out" "^  PP\+DP[[:space:]]" "family PP+DP"
	has "$out" "^  TP\+PP[[:space:]]" "family TP+PP"
	has "$out" "^  TP\+PP\+DP" "family TP+PP+DP"
	# 64 heads: pure TP on 512 GPUs is impossible, and the line says why.
	has "$out" "^  TP only .*impossible.*heads" "TP only says why it is impossible"
	has "$out" "^Megatron-LM flags" "Megatron-LM flags of the best layout"
	has "$out" "--tensor-model-parallel-size [0-9]+" "the TP flag"
	j=$tmp/search.json
	has "$j" "\"schema\":[[:space:]]*\"pplan\.search/1\"" "schema pplan.search/1"
	json_key "$j" evaluated
	json_key "$j" rejected
	json_key "$j" layouts
	json_key "$j" step_time_s
	json_key "$j" memory_gib
fi

run search --params 7B --gpus 8 --top 3 --global-batch 256 && {
	n=$(grep -cE "^ +[0-9]+ +tp[0-9]+ pp[0-9]+ dp[0-9]+" "$tmp/out")
	if [ "$n" -eq 3 ]; then ok; else ko "--top 3 printed $n rows"; fi
	has "$tmp/out" "global batch 256 sequences" "--global-batch echoed"
}

# ---- pplan predict --------------------------------------------------------------
if run predict --model llama3-8b --gpus 8 --layout tp=2,dp=4,gbs=64 --json "$tmp/p.json"; then
	has "$tmp/out" "^# layout +tp=2,pp=1,dp=4,cp=1,ep=1,vp=1,mbs=1,gbs=64,sp=on,recompute=none,zero=1,schedule=1f1b" \
		"effective layout with the defaults filled in"
	has "$tmp/out" "GiB" "memory in GiB"
	j=$tmp/p.json
	has "$j" "\"schema\":[[:space:]]*\"pplan\.prediction/1\"" "schema pplan.prediction/1"
	for k in model cluster layout feasible reject_reason step_time_s tokens_per_s \
		tflops_per_gpu mfu bubble_fraction memory_gib time_s total weights \
		gradients optimizer activations other compute recompute tp_comm \
		cp_comm ep_comm pp_comm dp_comm_exposed tied_embedding_allreduce bubble; do
		json_key "$j" "$k"
	done
	if grep -q "tied embedding" "$tmp/out"; then ko "an untied model prints a tied embedding line"; else ok; fi
fi
# The fp8 recipe priced is in the JSON: MXFP8 named, null outside fp8 (above).
if run predict --model llama3-8b --gpus 8 --cluster hgx-b200 --layout tp=1 --precision FP8-MX \
	--framework megatron-bridge --json "$tmp/mx.json"; then
	has "$tmp/mx.json" '"fp8_recipe":[[:space:]]*"mxfp8"' "fp8_recipe mxfp8"
	has "$tmp/mx.json" '"fp8_weights":[[:space:]]*true' "Bridge keeps fp8 weights"
	has "$tmp/out" "^# framework .*MXFP8, fp8 weights" "the framework line names the recipe"
	has "$j" '"fp8_recipe":[[:space:]]*null' "no recipe in bf16"
fi
# A tied table over a pipeline (GPT-3 175B, pp 8): its all-reduce is printed
# under DP communication exposed, the figure the JSON gives, and no more
# than the exposed DP time it is part of.
if run predict --model gpt3-175b --gpus 1024 --layout tp=8,pp=8 --json "$tmp/t.json"; then
	emb=$(sed -n 's/^ *tied embedding *\([0-9.]*\) s of it.*/\1/p' "$tmp/out")
	dpx=$(sed -n 's/^ *DP communication exposed *\([0-9.]*\) s.*/\1/p' "$tmp/out")
	js=$(grep -o '"tied_embedding_allreduce":[[:space:]]*[0-9.e-]*' "$tmp/t.json" | sed 's/.*:[[:space:]]*//')
	if [ -n "$emb" ] && [ -n "$js" ] && awk -v a="$emb" -v b="$js" -v d="$dpx" \
		'BEGIN { exit !(a > 0 && (a - b < 0.0005 && b - a < 0.0005) && a <= d) }'; then
		ok
	else
		ko "tied embedding line '$emb' s against JSON '$js' s and DP exposed '$dpx' s"
	fi
fi

# ---- pplan validate -------------------------------------------------------------
if run validate "$S/validation/calibration.json" --json "$tmp/v.json"; then
	has "$tmp/out" "^# cases     .*: 101 published runs" "101 runs read"
	has "$tmp/out" "MAPE" "a MAPE summary"
	has "$tmp/out" "^#[[:space:]]+overall[[:space:]]+[0-9]+[[:space:]]+[0-9]+\.[0-9]" \
		"an overall MAPE line"
	has "$tmp/out" "mbs=1" "assumed defaults are listed"
	j=$tmp/v.json
	has "$j" "\"schema\":[[:space:]]*\"pplan\.validation/1\"" "schema pplan.validation/1"
	for k in cases summary id predicted_step_time_s measured_step_time_s \
		step_time_error_pct predicted_memory_gib measured_memory_gib \
		memory_error_pct predicted_oom measured_oom assumed \
		step_time_mape_pct memory_mape_pct n_step_time n_memory oom_agreement; do
		json_key "$j" "$k"
	done
fi

# ---- lists and help ---------------------------------------------------------------
if run search --list-models; then
	for m in gpt3-175b bloom-176b llama2-70b llama3-8b llama3.1-405b nemotron4-340b mixtral-8x7b; do
		has "$tmp/out" "^ +$m[[:space:]]" "zoo lists $m"
	done
fi
if run search --list-clusters; then
	for c in dgx-a100 dgx-h100 dgx-h200 hgx-b200; do
		has "$tmp/out" "^ +$c[[:space:]]" "presets list $c"
	done
fi
if run search --list-gpus; then
	for g in a100-40gb a100-80gb h100-sxm h100-96gb h800 h200 b200; do
		has "$tmp/out" "^ +$g[[:space:]]" "GPU table lists $g"
	done
fi
for cmd in search predict validate; do
	run "$cmd" --help && has "$tmp/out" "^usage: pplan $cmd" "$cmd --help"
done
run --help && has "$tmp/out" "search" "pplan --help lists the commands"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
