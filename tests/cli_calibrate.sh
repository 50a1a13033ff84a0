#!/usr/bin/env bash
# cli_calibrate.sh: `pplan calibrate` end to end under mpirun with the CPU
# backend (--quick, small sizes): the nccl-tests columns of every
# collective with #wrong 0 and the average-busbw footer, the compute
# tables, and a pplan.profile/1 file; bad options refused with exit 2
# before any work, nothing written.  Structure only: no timing is judged
# here (tests/mpi_calibrate.c compares timings, BENCHMARKS.md has figures).
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
MPI="mpirun -np 2 --oversubscribe --mca btl self,vader"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

$MPI "$B" calibrate --quick --max-bytes 65536 --out "$tmp/prof.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: calibrate exit $rc"; cat "$tmp/out" "$tmp/err"; exit 1; }
expect() { grep -qE -- "$1" "$tmp/out" || { echo "FAIL: no line matching '$1'"; fail=1; }; }
expect '^# pplan calibrate: pplan [0-9.]+, git [0-9a-f]+'
expect '^# 2 ranks on 1 host'
expect '^# +m +n +k +work +time +rate'
expect '^# +bytes +time +bandwidth'
expect '^# +batch +heads +kv +seq'
for op in all_reduce all_gather reduce_scatter all_to_all broadcast send_recv; do
	expect "^# $op: groups of 2 ranks"
done
expect '^# +size +count +type +redop +root +time +algbw +busbw +#wrong$'
expect '^# +\(B\) +\(elements\) +\(us\) +\(GB/s\) +\(GB/s\)'
[ "$(grep -c '^# Avg bus bandwidth    : ' "$tmp/out")" -eq 6 ] || { echo "FAIL: not 6 busbw footers"; fail=1; }
# every size from 8 B to 64 KiB: 14 rows per collective, none wrong
rows=$(grep -cE '^ +[0-9]+ +[0-9]+  float ' "$tmp/out")
[ "$rows" -eq 84 ] || { echo "FAIL: $rows collective rows, want 6 x 14"; fail=1; }
if grep -E '^ +[0-9]+ +[0-9]+  float ' "$tmp/out" | awk '$NF != 0 { bad = 1 } END { exit !bad }'; then
	echo "FAIL: a collective came back wrong"; fail=1
fi
expect '^# wrote .*prof.json \(pplan.profile/1\)'
# On the CPU each collective a step blocks on is also timed after the
# ranks' compute (calibrate_coll.c): every all-reduce, all-gather,
# reduce-scatter and all-to-all point up to 8 MiB carries exposed_s, no
# less than its loop time; broadcast (no step waits on one) none.
[ "$(grep -c '^# as a step meets it' "$tmp/out")" -eq 5 ] || { echo "FAIL: not 5 'as a step meets it' footers"; fail=1; }
jq -e '[.collectives[] | select(.op == "all_reduce" or .op == "all_gather" or .op == "reduce_scatter" or .op == "all_to_all") | .points[] | select(.bytes >= 4096) | (.exposed_s != null and .exposed_s >= .time_s)] | length > 0 and all' "$tmp/prof.json" >/dev/null ||
	{ echo "FAIL: a collective point without its time after compute"; fail=1; }
jq -e '[.collectives[] | select(.op == "broadcast") | .points[] | .exposed_s] | all(. == null)' "$tmp/prof.json" >/dev/null ||
	{ echo "FAIL: broadcast points with exposed_s"; fail=1; }
for key in '"schema":[[:space:]]*"pplan.profile/1"' '"kind":[[:space:]]*"measured"' \
	'"name":[[:space:]]*"cpu"' '"gemm":' '"elementwise":' '"attention":' '"collectives":' \
	'"op":[[:space:]]*"all_to_all"' '"alpha_s":' '"provenance":'; do
	grep -qE "$key" "$tmp/prof.json" || { echo "FAIL: no $key in the profile"; fail=1; }
done

# The profile prices CPU ranks: predict, search and simulate read it back
# (sim/profile.c's checks) and take it as the machine.
M=${PPLAN_SOURCE_DIR:?}/tests/fixtures/exec/gpt-small.json
for cmd in "predict --layout pp=2,gbs=16" "simulate --layout pp=2,gbs=16" "search --gpus 2 --global-batch 16"; do
	"$B" $cmd --model "$M" --profile "$tmp/prof.json" >"$tmp/out" 2>"$tmp/err" ||
		{ echo "FAIL: pplan $cmd --profile: exit $?"; cat "$tmp/err"; fail=1; continue; }
	grep -q '^# cluster   cpu: 2 x cpu' "$tmp/out" || { echo "FAIL: $cmd: not priced on the CPU ranks"; head -5 "$tmp/out"; fail=1; }
done

# Bad input: exit 2, one sentence, nothing written, no MPI needed.
bad() {
	local needle=$1 rc
	shift
	"$B" calibrate "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF -- "$needle" "$tmp/err"; then
		echo "FAIL: calibrate $*: exit $rc, want 2 and '$needle'"; cat "$tmp/err"; fail=1
	fi
}
bad "--backend must be cpu or cuda" --backend tpu --out "$tmp/bad.json"
bad "unknown option" --bogus
bad "--max-bytes must be a whole number" --max-bytes -5
bad "--max-tp must be a whole number from 1 to 64" --max-tp 0
bad "--max-mbs must be a whole number from 1 to 64" --max-mbs 1.5
bad "--max-mbs needs a value" --max-mbs
bad "computes in fp32" --precision bf16
bad "does not exist" --out "$tmp/no/such/prof.json"
bad "unknown model" --model no-such-model --out "$tmp/bad.json"
[ -e "$tmp/bad.json" ] && { echo "FAIL: a profile was written for bad input"; fail=1; }

# --profile refused: a CPU profile with a cluster, or bf16; a GPU profile
# for another GPU; exec on the CPU backend with a GPU profile.
P="$tmp/prof.json"
sed -e 's/"name":[[:space:]]*"cpu"/"name": "h100-sxm"/; s/"backend":[[:space:]]*"cpu"/"backend": "cuda"/' "$P" >"$tmp/h100.json"
badp() {
	local needle=$1 rc
	shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF -- "$needle" "$tmp/err"; then
		echo "FAIL: pplan $*: exit $rc, want 2 and '$needle'"; cat "$tmp/err"; fail=1
	fi
}
badp "leave out --cluster" predict --model "$M" --layout pp=2,gbs=16 --profile "$P" --cluster dgx-a100
badp "compute in fp32, not --precision bf16" predict --model "$M" --layout pp=2,gbs=16 --profile "$P" --precision bf16
badp "describes h100-sxm, but the cluster's GPU is a100-80gb" predict --model "$M" --layout tp=8 --profile "$tmp/h100.json" --gpu a100-80gb --gpus 8
badp "but --backend cpu runs on CPU ranks" exec --backend cpu --model "$M" --layout dp=1,gbs=4 --profile "$tmp/h100.json"
exit $fail
