#!/usr/bin/env bash
# cuda_exec_fake.sh: `pplan exec --backend cuda` end to end on one rank over
# the fake CUDA module (tests/fake_cuda_exec.c: host memory, the CPU twins
# as its kernels, single-rank NCCL), against the same run on the CPU
# backend: the CUDA backend's C side (bring-up, groups, streams, waits,
# marks, copies) must give the same training step, so every step's loss
# agrees to 1e-5 relative, --check passes, and the report names the CUDA
# backend.  Run by ctest with PPLAN_BIN, PPLAN_SOURCE_DIR and
# PPLAN_CUDA_MODULE (the fake) set.
set -euo pipefail
: "${PPLAN_BIN:?run by ctest}" "${PPLAN_CUDA_MODULE:?the fake CUDA module}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model=$PPLAN_SOURCE_DIR/tests/fixtures/models/tiny-gpt.json
args=(exec --model "$model" --layout "tp=1,pp=1,dp=1,mbs=1,gbs=2" --precision fp32
      --steps 3 --warmup 1 --timeout 60)

timeout 120 "$PPLAN_BIN" "${args[@]}" --backend cpu >"$tmp/cpu.out" 2>&1 ||
	{ cat "$tmp/cpu.out"; echo "FAIL: the CPU run"; exit 1; }
FAKE_CUDA_EXEC=1 timeout 120 "$PPLAN_BIN" "${args[@]}" --backend cuda --check \
	--report "$tmp/r.json" >"$tmp/cuda.out" 2>&1 ||
	{ cat "$tmp/cuda.out"; echo "FAIL: the run on the fake GPU"; exit 1; }
cat "$tmp/cuda.out"

# The step table: "  step  loss  time" rows, the loss in column 2.
losses() { awk '/^ +[0-9]+ +[0-9.eE+-]+ +/ { print $1, $2 }' "$1"; }
losses "$tmp/cpu.out" >"$tmp/cpu.l"
losses "$tmp/cuda.out" >"$tmp/cuda.l"
[ -s "$tmp/cpu.l" ] || { echo "FAIL: no losses in the CPU run's output"; exit 1; }
join "$tmp/cpu.l" "$tmp/cuda.l" | awk '
	{ n++; d = $2 - $3; if (d < 0) d = -d; if (d > 1e-5 * ($2 < 0 ? -$2 : $2)) { bad++; print "FAIL: step " $1 " loss " $3 " on the fake GPU, " $2 " on the CPU" } }
	END { if (n < 4) { print "FAIL: " n " steps compared, want 4"; exit 1 } exit bad > 0 }'
grep -q "check passed" "$tmp/cuda.out" || { echo "FAIL: --check did not pass"; exit 1; }
grep -q '"backend":[[:space:]]*"cuda"' "$tmp/r.json" || { echo "FAIL: the report does not name the cuda backend"; exit 1; }
echo "ok: the fake GPU run matches the CPU run"

# One GPU per rank: two ranks on one GPU, or three on two, are refused
# with the ranks and the GPU named (exit 2); --backend auto takes the CPU.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
two=(exec --model "$model" --precision fp32 --steps 1 --warmup 0 --timeout 60)
refused() { # NP DEVICES PATTERN
	local rc=0
	FAKE_CUDA_EXEC=1 FAKE_CUDA_DEVICES=$2 timeout 120 mpirun -np "$1" "$PPLAN_BIN" "${two[@]}" --layout "dp=$1,mbs=1,gbs=$1" \
		--backend cuda --report "$tmp/shared.json" >"$tmp/shared.out" 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || { cat "$tmp/shared.out"; echo "FAIL: $1 ranks on $2 GPUs exit $rc, want 2"; exit 1; }
	grep -q "$3" "$tmp/shared.out" || { cat "$tmp/shared.out"; echo "FAIL: $1 ranks on $2 GPUs: no '$3'"; exit 1; }
	[ ! -e "$tmp/shared.json" ] || { echo "FAIL: a report was written for a refused run"; exit 1; }
	echo "ok: $1 ranks on $2 GPUs refused: $(grep -m1 -o "$3.*" "$tmp/shared.out" | cut -c1-100)"
}
refused 2 1 "node-local ranks 0 and 1 share the GPU at 0000:10:00.0"
refused 3 2 "3 ranks on this host see 2 GPUs"
FAKE_CUDA_EXEC=1 FAKE_CUDA_DEVICES=1 timeout 120 mpirun -np 2 "$PPLAN_BIN" "${two[@]}" --layout "dp=2,mbs=1,gbs=2" --backend auto \
	>"$tmp/auto.out" 2>&1 || { cat "$tmp/auto.out"; echo "FAIL: --backend auto on a shared GPU"; exit 1; }
grep -q "cpu: no GPU answered.*share the GPU" "$tmp/auto.out" ||
	{ cat "$tmp/auto.out"; echo "FAIL: --backend auto does not say why it took the CPU"; exit 1; }
echo "ok: --backend auto on a shared GPU runs on the CPU and says why"
