#!/usr/bin/env bash
# cli_from.sh: `pplan predict --from FORMAT SOURCE` prices a launch
# configuration a team already runs.  For every emitter and the zoo's
# families (GPT with learned positions, Llama dense and GQA, Nemotron's
# squared ReLU, Mixtral, fine-grained MoE with and without shared experts,
# MLA, uneven stages, interleaving, context parallelism, FSDP, offloading)
# the config --emit writes, read back, is the same job: the same layout,
# the same parameter count and the same predicted step time to the last
# digit of the JSON (the second method: the job priced from --layout).
# Launch configurations written by hand (a script with torchrun and shell
# syntax, the words after --) are read as the framework reads them, and
# bad input is one sentence and exit 2.
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
field() { # FILE KEY: a JSON value as cJSON prints it (a string with its quotes), first occurrence
	grep -o '"'"$2"'":[[:space:]]*\("[^"]*"\|[^,}]*\)' "$1" | head -1 | sed 's/^[^:]*:[[:space:]]*//'
}

# roundtrip FORMAT GPUS MODEL LAYOUT [PREDICT ARGS...]: --emit, then --from.
# The read-back gets what the file cannot hold: the GPU count, the model
# for DeepSpeed, the version of a Megatron-family framework, the GPU.
roundtrip() {
	local fmt=$1 gpus=$2 model=$3 layout=$4 keep=() args=() a
	shift 4
	for a in "$@"; do # --key=value, the predict options of the original
		args+=("${a%%=*}" "${a#*=}")
		case $a in --framework=* | --gpu=*) keep+=("${a%%=*}" "${a#*=}") ;; esac
	done
	[ "$fmt" = deepspeed ] && keep+=(--model "$model")
	# a recipe of a model the zoo lacks (Qwen3-Next, Nemotron 3, Gemma 2)
	case $fmt:$model in bridge:*/* | nemo:*/*) keep+=(--model "$model") ;; esac
	if ! "$B" predict --model "$model" --gpus "$gpus" --layout "$layout" "${args[@]}" \
		--json "$tmp/a.json" >/dev/null 2>"$tmp/err"; then
		ko "$fmt $model $layout: the original does not price: $(cat "$tmp/err")"
		return
	fi
	"$B" predict --model "$model" --gpus "$gpus" --layout "$layout" "${args[@]}" \
		--emit "$fmt" >"$tmp/conf" 2>/dev/null
	if ! "$B" predict --from "$fmt" "$tmp/conf" --gpus "$gpus" "${keep[@]}" \
		--json "$tmp/b.json" >"$tmp/out" 2>"$tmp/err"; then
		ko "$fmt $model $layout: read back: $(cat "$tmp/err")"
		return
	fi
	for k in string params step_time_s; do
		if [ "$(field "$tmp/a.json" $k)" = "$(field "$tmp/b.json" $k)" ]; then
			ok
		else
			ko "$fmt $model $layout: $k $(field "$tmp/a.json" $k) priced, $(field "$tmp/b.json" $k) read back"
		fi
	done
}

# Megatron-LM (and the Megatron family's versions)
roundtrip megatron 8 gpt3-1.3b dp=8,gbs=64
roundtrip megatron 64 llama3-70b tp=8,pp=2,dp=4,gbs=64
roundtrip megatron 16 llama3-8b tp=2,pp=4,dp=2,vp=2,gbs=32
# a split of any shape: ranks of 7, 9, 8 and 8 layers, chunks of 3 and 4 on rank 0
roundtrip megatron 16 llama3-8b tp=2,pp=4,dp=2,gbs=32 '--pipeline-layout=Et*3|t*5(|t*4)*5|t*4L'
roundtrip bridge 16 llama3-8b tp=2,pp=4,dp=2,gbs=32 '--pipeline-layout=Et*3|t*5(|t*4)*5|t*4L'
roundtrip megatron 64 llama3-70b tp=4,pp=4,dp=2,cp=2,vp=5,gbs=512 --rank-order=tp-cp-pp-dp
roundtrip megatron 16 llama3-8b tp=4,dp=4,gbs=32 --precision=fp8 --tp-comm-overlap=off
roundtrip megatron 8 llama3-8b dp=8,gbs=64 --precision=nvfp4 --gpu=b200
roundtrip bridge 8 llama3-8b dp=8,gbs=64 --precision=nvfp4 --gpu=gb300
roundtrip nemo 8 llama3-8b dp=8,gbs=64 --precision=nvfp4 --gpu=b200
roundtrip megatron 16 llama3-8b pp=2,dp=8,gbs=64 --precision=nvfp4 --gpu=b200 --bf16-layers=0,4
roundtrip bridge 8 llama3-8b dp=8,gbs=64 --precision=fp8-cs --bf16-layers=1,2
roundtrip nemo 8 llama3-8b dp=8,gbs=64 --precision=mxfp8 --gpu=gb200 --bf16-layers=2,0
roundtrip megatron 16 llama3-8b tp=2,pp=4,dp=2,gbs=32 --framework=megatron-lm:2.5
roundtrip megatron 16 llama3-8b tp=2,dp=8,gbs=64,recompute=selective,recompute_modules=core_attn+mlp
roundtrip megatron 16 nemotron4-15b tp=4,dp=4,gbs=64,recompute=full
roundtrip megatron 64 mixtral-8x7b tp=2,pp=2,dp=16,ep=8,gbs=256
roundtrip megatron 64 qwen3-30b-a3b tp=2,dp=32,ep=8,gbs=256
roundtrip megatron 32 qwen3-30b-a3b dp=32,ep=8,gbs=256,zero=3
roundtrip megatron 32 qwen3-30b-a3b dp=32,ep=8,gbs=256,offload=expert_fc1+moe_act --moe-dispatcher=flex
roundtrip megatron 1024 deepseek-v3 tp=2,pp=16,dp=32,ep=32,gbs=4096,pp_first=3,pp_last=2
roundtrip megatron 64 llama3-70b pp=4,vp=5,dp=16,gbs=128,recompute_layers=2
roundtrip megatron 64 llama3-70b dp=64,gbs=128,zero=3,offload_layers=30
roundtrip megatron 16 qwen3-30b-a3b pp=2,vp=2,dp=8,ep=8,gbs=256 --moe-a2a-overlap=on
roundtrip megatron 64 deepseek-v2 dp=64,ep=16,gbs=256 --moe-shared-expert-overlap=on
roundtrip megatron 8 llama3-8b dp=8,gbs=64,zero=1 --precision-aware-optimizer=on
roundtrip megatron 64 mixtral-8x7b tp=2,dp=32,ep=8,gbs=256 --moe-dispatcher=allgather
roundtrip nemo 64 mixtral-8x7b tp=2,dp=32,ep=8,gbs=256 --framework=nemo --moe-dispatcher=allgather
roundtrip megatron 64 deepseek-v2 pp=2,dp=32,ep=16,gbs=512,pp_embed=1,pp_loss=1
# hybrid stacks: Nemotron-H's pattern (pretrain_mamba.py), Qwen3-Next's Gated DeltaNet
roundtrip megatron 16 "$S/tests/fixtures/hf/NVIDIA-Nemotron-3-Nano-30B-A3B.json" tp=2,dp=8,ep=8,gbs=128
roundtrip megatron 16 "$S/tests/fixtures/hf/Qwen3-Next-80B-A3B.json" tp=2,pp=2,dp=4,ep=4,gbs=128
# NeMo 2.0
roundtrip nemo 64 llama3.1-70b tp=8,pp=2,dp=4,gbs=64,recompute=selective --framework=nemo
roundtrip nemo 64 llama3.1-70b tp=4,pp=4,dp=4,vp=5,gbs=64 --framework=nemo
roundtrip nemo 64 mixtral-8x7b tp=2,pp=2,dp=16,ep=8,gbs=256 --framework=nemo
roundtrip nemo 32 qwen3-30b-a3b dp=32,ep=8,gbs=256,zero=3 --framework=nemo
roundtrip nemo 64 llama3-70b pp=4,vp=5,dp=16,gbs=128,recompute_layers=2 --framework=nemo
roundtrip nemo 64 llama3-70b dp=64,gbs=128,offload_layers=30 --framework=nemo
roundtrip nemo 16 qwen3-30b-a3b pp=2,vp=2,dp=8,ep=8,gbs=256 --framework=nemo --moe-a2a-overlap=on
roundtrip nemo 64 deepseek-v2 dp=64,ep=16,gbs=256 --framework=nemo --precision-aware-optimizer=on
roundtrip nemo 1024 deepseek-v3 tp=2,pp=16,dp=32,ep=32,gbs=4096,pp_first=3,pp_last=2 --framework=nemo
roundtrip nemo 16 llama3-8b tp=4,dp=4,gbs=32 --framework=nemo --tp-comm-overlap=off
# a Hugging Face config.json finds NeMo's recipe by its architecture
roundtrip nemo 16 "$S/tests/fixtures/hf/Meta-Llama-3-8B.json" tp=2,dp=8,gbs=64 --framework=nemo
grep -q "^recipe = llm.llama3_8b.pretrain_recipe" "$tmp/conf" && ok || ko "Meta-Llama-3-8B.json: NeMo's llama3_8b recipe"
roundtrip nemo 8 "$S/tests/fixtures/hf/gemma-2-9b.json" tp=2,dp=4,gbs=32 --framework=nemo
grep -q "^recipe = llm.gemma2_9b.pretrain_recipe" "$tmp/conf" && ok || ko "gemma-2-9b.json: NeMo's gemma2_9b recipe, found by its shape"
grep -q "^# checked against NeMo 25.11's source (nemo_toolkit 2.6.2" "$tmp/conf" && ok || ko "the NeMo override names what it was checked against"
# LoRA fine-tuning recipes (NeMo's finetune_recipe, Bridge's NAME_peft_config
# and _peft_common with LoRA()): the rank and the packs read back
roundtrip nemo 16 llama3-70b tp=4,pp=2,dp=2,gbs=32 --framework=nemo --peft=lora:16 --seq=4096
roundtrip bridge 16 qwen3-30b-a3b pp=2,dp=8,ep=8,gbs=128 --framework=megatron-bridge --peft=lora:8 --seq=2048
roundtrip bridge 8 llama2-7b tp=2,dp=4,gbs=64 --framework=megatron-bridge --peft=lora --seq=4096
grep -q "^cfg.peft = LoRA()" "$tmp/conf" && ok || ko "llama2-7b: Bridge has no PEFT recipe: _peft_common with LoRA()"
# the linears adapted: written whole (recipes set their own), read back
roundtrip nemo 16 llama3-70b tp=2,pp=4,vp=5,dp=2,gbs=32 --framework=nemo --peft=lora:16 --lora-targets=linear_qkv --seq=4096
grep -q '^recipe.peft.target_modules = \["linear_qkv"\]$' "$tmp/conf" && ok || ko "nemo: target_modules not written as priced"
roundtrip nemo 64 deepseek-v3 pp=8,pp_first=7,pp_last=6,dp=8,ep=8,gbs=64 --framework=nemo --peft=lora:8 --lora-targets=linear_q_down_proj,linear_q_up_proj,linear_kv_down_proj,linear_kv_up_proj,linear_proj --seq=4096
# Megatron-Bridge (cfg = NAME_pretrain_config(), cfg.SECTION.KEY = VALUE)
roundtrip bridge 64 llama3.1-70b tp=4,pp=4,dp=4,vp=5,gbs=64 --framework=megatron-bridge
roundtrip bridge 64 llama3.1-70b tp=8,pp=2,dp=4,gbs=64,recompute=selective --framework=megatron-bridge
roundtrip bridge 64 llama3-70b tp=4,pp=4,dp=2,cp=2,vp=5,gbs=512 --framework=megatron-bridge --rank-order=tp-cp-pp-dp
roundtrip bridge 16 llama3-8b tp=4,dp=4,gbs=32 --framework=megatron-bridge --tp-comm-overlap=off --precision=fp8
roundtrip bridge 64 llama3-70b pp=4,vp=5,dp=16,gbs=128,recompute_layers=2 --framework=megatron-bridge
roundtrip bridge 64 llama3-70b dp=64,gbs=128,offload_layers=30 --framework=megatron-bridge
roundtrip bridge 32 qwen3-30b-a3b dp=32,ep=8,gbs=256,zero=3 --framework=megatron-bridge
roundtrip bridge 32 qwen3-30b-a3b dp=32,ep=8,gbs=256,offload=expert_fc1+moe_act --framework=megatron-bridge
roundtrip bridge 16 qwen3-30b-a3b pp=2,vp=2,dp=8,ep=8,gbs=256 --framework=megatron-bridge --moe-a2a-overlap=on
roundtrip bridge 64 deepseek-v2 dp=64,ep=16,gbs=256 --framework=megatron-bridge --precision-aware-optimizer=on
roundtrip bridge 1024 deepseek-v3 tp=2,pp=16,dp=32,ep=32,gbs=4096,pp_first=3,pp_last=2 --framework=megatron-bridge --moe-dispatcher=flex
roundtrip bridge 16 gpt-oss-20b dp=16,ep=8,gbs=64 --framework=megatron-bridge --moe-dispatcher=allgather
roundtrip bridge 16 "$S/tests/fixtures/hf/Qwen3-Next-80B-A3B.json" tp=2,pp=2,dp=4,ep=4,gbs=128 --framework=megatron-bridge
roundtrip bridge 16 "$S/tests/fixtures/hf/NVIDIA-Nemotron-3-Nano-30B-A3B.json" tp=2,dp=8,ep=8,gbs=128 --framework=megatron-bridge
roundtrip bridge 16 "$S/tests/fixtures/hf/Meta-Llama-3-8B.json" tp=2,dp=8,gbs=64 --framework=megatron-bridge
grep -q "^cfg = llama3_8b_pretrain_config()$" "$tmp/conf" && ok || ko "Meta-Llama-3-8B.json: Megatron-Bridge's llama3_8b recipe"
grep -q "^# checked against Megatron-Bridge 0.3.1's source" "$tmp/conf" && ok || ko "the Bridge override names what it was checked against"
# the recipe's own choices are overridden with what pplan priced: the
# DP overlap in CommOverlapConfig too (its default turns it on), the
# gradient reduction's dtype (the recipes reduce in fp32 or bf16)
grep -q "^cfg.comm_overlap = CommOverlapConfig(tp_comm_overlap=True, overlap_grad_reduce=True, overlap_param_gather=True)$" "$tmp/conf" &&
	grep -q "^cfg.mixed_precision.grad_reduce_in_fp32 = False$" "$tmp/conf" && ok || ko "the Bridge override pins the DP overlap and the reduction dtype"
# models Bridge 0.3.1 has no recipe for: GPTModelProvider's fields on the
# recipes' common defaults, read back without --model
roundtrip bridge 64 mixtral-8x7b tp=2,dp=32,ep=8,gbs=256 --framework=megatron-bridge
grep -q "^cfg = _pretrain_common()$" "$tmp/conf" && grep -q "^    num_moe_experts=8,$" "$tmp/conf" && ok ||
	ko "Mixtral in Bridge: GPTModelProvider on _pretrain_common()"
roundtrip bridge 8 gpt3-1.3b dp=8,gbs=64 --framework=megatron-bridge
roundtrip bridge 16 nemotron4-15b tp=4,dp=4,gbs=64,recompute=full --framework=megatron-bridge
roundtrip bridge 64 llama2-70b tp=8,pp=2,dp=4,gbs=64 --framework=megatron-bridge
roundtrip bridge 16 "$S/tests/fixtures/hf/Qwen2-57B-A14B.json" tp=2,dp=8,ep=8,gbs=64 --framework=megatron-bridge
# torchtitan 0.3 (its experts are not tensor-parallel: etp=1 where ep > 1)
roundtrip torchtitan 64 llama3.1-70b tp=8,dp=8,gbs=64 --framework=torchtitan
roundtrip torchtitan 64 llama3.1-70b tp=8,pp=2,dp=4,gbs=64 --framework=torchtitan
roundtrip torchtitan 16 llama3.1-8b tp=2,pp=4,dp=2,vp=2,gbs=64 --framework=torchtitan
roundtrip torchtitan 16 llama3.1-8b dp=16,gbs=64,zero=3,recompute=full --framework=torchtitan
roundtrip torchtitan 64 qwen3-30b-a3b tp=2,dp=32,ep=8,etp=1,gbs=256 --framework=torchtitan
roundtrip torchtitan 16 gpt-oss-20b dp=16,ep=8,gbs=64 --framework=torchtitan
# DeepSpeed (the model from --model)
roundtrip deepspeed 64 gpt3-13b tp=4,pp=2,dp=8,gbs=256 --framework=deepspeed
roundtrip deepspeed 16 llama2-7b dp=16,gbs=256,zero=3 --framework=deepspeed
roundtrip deepspeed 16 llama2-7b tp=2,dp=8,gbs=256,recompute=full --framework=deepspeed --precision=fp16

# What a framework cannot express is priced as what it runs: Megatron-LM's
# 1F1B for zb-h1 (its note says so), torchtitan's etp=1 for an EP layout.
"$B" predict --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32,schedule=zb-h1 --emit megatron >"$tmp/zb.sh" 2>/dev/null
"$B" predict --from megatron "$tmp/zb.sh" --gpus 16 --json "$tmp/zb.json" >/dev/null 2>&1
[ "$(field "$tmp/zb.json" schedule)" = '"1f1b"' ] && ok || ko "zb-h1 emitted for Megatron-LM reads back as its 1F1B"

# A launch script as teams write it: torchrun sizes the world, a bash
# array, comments, continuations, quotes, --flag=value, unrelated flags.
cat >"$tmp/train.sh" <<'EOF'
#!/bin/bash
# Llama-2 7B on two nodes
GPT_ARGS=(
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32   # the shape
    --ffn-hidden-size 11008 --swiglu --normalization RMSNorm
    --untie-embeddings-and-output-weights --disable-bias-linear
    --position-embedding-type rope --vocab-size 32000
    --seq-length 4096 --max-position-embeddings 4096
    --hidden-dropout 0 --attention-dropout 0
    --micro-batch-size=2 --global-batch-size 128
    --lr 3e-4 --min-lr 3e-5 --lr-decay-style cosine
    --tokenizer-type Llama2Tokenizer --tokenizer-model "/data/tok.model"
)
PARALLEL=(--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \
          --sequence-parallel --use-distributed-optimizer --bf16)
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py "${GPT_ARGS[@]}" "${PARALLEL[@]}" \
    --save /ckpt --load /ckpt
EOF
"$B" predict --from megatron "$tmp/train.sh" --json "$tmp/t.json" >"$tmp/out" 2>&1
"$B" predict --model llama2-7b --gpus 16 --seq 4096 \
	--layout tp=2,pp=2,dp=4,mbs=2,gbs=128,sp=on,zero=1 --overlap-grad-reduce off \
	--overlap-param-gather off --tp-comm-overlap off --grad-reduce-dtype fp32 --json "$tmp/t2.json" >/dev/null 2>&1
[ "$(field "$tmp/t.json" string)" = "$(field "$tmp/t2.json" string)" ] && ok ||
	ko "the launch script's layout $(field "$tmp/t.json" string), by hand $(field "$tmp/t2.json" string)"
# Megatron-LM's defaults for what a script leaves out: no overlap, no TP overlap, fp32 reduction
[ "$(field "$tmp/t.json" step_time_s)" = "$(field "$tmp/t2.json" step_time_s)" ] && ok ||
	ko "the launch script prices $(field "$tmp/t.json" step_time_s) s, the same job by hand $(field "$tmp/t2.json" step_time_s) s"
[ "$(field "$tmp/t.json" params)" = 6738415616 ] && ok || ko "Llama-2 7B from its arguments: $(field "$tmp/t.json" params) parameters, want 6738415616"
grep -q "^# from      .*train.sh (megatron)" "$tmp/out" && ok || ko "the header names the file read"

# Megatron-Core's --pipeline-model-parallel-layout: the same job as the
# flags that split the same way (the embedding and the loss counted as
# layers; uneven first and last stages)
ARGS62="--num-layers 62 --hidden-size 4096 --num-attention-heads 32 --vocab-size 128256 --seq-length 4096 --bf16 --global-batch-size 4096"
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl1.json" -- $ARGS62 --pipeline-model-parallel-size 16 \
	--pipeline-model-parallel-layout 'Et|(tt|)*30tL' >/dev/null 2>"$tmp/err" || ko "layout string: $(cat "$tmp/err")"
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl2.json" -- $ARGS62 --pipeline-model-parallel-size 16 \
	--num-virtual-stages-per-pipeline-rank 2 --account-for-embedding-in-pipeline-split \
	--account-for-loss-in-pipeline-split >/dev/null 2>&1
for k in string step_time_s; do
	[ -n "$(field "$tmp/pl1.json" $k)" ] && [ "$(field "$tmp/pl1.json" $k)" = "$(field "$tmp/pl2.json" $k)" ] && ok ||
		ko "'Et|(tt|)*30tL': $k $(field "$tmp/pl1.json" $k), the flags' $(field "$tmp/pl2.json" $k)"
done
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl3.json" -- ${ARGS62/62/35} --pipeline-model-parallel-size 8 \
	--pipeline-model-parallel-layout 'Ett|(ttttt|)*6tttL' >/dev/null 2>&1
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl4.json" -- ${ARGS62/62/35} --pipeline-model-parallel-size 8 \
	--decoder-first-pipeline-num-layers 2 --decoder-last-pipeline-num-layers 3 >/dev/null 2>&1
[ -n "$(field "$tmp/pl3.json" step_time_s)" ] && [ "$(field "$tmp/pl3.json" step_time_s)" = "$(field "$tmp/pl4.json" step_time_s)" ] && ok ||
	ko "'Ett|(ttttt|)*6tttL': $(field "$tmp/pl3.json" step_time_s) s, the first/last flags' $(field "$tmp/pl4.json" step_time_s) s"
# DeepSeek-V3's layout: the MTP layer with the loss, counted as a layer of
# the split; a 61-layer model with it is priced as the 62-layer model of
# 'Et|(tt|)*30tL' (pl1), its MTP layer a transformer layer (said)
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl5.json" -- ${ARGS62/62/61} --pipeline-model-parallel-size 16 \
	--pipeline-model-parallel-layout 'Et|(tt|)*30mL' >"$tmp/out" 2>"$tmp/err" || ko "DeepSeek-V3's layout: $(cat "$tmp/err")"
[ -n "$(field "$tmp/pl5.json" step_time_s)" ] && [ "$(field "$tmp/pl5.json" step_time_s)" = "$(field "$tmp/pl1.json" step_time_s)" ] && ok ||
	ko "'Et|(tt|)*30mL' with 61 layers: $(field "$tmp/pl5.json" step_time_s) s, 62 layers' 'Et|(tt|)*30tL' $(field "$tmp/pl1.json" step_time_s) s"
grep -q "1 multi-token-prediction layer (m) priced as transformer layer after the model's 61" "$tmp/out" && ok ||
	ko "the MTP layer priced as a layer is said: $(grep -i mtp "$tmp/out")"
# --mtp-num-layers without a layout string: the MTP layer is not priced,
# and the reading says so; the same job as without the flag
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl7.json" -- ${ARGS62/62/61} --pipeline-model-parallel-size 1 \
	--mtp-num-layers 1 >"$tmp/out" 2>"$tmp/err" || ko "--mtp-num-layers alone: $(cat "$tmp/err")"
"$B" predict --from megatron --gpus 1024 --json "$tmp/pl8.json" -- ${ARGS62/62/61} --pipeline-model-parallel-size 1 \
	>/dev/null 2>&1
grep -q "mtp-num-layers 1: its multi-token-prediction layer is not priced" "$tmp/out" &&
	[ -n "$(field "$tmp/pl7.json" step_time_s)" ] &&
	[ "$(field "$tmp/pl7.json" step_time_s)" = "$(field "$tmp/pl8.json" step_time_s)" ] && ok ||
	ko "--mtp-num-layers without a layout string is said and not priced: $(grep -i mtp "$tmp/out")"
# --pipeline-layout: DeepSeek-V3 (61 layers, 1 MTP layer) as NVIDIA's
# recipe cuts it; each framework's config writes the string (and the MTP
# layer) and reads back as the same job, to the digit
for fmt in megatron bridge nemo; do
	roundtrip $fmt 1024 deepseek-v3 tp=2,pp=16,ep=64,etp=1,gbs=8192 --pipeline-layout='Et|(tt|)*30mL'
done
"$B" predict --model deepseek-v3 --gpus 1024 --layout tp=2,pp=16,ep=64,etp=1,gbs=8192 \
	--pipeline-layout 'Et|(tt|)*30mL' --json "$tmp/pl6.json" >"$tmp/out" 2>&1
[ "$(field "$tmp/pl6.json" num_layers)" = 61 ] && [ "$(field "$tmp/pl6.json" mtp_layers)" = 1 ] &&
	[ "$(field "$tmp/pl6.json" vp)" = 2 ] && ok ||
	ko "--pipeline-layout: the model's 61 layers, 1 MTP layer priced, vp 2: $(field "$tmp/pl6.json" num_layers), $(field "$tmp/pl6.json" mtp_layers), $(field "$tmp/pl6.json" vp)"

# the words after --, and standard input
"$B" predict --from megatron --gpus 8 --json "$tmp/w.json" -- --num-layers 32 --hidden-size 4096 \
	--num-attention-heads 32 --vocab-size 51200 --seq-length 2048 --tensor-model-parallel-size 8 \
	--global-batch-size 32 --bf16 >/dev/null 2>"$tmp/err" && ok || ko "the arguments after --: $(cat "$tmp/err")"
[ "$(field "$tmp/w.json" string)" = '"tp=8,pp=1,dp=1,cp=1,ep=1,vp=1,mbs=1,gbs=32,sp=off,recompute=none,zero=0,schedule=1f1b"' ] && ok ||
	ko "the arguments after --: layout $(field "$tmp/w.json" string)"
"$B" predict --model llama3-70b --gpus 64 --layout tp=8,dp=8,gbs=64 --framework torchtitan --emit torchtitan 2>/dev/null |
	"$B" predict --from torchtitan - --json "$tmp/s.json" >/dev/null 2>"$tmp/err" && ok || ko "standard input: $(cat "$tmp/err")"
[ "$(field "$tmp/s.json" num_layers)" = 80 ] && ok || ko "torchtitan's llama3_70b from standard input"

# bad input: one sentence, exit 2
bad() { # NEEDLE ARGS...
	local needle=$1 rc
	shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -qF -- "$needle" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		ko "pplan $*: exit $rc, want 2 and '$needle' in one line: $(cat "$tmp/err")"
	else
		ok
	fi
}
# A provider call that fills pplan's buffer to its last bytes (a fuzz_launch
# finding: the closing comma was written past the end)
{
	sed -n '1,/^cfg.model = GPTModelProvider(/p' "$S/tests/fuzz/seeds/launch/nemotron4-provider.bridge.py"
	for _ in $(seq 20); do printf '    %s\n' "$(printf 'a%.0s' $(seq 100))"; done
	printf '    %s\n    # a comment\n    num_layers=32,\n)\n' "$(printf 'b%.0s' $(seq 21))"
} >"$tmp/long.bridge.py"
bad "GPTModelProvider(...) is longer than pplan reads" predict --from bridge "$tmp/long.bridge.py"
printf -- '--num-layers $L --hidden-size 4096\n' >"$tmp/var.sh"
bad "a shell expression" predict --from megatron "$tmp/var.sh" --gpus 8
# An MTP layer on the first stage gives rank 0 chunks of 2 units each and rank 15
# chunks of 2 and none: a split only a table of the chunks prices, and prices
if "$B" predict --from megatron --gpus 1024 -- ${ARGS62/62/61} --mtp-num-layers 1 \
	--pipeline-model-parallel-size 16 --pipeline-model-parallel-layout 'Emt|(tt|)*30L' >"$tmp/out" 2>&1 &&
	grep -q "^  step " "$tmp/out" && grep -q "pipeline-model-parallel-layout 'Emt|(tt|)\*30L'" "$tmp/out"; then
	ok
else
	ko "the MTP layer on the first stage: $(head -c 600 "$tmp/out")"
fi
bad "places 62 transformer layers, the model has 61" predict --from megatron --gpus 1024 -- ${ARGS62/62/61} \
	--pipeline-model-parallel-size 16 --pipeline-model-parallel-layout 'Et|(tt|)*30tL' 
bad "pp_embed or pp_loss in --layout conflict" predict --model deepseek-v3 --gpus 1024 \
	--layout tp=2,pp=16,ep=64,etp=1,pp_embed=on --pipeline-layout 'Et|(tt|)*30mL'
bad "vp=4 in --layout and --pipeline-layout's 2 virtual stages" predict --model deepseek-v3 --gpus 1024 \
	--layout tp=2,pp=16,vp=4,ep=64,etp=1 --pipeline-layout 'Et|(tt|)*30mL'
bad "--mtp-num-layers 2, and the layout places 1 multi-token-prediction layer" predict --from megatron --gpus 1024 -- \
	${ARGS62/62/61} --pipeline-model-parallel-size 16 --pipeline-model-parallel-layout 'Et|(tt|)*30mL' --mtp-num-layers 2
bad "--pipeline-layout and --from conflict" predict --from megatron "$tmp/train.sh" --pipeline-layout 'EtL'
printf -- '--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 1000 --seq-length 2048\n' >"$tmp/fp32.sh"
bad "trains in fp32" predict --from megatron "$tmp/fp32.sh" --gpus 8
printf -- '--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --bf16\n' >"$tmp/novocab.sh"
bad "no --vocab-size" predict --from megatron "$tmp/novocab.sh" --gpus 8
printf -- '--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --vocab-size 1000 --seq-length 2048 --bf16\n' >"$tmp/nogpus.sh"
bad "does not say how many GPUs" predict --from megatron "$tmp/nogpus.sh"
bad "conflict" predict --from megatron "$tmp/train.sh" --layout tp=2
bad "conflicts with" predict --from megatron "$tmp/train.sh" --seq 8192
bad "conflict with the 16 processes" predict --from megatron "$tmp/train.sh" --gpus 32
bad "--model llama3-70b has 80" predict --from megatron "$tmp/train.sh" --model llama3-70b
bad "--from must be megatron, nemo, bridge, torchtitan or deepspeed" predict --from mosaic x
printf 'cfg = kimi_k2_pretrain_config()\n' >"$tmp/kimi.py"
bad "give the model with --model" predict --from bridge "$tmp/kimi.py" --gpus 64
printf 'cfg = _pretrain_common()\ncfg.dataset.seq_length = 4096\n' >"$tmp/nomodel.py"
bad "the file defines no model" predict --from bridge "$tmp/nomodel.py" --gpus 8
printf 'cfg = _pretrain_common()\ncfg.model = GPTModelProvider(num_layers=2, hidden_size=64, num_attention_heads=4, activation_func=F.relu)\ncfg.tokenizer.vocab_size = 1000\ncfg.dataset.seq_length = 128\n' >"$tmp/relu.py"
bad "activation_func F.relu is not one pplan prices" predict --from bridge "$tmp/relu.py" --gpus 8
printf 'cfg = _pretrain_common()\ncfg.model = GPTModelProvider(num_layers=2, hidden_size=64, num_attention_heads=4)\ncfg.dataset.seq_length = 128\n' >"$tmp/novocab.py"
bad "needs cfg.tokenizer.vocab_size" predict --from bridge "$tmp/novocab.py" --gpus 8
printf 'cfg.model.tensor_model_parallel_size = 2\n' >"$tmp/norecipe.py"
bad "no 'cfg = NAME_pretrain_config()' or 'cfg = NAME_peft_config(...)' line" predict --from bridge "$tmp/norecipe.py" --gpus 8
printf 'cfg = llama3_8b_pretrain_config()\ncfg.model.sequence_parallel = yes\n' >"$tmp/badbool.py"
bad "must be True or False" predict --from bridge "$tmp/badbool.py" --gpus 8
bad "needs what to read" predict --from megatron
bad "cannot open" predict --from megatron "$tmp/missing.sh" --gpus 8
printf '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}}' >"$tmp/ds.json"
bad "give it with --model" predict --from deepspeed "$tmp/ds.json" --gpus 8
printf '{"train_batch_size": 64,' >"$tmp/broken.json"
bad "malformed JSON" predict --from deepspeed "$tmp/broken.json" --model llama3-8b --gpus 8
printf '{"train_batch_size": 60, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 8, "bf16": {"enabled": true}}' >"$tmp/ds2.json"
bad "is not train_micro_batch_size_per_gpu" predict --from deepspeed "$tmp/ds2.json" --model llama3-8b
printf 'torchrun -m torchtitan.train --module llama3 --config my_llama\n' >"$tmp/tt.sh"
bad "names no model pplan knows" predict --from torchtitan "$tmp/tt.sh" --gpus 8
bad "conflicts with" predict --from torchtitan "$tmp/tt.sh" --gpus 8 --model llama3-8b --framework megatron-core

echo "cli_from: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
