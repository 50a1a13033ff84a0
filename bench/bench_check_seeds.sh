#!/usr/bin/env bash
# bench_check_seeds.sh: issue 20's figure for `pplan exec --check`: over
# SEEDS seeds x every layout of tests/cli_exec_check.sh (its list, read
# from the test, each layout once) in fp32 on the CPU backend, how many
# correct runs the check fails (the target: none), and how close the
# largest element-wise gradient error comes to its bound.  Not a test:
# about 170 runs of 2-4 ranks, 15-25 minutes on two cores.
#
#   bash bench/bench_check_seeds.sh [BUILD_DIR] [SEEDS]   (build, 8)
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
[ "$failed" -eq 0 ]
