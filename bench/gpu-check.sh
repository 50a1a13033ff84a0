#!/usr/bin/env bash
# bench/gpu-check.sh: everything pplan can only check on a GPU, in one go,
# on one GPU machine (no network, nothing downloaded):
#   1. configure and build with CUDA (the module for sm_80 and sm_90);
#   2. run the CUDA kernel tests (tests/cuda_kernels.c: every kernel
#      against its CPU twin in fp32, bf16 and fp16) and the backend tests
#      (tests/cuda_backend.c: cuBLAS GEMMs, one-rank NCCL, marks, memory);
#      a "skipped: no GPU" here is a failure;
#   3. run one-GPU `pplan exec` of a 1B-class layer stack
#      (bench/models/llama-1b-gqa.json) in bf16 with --check and --report;
#   4. print the measured step time, throughput and MFU from the report.
#
# Usage (from anywhere; it finds the repository from its own path):
#   bench/gpu-check.sh
# Settings, from the environment (defaults in brackets):
#   BUILD_DIR   build directory                 [<repo>/build-gpu]
#   MODEL       model for pplan exec            [bench/models/llama-1b-gqa.json]
#   LAYOUT      layout for one GPU              [tp=1,pp=1,dp=1,mbs=1,gbs=8]
#   PRECISION   bf16 or fp32                    [bf16]
#   STEPS, WARMUP  timed and untimed steps      [10, 3]
#   GPU_TYPE    pplan's GPU name for the prediction (h200, h100-sxm, ...)
#               [guessed from nvidia-smi; pplan's detection if not]
#   OUT_DIR     where the report goes           [<repo>/bench/results]
#   JOBS        build parallelism               [all cores]
# Exit status 0 when every step passed; otherwise the first failing step
# says what failed, and the status is 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$repo/build-gpu}
MODEL=${MODEL:-$repo/bench/models/llama-1b-gqa.json}
LAYOUT=${LAYOUT:-tp=1,pp=1,dp=1,mbs=1,gbs=8}
PRECISION=${PRECISION:-bf16}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-3}
OUT_DIR=${OUT_DIR:-$repo/bench/results}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
LOG_DIR=$BUILD_DIR/gpu-check-logs

step() { printf '\n== %s\n' "$*"; }
die() { printf 'gpu-check: FAILED: %s\n' "$*" >&2; exit 1; }
# run_logged NAME SECONDS CMD...: runs CMD with a time limit, output to
# the terminal and to $LOG_DIR/NAME.log; a failure names the log.
run_logged() {
	local name=$1 secs=$2 rc=0
	shift 2
	timeout --kill-after=30 "$secs" "$@" 2>&1 | tee "$LOG_DIR/$name.log" || rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		die "$name did not finish within $secs s (log: $LOG_DIR/$name.log)"
	elif [ "$rc" -ne 0 ]; then
		die "$name exited with status $rc (log: $LOG_DIR/$name.log)"
	fi
}

# ---- 0. the machine -------------------------------------------------------
step "machine"
command -v cmake >/dev/null || die "cmake is not installed"
command -v timeout >/dev/null || die "timeout (coreutils) is not installed"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
	export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null || die "nvcc not found (install the CUDA toolkit or put it on PATH)"
nvcc --version | tail -1
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader ||
		die "nvidia-smi cannot talk to the driver"
	gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
else
	echo "nvidia-smi not found; the CUDA runtime will say whether a GPU answers"
	gpu_name=""
fi
if [ -z "${GPU_TYPE:-}" ]; then
	case "$gpu_name" in
	*H200*) GPU_TYPE=h200 ;;
	*H800*) GPU_TYPE=h800 ;;
	*H100*NVL* | *H100*96*) GPU_TYPE=h100-96gb ;;
	*H100*) GPU_TYPE=h100-sxm ;;
	*A100*80*) GPU_TYPE=a100-80gb ;;
	*A100*) GPU_TYPE=a100-40gb ;;
	*B200*) GPU_TYPE=b200 ;;
	*) GPU_TYPE="" ;;
	esac
fi
echo "GPU for the prediction: ${GPU_TYPE:-as pplan detects it}"
mkdir -p "$BUILD_DIR" "$OUT_DIR"
mkdir -p "$LOG_DIR"
[ -f "$MODEL" ] || die "no model file $MODEL"

# Open MPI refuses root without these (docs/install.md).
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# ---- 1. build ------------------------------------------------------------
step "configure and build with CUDA in $BUILD_DIR"
run_logged configure 600 cmake -S "$repo" -B "$BUILD_DIR" -DPPLAN_CUDA=ON \
	-DCMAKE_BUILD_TYPE=Release
grep -q "pplan: CUDA backend enabled" "$LOG_DIR/configure.log" ||
	grep -q "^PPLAN_HAVE_CUDA" "$BUILD_DIR/CMakeCache.txt" ||
	echo "(configure did not print 'CUDA backend enabled'; the module check below decides)"
run_logged build 1800 cmake --build "$BUILD_DIR" -j "$JOBS" --target pplan cuda_kernels cuda_backend
module=$BUILD_DIR/libpplan_cuda.so
[ -f "$module" ] || die "$module was not built: CMake found no CUDA toolkit with NCCL (see $LOG_DIR/configure.log)"
export PPLAN_CUDA_MODULE=$module

# ---- 2. kernel and backend tests ------------------------------------------
for t in cuda_kernels cuda_backend; do
	step "$t (GPU against the CPU twins)"
	run_logged "$t" 900 "$BUILD_DIR/tests/$t"
	if grep -q "^skipped" "$LOG_DIR/$t.log"; then
		die "$t found no GPU: $(grep '^skipped' "$LOG_DIR/$t.log")"
	fi
	grep -q "^FAIL" "$LOG_DIR/$t.log" && die "$t has failed checks (log: $LOG_DIR/$t.log)"
	grep '^# .* checks passed' "$LOG_DIR/$t.log" || true
done

# ---- 3. one-GPU pplan exec ------------------------------------------------
step "pplan exec: $(basename "$MODEL") $LAYOUT, $PRECISION, $STEPS steps after $WARMUP, --check"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
report=$OUT_DIR/gpu-check-${GPU_TYPE:-gpu}-$stamp.json
gpu_arg=()
[ -n "${GPU_TYPE:-}" ] && gpu_arg=(--gpu "$GPU_TYPE")
launcher=()
if command -v mpirun >/dev/null; then
	launcher=(mpirun -np 1)
fi
run_logged exec 1200 ${launcher[@]+"${launcher[@]}"} "$BUILD_DIR/pplan" exec \
	--model "$MODEL" --layout "$LAYOUT" --backend cuda --precision "$PRECISION" \
	--steps "$STEPS" --warmup "$WARMUP" --check --timeout 300 \
	--report "$report" ${gpu_arg[@]+"${gpu_arg[@]}"}
[ -f "$report" ] || die "pplan exec exited 0 but wrote no report at $report"

# ---- 4. the figures ---------------------------------------------------------
step "figures (from $report)"
# One number of the report: jq where there is one, else the first match
# after the section's key (cJSON writes keys in the order of
# docs/report-format.md: "measured" before "timeline").
field() { # SECTION KEY
	if command -v jq >/dev/null; then
		jq -r ".$1.$2" "$report"
	else
		sed -n "/\"$1\"[[:space:]]*:/,\$p" "$report" |
			grep -m1 -o "\"$2\"[[:space:]]*:[[:space:]]*[^,}[:space:]]*" |
			sed 's/.*:[[:space:]]*//'
	fi
}
status=$(grep -m1 -o '"status"[[:space:]]*:[[:space:]]*"[a-z]*"' "$report" | sed 's/.*"\([a-z]*\)"$/\1/')
[ "$status" = "ok" ] || die "the report's status is '$status'"
passed=$(field check passed)
mfu=$(field measured mfu)
step_s=$(field measured step_time_s)
tok_s=$(field measured tokens_per_s)
tflops=$(field measured tflops_per_gpu)
peak=$(field measured peak_tflops)
pred_mfu=$(field predicted mfu)
mem=$(field measured memory_gib_peak)
printf '  %-28s %s\n' "check (vs one rank)" "$passed" \
	"step time (median)" "$step_s s" \
	"throughput" "$tok_s tokens/s" \
	"model TFLOP/s per GPU" "$tflops TFLOP/s (peak $peak TFLOP/s)" \
	"peak memory" "$mem GiB" \
	"predicted MFU" "$pred_mfu"
awk -v m="$mfu" 'BEGIN { if (m == "null" || m == "") print "  MFU                          null";
	else printf "  MFU                          %.1f %%\n", 100 * m }'
[ "$passed" = "true" ] || die "--check did not pass (see the report's \"check\" section)"
echo
echo "gpu-check: all passed; report $report"
