#!/usr/bin/env bash
# cli_errors.sh: bad input to the real pplan binary.  docs/design.md: "2 bad
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
	elif grep -qE "Sanitizer|runtime error:" "$tmp/err"; then
		why="a sanitizer report"
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

# skipped NEEDLE FILE: a cases file with one case pplan cannot read or
# model: validate still exits 0, says "not predicted: ...NEEDLE..." for
# that case, and writes its --json report (issue: one case never stops
# the file).
skipped() {
	local needle=$1 file=$2 rc why=""
	rm -f "$J"
	timeout 10 "$B" validate "$file" --json "$J" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		why="exit status $rc, want 0"
	elif grep -qE "Sanitizer|runtime error:" "$tmp/err"; then
		why="a sanitizer report"
	elif ! grep -F -- "not predicted: " "$tmp/out" | grep -qF -- "$needle"; then
		why="no 'not predicted: ...$needle' line"
	elif [ ! -s "$J" ]; then
		why="no --json report"
	fi
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		echo "FAIL: pplan validate $file"
		echo "      $why"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
	else
		passed=$((passed + 1))
	fi
}
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
bad "int4" search $M8 --precision int4
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
bad "--peft" search $M8 --peft qlora
bad "--peft" search $M8 --peft lora:0
bad "--peft" search $M8 --peft lora:
# a rank as wide as Llama 3 8B's 4096 is no low-rank adapter
bad "LoRA rank 4096 is not below the hidden size" search $M8 --peft lora:4096
bad "--lora-targets must name Megatron-Core linears" search $M8 --peft lora --lora-targets linear_qkv,qkv_proj
bad "but the job trains every weight: give --peft lora" search $M8 --lora-targets linear_qkv
# multi-latent attention has no fused linear_qkv
bad "LoRA on linear_qkv adapts no linear of deepseek-v3" search --model deepseek-v3 --gpus 256 --peft lora --lora-targets qkv
nojson "--emit megatron and --peft lora conflict: Megatron-LM" search $M8 --peft lora --emit megatron
nojson "--emit torchtitan and --peft lora conflict: torchtitan 0.3" predict $M8 --layout dp=8 --peft lora --emit torchtitan
nojson "--emit deepspeed and --peft lora conflict" predict $M8 --layout dp=8 --peft lora --emit deepspeed
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
bad "schedule must be gpipe, 1f1b, interleaved, zb-h1 or dualpipe" predict $M8 --layout pp=2,schedule=zigzag
bad "dualpipe needs an even pp" predict $M8 --layout pp=1,dp=8,schedule=dualpipe --framework other
bad "at least 2*pp = 8" predict --model llama3-8b --gpus 8 --layout pp=4,dp=2,gbs=12,schedule=dualpipe --framework other
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
# MXFP8 before Blackwell: Transformer Engine has no block-scaled MMA there
bad "MXFP8 needs a Blackwell GPU" predict --model llama3-8b --gpus 8 --precision mxfp8 --layout tp=8
bad "MXFP8 needs a Blackwell GPU" search --model llama3-8b --gpus 8 --precision FP8-MX
bad "NVFP4 needs a GPU with fp4 tensor cores" predict --model llama3-8b --gpus 8 --precision nvfp4 --layout tp=8
bad "NVFP4 needs a GPU with fp4 tensor cores" search --model llama3-8b --gpus 8 --gpu h200 --precision bf16_with_nvfp4_mixed
bad "bf16-layers must be F,L" predict --model llama3-8b --gpus 8 --gpu b200 --precision nvfp4 --bf16-layers 0,-4 --layout dp=8
bad "bf16-layers must be F,L" predict --model llama3-8b --gpus 8 --gpu b200 --precision nvfp4 --bf16-layers last --layout dp=8
bad "this run is bf16 already" predict --model llama3-8b --gpus 8 --bf16-layers 1,1 --layout dp=8
bad "fp8 delayed scaling: Megatron-Core keeps no layer in bf16" predict --model llama3-8b --gpus 8 --precision fp8 --bf16-layers 1 --layout dp=8
bad "more than the 32 of" search --model llama3-8b --gpus 8 --precision fp8-cs --bf16-layers 20,20

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
skipped "unknown GPU 'Z9000-imaginary'" "$BAD/cases-unknown-gpu.json"
bad "--frobnicate" validate "$BAD/cases-good.json" --frobnicate

# ==== issue 11: hostile files and values, every subcommand =====================
# Files are made here from good ones (G*), each with one thing wrong.
G=$tmp/gen
mkdir -p "$G"
GM=$S/tests/fixtures/models/llama3-8b.json
GH=$S/tests/fixtures/hf/Meta-Llama-3-8B.json
GC=$S/tests/fuzz/seeds/cluster/dgx-h100.json
GK=$BAD/cases-good.json
GX=$S/tests/fixtures/hwloc/nvidiaDGX2.xml
GS=$S/tests/fixtures/nvidia-smi/dgx-h100.txt
GR=$S/tests/fixtures/reports/cpu-tp2.json
# edit GOOD NAME SED: NAME is GOOD with the sed expression applied.
edit() { sed -e "$3" "$1" >"$G/$2"; }

# ---- empty, truncated, directories, FIFOs, devices, unreadable ---------------
: >"$G/empty.json"
: >"$G/empty.xml"
: >"$G/empty.txt"
mkdir "$G/dir.json"
mkfifo "$G/fifo.json"
head -c 200 "$GH" >"$G/hf-truncated.json"
head -c 2000 "$GX" >"$G/xml-truncated.xml"
head -c 300 "$GC" >"$G/cluster-truncated.json"
head -c 400 "$GR" >"$G/report-truncated.json"
bad "empty file" search --model "$G/empty.json" --gpus 8
bad "empty file" search --params 7B --cluster "$G/empty.json" --gpus 8
bad "empty file" validate "$G/empty.json"
bad "empty.xml" topo --xml "$G/empty.xml"
bad "empty.txt" topo --nvidia-smi-topo "$G/empty.txt" --gpu h100-sxm
bad "empty file" report compare "$G/empty.json"
bad "hf-truncated.json: malformed JSON" predict --model "$G/hf-truncated.json" --gpus 8 --layout tp=8
bad "xml-truncated.xml" topo --xml "$G/xml-truncated.xml"
bad "cluster-truncated.json: malformed JSON" search --params 7B --cluster "$G/cluster-truncated.json" --gpus 8
bad "report-truncated.json: malformed JSON" report compare "$G/report-truncated.json"
bad "is a directory" search --model "$G/dir.json" --gpus 8
bad "is a directory" search --params 7B --cluster "$G/dir.json" --gpus 8
bad "is a directory" validate "$G/dir.json"
bad "is a directory" topo --xml "$G"
bad "is a directory" report compare "$G/dir.json"
bad "is a FIFO" search --model "$G/fifo.json" --gpus 8
bad "is a FIFO" simulate --model "$G/fifo.json" --gpus 8 --layout pp=8
bad "is a FIFO" search --params 7B --cluster "$G/fifo.json" --gpus 8
bad "is a FIFO" validate "$G/fifo.json"
bad "is a FIFO" topo --xml "$G/fifo.json"
bad "is a FIFO" topo --nvidia-smi-topo "$G/fifo.json" --gpu h100-sxm
bad "is a FIFO" report compare "$G/fifo.json"
bad "/dev/zero is a character device" search --model /dev/zero --gpus 8
bad "/dev/zero is a character device" validate /dev/zero
bad "/dev/zero is a character device" topo --nvidia-smi-topo /dev/zero --gpu h100-sxm
# Unreadable even for root: /proc/self/mem reads fail with EIO.
bad "cannot read" search --model /proc/self/mem --gpus 8
if [ "$(id -u)" -ne 0 ]; then
	cp "$GM" "$G/noread.json"
	chmod 000 "$G/noread.json"
	bad "Permission denied" search --model "$G/noread.json" --gpus 8
fi
# Past the limit of its kind (1 MiB for a model), refused by size.
truncate -s 2M "$G/huge-model.json"
bad "more than the 1048576 bytes pplan reads as a model file" search --model "$G/huge-model.json" --gpus 8
truncate -s 20M "$G/huge-cases.json"
bad "more than the 16777216 bytes pplan reads as a cases file" validate "$G/huge-cases.json"
truncate -s 20M "$G/huge.xml"
bad "more than the 16777216 bytes pplan reads as an hwloc XML export" topo --xml "$G/huge.xml"
# 1,001 nested arrays: past cJSON's limit, said so.
printf '%*s' 1001 '' | tr ' ' '[' >"$G/deep.json"
printf '%*s' 1001 '' | tr ' ' ']' >>"$G/deep.json"
bad "nested more than 1000 levels deep" search --model "$G/deep.json" --gpus 8

# ---- wrong types, NaN and infinities, absurd sizes in model files -------------
edit "$GM" m-layers-string.json 's/"num_layers": 32/"num_layers": "32"/'
edit "$GM" m-hidden-inf.json 's/"hidden_size": 4096/"hidden_size": 1e999/'
edit "$GM" m-nan.json 's/"hidden_size": 4096/"hidden_size": NaN/'
edit "$GM" m-layers-huge.json 's/"num_layers": 32/"num_layers": 1000000000000000/'
edit "$GM" m-vocab-huge.json 's/"vocab_size": 128256/"vocab_size": 4294967296/'
edit "$GM" m-layers-neg.json 's/"num_layers": 32/"num_layers": -32/'
edit "$GM" m-experts-huge.json 's/"moe": null/"moe": {"num_experts": 2097152, "top_k": 2}/'
edit "$GM" m-typo.json 's/"num_kv_heads"/"num_kv_head"/'
edit "$GM" m-mlp-typo.json 's/"swiglu"/"swigl"/'
edit "$GM" m-tie-string.json 's/"tie_word_embeddings": false/"tie_word_embeddings": "no"/'
bad "num_layers must be" search --model "$G/m-layers-string.json" --gpus 8
bad "hidden_size must be a number" search --model "$G/m-hidden-inf.json" --gpus 8
bad "malformed JSON" search --model "$G/m-nan.json" --gpus 8
bad "num_layers must be at most 1048576" search --model "$G/m-layers-huge.json" --gpus 8
bad "vocab_size must be at most 16777216" predict --model "$G/m-vocab-huge.json" --gpus 8 --layout tp=8
bad "num_layers must be a whole number >= 1" simulate --model "$G/m-layers-neg.json" --gpus 8 --layout pp=8
bad "num_experts must be at most 1048576" search --model "$G/m-experts-huge.json" --gpus 8
bad "did you mean num_kv_heads?" search --model "$G/m-typo.json" --gpus 8
bad "swigl" search --model "$G/m-mlp-typo.json" --gpus 8
bad "tie_word_embeddings must be true or false" search --model "$G/m-tie-string.json" --gpus 8
edit "$GH" hf-layers-float.json 's/"num_hidden_layers": 32/"num_hidden_layers": 32.5/'
edit "$GH" hf-heads-zero.json 's/"num_attention_heads": 32/"num_attention_heads": 0/'
edit "$GH" hf-hidden-huge.json 's/"hidden_size": 4096/"hidden_size": 1e15/'
bad "num_hidden_layers" search --model "$G/hf-layers-float.json" --gpus 8
bad "num_attention_heads" search --model "$G/hf-heads-zero.json" --gpus 8
bad "hidden_size must be" search --model "$G/hf-hidden-huge.json" --gpus 8

# ---- cluster files -----------------------------------------------------------
edit "$GC" c-nodes-huge.json 's/"num_nodes":\t1/"num_nodes":\t10000000/'
edit "$GC" c-pernode-string.json 's/"gpus_per_node":\t8/"gpus_per_node":\t"8"/'
edit "$GC" c-nic-neg.json 's/"nic_gbps":\t50/"nic_gbps":\t-50/'
edit "$GC" c-domain-huge.json 's/"nvlink_domain":\t8/"nvlink_domain":\t4294967304/'
edit "$GC" c-latency-neg.json '0,/"latency_us":\t2/s//"latency_us":\t-2/'
edit "$GC" c-schema.json 's/pplan.cluster\/1/pplan.cluster\/2/'
bad "more GPUs than pplan plans for" search --params 7B --cluster "$G/c-nodes-huge.json"
bad "gpus_per_node must be" search --params 7B --cluster "$G/c-pernode-string.json"
bad "nic_gbps must be more than 0" search --params 7B --cluster "$G/c-nic-neg.json"
bad "nvlink_domain must be at most 1048576" search --params 7B --cluster "$G/c-domain-huge.json"
bad "latency_us must be from 0" search --params 7B --cluster "$G/c-latency-neg.json"
bad "pplan.cluster/1" search --params 7B --cluster "$G/c-schema.json"

# ---- case files ----------------------------------------------------------------
edit "$GK" k-gpus-huge.json 's/"num_gpus": 8/"num_gpus": 10000000/'
edit "$GK" k-mbs-zero.json 's/"micro_batch_size": null/"micro_batch_size": 0/'
edit "$GK" k-dp-wrap.json 's/"dp": 8/"dp": 4294967304/'
edit "$GK" k-layers-huge.json 's/"num_layers": 24/"num_layers": 2147483647/'
edit "$GK" k-step-zero.json 's/"step_time_s": 1.0/"step_time_s": 0/'
edit "$GK" k-step-inf.json 's/"step_time_s": 1.0/"step_time_s": -1e999/'
edit "$GK" k-gbps-neg.json 's/"inter_node_gbps_per_gpu": 200/"inter_node_gbps_per_gpu": -200/'
edit "$GK" k-pernode.json 's/"gpus_per_node": 8/"gpus_per_node": 17/'
edit "$GK" k-vp-zero.json 's/"vp": null/"vp": 0/'
edit "$GK" k-zero-5.json 's/"zero": null/"zero": 5/'
skipped "num_gpus must be at most 1048576" "$G/k-gpus-huge.json"
skipped "micro_batch_size must be a whole number >= 1" "$G/k-mbs-zero.json"
skipped "dp must be at most 1048576" "$G/k-dp-wrap.json"
skipped "num_layers must be at most 1048576" "$G/k-layers-huge.json"
skipped "step_time_s must be more than 0" "$G/k-step-zero.json"
skipped "step_time_s must be a number" "$G/k-step-inf.json"
skipped "inter_node_gbps_per_gpu must be more than 0" "$G/k-gbps-neg.json"
skipped "gpus_per_node must be at most 16" "$G/k-pernode.json"
skipped "vp must be a whole number >= 1" "$G/k-vp-zero.json"
skipped "zero must be at most 3" "$G/k-zero-5.json"

# ---- hwloc XML and nvidia-smi text ---------------------------------------------
edit "$GX" x-nbobjs.xml '0,/nbobjs="[0-9]*"/s//nbobjs="-1"/'
edit "$GX" x-nocomplete.xml '0,/ complete_cpuset="[^"]*"/s///'
edit "$GX" x-leading-comma.xml '0,/ cpuset="0x/s// cpuset=",0x/'
bad "nbobjs=\"-1\" is malformed" topo --xml "$G/x-nbobjs.xml"
bad "has no complete_cpuset" topo --xml "$G/x-nocomplete.xml"
bad "is malformed" topo --xml "$G/x-leading-comma.xml"
edit "$GS" s-gpu-huge.txt '0,/GPU7/s//GPU2147483647/'
edit "$GS" s-nv-huge.txt '0,/NV18/s//NV99999/'
bad "s-gpu-huge.txt" topo --nvidia-smi-topo "$G/s-gpu-huge.txt" --gpu h100-sxm
bad "s-nv-huge.txt" topo --nvidia-smi-topo "$G/s-nv-huge.txt" --gpu h100-sxm

# ---- reports ------------------------------------------------------------------
edit "$GR" r-schema.json 's/pplan.report\/1/pplan.report\/9/'
bad "pplan.report/1" report compare "$G/r-schema.json"
bad "pplan.report/1" report compare "$GM"

# ---- options: absurd values, NaN, typos that deserve "did you mean" ------------
bad "--params 1e15" search --params 1e15 --gpus 8
bad "--params 10T" predict --params 10T --gpus 8 --layout tp=8
bad "--gpus: 10000000 GPUs is more than" search --params 7B --gpus 10000000
bad "--max-memory-gib" search $M8 --max-memory-gib nan
bad "--max-memory-gib" search $M8 --max-memory-gib inf
bad "--seq" search $M8 --seq inf
bad "--global-batch" search $M8 --global-batch 1e400
bad "did you mean search?" serach $M8
bad "did you mean llama3-8b?" search --model llama3-8 --gpus 8
bad "did you mean tp?" predict $M8 --layout tpp=8
bad "did you mean h100-sxm?" search --params 7B --gpus 8 --gpu h100sxm
bad "did you mean dgx-h100?" search --params 7B --gpus 8 --cluster dgx-h10
bad "gbs must be" predict $M8 --layout dp=8,gbs=2199023255553

# ---- conflicting options and outputs that cannot be written -------------------
bad "--gather" topo --gather --nodes 2
bad "--json $tmp/no/such/dir/r.json: the folder" search $M8 --top 1 --json "$tmp/no/such/dir/r.json"
nojson "--json $tmp/no/dir/r.json: the folder" predict $M8 --layout tp=8 --json "$tmp/no/dir/r.json"
nojson "--json $tmp/no/dir/r.json: the folder" validate "$GK" --json "$tmp/no/dir/r.json"
nojson "--json $tmp/no/dir/r.json: the folder" report compare "$GR" --json "$tmp/no/dir/r.json"
nojson "--trace $tmp/no/dir/t.json: the folder" simulate --model llama3-8b --gpus 16 --layout pp=4 --trace "$tmp/no/dir/t.json"
nojson "--out $tmp/no/dir/c.json: the folder" topo --nvidia-smi-topo "$GS" --gpu h100-sxm --out "$tmp/no/dir/c.json"
nojson "--json $G: is a directory" search $M8 --top 1 --json "$G"
nojson "--out $G: is a directory" topo --nvidia-smi-topo "$GS" --gpu h100-sxm --out "$G"
nojson "--report $tmp/no/dir/r.json: the folder" exec --model llama3-8b --layout tp=2 --report "$tmp/no/dir/r.json"
nojson "--trace $G: is a directory" exec --model llama3-8b --layout tp=2 --trace "$G"
nojson "is a FIFO" exec --model "$G/fifo.json" --layout tp=2
nojson "--seq must be" exec --model llama3-8b --layout tp=2 --seq 1e15
[ -d "$tmp/no" ] && { failed=$((failed + 1)); echo "FAIL: a folder was made for an output"; }

total=$((passed + failed))
echo "cli_errors: $total malformed inputs; $passed refused cleanly (exit 2, one sentence, nothing written), $failed not"
[ "$failed" -eq 0 ]
