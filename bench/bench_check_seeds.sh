#!/usr/bin/env bash
# bench_check_seeds.sh: issue 20's figure for `pplan exec --check`: over
# SEEDS seeds x every layout of tests/cli_exec_check.sh (its list, read
# from the test, each layout once) in fp32 on the CPU backend, how many
# correct runs the check fails (the target: none), and how close the
# largest element-wise gradient error comes to its bound; then, once per
# layout, a wrong value of 1e-4 relative in one GEMM output element and
# (pp > 1) in one pipeline message element, each of which the check must
# fail.  Not a test: about 200 runs of 2-4 ranks, 20-30 minutes on two
# cores.
#
#   bash bench/bench_check_seeds.sh [BUILD_DIR] [SEEDS]   (build, 8; 0: the
#                                                          wrong values only)
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SEEDS=${2:-8}
B=$BUILD/pplan
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the test's layouts: "ranks layout [model]", each once
layouts=$(sed -n '/^cases="$/,/^"$/p' tests/cli_exec_check.sh | grep -E '^[0-9]' |
	awk '{ print $1, $2, ($3 == "" || $3 == "-") ? "gpt-small" : $3 }' | sort -u)
[ -n "$layouts" ] || { echo "bench_check_seeds: no layouts read from tests/cli_exec_check.sh" >&2; exit 2; }

echo "# bench_check_seeds: pplan $($B --version 2>/dev/null | cut -d' ' -f2), git $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
echo "# $(printf '%s\n' "$layouts" | grep -c .) layouts x $SEEDS seeds, fp32, --steps 2 --warmup 1; load $(cut -d' ' -f1-3 /proc/loadavg) at start"
printf "#  %-3s %-30s %-11s %6s %8s %10s\n" np layout model runs failed "worst/bound"
runs=0 failed=0 worst_all=0
while read -r np layout model; do
	n=0 f=0 worst=0
	for seed in $(seq 1 "$SEEDS"); do
		timeout 300 mpirun -q -n "$np" "$B" exec --model "tests/fixtures/exec/$model.json" \
			--layout "$layout" --backend cpu --steps 2 --warmup 1 --check --timeout 120 \
			--seed "$seed" >"$tmp/out" 2>&1 </dev/null
		rc=$?
		n=$((n + 1))
		if [ $rc -ne 0 ] || ! grep -q '^# check passed' "$tmp/out"; then
			f=$((f + 1))
			echo "# FAILED: -n $np --layout $layout $model --seed $seed (exit $rc): $(grep -m1 '^# check' "$tmp/out")"
			continue
		fi
		share=$(sed -n 's/.*(|g_ref| + rms) \([0-9.e+-]*\) (bound \([0-9.e+-]*\)).*/\1 \2/p' "$tmp/out" |
			awk '{ printf "%.4f", $1 / $2 }')
		worst=$(awk -v a="$worst" -v b="${share:-0}" 'BEGIN { print (b > a) ? b : a }')
	done
	printf "   %-3s %-30s %-11s %6d %8d %10.3f\n" "$np" "$layout" "$model" "$n" "$f" "$worst"
	runs=$((runs + n))
	failed=$((failed + f))
	worst_all=$(awk -v a="$worst_all" -v b="$worst" 'BEGIN { print (b > a) ? b : a }')
done <<<"$layouts"
echo "# $runs runs, $failed failed; the largest element-wise error $worst_all of its bound; load $(cut -d' ' -f1-3 /proc/loadavg) at the end"

# Wrong values of 1e-4 relative, one per run, seed 1: one element of the
# last rank's first forward GEMM output, and (with pp > 1) one element of
# its first pipeline message.  Each must fail the check.
echo "# wrong values of 1e-4 relative under --check, seed 1"
printf "#  %-3s %-30s %-11s %-22s %s\n" np layout model fault verdict
injected=0 caught=0
while read -r np layout model; do
	for kind in gemm message; do
		# a message needs pp > 1
		echo "$layout" | grep -Eq '(^|,)pp=([2-9]|[1-9][0-9])' || [ $kind = gemm ] || continue
		fault="$((np - 1)):1:$kind:1e-4"
		timeout 300 mpirun -q -n "$np" "$B" exec --model "tests/fixtures/exec/$model.json" \
			--layout "$layout" --backend cpu --steps 2 --warmup 1 --check --timeout 120 \
			--seed 1 --fault "$fault" >"$tmp/out" 2>&1 </dev/null
		rc=$?
		injected=$((injected + 1))
		if [ $rc -eq 1 ] && grep -q '^# check FAILED' "$tmp/out"; then
			caught=$((caught + 1))
			v=caught
		else
			v="MISSED (exit $rc)"
		fi
		printf "   %-3s %-30s %-11s %-22s %s\n" "$np" "$layout" "$model" "$fault" "$v"
	done
done <<<"$layouts"
echo "# $caught of $injected wrong values caught"
[ "$failed" -eq 0 ] && [ "$caught" -eq "$injected" ]
