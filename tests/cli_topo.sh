#!/usr/bin/env bash
# cli_topo.sh: `pplan topo` end to end with the real binary, on recorded
# fixtures only (never this machine's GPUs): summaries, pplan.cluster/1
# files that `pplan predict --cluster` takes and that match the presets,
# pplan.topo/1 JSON, and exit status 2 with one sentence naming the file
# for bad input.  The live run is checked only for not failing.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
F=$S/tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export PPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

# run CODE NEEDLE ARGS...: expects exit CODE and NEEDLE in stdout+stderr.
run() {
	local code=$1 needle=$2 rc
	shift 2
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		echo "FAIL: exit $rc, want $code: pplan $*"
		cat "$tmp/out" "$tmp/err"
		fail=1
	elif ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
		echo "FAIL: no '$needle' in the output of: pplan $*"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

run 0 "--nvidia-smi-topo FILE" topo --help
# This host: whatever it has, it says which sources it used.
run 0 "# NVLink source:" topo
run 0 "NVML: unavailable" topo

# DGX A100 / H100 files -> cluster files equal to the presets.
run 0 "8 GPUs, 12 NICs (8 compute), NVSwitch: yes" \
	topo --nvidia-smi-topo "$F/nvidia-smi/dgx-a100.txt" --gpu a100-80gb \
	--out "$tmp/a100.json" --json "$tmp/a100-topo.json"
run 0 "nvswitch 300 GB/s per GPU" \
	topo --nvidia-smi-topo "$F/nvidia-smi/dgx-a100.txt" --gpu a100-80gb
grep -q '"schema":[[:space:]]*"pplan.cluster/1"' "$tmp/a100.json" || { echo "FAIL: a100.json schema"; fail=1; }
grep -q '"schema":[[:space:]]*"pplan.topo/1"' "$tmp/a100-topo.json" || { echo "FAIL: topo json schema"; fail=1; }
grep -q '"nearest_nic":[[:space:]]*"mlx5_6"' "$tmp/a100-topo.json" || { echo "FAIL: GPU4 -> mlx5_6 in JSON"; fail=1; }
run 0 "nvswitch 450 GB/s per GPU" \
	topo --nvidia-smi-topo "$F/nvidia-smi/dgx-h100.txt" --gpu h100-sxm --out "$tmp/h100.json"

# predict takes the file, and agrees with the preset (same step time line).
if "$B" predict --help >/dev/null 2>&1; then
	for pair in "a100:dgx-a100" "h100:dgx-h100"; do
		f=${pair%%:*} p=${pair#*:}
		a=$("$B" predict --model llama2-13b --gpus 64 --layout tp=8,pp=2 \
			--cluster "$tmp/$f.json" 2>&1 | grep -E "^  step |tok/s" | head -2)
		b=$("$B" predict --model llama2-13b --gpus 64 --layout tp=8,pp=2 \
			--cluster "$p" 2>&1 | grep -E "^  step |tok/s" | head -2)
		if [ -z "$a" ] || [ "$a" != "$b" ]; then
			echo "FAIL: predict on $f.json ('$a') differs from $p ('$b')"
			fail=1
		fi
	done
fi

# DGX-1: a mesh, not a switch; 4 NICs shared by pairs of GPUs.
run 0 "nvlink 150 GB/s per GPU (link matrix, 25 GB/s per link)" \
	topo --nvidia-smi-topo "$F/nvidia-smi/dgx1-v100.txt" --gpu a100-40gb
run 0 "not rail-aligned" \
	topo --nvidia-smi-topo "$F/nvidia-smi/dgx1-v100.txt" --gpu a100-40gb
# hwloc XML exports.
run 0 "16 GPUs, 0 NICs (0 compute), NVSwitch: yes (12 chips)" \
	topo --xml "$F/hwloc/nvidiaDGX2.xml"
run 0 "switch: 6 links, 150 GB/s" topo --xml "$F/hwloc/nvidiaDGX2.xml"
run 0 "mlx4_0     infiniband 0000:05:00.0" topo --xml "$F/hwloc/24em64t-2n6c2t-pci.xml"
# XML for the CPU side, topo -m for the GPUs.
run 0 "packages 2, NUMA nodes 2, cores 12" \
	topo --xml "$F/hwloc/24em64t-2n6c2t-pci.xml" \
	--nvidia-smi-topo "$F/nvidia-smi/dgx-h100.txt" --gpu h100-sxm

# Bad input: exit 2, the file named, nothing written.
run 2 "bad-extra-column.txt:1: unknown column 'NVLink Domain'" \
	topo --nvidia-smi-topo "$F/nvidia-smi/bad-extra-column.txt" --out "$tmp/x.json"
run 2 "bad-short-row.txt:5:" topo --nvidia-smi-topo "$F/nvidia-smi/bad-short-row.txt"
run 2 "bad-malformed.xml: malformed hwloc XML" topo --xml "$F/hwloc/bad-malformed.xml"
run 2 "truncated" topo --xml "$F/hwloc/bad-truncated.xml" --out "$tmp/x.json"
run 2 "unknown GPU" topo --nvidia-smi-topo "$F/nvidia-smi/dgx-a100.txt" --gpu v200
run 2 "give --gpu TYPE" topo --xml "$F/hwloc/24em64t-2n6c2t-pci.xml" --out "$tmp/x.json"
run 2 "must divide one another" topo --xml "$F/hwloc/24em64t-2n6c2t-pci.xml" --gpu a100-80gb --nvlink-domain 5 --out "$tmp/x.json"
run 2 "--nic-gbits must be" topo --nic-gbits -3
run 2 "unknown or incomplete option" topo --frobnicate
run 2 "rail_aligned is true but 4 NICs" predict --model llama2-13b --gpus 16 \
	--layout tp=8 --cluster "$F/cluster/bad-rail.json"
[ -e "$tmp/x.json" ] && { echo "FAIL: a failed run wrote a file"; fail=1; }

# No NVML: the CUDA module's peer-to-peer attributes (a fake module with
# four GPUs, NVLink pairs 0-1 and 2-3, PCIe between the pairs).
if [ -n "${FAKE_CUDA_MODULE:-}" ]; then
	export PPLAN_CUDA_MODULE=$FAKE_CUDA_MODULE
	run 0 "NVLink source: CUDA peer-to-peer" topo
	run 0 "(2 of 6 pairs)" topo
	run 0 "4 GPUs" topo
	run 0 "1(1)" topo
	run 0 "NVSwitch: no" topo
	FAKE_CUDA_SWITCH=1 run 0 "NVSwitch: yes" topo
	FAKE_CUDA_SWITCH=1 run 0 "switch: 18 links, 450 GB/s" topo --gpu h100-sxm
	FAKE_CUDA_NODEV=1 run 0 "CUDA peer-to-peer: CUDA runtime: no CUDA-capable device" topo
	FAKE_CUDA_NODEV=1 run 0 "0 GPUs" topo
	unset PPLAN_CUDA_MODULE
fi
PPLAN_CUDA_MODULE=/nonexistent/libpplan_cuda.so run 0 "cannot be loaded" topo

exit $fail
