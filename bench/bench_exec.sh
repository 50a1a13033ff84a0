#!/usr/bin/env bash
# bench_exec.sh: the executor's figures on this machine (BENCHMARKS.md,
# "pplan exec").  Not a test: timings, medians, ratios from one run.
#
#  1. The measured bubble fraction of a pipeline with uniform stages (the
#     small GPT with a 256-token vocabulary, so that the embedding and the
#     LM head are negligible beside 4 layers per stage; 2 ranks, pp=2, 8
#     microbatches) against the closed forms: GPipe and 1F1B
#     (p-1)/(m+p-1), interleaved with v=2 (p-1)/(v*m+p-1); ZB-H1 beside
#     sim's simulation of it.  Beside it, the bubble pplan exec itself
#     predicts for the run (its prediction prices the stages' real
#     imbalance: the embedding on the first, the LM head and loss on the
#     last, which the closed forms leave out).
#  2. The harness overhead: the share of a step outside the timed ops.
#  3. The sgemm rate inside exec against a standalone OpenBLAS sgemm of the
#     same shapes and call counts (bench_exec_gemm), in the same run.
#
# usage: bench/bench_exec.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
B=$BUILD/pplan
M=bench/gpt-uniform.json
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# bench_exec: pplan $($B --version 2>/dev/null | cut -d' ' -f2), git $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
echo "# host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
printf "#  %-22s %8s %8s %8s %8s %9s %9s %9s\n" schedule "m" closed measured "|diff|" "outside" predicted "|m-p|"
printf "#  %-22s %8s %8s %8s %8s %9s %9s %9s\n" "" "" "(%)" "(%)" "(pts)" "(%)" "(%)" "(pts)"
row() { # label layout closed_form
	mpirun -q -n 2 "$B" exec --model "$M" --layout "$2" --backend cpu --steps 8 --warmup 2 \
		</dev/null >"$tmp/out" 2>&1
	local meas outside pred
	meas=$(awk '$1 == "bubble" && $2 == "fraction" { print $5 }' "$tmp/out")
	pred=$(awk '$1 == "bubble" && $2 == "fraction" { print $4 }' "$tmp/out")
	outside=$(sed -n 's/.*time outside timed ops \([0-9.]*\) %.*/\1/p' "$tmp/out")
	awk -v l="$1" -v c="$3" -v m="$meas" -v o="$outside" -v p="$pred" 'BEGIN {
		d = c - m; if (d < 0) d = -d
		q = p - m; if (q < 0) q = -q
		printf "   %-22s %8d %8.2f %8.2f %8.2f %9.2f %9.2f %9.2f\n", l, 8, c, m, d, o, p, q }'
}
row "1f1b pp=2"            pp=2,gbs=8,schedule=1f1b             $(awk 'BEGIN { print 100 * 1 / (8 + 1) }')
row "gpipe pp=2"           pp=2,gbs=8,schedule=gpipe            $(awk 'BEGIN { print 100 * 1 / (8 + 1) }')
row "interleaved pp=2 vp=2" pp=2,vp=2,gbs=8,schedule=interleaved $(awk 'BEGIN { print 100 * 1 / (2 * 8 + 1) }')
zb=$("$B" simulate --model "$M" --gpus 2 --layout pp=2,gbs=8,schedule=zb-h1 2>/dev/null |
     sed -n 's/^# bubble fraction *\([0-9.]*\) % mean simulated.*/\1/p' || true)
row "zb-h1 pp=2 (vs sim)"  pp=2,gbs=8,schedule=zb-h1            "${zb:-0}"

echo
echo "# sgemm inside pplan exec (1 rank, tp=1, 8 microbatches, 6 timed steps) against standalone sgemm"
PPLAN_EXEC_GEMM_STATS=$tmp/gemm mpirun -q -n 1 "$B" exec --model tests/fixtures/exec/gpt-small.json \
	--layout tp=1,gbs=8 --backend cpu --steps 6 --warmup 1 </dev/null >"$tmp/out" 2>&1
"$BUILD/bench/bench_exec_gemm" "$tmp/gemm.rank0"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
