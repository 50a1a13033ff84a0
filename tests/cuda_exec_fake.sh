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
