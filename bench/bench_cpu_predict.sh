#!/usr/bin/env bash
# bench_cpu_predict.sh: the loop of issue 8 on this machine's CPUs.
#   1. mpirun -np 2 pplan calibrate --backend cpu --model gpt-small --out prof.json
#   2. mpirun -np 2 pplan exec --backend cpu --profile prof.json on the small GPT
#      with pp=2 (1F1B, 16 microbatches), tp=2, dp=2 and cp=2, each with --report
#   3. pplan report compare on the four reports; pplan report html of them
# and, per layout, the predicted step time against the measured median (the
# target: within 15 %) and the bubble fraction (within 0.05).  The load
# average is recorded before and after every step; the machine is shared,
# so BENCHMARKS.md quotes it beside the figures.
#
#   bash bench/bench_cpu_predict.sh [BUILD_DIR] [OUT_DIR] [STEPS]
set -eu
BUILD=${1:-build}
OUT=${2:-bench/results/cpu-predict}
STEPS=${3:-10}
P="$BUILD/pplan"
M=tests/fixtures/exec/gpt-small.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
MPI="mpirun -np 2 --mca btl self,vader"
mkdir -p "$OUT"
load() { echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) $1"; }

{
	echo "# bench_cpu_predict: $(hostname), $(nproc) cores, $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	load "before calibrate"
	$MPI "$P" calibrate --backend cpu --model "$M" --max-bytes 67108864 --out "$OUT/prof.json"
	load "after calibrate"
} >"$OUT/calibrate.txt" 2>&1
grep '^# load' "$OUT/calibrate.txt"

for spec in "pp2 pp=2,schedule=1f1b,mbs=1,gbs=16" "tp2 tp=2,mbs=1,gbs=16" "dp2 dp=2,mbs=1,gbs=16" \
	"cp2 cp=2,mbs=1,gbs=16"; do
	set -- $spec
	{
		load "before exec $1"
		$MPI "$P" exec --backend cpu --model "$M" --layout "$2" --steps "$STEPS" --warmup 2 \
			--profile "$OUT/prof.json" --report "$OUT/$1.json"
		load "after exec $1"
	} >"$OUT/exec-$1.txt" 2>&1
	grep -E '^# load|step time \(median\)|bubble fraction|model memory|^  [a-z_]+ +s ' "$OUT/exec-$1.txt"
done

"$P" report compare "$OUT/pp2.json" "$OUT/tp2.json" "$OUT/dp2.json" "$OUT/cp2.json" \
	--json "$OUT/comparison.json" \
	| tee "$OUT/compare.txt" | grep -E '^ +[1234]  (step time|bubble fraction)|MAPE'
"$P" report html "$OUT/pp2.json" "$OUT/tp2.json" "$OUT/dp2.json" "$OUT/cp2.json" -o "$OUT/exec-cpu.html"
