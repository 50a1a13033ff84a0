#!/usr/bin/env bash
# cli_exec_check.sh: `mpiexec pplan exec --backend cpu --check` on the small
# GPT of tests/fixtures/exec/gpt-small.json (8 layers, hidden 256, 8 heads,
# seq 256, vocab 4096, a Hugging Face config.json).  For every layout (and
# a few seeds) the parallel run must compute the same training steps as one
# rank: step 1's gradients element by element within rounding's bound
# (exec/gradcheck.c), every step's loss within 1e-5 x the step (rank 0
# recomputes the single-rank reference).  A correct run must never fail:
# the largest error's share of its bound over every case is printed (the
# margin).  Real MPI processes (2 ranks, and 4 oversubscribed); never
# inside Criterion.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
M=$S/tests/fixtures/exec/gpt-small.json
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

# ranks layout [model] (what issue 7 lists; then GQA, SwiGLU, RMSNorm and an
# untied LM head: tests/fixtures/exec/llama-small.json; then context
# parallelism, ring attention)
cases="
2 tp=2,pp=1,gbs=2
2 pp=2,gbs=4
2 dp=2,zero=0,gbs=4
2 dp=2,zero=1,gbs=4
2 tp=2,sp=on,gbs=2
2 tp=2,sp=off,gbs=2
2 pp=2,vp=2,gbs=4
2 pp=2,schedule=zb-h1,gbs=4
2 pp=2,schedule=gpipe,gbs=4
2 tp=2,recompute=selective,gbs=2
2 tp=2,recompute=full,gbs=2
4 tp=2,pp=2,gbs=4
4 tp=2,dp=2,gbs=4
4 pp=2,dp=2,gbs=8
4 pp=4,gbs=4
4 dp=4,zero=1,gbs=4
2 tp=2,gbs=2 llama-small
4 tp=2,pp=2,gbs=4 llama-small
2 tp=2,pp=1,gbs=2 - 7
2 tp=2,pp=1,gbs=2 - 99
2 tp=2,sp=on,gbs=2 - 5
4 tp=2,dp=2,gbs=4 - 11
2 dp=2,zero=1,gbs=4 - 3
2 cp=2,gbs=2
4 cp=2,tp=2,gbs=2 llama-small
4 cp=4,gbs=2 llama-small
"
# Under ASan/UBSan (several times slower) one case of each kind runs.
if [ -n "${PPLAN_TEST_SANITIZED:-}" ]; then
	cases=$(printf '%s\n' "$cases" | grep -E '^(2 tp=2,sp=on|2 pp=2,vp=2|2 pp=2,schedule=zb-h1|2 dp=2,zero=1|2 tp=2,recompute=full|4 tp=2,pp=2,gbs=4 llama|2 cp=2)')
	echo "(sanitizer build: $(printf '%s\n' "$cases" | grep -c .) of the layouts)"
fi
worst=0
while read -r np layout model seed; do
	[ -n "$np" ] || continue
	n=$((n + 1))
	mf=$M
	[ -n "$model" ] && [ "$model" != - ] && mf=$S/tests/fixtures/exec/$model.json
	timeout 300 "$MPIEXEC" -n "$np" "$B" exec --model "$mf" --layout "$layout" \
		--backend cpu --steps 2 --warmup 1 --check --timeout 120 --seed "${seed:-1234}" \
		--report "$tmp/r.json" >"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^# check passed' "$tmp/out"; then
		echo "FAIL: -n $np --layout $layout $model (exit $rc)"; cat "$tmp/out"; fail=1
		continue
	fi
	if ! grep -Eq "\"schema\":[[:space:]]*\"pplan.report/1\"" "$tmp/r.json" ||
	   ! grep -Eq "\"passed\":[[:space:]]*true" "$tmp/r.json"; then
		echo "FAIL: -n $np --layout $layout: report"; fail=1
	fi
	# the element-wise error's share of its bound
	share=$(sed -n 's/.*(|g_ref| + rms) \([0-9.e+-]*\) (bound \([0-9.e+-]*\)).*/\1 \2/p' "$tmp/out" |
		awk '{ printf "%.3f", $1 / $2 }')
	[ -n "$share" ] || { echo "FAIL: -n $np --layout $layout: no element-wise figure"; fail=1; }
	# the bound by hand for pp=2, gbs 4 (8 layers, hidden 256, ffn 1024,
	# seq 256, vocab 4096): n = 4 x 256 + 4096 + 8 (2 x 1024 + 256) = 23552,
	# 8 x 2^-24 sqrt(23552 + 10 x 8) = 8 x 5.9605e-8 x 153.73 = 7.33e-5
	if [ "$np $layout" = "2 pp=2,gbs=4" ] && ! grep -q "(bound 7.33e-05)" "$tmp/out"; then
		echo "FAIL: pp=2,gbs=4: the gradients' bound is not 7.33e-05"; grep '^# check' "$tmp/out"; fail=1
	fi
	worst=$(awk -v a="$worst" -v b="${share:-0}" 'BEGIN { print (b > a ? b : a) }')
	echo "ok: -n $np --layout $layout ${model:-} ${seed:+seed $seed}: error ${share:-?} of the bound: $(grep '^# check' "$tmp/out" | cut -c1-160)"
done <<<"$cases"
echo "$n runs checked against one rank; the largest element-wise error was $worst of its bound"
exit $fail
