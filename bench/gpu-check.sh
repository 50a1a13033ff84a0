#!/usr/bin/env bash
# bench/gpu-check.sh: everything pplan can only check on a GPU, in one go,
# on one offline GPU machine (issue 21), in about 8 minutes:
#   1. configure and build with CUDA (CMAKE_CUDA_ARCHITECTURES, default 90),
#      against bench/gpu-deps/root where bench/gpu-deps.sh made one, with
#      only the CUDA tests (-DPPLAN_TESTS=cuda: no Criterion needed);
#   2. the CUDA kernel tests (tests/cuda_kernels.c: every kernel against its
#      CPU twin in fp32, bf16 and fp16) and the backend tests
#      (tests/cuda_backend.c); "skipped: no GPU" is a failure;
#   3. two ranks on the one GPU must be refused (exit 2, the GPU named:
#      one GPU per rank); the 2-layer cut (CHECK_MODEL) run twice in bf16
#      on the GPU must give the same losses to the digit (no atomics);
#   4. `pplan calibrate --backend cuda`: GEMM rates by shape (the model's at
#      tp 1, mbs 1..2, and the 8192 cube), element-wise, attention; the
#      8192^3 bf16 rate beside the H200 datasheet's dense 989 TFLOP/s;
#   5. one-GPU `pplan exec` of the 1B-class stack (MODEL) in bf16, predicted
#      with that profile (--profile);
#   6. bench/torch_reference.py: the same stack in plain PyTorch (bf16, SDPA,
#      AdamW as pplan exec's) on the same GPU, torch.matmul at 8192^3 and
#      SDPA's causal attention at calibrate's shapes (ATTN_SEQS);
#   7. the 2-layer cut on the CPU backend in fp32 (mpirun -np CPU_RANKS),
#      its per-step losses against the GPU's bf16 run;
#   8. a summary table of the figures with pass/fail against the targets:
#        every CUDA kernel and backend test passes;
#        two ranks on one GPU refused; two runs' losses equal;
#        exec in bf16 matches the CPU's fp32 losses (relative LOSS_TOL);
#        calibrate's 8192^3 bf16 GEMM >= 85 % of torch.matmul's;
#        pplan exec's step time <= 1.25 x the PyTorch reference's;
#        the predicted step time within 10 % of the measured;
#        pplan's fused attention forward >= 0.5 x SDPA's at the longest
#        sequence (issue 20: tensor-core attention).
# Every step after the build runs even when an earlier one failed; the
# exit status is 0 only when every target passed.  All outputs (summary,
# profile, reports, reference JSON, a tarball of the logs) go to OUT_DIR.
#
# Usage (from anywhere; it finds the repository from its own path):
#   bash bench/gpu-check.sh            on the GPU machine
#   DRY_RUN=1 bash bench/gpu-check.sh  without a GPU: builds, then reports
#                                      each GPU step as not run (exit 1)
# With the device tool: carry ["bench/gpu-deps"], command
#   OUT_DIR=$OUT bash bench/gpu-check.sh
# Settings, from the environment (defaults in brackets):
#   OUT_DIR       outputs     [$OUT when set, else <repo>/bench/results/gpu]
#   BUILD_DIR     build directory                 [<repo>/build-gpu]
#   CUDA_ARCH     CMAKE_CUDA_ARCHITECTURES        [90]
#   MODEL         the timed model                 [bench/models/llama-1b-gqa.json]
#   LAYOUT        its one-GPU layout              [tp=1,pp=1,dp=1,mbs=1,gbs=8]
#   STEPS, WARMUP timed and untimed steps         [10, 3]
#   CHECK_MODEL   the model checked against the CPU [bench/models/llama-1b-gqa-short.json]
#   CHECK_LAYOUT, CHECK_STEPS, CHECK_WARMUP      [tp=1,pp=1,dp=1,mbs=1,gbs=4; 4; 1]
#   CPU_RANKS     ranks of the CPU run            [1, with all cores to OpenBLAS]
#   LOSS_TOL      relative loss tolerance, bf16 against fp32   [0.01]
#   GPU_TYPE      pplan's GPU name for the prediction  [from nvidia-smi]
#   DEADLINE_S    the whole script's time; a step that would start later
#                 is not run, and each step's limit is cut to what is left [500]
#   ATTN_SEQS     sequence lengths of the attention comparison [2048,4096,8192]
#   SKIP          steps not to run, by log name (a rerun of a few), e.g.
#                 "exec-check-cpu torch"                       [none]
#   JOBS          build parallelism               [all cores]
#   PYTHON        the reference's interpreter     [python3]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
start_s=$SECONDS
OUT_DIR=${OUT_DIR:-${OUT:-$repo/bench/results/gpu}}
BUILD_DIR=${BUILD_DIR:-$repo/build-gpu}
CUDA_ARCH=${CUDA_ARCH:-90}
MODEL=${MODEL:-$repo/bench/models/llama-1b-gqa.json}
LAYOUT=${LAYOUT:-tp=1,pp=1,dp=1,mbs=1,gbs=8}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-3}
CHECK_MODEL=${CHECK_MODEL:-$repo/bench/models/llama-1b-gqa-short.json}
CHECK_LAYOUT=${CHECK_LAYOUT:-tp=1,pp=1,dp=1,mbs=1,gbs=4}
CHECK_STEPS=${CHECK_STEPS:-4}
CHECK_WARMUP=${CHECK_WARMUP:-1}
CPU_RANKS=${CPU_RANKS:-1}
LOSS_TOL=${LOSS_TOL:-0.01}
DEADLINE_S=${DEADLINE_S:-500}
ATTN_SEQS=${ATTN_SEQS:-2048,4096,8192}
SKIP=${SKIP:-}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
PYTHON=${PYTHON:-python3}
DRY_RUN=${DRY_RUN:-0}
LOG_DIR=$OUT_DIR/logs
mkdir -p "$OUT_DIR" "$LOG_DIR" "$BUILD_DIR"
rm -f "$LOG_DIR"/*.log

# ---- helpers ----------------------------------------------------------------
step() { printf '\n== %s (t = %d s)\n' "$*" "$((SECONDS - start_s))"; }
note() { printf 'gpu-check: %s\n' "$*"; }
left() { echo $((DEADLINE_S - (SECONDS - start_s))); }
# run_logged NAME SECONDS CMD...: CMD with a time limit (cut to what is
# left of DEADLINE_S), output to the terminal and $LOG_DIR/NAME.log;
# returns CMD's status (124 for the limit, 125 when SKIP names it), never
# exits.
run_logged() {
	local name=$1 secs=$2 rc=0 rest
	shift 2
	if [[ " $SKIP " == *" $name "* ]]; then
		echo "not run: skipped (SKIP)" | tee "$LOG_DIR/$name.log"
		return 125
	fi
	rest=$(left)
	[ "$rest" -lt "$secs" ] && secs=$rest
	if [ "$secs" -lt 10 ]; then
		echo "not run: the script's $DEADLINE_S s were spent" | tee "$LOG_DIR/$name.log"
		return 124
	fi
	timeout --kill-after=15 "$secs" "$@" >"$LOG_DIR/$name.log" 2>&1 || rc=$?
	tail -n 25 "$LOG_DIR/$name.log"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		note "$name did not finish within $secs s (log: logs/$name.log)"
	elif [ "$rc" -ne 0 ]; then
		note "$name exited with status $rc (log: logs/$name.log)"
	fi
	return "$rc"
}
# One number of a pplan JSON file: jq where there is one, else the first
# match of KEY after SECTION's key (cJSON writes the keys in the order of
# docs/report-format.md and docs/profile-format.md).
json_num() { # FILE SECTION KEY
	[ -f "$1" ] || { echo null; return; }
	if command -v jq >/dev/null; then
		jq -r ".$2.$3 // null" "$1"
	else
		sed -n "/\"$2\"[[:space:]]*:/,\$p" "$1" |
			grep -m1 -o "\"$3\"[[:space:]]*:[[:space:]]*[^,}[:space:]]*" |
			sed 's/.*:[[:space:]]*//' || echo null
	fi
}
# The numbers of an array (KEY's first occurrence), one a line.
json_array() { # FILE KEY
	[ -f "$1" ] || return 0
	tr -d ' \t\n' <"$1" | grep -o "\"$2\":\[[^]]*\]" | head -1 |
		sed 's/.*\[//; s/\]//' | tr ',' '\n' || true
}
# Results: one row per target, "NAME|FIGURE|TARGET|VERDICT".
results=()
failed=0
result() { # NAME FIGURE TARGET pass|FAIL|not-run|skipped
	results+=("$1|$2|$3|$4")
	[ "$4" = pass ] || failed=1
}
# skipped LOG...: whether SKIP named one of these steps (its log says so).
skipped() {
	local n
	for n in "$@"; do
		grep -qs "^not run: skipped" "$LOG_DIR/$n.log" && return 0
	done
	return 1
}
# fmt VALUE: four significant digits, "null" as it is.
fmt() { is_num "${1:-}" && awk -v v="$1" 'BEGIN { printf "%.4g", v }' || echo "${1:-null}"; }
is_num() { [[ ${1:-} =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]]; }

# ---- 0. the machine and the dependencies ------------------------------------
step "machine"
echo "host $(hostname), $(nproc) cores, $(uname -srm); glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
	export PATH=/usr/local/cuda/bin:$PATH
fi
gpu_name=""
have_gpu=0
if [ "$DRY_RUN" = 1 ]; then
	note "DRY_RUN=1: building only; every GPU step is reported as not run"
elif command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	have_gpu=1
else
	note "no GPU answers (nvidia-smi is missing or sees none): the GPU steps will not run"
fi
if [ -z "${GPU_TYPE:-}" ]; then
	case "$gpu_name" in
	*H200*) GPU_TYPE=h200 ;;
	*H100*) GPU_TYPE=h100-sxm ;;
	*A100*80*) GPU_TYPE=a100-80gb ;;
	*A100*) GPU_TYPE=a100-40gb ;;
	*) GPU_TYPE="" ;;
	esac
fi
echo "GPU for the prediction: ${GPU_TYPE:-as pplan detects it}"
if [ -d "$here/gpu-deps/root" ]; then
	# shellcheck source=bench/gpu-deps-env.sh
	. "$here/gpu-deps-env.sh"
	echo "dependencies: $GPU_DEPS_ROOT ($(wc -l <"$here/gpu-deps/MANIFEST") Debian packages)"
else
	echo "dependencies: the system's (no bench/gpu-deps/root)"
fi
# Open MPI refuses root without these (docs/install.md).
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl=self,vader,tcp PMIX_MCA_gds=hash
# PMIx's zlib component does not load from the unpacked root; its warning
# (no compression) repeats in every log and changes nothing here.
export PMIX_MCA_pcompress_base_silence_warning=1
# NCCL: the toolkit's, else the one PyTorch's wheels bring (nvidia-nccl).
cuda_args=()
if [ -z "$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu -maxdepth 2 -name 'libnccl.so*' 2>/dev/null | head -1)" ] &&
	nccl_dir=$("$PYTHON" -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null) &&
	[ -f "$nccl_dir/include/nccl.h" ]; then
	nccl_lib=$(find "$nccl_dir/lib" -name 'libnccl.so*' | sort | head -1)
	echo "NCCL: $nccl_lib (PyTorch's wheel)"
	cuda_args=(-DNCCL_LIBRARY="$nccl_lib" -DNCCL_INCLUDE_DIR="$nccl_dir/include")
	export LD_LIBRARY_PATH=$nccl_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
command -v nvcc >/dev/null && nvcc --version | tail -1
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$BUILD_DIR/CMakeCache.txt" ] && generator=() # keep the cache's

# ---- 1. build ---------------------------------------------------------------
step "configure and build with CUDA (sm_$CUDA_ARCH) in $BUILD_DIR"
built=0
if run_logged configure 120 cmake -S "$repo" -B "$BUILD_DIR" ${generator[@]+"${generator[@]}"} \
	-DCMAKE_BUILD_TYPE=Release -DPPLAN_CUDA=ON -DPPLAN_TESTS=cuda \
	-DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" ${cuda_args[@]+"${cuda_args[@]}"} &&
	run_logged build 300 cmake --build "$BUILD_DIR" -j "$JOBS" --target pplan cuda_kernels cuda_backend; then
	built=1
fi
module=$BUILD_DIR/libpplan_cuda.so
grep -q "pplan: CUDA backend enabled" "$LOG_DIR/configure.log" 2>/dev/null ||
	note "configure did not enable the CUDA backend (no nvcc, or no NCCL): see logs/configure.log"
if [ "$built" = 1 ] && [ -f "$module" ]; then
	export PPLAN_CUDA_MODULE=$module
	grep -E "CMAKE_CUDA_ARCHITECTURES:|NCCL_LIBRARY:|MPI_C_LIB_NAMES|CJSON_LINK_LIBRARIES|OPENBLAS_LINK_LIBRARIES" \
		"$BUILD_DIR/CMakeCache.txt" || true
	ldd "$BUILD_DIR/pplan" | grep -E "mpi|hwloc|cjson|openblas" || true
	result build "pplan + libpplan_cuda.so (sm_$CUDA_ARCH)" "builds" pass
else
	result build "no CUDA module" "builds" FAIL
fi
pplan=$BUILD_DIR/pplan
# gpu_ok: whether the GPU steps can run at all.
gpu_ok=0
[ "$built" = 1 ] && [ -f "$module" ] && [ "$have_gpu" = 1 ] && gpu_ok=1

# ---- 2. kernel and backend tests ---------------------------------------------
for t in cuda_kernels cuda_backend; do
	step "$t (GPU against the CPU twins)"
	if [ "$gpu_ok" != 1 ]; then
		result "$t" "-" "all pass" not-run
		continue
	fi
	rc=0
	run_logged "$t" 150 "$BUILD_DIR/tests/$t" || rc=$?
	counts=$(grep -m1 -o '[0-9]* checks passed, [0-9]* failed' "$LOG_DIR/$t.log" || echo "no count")
	if skipped "$t"; then
		result "$t" "-" "all pass" skipped
	elif grep -q "^skipped" "$LOG_DIR/$t.log"; then
		result "$t" "$(grep -m1 '^skipped' "$LOG_DIR/$t.log")" "all pass" FAIL
	elif [ "$rc" -ne 0 ] || grep -q "FAIL" "$LOG_DIR/$t.log" || [ "$counts" = "no count" ]; then
		result "$t" "$counts (exit $rc)" "all pass" FAIL
	else
		result "$t" "$counts" "all pass" pass
	fi
done

# ---- 3. one GPU per rank, and the same run twice --------------------------------
step "pplan exec: two ranks on one GPU are refused"
if [ "$gpu_ok" = 1 ]; then
	rc=0
	run_logged shared-gpu 40 mpirun -np 2 "$pplan" exec --model "$CHECK_MODEL" \
		--layout "tp=1,pp=1,dp=2,mbs=1,gbs=2" --backend cuda --precision bf16 --steps 1 \
		--warmup 0 --timeout 30 || rc=$?
	if skipped shared-gpu; then
		result "2 ranks, 1 GPU" "-" "refused, exit 2" skipped
	elif [ "$rc" -eq 2 ] && grep -q "share the GPU" "$LOG_DIR/shared-gpu.log"; then
		result "2 ranks, 1 GPU" "exit 2: $(grep -m1 -o 'node-local ranks.*GPU at [^:]*:[^:]*:[^:]*' "$LOG_DIR/shared-gpu.log")" "refused, exit 2" pass
	else
		result "2 ranks, 1 GPU" "exit $rc" "refused, exit 2" FAIL
	fi
else
	result "2 ranks, 1 GPU" "-" "refused, exit 2" not-run
fi
check_gpu=$OUT_DIR/exec-check-cuda.json
check_gpu2=$LOG_DIR/exec-check-cuda-2.json
rm -f "$check_gpu" "$check_gpu2"
step "pplan exec: $(basename "$CHECK_MODEL") $CHECK_LAYOUT, bf16 on the GPU, twice (no atomics: the same losses to the bit)"
if [ "$gpu_ok" = 1 ]; then
	for r in "$check_gpu" "$check_gpu2"; do
		run_logged "exec-check-cuda$([ "$r" = "$check_gpu" ] || echo -2)" 90 mpirun -np 1 "$pplan" exec \
			--model "$CHECK_MODEL" --layout "$CHECK_LAYOUT" --backend cuda --precision bf16 \
			--steps "$CHECK_STEPS" --warmup "$CHECK_WARMUP" --timeout 60 --report "$r" || true
	done
	l1=$(json_array "$check_gpu" losses | tr '\n' ' ')
	l2=$(json_array "$check_gpu2" losses | tr '\n' ' ')
	if skipped exec-check-cuda exec-check-cuda-2; then
		result "deterministic" "-" "equal" skipped
	elif [ -n "${l1// /}" ] && [ "$l1" = "$l2" ]; then
		result "deterministic" "$(wc -w <<<"$l1") losses equal to the digit in two runs" "equal" pass
	else
		result "deterministic" "run 1: ${l1:-none}; run 2: ${l2:-none}" "equal" FAIL
	fi
else
	result "deterministic" "-" "equal" not-run
fi

# ---- 4. calibrate -----------------------------------------------------------
step "pplan calibrate --backend cuda ($(basename "$MODEL") shapes at tp 1, mbs 1..2, and the grid)"
profile=$OUT_DIR/profile-cuda.json
rm -f "$profile"
gemm_rate=null
if [ "$gpu_ok" = 1 ]; then
	run_logged calibrate 150 mpirun -np 1 "$pplan" calibrate --backend cuda --precision bf16 \
		--model "$MODEL" --max-tp 1 --max-mbs 2 --max-bytes 268435456 --out "$profile" || true
	# the GEMM table's 8192 x 8192 x 8192 row: m n k work time rate
	gemm_rate=$(awk '$1 == 8192 && $2 == 8192 && $3 == 8192 { print $6; exit }' "$LOG_DIR/calibrate.log")
	gemm_rate=${gemm_rate:-null}
	echo "8192^3 bf16 GEMM through pplan (cuBLAS): $gemm_rate TFLOP/s; H200 datasheet dense bf16 989, about 790 seen with PyTorch here"
fi
[ -f "$profile" ] && prof_verdict=pass || prof_verdict=$([ "$gpu_ok" = 1 ] && echo FAIL || echo not-run)
skipped calibrate && prof_verdict=skipped
result calibrate "$([ -f "$profile" ] && echo "profile-cuda.json" || echo "-")" "a profile" "$prof_verdict"

# ---- 5. pplan exec ------------------------------------------------------------
gpu_arg=()
[ -n "${GPU_TYPE:-}" ] && gpu_arg=(--gpu "$GPU_TYPE")
report=$OUT_DIR/exec-1b-cuda.json
rm -f "$report"
step "pplan exec: $(basename "$MODEL") $LAYOUT, bf16, $STEPS steps after $WARMUP, --profile"
if [ "$gpu_ok" = 1 ]; then
	prof_arg=()
	[ -f "$profile" ] && prof_arg=(--profile "$profile")
	run_logged exec-1b 150 mpirun -np 1 "$pplan" exec --model "$MODEL" --layout "$LAYOUT" \
		--backend cuda --precision bf16 --steps "$STEPS" --warmup "$WARMUP" --timeout 120 \
		--report "$report" ${prof_arg[@]+"${prof_arg[@]}"} ${gpu_arg[@]+"${gpu_arg[@]}"} || true
fi
step_s=$(json_num "$report" measured step_time_s)
tok_s=$(json_num "$report" measured tokens_per_s)
mfu=$(json_num "$report" measured mfu)
mem=$(json_num "$report" measured memory_gib_peak)
mem_dev=$(json_num "$report" measured memory_gib_process_peak)
pred_s=$(json_num "$report" predicted step_time_s)
pred_err=$(json_num "$report" error step_time_pct)

# ---- 6. the PyTorch reference ----------------------------------------------------
torch_json=$OUT_DIR/torch-reference.json
rm -f "$torch_json"
step "PyTorch reference: $(basename "$MODEL") (mbs and gbs of $LAYOUT), bf16, and torch.matmul 8192^3"
mbs=$(sed -n 's/.*mbs=\([0-9]*\).*/\1/p' <<<"$LAYOUT")
gbs=$(sed -n 's/.*gbs=\([0-9]*\).*/\1/p' <<<"$LAYOUT")
if [ "$gpu_ok" = 1 ]; then
	PYTHONUNBUFFERED=1 run_logged torch 150 "$PYTHON" "$here/torch_reference.py" --model "$MODEL" \
		--mbs "${mbs:-1}" --gbs "${gbs:-8}" --steps "$STEPS" --warmup "$WARMUP" \
		--matmul 8192 --attention "$ATTN_SEQS" --out "$torch_json" || true
fi
t_step=$(json_num "$torch_json" step median_s)
t_tok=$(json_num "$torch_json" step tokens_per_s)
t_mm=$(json_num "$torch_json" matmul tflops)
# the attention rates, pplan's fused kernel (calibrate's table: batch
# heads kv seq dim kernel fwd-ms fwd-TFLOP/s bwd-ms bwd-TFLOP/s) beside SDPA's
attn_rows=()
for T in ${ATTN_SEQS//,/ }; do
	pf=$(awk -v t="$T" '$4 == t && $6 == "fused" { print $8, $10; exit }' "$LOG_DIR/calibrate.log" 2>/dev/null || true)
	tf=$(command -v jq >/dev/null && [ -f "$torch_json" ] &&
		jq -r --argjson t "$T" '.attention[]? | select(.seq == $t) | "\(.fwd_tflops) \(.bwd_tflops)"' "$torch_json" || true)
	attn_rows+=("$T ${pf:-null null} ${tf:-null null}")
done

# ---- 7. the same steps of the short cut on the CPU (fp32), against the GPU's
check_cpu=$OUT_DIR/exec-check-cpu.json
rm -f "$check_cpu"
step "pplan exec: $(basename "$CHECK_MODEL") $CHECK_LAYOUT in fp32 on the CPU, against the GPU's bf16 run"
if [ "$gpu_ok" = 1 ]; then
	threads=$(($(nproc) / CPU_RANKS))
	[ "$threads" -ge 1 ] || threads=1
	run_logged exec-check-cpu 150 env OPENBLAS_NUM_THREADS=$threads mpirun -np "$CPU_RANKS" \
		--oversubscribe --bind-to none "$pplan" exec --model "$CHECK_MODEL" --layout "$CHECK_LAYOUT" \
		--backend cpu --precision fp32 --steps "$CHECK_STEPS" --warmup "$CHECK_WARMUP" \
		--timeout 120 --report "$check_cpu" || true
fi
loss_err=$(paste -d' ' <(json_array "$check_gpu" losses) <(json_array "$check_cpu" losses) |
	awk 'NF == 2 && $2 != 0 { e = ($1 - $2) / $2; if (e < 0) e = -e; if (e > m) m = e; n++ }
	     END { if (n) printf "%.3g %d\n", m, n; else print "null 0" }')
read -r loss_max loss_n <<<"$loss_err"
paste -d' ' <(json_array "$check_gpu" losses) <(json_array "$check_cpu" losses) |
	awk 'BEGIN { print "  step   bf16 (GPU)   fp32 (CPU)" } NF == 2 { printf "  %4d  %11s  %11s\n", NR, $1, $2 }'
want_n=$((CHECK_STEPS + CHECK_WARMUP))
if [ "$gpu_ok" != 1 ]; then
	result "exec vs CPU" "-" "losses within $LOSS_TOL" not-run
elif skipped exec-check-cuda exec-check-cpu; then
	result "exec vs CPU" "-" "<= $LOSS_TOL" skipped
elif is_num "$loss_max" && [ "$loss_n" -eq "$want_n" ] &&
	awk -v e="$loss_max" -v t="$LOSS_TOL" 'BEGIN { exit !(e <= t) }'; then
	result "exec vs CPU" "max rel. loss error $loss_max over $loss_n steps" "<= $LOSS_TOL" pass
else
	result "exec vs CPU" "max rel. loss error $loss_max over $loss_n of $want_n steps" "<= $LOSS_TOL" FAIL
fi

# ---- 8. the figures and the targets ----------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "null" }'; }
verdict() { # VALUE OP LIMIT [STEP...] -> pass | FAIL | not-run | skipped
	local v=$1 op=$2 l=$3
	shift 3
	if [ "$gpu_ok" != 1 ]; then echo not-run
	elif ! is_num "$v" && [ $# -gt 0 ] && skipped "$@"; then echo skipped
	elif ! is_num "$v"; then echo FAIL
	elif awk -v v="$v" -v l="$l" -v op="$op" 'BEGIN { exit !(op == "<=" ? v <= l : op == ">=" ? v >= l : (v <= l && v >= -l)) }'; then echo pass
	else echo FAIL; fi
}
gemm_frac=$(ratio "$gemm_rate" "$t_mm")
result "GEMM 8192^3 bf16" "pplan $(fmt "$gemm_rate"), torch $(fmt "$t_mm") TFLOP/s (ratio $gemm_frac)" ">= 0.85 x torch" "$(verdict "$gemm_frac" '>=' 0.85 calibrate torch)"
step_ratio=$(ratio "$step_s" "$t_step")
result "step vs PyTorch" "pplan $(fmt "$step_s") s, torch $(fmt "$t_step") s (ratio $step_ratio)" "<= 1.25 x torch" "$(verdict "$step_ratio" '<=' 1.25 exec-1b torch)"
result "predicted step" "$(fmt "$pred_s") s vs measured $(fmt "$step_s") s ($(fmt "$pred_err") %)" "within 10 %" "$(verdict "$pred_err" '+-' 10 exec-1b)"

# attention at the longest sequence: pplan's fused kernel against SDPA's
last_row="null null null null null"
[ "${#attn_rows[@]}" -gt 0 ] && last_row=${attn_rows[${#attn_rows[@]}-1]}
read -r a_seq a_pf a_pb a_tf a_tb <<<"$last_row"
attn_frac=$(ratio "$a_pf" "$a_tf")
result "attention ${a_seq} fwd" "pplan $(fmt "$a_pf"), SDPA $(fmt "$a_tf") TFLOP/s (ratio $attn_frac)" ">= 0.5 x SDPA" "$(verdict "$attn_frac" '>=' 0.5 calibrate torch)"

summary=$OUT_DIR/summary.txt
{
	echo "# bench/gpu-check.sh on $(hostname) ${gpu_name:+($gpu_name)} $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown), $((SECONDS - start_s)) s"
	echo "# figures"
	printf '  %-34s %s\n' \
		"GEMM 8192^3 bf16, pplan calibrate" "$(fmt "$gemm_rate") TFLOP/s (H200 datasheet dense 989)" \
		"GEMM 8192^3 bf16, torch.matmul" "$(fmt "$t_mm") TFLOP/s" \
		"pplan exec step (median)" "$(fmt "$step_s") s" \
		"pplan exec throughput" "$(fmt "$tok_s") tokens/s" \
		"pplan exec MFU" "$(fmt "$mfu") (fraction of the GPU table's dense rate)" \
		"pplan exec model memory" "$(fmt "$mem") GiB (its own buffers; the device's peak $(fmt "$mem_dev") GiB)" \
		"predicted step (CUDA profile)" "$(fmt "$pred_s") s ($(fmt "$pred_err") % off the measured)" \
		"PyTorch reference step (median)" "$(fmt "$t_step") s" \
		"PyTorch reference throughput" "$(fmt "$t_tok") tokens/s" \
		"bf16 GPU vs fp32 CPU losses" "max relative error $loss_max over $loss_n steps"
	echo "# attention, causal, batch 1 (TFLOP/s over the whole s x s square, as calibrate counts)"
	printf '  %6s  %12s %12s  %12s %12s\n' tokens "pplan fwd" "pplan bwd" "SDPA fwd" "SDPA bwd"
	for r in "${attn_rows[@]}"; do
		read -r t pf pb tf tb <<<"$r"
		printf '  %6s  %12s %12s  %12s %12s\n' "$t" "$(fmt "$pf")" "$(fmt "$pb")" "$(fmt "$tf")" "$(fmt "$tb")"
	done
	echo "# targets"
	printf '  %-18s %-8s %-18s %s\n' target verdict limit figure
	for r in "${results[@]}"; do
		IFS='|' read -r name fig target verdict <<<"$r"
		printf '  %-18s %-8s %-18s %s\n' "$name" "$verdict" "$target" "$fig"
	done
	if [ "$failed" = 0 ]; then echo "# all passed"; else echo "# NOT all passed"; fi
} >"$summary"

# the logs as one file (the device tool brings back at most 8 files)
tar -czf "$OUT_DIR/logs.tar.gz" -C "$OUT_DIR" logs
[ -n "${OUT:-}" ] && [ "$OUT_DIR" = "$OUT" ] && rm -rf "$LOG_DIR"
step "summary (also $summary)"
cat "$summary"
exit "$failed"
