#!/usr/bin/env bash
# valgrind.sh: the CPU-only subcommands under valgrind (memcheck): no
# invalid read or write, no use of uninitialised values, no definite
# leak.  Suppressions: Debian's Open MPI file and tests/valgrind.supp
# (what Open MPI, hwloc and the loader keep at exit; docs/install.md).
# Registered by tests/CMakeLists.txt when valgrind is installed and the
# build has no sanitizers.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HWLOC_COMPONENTS=-x86 # silences hwloc's x86 backend under valgrind
supp=(--suppressions="$S/tests/valgrind.supp")
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] &&
	supp+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)
passed=0
failed=0

# vg WANT ARGS...: pplan ARGS under memcheck must exit WANT (0 or 2).
vg() {
	local want=$1 rc
	shift
	valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite "${supp[@]}" \
		"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ] || grep -q "^==[0-9]*==" "$tmp/err"; then
		failed=$((failed + 1))
		echo "FAIL (exit $rc, want $want): pplan $*"
		grep "^==[0-9]*==" "$tmp/err" | head -30
	else
		passed=$((passed + 1))
	fi
}

F=$S/tests/fixtures
vg 0 search --params 70B --gpus 512 --top 3 --json "$tmp/s.json"
vg 0 search --model "$F/models/tiny-moe.json" --gpus 16 --top 2
vg 0 predict --model llama3-8b --gpus 64 --layout tp=2,pp=4,vp=2 --json "$tmp/p.json"
vg 0 predict --model "$F/hf/Mixtral-8x7B-v0.1.json" --gpus 64 --layout tp=2,ep=8,dp=32
vg 0 simulate --model llama3-8b --gpus 16 --layout tp=2,pp=4,dp=2,gbs=32 --trace "$tmp/t.json" --json "$tmp/sim.json"
vg 0 validate "$S/validation/calibration.json" --quiet --json "$tmp/v.json"
vg 0 topo --xml "$F/hwloc/nvidiaDGX2.xml" --gpu v100-sxm2 --out "$tmp/c.json"
vg 0 topo --nvidia-smi-topo "$F/nvidia-smi/dgx-h100.txt" --gpu h100-sxm --json "$tmp/topo.json"
vg 0 search --params 7B --cluster "$tmp/c.json" --gpus 16 --top 1 --precision fp16
vg 0 report compare "$F/reports/cpu-tp2.json" "$F/reports/cpu-pp2-1f1b.json" --json "$tmp/cmp.json"
vg 0 report html "$F/reports/cpu-tp2.json" "$tmp/s.json" -o "$tmp/page.html"
# Refusals take the error paths: they must free what they took.
vg 2 topo --xml "$F/fuzz-findings/F06-xml-segv-libhwloc-bitmap_compare_first/input.xml"
# A case validate cannot read is that case's "not predicted"; a file
# that is not a cases file is the refusal.
vg 0 validate "$F/fuzz-findings/F04-cases-int-overflow-memory_stage_layers/input.json"
vg 2 validate "$F/bad/cases-malformed.json"
vg 2 search --model "$F/models/bad-unknown-key.json" --gpus 8
vg 2 predict --model llama3-8b --gpus 8 --layout tp=3

echo "valgrind: $passed clean, $failed not"
[ "$failed" -eq 0 ]
