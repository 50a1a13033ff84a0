#!/bin/sh
# run.sh: pplan's emitted configs loaded into the real frameworks
# (conformance.py).  Needs the pinned frameworks in a virtual environment
# (requirements.txt; cmake/install-deps.sh --frameworks builds it at
# /opt/pplan-frameworks, or PPLAN_FRAMEWORKS names another).  Without it
# the test is skipped (exit 77), unless PPLAN_CONFORMANCE=require.
set -u
B=${PPLAN_BIN:?PPLAN_BIN names the pplan binary}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PPLAN_FRAMEWORKS:-/opt/pplan-frameworks}/bin/python
if ! "$PY" -c "import torchtitan, megatron.core, deepspeed" 2>/dev/null; then
	echo "conformance: no framework environment at $PY (cmake/install-deps.sh --frameworks)"
	[ "${PPLAN_CONFORMANCE:-}" = require ] && exit 1
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
# MODEL GPUS LAYOUT: dense, pipelined, interleaved, MoE with expert
# parallelism, MLA, models torchtitan has no config for, and Hugging Face
# config.json files (tests/fixtures/hf), which must find the same configs.
HF=${PPLAN_SOURCE_DIR:-$HERE/../..}/tests/fixtures/hf
while read -r model gpus layout extra; do
	n=$((n + 1))
	echo "$model $gpus $layout $extra" >"$tmp/$n.case"
	fmts="torchtitan megatron nemo bridge"
	case $extra in *--peft*) fmts="nemo bridge" ;; esac # LoRA: the recipes alone
	for fmt in $fmts; do
		ext=sh
		[ $fmt = bridge ] && ext=py
		# shellcheck disable=SC2086 # extra: a switch and its value
		"$B" predict --model "$model" --gpus "$gpus" --layout "$layout" $extra --emit $fmt \
			>"$tmp/$n.$fmt.$ext" 2>&1 || { echo "pplan --emit $fmt failed for $model $layout"; cat "$tmp/$n.$fmt.$ext"; exit 1; }
	done
	# shellcheck disable=SC2086
	"$B" predict --model "$model" --gpus "$gpus" --layout "$layout" $extra --json "$tmp/$n.json" \
		>/dev/null 2>&1 || { echo "pplan predict --json failed for $model $layout $extra"; exit 1; }
	pl= # a layout string is the split the layout's vp needs
	case $extra in --pipeline-layout=*) pl=$extra ;; esac
	case "$layout $extra" in *ep=* | *--peft*) ;; *)
		# shellcheck disable=SC2086
		"$B" predict --model "$model" --gpus "$gpus" --layout "$layout" $pl --emit deepspeed \
			>"$tmp/$n.deepspeed.json" 2>"$tmp/err" || { echo "pplan --emit deepspeed failed for $model $layout"; cat "$tmp/err"; exit 1; } ;;
	esac
done <<CASES
llama3-8b 8 tp=2,dp=4,gbs=32,mbs=1,zero=3
llama3-70b 64 tp=8,pp=4,dp=2,gbs=64,mbs=1,zero=1,recompute=selective
llama3-70b 512 tp=8,pp=2,dp=32,vp=8,gbs=512,mbs=1,zero=1
llama3-70b 64 pp=4,vp=5,dp=16,gbs=128,mbs=1,recompute_layers=2
llama3-8b 8 dp=8,gbs=64,mbs=1,offload_layers=8
qwen3-30b-a3b 16 pp=2,dp=8,ep=8,gbs=256,mbs=1
qwen3-30b-a3b 16 pp=2,vp=2,dp=8,ep=8,gbs=256,mbs=1 --moe-a2a-overlap=on
deepseek-v2 64 dp=64,ep=16,gbs=256,mbs=1 --moe-shared-expert-overlap=on
llama3-8b 8 dp=8,gbs=64,mbs=1,zero=1 --precision-aware-optimizer=on
llama3-8b 8 dp=8,gbs=64,mbs=1,zero=1 --precision=mxfp8 --cluster=hgx-b200
llama3-8b 8 tp=2,dp=4,gbs=64,mbs=1,zero=1 --precision=fp8-blockwise
llama3-8b 8 dp=8,gbs=64,mbs=1,zero=1 --precision=fp8-cs
llama3-8b 8 dp=8,gbs=64,mbs=1,zero=1 --precision=nvfp4 --cluster=hgx-b200
llama3-8b 16 pp=2,dp=8,gbs=64,mbs=1,zero=1 --precision=nvfp4 --cluster=hgx-b200 --bf16-layers=0,4
llama3-8b 8 dp=8,gbs=64,mbs=1,zero=1 --precision=fp8-cs --bf16-layers=1,1
deepseek-v3 256 dp=256,ep=64,gbs=1024,mbs=1,zero=3,recompute=full
deepseek-v3 1024 tp=2,pp=16,vp=2,dp=32,ep=64,etp=1,gbs=8192,mbs=1 --pipeline-layout=Et|(tt|)*30mL
llama3-70b 64 tp=8,pp=4,vp=3,dp=2,gbs=64,mbs=1 --pipeline-layout=Et*6(|t*7)*7|t*6(|t*7)*2|t*5L
gpt-oss-120b 64 dp=64,ep=8,gbs=256,mbs=1,zero=3
gpt3-1.3b 8 dp=8,gbs=64,mbs=1,zero=1
mixtral-8x7b 64 tp=2,dp=32,ep=8,gbs=256,mbs=1
mixtral-8x7b 64 tp=2,dp=32,ep=8,gbs=256,mbs=1 --moe-dispatcher=allgather
qwen3-30b-a3b 32 dp=32,ep=8,gbs=256,mbs=1,offload=expert_fc1+moe_act --framework=megatron-bridge
$HF/Qwen3-30B-A3B.json 16 dp=16,ep=16,gbs=256,mbs=1,zero=3
$HF/Meta-Llama-3-8B.json 16 tp=2,pp=2,dp=4,gbs=64,mbs=1
$HF/NVIDIA-Nemotron-3-Nano-30B-A3B.json 8 tp=2,dp=4,ep=4,gbs=64,mbs=1
$HF/Qwen3-Next-80B-A3B.json 16 tp=2,dp=8,ep=8,gbs=64,mbs=1
$HF/gemma-2-9b.json 8 tp=2,dp=4,gbs=32,mbs=1
mistral-7b 8 tp=2,dp=4,gbs=64,mbs=1
qwen2.5-72b 64 tp=8,pp=2,dp=4,gbs=64,mbs=1
llama3-8b 8 dp=8,gbs=64,mbs=1 --peft=lora:8 --seq=4096
llama3-70b 16 tp=4,pp=2,dp=2,gbs=32,mbs=2 --peft=lora --seq=4096
llama3-70b 16 tp=2,pp=4,vp=5,dp=2,gbs=32,mbs=1 --peft=lora:16 --lora-targets=linear_qkv --seq=4096
qwen3-30b-a3b 16 pp=2,dp=8,ep=8,gbs=128,mbs=1 --peft=lora:16 --seq=2048
llama2-7b 8 tp=2,dp=4,gbs=64,mbs=1 --peft=lora:64 --seq=4096
$HF/gemma-2-9b.json 8 tp=2,dp=4,gbs=32,mbs=1 --peft=lora --seq=4096
CASES
"$PY" "$HERE/conformance.py" "$tmp"
