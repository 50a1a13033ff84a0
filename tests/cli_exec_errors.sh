#!/usr/bin/env bash
# cli_exec_errors.sh: bad input to `pplan exec` gets one sentence on rank 0,
# exit status 2 on every rank, and no file written: a layout for another
# world size, layouts the executor does not run, a model too large for the
# memory, --steps 0, --warmup not smaller than --steps, an unwritable
# --report, unknown options and values.
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

check() { # ranks pattern args...
	local np=$1 pat=$2; shift 2
	n=$((n + 1))
	timeout 120 "$MPIEXEC" -q -n "$np" "$B" exec "$@" --report "$tmp/r.json" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$? lines
	lines=$(grep -c . "$tmp/err")
	if [ $rc -ne 2 ]; then
		echo "FAIL: exec $* (-n $np): exit $rc, expected 2"; cat "$tmp/err"; fail=1
	elif [ "$lines" -ne 1 ] || ! grep -Eq -e "$pat" "$tmp/err"; then
		echo "FAIL: exec $* (-n $np): want one line matching /$pat/, got:"; cat "$tmp/err"; fail=1
	elif [ -e "$tmp/r.json" ]; then
		echo "FAIL: exec $* (-n $np): a report was written"; fail=1
	fi
	rm -f "$tmp/r.json"
}

check 2 "uses 4 ranks .* but 2 were started" --model "$M" --layout tp=4 --backend cpu
check 2 "uses 1 ranks .* but 2 were started" --model "$M" --layout tp=1,dp=1 --backend cpu
check 3 "not a multiple of 2\*cp" --model "$M" --layout cp=3 --backend cpu
check 2 "has no experts" --model "$M" --layout dp=2,ep=2 --backend cpu
check 2 "mixture-of-experts" --model mixtral-8x7b --layout dp=2 --backend cpu --seq 64
check 2 "zero=0 and zero=1" --model "$M" --layout dp=2,zero=3 --backend cpu
check 1 "--steps must be" --model "$M" --layout tp=1 --backend cpu --steps 0
check 1 "--warmup 3 must be smaller than --steps 3" --model "$M" --layout tp=1 --backend cpu --steps 3 --warmup 3
check 1 "--backend must be" --model "$M" --layout tp=1 --backend tpu
check 1 "--precision must be fp32 or bf16" --model "$M" --layout tp=1 --precision fp8
check 1 "needs --backend cuda" --model "$M" --layout tp=1 --backend cpu --precision bf16
check 1 "--model is required" --layout tp=1 --backend cpu
check 1 "--layout is required" --model "$M" --backend cpu
check 1 "unknown or incomplete option" --model "$M" --layout tp=1 --frobnicate
check 1 "unknown layout key|unknown key" --model "$M" --layout tq=2 --backend cpu
check 1 "memory model puts .* GiB" --model llama3-70b --layout tp=1 --backend cpu
check 3 "divide" --model "$M" --layout tp=3 --backend cpu
check 1 "zb-h1 with recompute=full" --model "$M" --layout pp=1,schedule=zb-h1,recompute=full --backend cpu

# an unwritable report path: refused before the run, nothing written
n=$((n + 1))
timeout 60 "$MPIEXEC" -q -n 1 "$B" exec --model "$M" --layout tp=1 --backend cpu \
	--report "$tmp/missing/r.json" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if [ $rc -ne 2 ] || ! grep -q "does not exist" "$tmp/err" || [ -e "$tmp/missing" ]; then
	echo "FAIL: unwritable --report: exit $rc"; cat "$tmp/err"; fail=1
fi
# --backend cuda where no GPU answers
n=$((n + 1))
timeout 60 "$MPIEXEC" -q -n 1 "$B" exec --model "$M" --layout tp=1 --backend cuda \
	>"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	echo "skipped: --backend cuda refusal (a GPU answers here)"
elif [ $rc -ne 2 ] || ! grep -q "^pplan exec: --backend cuda: " "$tmp/err"; then
	echo "FAIL: --backend cuda without a GPU: exit $rc"; cat "$tmp/err"; fail=1
fi
echo "$n bad inputs refused"
exit $fail
