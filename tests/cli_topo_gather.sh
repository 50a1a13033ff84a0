#!/usr/bin/env bash
# cli_topo_gather.sh: `mpiexec -n N pplan topo --gather` on this machine,
# each rank describing "its host" from a recorded topo -m file: agreeing
# ranks give one cluster file with N nodes; a rank with a different node
# is named and nothing is written (exit 2).  MPI runs here as plain
# processes under mpiexec, never inside Criterion.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
F=$S/tests/fixtures/nvidia-smi
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export PPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
A100="topo --gather --nvidia-smi-topo $F/dgx-a100.txt --gpu a100-80gb"

timeout 120 "$MPIEXEC" -n 2 "$B" $A100 --out "$tmp/c.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: agreeing gather exited $rc"; cat "$tmp/out"; fail=1
elif ! grep -q '"num_nodes":[[:space:]]*2' "$tmp/c.json" ||
     ! grep -q "gathered 2 hosts; all agree" "$tmp/out"; then
	echo "FAIL: gathered cluster"; cat "$tmp/out" "$tmp/c.json"; fail=1
fi

# Three nodes, the middle one a 4-GPU host: named, nothing written.
timeout 120 "$MPIEXEC" -n 1 "$B" $A100 --out "$tmp/d.json" : \
	-n 1 "$B" topo --gather --nvidia-smi-topo "$F/h100-4gpu-nic-legend.txt" \
	--gpu a100-80gb --out "$tmp/d.json" : \
	-n 1 "$B" $A100 --out "$tmp/d.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 2 ]; then
	echo "FAIL: disagreeing gather exited $rc, want 2"; cat "$tmp/out"; fail=1
elif ! grep -q "1 of 3 hosts differ.*rank 1 (.*) 4 GPUs, not 8" "$tmp/out"; then
	echo "FAIL: the odd host is not named"; cat "$tmp/out"; fail=1
fi
[ -e "$tmp/d.json" ] && { echo "FAIL: a failed gather wrote a file"; fail=1; }

# A rank whose input is bad is named too, and every rank exits.
timeout 120 "$MPIEXEC" -n 1 "$B" $A100 : -n 1 "$B" topo --gather \
	--nvidia-smi-topo "$F/bad-short-row.txt" >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 2 ] || ! grep -q "rank 1 (.*): .*bad-short-row.txt:5" "$tmp/out"; then
	echo "FAIL: bad input on rank 1 (exit $rc)"; cat "$tmp/out"; fail=1
fi
exit $fail
