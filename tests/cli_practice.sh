#!/usr/bin/env bash
# cli_practice.sh: answers a practitioner can act on (issue 10), through the
# real binary.  Each block is one "What was seen" item of the issue:
# defaults echoed with their origin, the batch growing with the cluster,
# the memory cap with headroom, CP only where it pays, GPUs without a
# rate refused, the `predict it:` hint pasted back, --emit megatron run
# through bash, --nodes/--gpus-per-node and sub-node counts, decimal and
# binary counts, --params that refuses far-away models, plurals, CSV,
# --train-tokens and --tp-comm-overlap.  Figures asserted are worked by
# hand in the comments, never copied from pplan's output.
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

# run ARGS...: pplan ARGS... exits 0; stdout in $tmp/out, stderr in $tmp/err.
run() {
	local rc
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		ko "exit $rc: pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
		return 1
	fi
	ok
}

# refuse NEEDLE ARGS...: exit 2 with one line on stderr naming NEEDLE.
refuse() {
	local needle=$1 rc
	shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		ko "exit $rc, want 2: pplan $*"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$needle" "$tmp/err"; then
		ko "stderr does not say '$needle': pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -3
	else
		ok
	fi
}

has() {
	if grep -Eq -- "$2" "$1"; then ok; else ko "$3 (no /$2/)"; fi
}
hasnt() {
	if grep -Eq -- "$2" "$1"; then ko "$3 (/$2/ found)"; else ok; fi
}

# num FILE KEY: the first JSON number after "KEY": in FILE.
num() {
	grep -o "\"$2\":[[:space:]]*[-0-9.eE+]*" "$1" | head -1 | sed 's/.*:[[:space:]]*//'
}

# is_number S: S is a decimal number (not empty)
is_number() {
	[[ $1 =~ ^[-+]?[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$ ]]
}

# close A B REL: |A - B| <= REL * |B|
close() {
	awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
		m = b < 0 ? -b : b; exit !(d <= r * m) }'
}

# ---- provenance: every report opens with version and git hash ------------------
run search --model llama3-8b --gpus 8 --top 1 &&
	has "$tmp/out" "^# pplan search [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]+\)$" "search '#' header with version and git hash"
run predict --model llama3-8b --gpus 8 --layout tp=8 &&
	has "$tmp/out" "^# pplan predict [0-9.]+ \(git " "predict header with version"
run simulate --model llama3-8b --gpus 8 --layout tp=2,pp=4,gbs=16 &&
	has "$tmp/out" "^# pplan simulate [0-9.]+ \(git " "simulate header with version"

# ---- the global batch grows with the cluster, and says where it came from -------
# Llama 3 405B: the published 16M tokens, 2048 sequences of 8192 = 16,777,216
# tokens = 16.78 M (Dubey et al. 2024, 3.4.1).
run search --params 405B --gpus 16384 --top 1 --json "$tmp/405.json" &&
	has "$tmp/out" "global batch 2048 sequences = 16\.78 M tokens \(default: the published batch of llama3\.1-405b, Llama 3" \
		"405B takes its published batch"
# Llama 3 70B has none: 1024 tokens x 512 GPUs = 0.52 M < the 4,194,304 floor,
# so 4,194,304 / 8192 = 512 sequences (4.19 M tokens, decimal M).
run search --params 70B --gpus 512 --top 1 &&
	has "$tmp/out" "global batch 512 sequences = 4\.19 M tokens \(default: 1024 tokens per GPU, at least 4\.19 M" \
		"70B on 512 GPUs: the 4M-token floor"
# 8192 GPUs: 1024 x 8192 = 8,388,608 tokens = 1024 sequences: it grows.
run search --model llama3-8b --gpus 8192 --top 1 &&
	has "$tmp/out" "global batch 1024 sequences = 8\.39 M tokens" "the batch grows with the cluster"
# Decimal on input: 16M = 16,000,000 tokens = 1953.1 sequences of 8192,
# rounded to 1953 and said; binary 16Mi = 16,777,216 = 2048 exactly.
run search --model llama3-8b --gpus 64 --tokens-per-step 16M --top 1 &&
	has "$tmp/out" "global batch 1953 sequences = 16\.00 M tokens \(--tokens-per-step 16\.00 M rounded to whole 8192-token sequences\)" \
		"--tokens-per-step 16M is rounded to whole sequences"
run search --model llama3-8b --gpus 64 --tokens-per-step 16Mi --top 1 &&
	has "$tmp/out" "global batch 2048 sequences = 16\.78 M tokens \(--tokens-per-step\)" "16Mi is binary"

# ---- the memory cap keeps headroom, and the best layout respects it -------------
# 90 % of the H100's 79.19 GiB = 71.27 GiB.
run search --params 70B --gpus 512 --top 3 --json "$tmp/70.json" && {
	has "$tmp/out" "^# memory    cap 71\.3 GiB per GPU \(default: 90 % of the h100-sxm's 79\.2 GiB" "memory cap with headroom"
	mem=$(num "$tmp/70.json" total)
	if awk -v m="$mem" 'BEGIN { exit !(m <= 0.9 * 79.19) }'; then ok; else ko "best layout uses $mem GiB, over the cap"; fi
}
run search --params 70B --gpus 512 --top 1 --max-memory-gib 60 &&
	has "$tmp/out" "cap 60\.0 GiB per GPU \(--max-memory-gib\)" "--max-memory-gib overrides and says so"

# ---- CP only where the sequence makes it pay ------------------------------------
# GPT-3 175B at 2048 tokens on 1024 A100s: any cp leaves <= 1024 tokens per rank.
run search --params 175B --gpus 1024 --cluster dgx-a100 --top 10 && {
	hasnt "$tmp/out" "^ +[0-9]+ +tp[0-9]+ pp[0-9]+ dp[0-9]+ cp([2-9]|[1-9][0-9])" "no CP layout at 2048 tokens"
	has "$tmp/out" "^# rejected:.* cp leaves too few tokens per rank" "the CP rule is counted"
	has "$tmp/out" "^  with CP +impossible: cp=2 leaves 1024 tokens per rank" "the CP family says why"
}

# ---- a GPU without a rate for the precision is refused -------------------------
refuse "v100-sxm2 has no bf16 tensor-core rate" search --gpu v100-sxm2 --precision bf16 --params 1.3B --gpus 8
refuse "a100-80gb has no fp8 tensor-core rate" search --cluster dgx-a100 --precision fp8 --params 1.3B --gpus 8
# Flash attention needs Ampere or newer: Megatron-Core runs it unfused on a V100, and says so.
run search --gpu v100-sxm2 --precision fp16 --params 1.3B --gpus 8 --top 1 &&
	has "$tmp/out" "^# framework .*: unfused attention, .*flash attention needs Ampere or newer, so unfused on the v100-sxm2" "V100 attention unfused, said"
run search --cluster dgx-a100 --params 1.3B --gpus 8 --top 1 &&
	has "$tmp/out" "^# framework .*: flash attention, " "A100 keeps flash attention"

# ---- what the framework cannot run is said as such, not as memory ---------------
run predict --params 8B --gpus 8 --framework torchtitan --layout tp=1,dp=8,gbs=64,zero=1 &&
	has "$tmp/out" "^CANNOT RUN: torchtitan cannot run it: the framework has no zero=1 sharding \(PyTorch FSDP shards the gradients with the optimizer states: zero=2 or 3\)" "FSDP has no ZeRO-1"
run predict --params 70B --gpus 8 --layout tp=8,dp=1,gbs=8 &&
	has "$tmp/out" "^DOES NOT FIT: " "out of memory is DOES NOT FIT"
run search --params 8B --gpus 8 --framework torchtitan --top 1 &&
	has "$tmp/out" "^ +1 +tp1 pp1 dp8 .* z3 " "torchtitan's 8B on 8 GPUs is FSDP over all 8"
# ... and every GPU with every precision it has prints only possible numbers.
for g in $("$B" search --list-gpus | awk '!/^#/ { print $1 }'); do
	for p in bf16 fp16 fp8; do
		"$B" search --gpu "$g" --precision "$p" --params 7B --gpus 16 --top 5 >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 2 ] && grep -q "has no $p tensor-core rate" "$tmp/err"; then
			ok
		elif [ "$rc" -ne 0 ]; then
			ko "--gpu $g --precision $p: exit $rc: $(head -1 "$tmp/err")"
		elif grep -Eiq "(^|[^a-z])(-?nan|-?inf)([^a-z]|$)" "$tmp/out"; then
			ko "--gpu $g --precision $p prints an impossible number"
		else
			ok
		fi
	done
done

# ---- the `predict it:` hint reproduces the search's number ----------------------
# Each search's best step time (JSON) must come back from its pasted hint.
hint_case() {
	local line
	if ! "$B" search "$@" --top 3 --json "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"; then
		ko "search $*: $(head -1 "$tmp/err")"
		return
	fi
	line=$(grep "^  predict it: " "$tmp/out" | sed 's/^  predict it: pplan //')
	if [ -z "$line" ]; then
		ko "search $*: no predict-it line"
		return
	fi
	if ! eval "\"\$B\" $line --json \"\$tmp/p.json\"" >"$tmp/pout" 2>"$tmp/err"; then
		ko "pasted hint fails: pplan $line: $(head -1 "$tmp/err")"
		return
	fi
	a=$(num "$tmp/s.json" step_time_s)
	b=$(num "$tmp/p.json" step_time_s)
	if close "$a" "$b" 1e-9; then ok; else ko "hint of search $* predicts $b s, the search said $a s"; fi
}
hint_case --params 175B --gpus 1024 --cluster dgx-a100 --seq 4096
hint_case --model "$S/tests/fixtures/models/llama3-8b.json" --gpus 64 --gpu a100-40gb --precision fp16 --max-memory-gib 30
hint_case --model llama3-8b --gpus 16 --closed-form --rank-order tp-dp-cp-pp --tp-comm-overlap on
hint_case --model mixtral-8x7b --nodes 8 --gpus-per-node 4
hint_case --params 70B --gpus 512 --seq 131072
hint_case --model llama3-8b --gpus 4
hint_case --params 70B --gpus 512 --global-batch 1024 --precision fp8
# The hint names the model as it was given, and the options that matter.
"$B" search --model "$S/tests/fixtures/models/llama3-8b.json" --gpus 64 --gpu a100-40gb --seq 4096 --top 1 >"$tmp/out" 2>&1
has "$tmp/out" "predict it: pplan predict --model $S/tests/fixtures/models/llama3-8b.json --gpu a100-40gb --gpus 64 --seq 4096 --layout " \
	"the hint keeps --model FILE, --gpu and --seq"

# ---- Megatron-LM flags that say what they cannot express ------------------------
emitted() { # ARGS...: predict --emit megatron, then bash reads the array
	"$B" predict "$@" --emit megatron >"$tmp/m.sh" 2>"$tmp/err" || { ko "predict $* --emit megatron"; return 1; }
	bash -c 'source "$1" && printf "%s\n" "${MEGATRON_ARGS[@]}"' _ "$tmp/m.sh" >"$tmp/args" ||
		{ ko "the emitted Megatron-LM arguments do not run in bash"; return 1; }
	ok
}
# The model pplan priced, not Megatron's defaults (learned absolute
# positions, rotary base 10000, dropout 0.1, the allgather dispatcher):
# the values from the models' config.json files (tests/fixtures/hf/).
emitted --model llama3-70b --gpus 64 --layout tp=8,pp=2,dp=4,gbs=64 && {
	has "$tmp/args" "^--position-embedding-type$" "Llama 3: --position-embedding-type" &&
		grep -A1 -x -- "--position-embedding-type" "$tmp/args" | grep -qx rope && ok || ko "Llama 3: rope"
	grep -A1 -x -- "--rotary-base" "$tmp/args" | grep -qx 500000 && ok || ko "Llama 3: rope_theta 500000"
	grep -A1 -x -- "--norm-epsilon" "$tmp/args" | grep -qx 1e-05 && ok || ko "Llama 3: rms_norm_eps 1e-05"
	grep -A1 -x -- "--hidden-dropout" "$tmp/args" | grep -qx 0 && ok || ko "Llama 3: no hidden dropout"
	grep -A1 -x -- "--attention-dropout" "$tmp/args" | grep -qx 0 && ok || ko "Llama 3: no attention dropout"
}
emitted --model llama3.1-8b --gpus 8 --layout tp=2,dp=4,gbs=32 &&
	grep -A1 -x -- "--rope-scaling-factor" "$tmp/args" | grep -qx 8 && has "$tmp/args" "^--use-rope-scaling$" \
		"Llama 3.1: rope_scaling llama3, factor 8" || ko "Llama 3.1: --use-rope-scaling --rope-scaling-factor 8"
emitted --model mixtral-8x7b --gpus 64 --layout tp=2,pp=2,dp=16,ep=8,gbs=256 && {
	grep -A1 -x -- "--rotary-base" "$tmp/args" | grep -qx 1000000 && ok || ko "Mixtral: rope_theta 1e6"
	grep -A1 -x -- "--moe-token-dispatcher-type" "$tmp/args" | grep -qx alltoall && ok || ko "Mixtral: the alltoall dispatcher pplan priced"
	has "$tmp/args" "^--moe-grouped-gemm$" "Mixtral: grouped GEMM"
}
emitted --model qwen3-30b-a3b --gpus 64 --layout tp=2,dp=32,ep=8,gbs=256 && {
	grep -A1 -x -- "--rotary-base" "$tmp/args" | grep -qx 1000000 && ok || ko "Qwen3: rope_theta 1e6"
	grep -A1 -x -- "--norm-epsilon" "$tmp/args" | grep -qx 1e-06 && ok || ko "Qwen3: rms_norm_eps 1e-06"
	has "$tmp/args" "^--qk-layernorm$" "Qwen3: QK norm"
	grep -A1 -x -- "--kv-channels" "$tmp/args" | grep -qx 128 && ok || ko "Qwen3: head_dim 128 (not 2048 / 32)"
}
emitted --model deepseek-v3 --gpus 1024 --layout tp=2,pp=16,dp=32,ep=32,gbs=4096,pp_first=3,pp_last=2 && {
	has "$tmp/args" "^--multi-latent-attention$" "DeepSeek-V3: MLA"
	grep -A1 -x -- "--rope-type" "$tmp/args" | grep -qx yarn && ok || ko "DeepSeek-V3: YaRN"
	grep -A1 -x -- "--rotary-scaling-factor" "$tmp/args" | grep -qx 40 && ok || ko "DeepSeek-V3: YaRN factor 40"
	grep -A1 -x -- "--norm-epsilon" "$tmp/args" | grep -qx 1e-06 && ok || ko "DeepSeek-V3: rms_norm_eps 1e-06"
}
# GPT-3 keeps Megatron's learned positions and its dropout 0.1.
emitted --model gpt3-1.3b --gpus 8 --layout dp=8,gbs=64 && {
	grep -A1 -x -- "--position-embedding-type" "$tmp/args" | grep -qx learned_absolute && ok || ko "GPT-3: learned positions"
	hasnt "$tmp/args" "^--hidden-dropout$" "GPT-3 trains with dropout"
}
# The launch configuration after the tables is the framework's: DeepSpeed
# and torchtitan get the --emit that writes theirs, not Megatron-LM flags.
"$B" search --params 13B --gpus 64 --framework deepspeed --top 1 >"$tmp/out" 2>&1
hasnt "$tmp/out" "^Megatron-LM flags:|--use-distributed-optimizer" "no Megatron flags for DeepSpeed"
has "$tmp/out" "^DeepSpeed .*launch configuration: add --emit deepspeed to the predict line above" "DeepSpeed: --emit deepspeed"
"$B" search --params 8B --gpus 64 --framework torchtitan --top 1 >"$tmp/out" 2>&1
has "$tmp/out" "^torchtitan launch configuration: add --emit torchtitan" "torchtitan: --emit torchtitan"
# NeMo and Megatron-Bridge: their recipe override's --emit, then the
# Megatron-Core settings as flags; the hint, pasted with it, writes one
for fw in nemo:nemo megatron-bridge:bridge; do
	"$B" search --params 8B --gpus 64 --framework "${fw%%:*}" --top 1 >"$tmp/out" 2>&1
	has "$tmp/out" "recipe override: add --emit ${fw##*:} to the predict line above" "${fw%%:*}: --emit ${fw##*:}"
	hasnt "$tmp/out" "^Megatron-LM flags:" "${fw%%:*}: not announced as Megatron-LM's own launch"
	hint=$(sed -n 's/^  predict it: pplan //p' "$tmp/out")
	eval "\"\$B\" $hint --emit ${fw##*:}" >"$tmp/emitted.py" 2>"$tmp/err" &&
		grep -q "recipes" "$tmp/emitted.py" && ok || ko "${fw%%:*}: the hint with --emit ${fw##*:}: $(cat "$tmp/err")"
done
# A GPU without bf16 trains in fp16 by default, said in the header; no
# TP overlap on Volta (Transformer Engine's userbuffers need Ampere).
"$B" search --params 13B --gpus 64 --gpu v100-sxm2 --top 1 >"$tmp/out" 2>&1
has "$tmp/out" "^# training .*, fp16 \(default: the v100-sxm2 has no bf16\)$" "V100: fp16 by default, said"
has "$tmp/out" "TP overlap needs Ampere or newer, so off on the v100-sxm2" "V100: TP overlap off, said"
hasnt "$tmp/out" "tp-comm-overlap" "V100: no --tp-comm-overlap"
# A layout over the memory cap is emitted with a warning as its first line.
"$B" predict --model llama3-70b --gpus 8 --layout tp=8,mbs=4,gbs=32 --emit megatron >"$tmp/m.sh" 2>"$tmp/err"
head -1 "$tmp/m.sh" | grep -Eq '^# WARNING: this layout does not fit: it needs [0-9.]+ GiB per GPU, has 71.3 GiB' && ok ||
	ko "no memory warning on the first line: $(head -1 "$tmp/m.sh")"
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 && hasnt "$tmp/m.sh" "WARNING" "a layout that fits has no warning"

# zb-h1 and gpipe are not mainline Megatron-LM schedules: said, with the fork.
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32,schedule=zb-h1 &&
	has "$tmp/m.sh" "^# note: schedule zb-h1 is not in mainline Megatron-LM: .*sail-sg/zero-bubble-pipeline-parallelism.*--enable-zero-bubble" \
		"zb-h1 names the fork that runs it"
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32,schedule=gpipe &&
	has "$tmp/m.sh" "^# note: schedule gpipe is not expressible in Megatron-LM" "gpipe is said to be not expressible"
# The non-default rank order is --use-tp-pp-dp-mapping; the default prints none.
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 --rank-order tp-cp-pp-dp &&
	has "$tmp/args" "^--use-tp-pp-dp-mapping$" "--use-tp-pp-dp-mapping for tp-cp-pp-dp"
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 &&
	hasnt "$tmp/args" "use-tp-pp-dp-mapping" "no mapping flag for the default order"
# --tp-comm-overlap follows the framework's behaviour, which the header
# names: never added silently, and switched off or on by hand in any
# precision.
emitted --model llama3-8b --gpus 16 --layout tp=4,dp=4,gbs=32 --precision fp8 --tp-comm-overlap off &&
	hasnt "$tmp/args" "^--tp-comm-overlap$" "fp8 with the overlap off has no --tp-comm-overlap"
emitted --model llama3-8b --gpus 16 --layout tp=4,dp=4,gbs=32 --framework megatron-lm:2.5 &&
	hasnt "$tmp/args" "^--tp-comm-overlap$" "a framework without TP overlap gets no --tp-comm-overlap"
emitted --model llama3-8b --gpus 16 --layout tp=4,dp=4,gbs=32 --tp-comm-overlap on && {
	has "$tmp/args" "^--tp-comm-overlap$" "--tp-comm-overlap on in bf16"
	has "$tmp/args" "^--bf16$" "a complete argument list"
}
run predict --model llama3-8b --gpus 16 --layout tp=4,dp=4,gbs=32 --precision fp8 && {
	if grep -q "^# framework .*TP overlap" "$tmp/out"; then
		"$B" predict --model llama3-8b --gpus 16 --layout tp=4,dp=4,gbs=32 --precision fp8 --emit megatron >"$tmp/m.sh"
		has "$tmp/m.sh" "^  --tp-comm-overlap$" "the framework's TP overlap, said in the header, is emitted"
	else
		ok
	fi
}
# Degrees: tp x pp x cp divides the GPUs and the batch divides by mbs x dp.
emitted --params 70B --gpus 512 --layout tp=4,pp=4,dp=16,cp=2,vp=5,gbs=512 && {
	# 80 layers / (pp 4 x vp 5) = 4 layers per virtual stage; 4 x 4 x 2 = 32
	# divides 512, leaving dp 16, and 512 % (mbs 1 x 16) = 0.
	line=" $(tr '\n' ' ' <"$tmp/args")"
	for f in "--tensor-model-parallel-size 4" "--pipeline-model-parallel-size 4" \
		"--context-parallel-size 2" "--num-layers-per-virtual-pipeline-stage 4" \
		"--micro-batch-size 1" "--global-batch-size 512"; do
		case "$line" in
		*" $f "*) ok ;;
		*) ko "70B flags lack '$f':$line" ;;
		esac
	done
}
# Uneven stages: BLOOM's 70 layers over pp=12 as DeepSpeed partitions them,
# 70 + 2 embedding units = 6 per stage, the first and last giving one to an
# embedding: 5, 6 x 10, 5.
emitted --model bloom-176b --framework megatron-deepspeed --gpus 384 --cluster dgx-a100 --layout tp=4,pp=12,dp=8,gbs=2048 && {
	line=" $(tr '\n' ' ' <"$tmp/args")"
	for f in "--decoder-first-pipeline-num-layers 5" "--decoder-last-pipeline-num-layers 5"; do
		case "$line" in
		*" $f "*) ok ;;
		*) ko "uneven stages lack '$f'" ;;
		esac
	done
}
emitted --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 &&
	hasnt "$tmp/args" "decoder-first" "even stages print no first-stage layer count"
# The model's own arguments: Llama 3 70B has 80 layers, hidden 8192, FFN
# 28672, 64 heads in 8 KV groups, SwiGLU, RMSNorm, untied embeddings.
emitted --params 70B --gpus 512 --layout tp=8,pp=4,dp=16,gbs=512 && {
	line=" $(tr '\n' ' ' <"$tmp/args")"
	for f in "--num-layers 80" "--hidden-size 8192" "--ffn-hidden-size 28672" \
		"--num-attention-heads 64" "--group-query-attention --num-query-groups 8" \
		"--swiglu" "--normalization RMSNorm" "--untie-embeddings-and-output-weights"; do
		case "$line" in
		*" $f "*) ok ;;
		*) ko "llama3-70b arguments lack '$f'" ;;
		esac
	done
}
# zero 2/3 is Megatron FSDP, with the flags Megatron-Core's guide lists
# beside --use-megatron-fsdp (its buffers take the gradients).
emitted --model llama3-8b --gpus 16 --layout tp=2,dp=8,gbs=32,zero=2 && {
	for a in --use-megatron-fsdp optim_grads --use-distributed-optimizer --no-gradient-accumulation-fusion; do
		has "$tmp/args" "^$a$" "zero 2: $a"
	done
}
# NeMo 2 has recipes for these (nemo/collections/llm/recipes/): named, not a placeholder.
for pair in qwen3-30b-a3b:qwen3_30b_a3b deepseek-v3:deepseek_v3 mixtral-8x22b:mixtral_8x22b; do
	"$B" predict --model "${pair%%:*}" --gpus 1024 --layout dp=1024,ep=8,gbs=1024,zero=3,recompute=full --emit nemo \
		>"$tmp/nemo.py" 2>"$tmp/err"
	has "$tmp/nemo.py" "^recipe = llm\.${pair#*:}\.pretrain_recipe\(" "NeMo recipe for ${pair%%:*}"
	hasnt "$tmp/nemo.py" "REPLACE_WITH_RECIPE" "no placeholder recipe for ${pair%%:*}"
done
# GPT-OSS has only a finetune_recipe in NeMo 25.11: said, not named.
"$B" predict --model gpt-oss-20b --gpus 64 --layout dp=64,ep=8,gbs=64 --emit nemo >"$tmp/nemo.py" 2>"$tmp/err"
has "$tmp/nemo.py" "^# note: NeMo 25.11 has no pretraining recipe for gpt-oss-20b" "GPT-OSS: no NeMo pretraining recipe, said"
"$B" predict --model llama3-8b --gpus 16 --layout tp=2,dp=8,gbs=32,zero=3 --emit nemo >"$tmp/nemo.py" 2>"$tmp/err"
has "$tmp/nemo.py" '^recipe\.trainer\.strategy\.ddp\.data_parallel_sharding_strategy = "optim_grads_params"$' "NeMo zero 3: the sharding strategy"
has "$tmp/nemo.py" '^recipe\.model\.config\.gradient_accumulation_fusion = False$' "NeMo zero 3: no accumulation fusion"
# NeMo 2.0: the recipe of the model, sized to the cluster, with the layout.
"$B" predict --params 70B --gpus 512 --layout tp=4,pp=4,dp=16,cp=2,vp=5,gbs=512 --emit nemo >"$tmp/nemo.py" 2>"$tmp/err"
has "$tmp/nemo.py" "^recipe = llm\.llama3_70b\.pretrain_recipe\(name=\"pplan\", num_nodes=64, num_gpus_per_node=8\)$" "NeMo recipe for 64 nodes of 8"
for f in "tensor_model_parallel_size = 4" "pipeline_model_parallel_size = 4" \
	"context_parallel_size = 2" "virtual_pipeline_model_parallel_size = 5" "sequence_parallel = True"; do
	has "$tmp/nemo.py" "^recipe\.trainer\.strategy\.$f$" "NeMo $f"
done
has "$tmp/nemo.py" "^recipe\.data\.global_batch_size = 512$" "NeMo global batch"
"$B" predict --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32,schedule=zb-h1 --emit nemo >"$tmp/nemo.py" 2>&1
has "$tmp/nemo.py" "^# note: schedule zb-h1 is not expressible in NeMo" "NeMo says it has no zb-h1"
"$B" predict --model gpt3-1.3b --gpus 8 --layout dp=8,gbs=64,zero=1 --emit torchtitan >"$tmp/t.sh" 2>&1
has "$tmp/t.sh" "^# note: torchtitan 0.3 has no config for gpt3-1.3b \\(24 layers, hidden 2048\\)" "torchtitan says it has no config"
has "$tmp/t.sh" "^  --module CUSTOM --config CUSTOM" "an unknown model is CUSTOM"
has "$tmp/t.sh" "^# note: torchtitan shards with FSDP2 and has no optimizer-only sharding" "torchtitan says zero 1 is FSDP"
has "$tmp/t.sh" "^  --parallelism.fsdp_reshard_after_forward never" "zero 1 keeps the parameters after the forward"
hasnt "$tmp/t.sh" "^\\[parallelism\\]" "no TOML: torchtitan 0.3 reads none"
# A model is known by its shape: an HF config.json of Qwen3-30B-A3B's shape finds torchtitan's qwen3 config.
"$B" predict --model qwen3-30b-a3b --gpus 16 --layout pp=2,dp=8,ep=8,gbs=256 --emit torchtitan >"$tmp/t.sh" 2>&1
has "$tmp/t.sh" "^  --module qwen3 --config qwen3_30b_a3b" "Qwen3-30B-A3B is torchtitan's qwen3_30b_a3b"
has "$tmp/t.sh" "^torchrun --nnodes 2 --nproc-per-node 8 -m torchtitan.train" "torchrun starts 2 nodes of 8"
has "$tmp/t.sh" "^  --parallelism.pipeline_parallel_layers_per_stage 24" "48 layers over 2 stages"
has "$tmp/t.sh" "^  --parallelism.expert_parallel_degree 8" "ep 8"
has "$tmp/t.sh" "^  --training.disable_cuda_graphs" "torchtitan 0.3's CUDA graphs refuse pipelining: off"
has "$tmp/t.sh" "^  activation_checkpoint:none" "the subcommand ends the line"
"$B" predict --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,vp=2,gbs=32 --emit deepspeed >"$tmp/ds.json" 2>"$tmp/err"
has "$tmp/err" "^pplan: note: DeepSpeed's pipeline engine has no interleaved schedule" "DeepSpeed notes go to stderr"
hasnt "$tmp/ds.json" "note" "the DeepSpeed JSON carries no notes"

# Usage texts list the GPU table, whatever it holds.
"$B" search --help >"$tmp/sh"
"$B" topo --help >"$tmp/th"
for g in $("$B" search --list-gpus | awk '!/^#/ { print $1 }'); do
	if grep -q -- "$g" "$tmp/sh" && grep -q -- "$g" "$tmp/th"; then ok; else ko "usage texts do not list $g"; fi
done

# TP communication overlap changes the bf16 prediction (it exists for every precision).
run predict --model llama3-8b --gpus 16 --layout tp=8,dp=2,gbs=32 --tp-comm-overlap off --json "$tmp/off.json"
run predict --model llama3-8b --gpus 16 --layout tp=8,dp=2,gbs=32 --tp-comm-overlap on --json "$tmp/on.json"
a=$(num "$tmp/off.json" tp_comm)
b=$(num "$tmp/on.json" tp_comm)
if awk -v a="$a" -v b="$b" 'BEGIN { exit !(b < a) }'; then ok; else ko "--tp-comm-overlap on does not lower TP time ($a -> $b)"; fi
# ... but not for a TP group over the network: Transformer Engine's overlap
# needs peer memory access, so tp=16 on two DGX H100s pays its TP in full.
run predict --model llama3-8b --gpus 16 --layout tp=16,gbs=16 --tp-comm-overlap off --json "$tmp/off16.json"
run predict --model llama3-8b --gpus 16 --layout tp=16,gbs=16 --tp-comm-overlap on --json "$tmp/on16.json"
if [ "$(num "$tmp/off16.json" tp_comm)" = "$(num "$tmp/on16.json" tp_comm)" ]; then ok; else ko "TP overlap hides a TP group that spans nodes"; fi
refuse "--tp-comm-overlap must be on, off, bulk or pipelined" predict --model llama3-8b --gpus 8 --layout tp=8 --tp-comm-overlap yes

# ---- sub-node counts, --nodes and --gpus-per-node -------------------------------
run search --model llama3-8b --gpus 4 --top 1 &&
	has "$tmp/out" "^# cluster   dgx-h100: 4 x h100-sxm \(1 node of 4: 4 of each node's 8 GPUs\)" "4 GPUs of one DGX H100"
run search --model llama3-8b --nodes 3 --gpus-per-node 4 --top 1 &&
	has "$tmp/out" "^# cluster   dgx-h100: 12 x h100-sxm \(3 nodes of 4: 4 of each node's 8 GPUs\)" "--nodes 3 --gpus-per-node 4"
run search --model llama3-8b --gpus 8 --top 1 &&
	has "$tmp/out" "\(1 node of 8\)" "one node, singular"
refuse "give --nodes N and --gpus-per-node G" search --model llama3-8b --gpus 12
refuse "a dgx-h100 node has 8 GPUs" search --model llama3-8b --nodes 2 --gpus-per-node 16
refuse "conflicts with 2 nodes of 4 GPUs" search --model llama3-8b --gpus 16 --nodes 2 --gpus-per-node 4

# ---- --params refuses a zoo model far from the count -----------------------------
refuse "no dense zoo model is within 20 % of 1.50 T parameters" search --params 1.5T --gpus 64
refuse "no dense zoo model is within 20 %" search --params 1e30 --gpus 64
# 32B: Qwen3-30B-A3B (30.5B) is an MoE model; the nearest dense one, megatron-39b
# (39.10B), is 39.10 / 32 = 1.22x off: refused rather than silently swapped.
refuse "the nearest is megatron-39b" search --params 32B --gpus 64
# 47B: Mixtral 8x7B (46.7B) is an MoE model; BloombergGPT (50.56B), dense, is
# 50.56 / 47 = 1.08x off and taken
run search --params 47B --gpus 64 --top 1 &&
	has "$tmp/out" "bloomberggpt-50b \(the dense zoo model nearest --params 47B\)" "47B: BloombergGPT, not Mixtral"

# ---- plurals ---------------------------------------------------------------------
run predict --model llama3-8b --gpus 8 --layout dp=8,gbs=8 &&
	has "$tmp/out" "\(1 microbatch per step\)" "one microbatch, singular"

# ---- CSV beside JSON, and time to train -------------------------------------------
run search --model llama3-8b --gpus 64 --top 4 --csv "$tmp/s.csv" --json "$tmp/s.json" --train-tokens 15T --goodput 1 && {
	n=$(wc -l <"$tmp/s.csv")
	if [ "$n" -eq 5 ]; then ok; else ko "CSV has $n lines, want a header and 4 rows"; fi
	has "$tmp/s.csv" "^rank,layout,rank_order,step_time_s,.*,bubble_time_s,bubble_fraction," "CSV header with units"
	a=$(sed -n 2p "$tmp/s.csv" | sed 's/^[0-9]*,"[^"]*",[^,]*,//' | cut -d, -f1)
	b=$(num "$tmp/s.json" step_time_s)
	if close "$a" "$b" 1e-5; then ok; else ko "CSV step $a != JSON $b"; fi
	# 15e12 tokens at the best layout's tokens/s, in days.
	tps=$(num "$tmp/s.json" tokens_per_s)
	days=$(awk -v t="$tps" 'BEGIN { printf "%.1f", 15e12 / t / 86400 }')
	has "$tmp/out" "time to train 15\.00 T tokens: $days days" "--train-tokens gives days for the best layout"
	tts=$(num "$tmp/s.json" train_time_s)
	if close "$tts" "$(awk -v t="$tps" 'BEGIN { printf "%.17g", 15e12 / t }')" 1e-9; then ok; else ko "train_time_s $tts"; fi
	has "$tmp/out" "^  TP\+DP .* days, .* GPU-hours" "each family gets its time to train"
}

# ---- bubble time and bubble fraction, named apart -----------------------------------
run search --params 70B --gpus 512 --top 2 && {
	has "$tmp/out" "bubble_time +bubble_frac" "the table names bubble time and bubble fraction"
	hasnt "$tmp/out" "bubble +memory|bubble +\(s\)" "no bare 'bubble' column"
}
run predict --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 && {
	has "$tmp/out" "^  bubble time +[0-9.]+ s" "predict's term is bubble time"
	has "$tmp/out" "^  bubble fraction +[0-9.]+ %" "predict's fraction is bubble fraction"
}
run simulate --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 &&
	has "$tmp/out" "^# p2p: [0-9.]+ MB per transfer, .* folded into fwd and bwd" "simulate says p2p is folded into the ops"

# ---- the figures of BENCHMARKS.md, "Answers to act on" -------------------------
# figure NAME TP_IN_NODE MFU_CAP ARGS...: the best layout fits under the 90 %
# cap; with TP_IN_NODE=1 its tp divides the 8 GPUs of a node; with MFU_CAP
# its MFU is at most the best published one for that GPU and precision
# (sim/MODEL.md, "Published MFU"); "-" skips a check that the cost model
# does not meet yet (BENCHMARKS.md says which and why).
figure() {
	local name=$1 tpn=$2 cap=$3
	shift 3
	if ! "$B" search "$@" --top 1 --json "$tmp/fig.json" >/dev/null 2>"$tmp/err"; then
		ko "$name: $(head -1 "$tmp/err")"
		return
	fi
	mem=$(grep -o '"total":[[:space:]]*[0-9.eE+-]*' "$tmp/fig.json" | head -1 | sed 's/.*:[[:space:]]*//')
	lim=$(num "$tmp/fig.json" max_memory_gib)
	tp=$(grep -o '"tp":[[:space:]]*[0-9]*' "$tmp/fig.json" | head -1 | sed 's/.*:[[:space:]]*//')
	mfu=$(num "$tmp/fig.json" mfu)
	# a key missing from the file is a failure, not a pass on an empty number
	if ! is_number "$mem" || ! is_number "$lim" || ! is_number "$tp" || ! is_number "$mfu" ||
		[ "$tp" -lt 1 ]; then
		ko "$name: memory '$mem', cap '$lim', tp '$tp' or mfu '$mfu' missing from pplan.search/1"
		return
	fi
	if awk -v m="$mem" -v c="$lim" 'BEGIN { exit !(m > 0 && m <= c) }'; then ok; else ko "$name: $mem GiB over the $lim GiB cap"; fi
	if [ "$tpn" = 1 ]; then
		if [ $((8 % tp)) -eq 0 ]; then ok; else ko "$name: tp=$tp spans nodes"; fi
	fi
	if [ "$cap" != "-" ]; then
		if awk -v m="$mfu" -v c="$cap" 'BEGIN { exit !(m > 0 && 100 * m <= c) }'; then ok; else ko "$name: MFU $mfu over $cap %"; fi
	fi
}
figure "405B on 16,384 H100" 1 55.4 --params 405B --gpus 16384
figure "175B on 1,024 A100" 1 72.0 --params 175B --gpus 1024 --cluster dgx-a100
figure "70B on 512 H100" 1 55.4 --params 70B --gpus 512
figure "13B on 64 A100" 1 72.0 --params 13B --gpus 64 --cluster dgx-a100
figure "Mixtral 8x7B on 64 H100" 1 55.4 --model mixtral-8x7b --gpus 64
figure "70B at 128K on 512 H100" 1 55.4 --params 70B --gpus 512 --seq 131072

# ---- topo: no invented NICs, and --nodes honoured -------------------------------
# The DGX-2 hwloc export lists 16 GPUs and no NIC: the summary must not count
# NICs it did not see, and the file says 0 NICs; --nodes 4 gives 4 nodes.
run topo --xml "$S/tests/fixtures/hwloc/nvidiaDGX2.xml" --gpu v100-sxm2 --nodes 4 --out "$tmp/dgx2.json" && {
	has "$tmp/out" "^# network: no NIC found in the source" "0 NICs is said"
	hasnt "$tmp/out" "NICs x [0-9.]+ GB/s per node" "no invented NIC figures"
	has "$tmp/out" "^# cluster: 4 nodes x 16 v100-sxm2" "topo --nodes 4 in the summary"
	has "$tmp/dgx2.json" "\"num_nodes\":[[:space:]]*4" "topo --nodes 4 in the file"
	has "$tmp/dgx2.json" "\"nics_per_node\":[[:space:]]*0" "0 NICs in the file"
}
run predict --cluster "$tmp/dgx2.json" --model llama3-8b --layout tp=8,dp=8 --precision fp16 &&
	has "$tmp/out" "64 x v100-sxm2 \(4 nodes of 16\)" "the file plans 4 nodes"

# ---- offload where nothing else fits (issue 22, item 2) --------------------------
# 13B on 8 V100 32GB: without offload every layout needs more than the 28.5 GiB
# cap (18 B a parameter: 13.0 B x 18 / 8 = 29.3 GB = 27.3 GiB before any
# activation, even fully sharded); the search books an offloaded layout, prints
# its host memory and the three CPU terms, and its Megatron flags name the
# offload.  Mixtral 8x22B on 8 H100 fits only offloaded and with bf16 gradients
# and 75 GiB (4 B a parameter of 141 B / 8 GPUs is 65.5 GiB before activations);
# under ZeRO-Offload its 16 B a parameter of states need more host memory than
# 80 % of a DGX H100's 2 TiB.
run search --params 13B --gpus 8 --gpu v100-sxm2 --top 3 --json "$tmp/off.json" && {
	has "$tmp/out" "^ +1  .* opt-cpu " "13B on 8 V100 is booked with the optimizer offloaded"
	has "$tmp/out" "--optimizer-cpu-offload --optimizer-offload-fraction 1.0" "its flags offload"
	jq -e 'all(.layouts[]; .layout.string | test("optimizer_offload=on"))
		and all(.layouts[]; .memory_gib.optimizer == 0 and .memory_gib.host > 0)' \
		"$tmp/off.json" >/dev/null && ok || ko "13B on 8 V100: a layout without offload, or offload without host memory"
	hint=$(sed -n 's/^  predict it: pplan //p' "$tmp/out")
	# shellcheck disable=SC2086
	run $hint && {
		has "$tmp/out" "^  host memory +[0-9.]+ GiB per GPU in host memory" "predict names the host memory"
		has "$tmp/out" "^    on the CPU +gradients to host [0-9.]+ s, CPU Adam [0-9.]+ s" "predict names the CPU step's terms"
	}
}
run search --model mixtral-8x22b --gpus 8 --top 1 --grad-reduce-dtype bf16 --max-memory-gib 75 &&
	has "$tmp/out" "^ +1  .* opt-cpu " "Mixtral 8x22B on 8 H100 with bf16 gradients and 75 GiB: offloaded"
run predict --model mixtral-8x22b --gpus 8 --framework deepspeed \
	--layout dp=8,ep=8,zero=3,recompute=full,optimizer_offload=on &&
	has "$tmp/out" "^CANNOT RUN: the offloaded optimizer needs [0-9]+ GiB of host memory per node, 80 % of its 2048 GiB is 1638" "ZeRO-Offload of 8x22B is out of host memory"
refuse "needs zero >= 1" predict --model llama2-7b --gpus 8 --layout tp=8,optimizer_offload=on
run predict --model llama2-7b --gpus 8 --framework torchtitan --layout dp=8,zero=2,optimizer_offload=on &&
	has "$tmp/out" "^CANNOT RUN: .*no optimizer CPU offload" "torchtitan cannot offload the optimizer"
run predict --model llama2-7b --gpus 8 --framework deepspeed --layout dp=8,zero=2,optimizer_offload=on --emit deepspeed &&
	has "$tmp/out" '"offload_optimizer": \{ "device": "cpu"' "the DeepSpeed config offloads"

# ---- every figure with its band; an MFU above the published best flagged ------
# (issue 22, item 4).  H100 bf16's best published MFU is 55.4 % (Nemotron-4 15B,
# sim/MODEL.md 10); Llama 3 8B on 64 H100 predicts more than that, so its MFU
# cells carry "!" and the table says why.  The ranges in the JSON are the
# prediction divided by 1 + the error percentiles the document states, and the
# flag is set exactly where the MFU passes 55.45 % (the printed tenth).
run search --model llama3-8b --gpus 64 --top 5 --json "$tmp/acc.json" && {
	has "$tmp/out" "^# accuracy  step time off by -[0-9.]+\\.\\.\\+[0-9.]+ % in 80 % of [0-9]+ hopper bf16/fp16 runs" "the band is echoed"
	has "$tmp/out" "^ +1 .* [0-9.]+! +[0-9.]+ " "rank 1's MFU is marked"
	has "$tmp/out" "^# !: an MFU above the best published" "the mark is explained"
	jq -e '.accuracy.step_time_error_pct as [$lo, $hi] | all(.layouts[];
		(.accuracy.step_time_s[0] - .step_time_s / (1 + $hi / 100) | fabs) < 1e-9
		and (.accuracy.step_time_s[1] - .step_time_s / (1 + $lo / 100) | fabs) < 1e-9
		and (.accuracy.mfu_above_published == (.mfu > 0.5545)))
		and any(.layouts[]; .accuracy.mfu_above_published)' "$tmp/acc.json" >/dev/null &&
		ok || ko "the JSON ranges or the flag are not the stated band's"
}
run predict --model llama3-8b --gpus 64 --layout tp=2,dp=32 && {
	has "$tmp/out" "^  step, measured within +[0-9.]+ to [0-9.]+ s" "predict gives the step's band"
	has "$tmp/out" "^  MFU .*! above the best published for hopper bf16, 55.4 %" "predict flags the MFU"
}
run search --model llama3-8b --gpus 8 --cluster hgx-b200 --top 1 && {
	has "$tmp/out" "^# accuracy .*the nearest to blackwell bf16, which has none" "B200 borrows Hopper's band and says so"
	has "$tmp/out" "no published MFU on blackwell bf16" "B200 has no published MFU to flag against"
	hasnt "$tmp/out" "^ +1 .*!" "nothing marked without a published figure"
}
run search --model llama2-7b --gpus 8 --gpu v100-sxm2 --top 1 &&
	has "$tmp/out" "^# accuracy .*the nearest to volta fp16, which has none" "V100 borrows Ampere's band and says so"

# ---- ranking: within the tolerance, headroom first (issue 22, item 3) -----------
# Llama 3 8B on 64 H100 gives layouts within 0.2 % of each other at 49 and 70 GiB
# of the 71.3 GiB cap.  Each rule is recomputed with jq from the JSON: rank 1 is
# within 1 % of the fastest and has as many 5 %-of-the-cap headroom steps as any
# layout in that band; --rank-tolerance 0 (the hint pplan prints) puts the
# fastest first and sorts by step time.
run search --model llama3-8b --gpus 64 --top 20 --json "$tmp/rank.json" && {
	has "$tmp/out" "^# ranking   within 1 % of the fastest step" "the ranking is echoed"
	has "$tmp/out" "ranked above the fastest \\(rank [0-9]+: [0-9.]+ % faster" "rank 1 says why it is not the fastest"
	jq -e '(.layouts | map(.step_time_s) | min) as $f | .memory_cap_gib as $c
		| (.layouts[0].step_time_s <= 1.01 * $f)
		and (.layouts[.fastest_rank - 1].step_time_s == $f)
		and .rank_tolerance == 0.01
		and ([.layouts[] | select(.step_time_s <= 1.01 * $f)
		      | (($c - .memory_gib.total) / (0.05 * $c) | floor)] | max)
		    == ((($c - .layouts[0].memory_gib.total) / (0.05 * $c)) | floor)
		and (.layouts[0].memory_gib.total < .layouts[.fastest_rank - 1].memory_gib.total)' \
		"$tmp/rank.json" >/dev/null && ok || ko "rank 1 is not the roomiest layout within 1 % of the fastest"
}
run search --model llama3-8b --gpus 64 --top 20 --rank-tolerance 0 --json "$tmp/rank0.json" && {
	has "$tmp/out" "^# ranking   by predicted step time" "tolerance 0 says speed alone"
	jq -e '(.layouts | map(.step_time_s)) as $s | $s == ($s | sort) and .fastest_rank == 1' \
		"$tmp/rank0.json" >/dev/null && ok || ko "--rank-tolerance 0 is not sorted by step time"
}
for bad in -1 101 abc ""; do
	refuse "--rank-tolerance must be a percentage" search --model llama3-8b --gpus 8 --rank-tolerance "$bad"
	refuse "--rank-tolerance must be a percentage" plan --model llama3-8b --gpus 8 --tokens 1T --rank-tolerance "$bad"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
