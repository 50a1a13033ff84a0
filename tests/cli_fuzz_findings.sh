#!/usr/bin/env bash
# cli_fuzz_findings.sh: every input that once broke pplan (F01-F16,
# tests/fixtures/fuzz-findings/README.md) replayed against the real binary.
# Each run must end with exit status 0 or 2 within 10 s; a refusal (2) is
# one line on stderr starting with "pplan"; no sanitizer report; nothing
# a run names as output that is a device node or a directory is replaced.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
F=$S/tests/fixtures/fuzz-findings
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# run WANT ID ARGS...: WANT is 0, 2 or "0|2".
run() {
	local want=$1 id=$2 rc why=""
	shift 2
	timeout 10 "$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 124 ]; then
		why="no answer within 10 s"
	elif ! [[ "$rc" =~ ^($want)$ ]]; then
		why="exit status $rc, want $want"
	elif grep -qE "Sanitizer|runtime error:" "$tmp/err"; then
		why="a sanitizer report"
	elif [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
		why="$(wc -l <"$tmp/err") lines on stderr, want 1"
	elif [ "$rc" -eq 2 ] && [ "$(head -c 5 "$tmp/err")" != "pplan" ]; then
		why="stderr does not start with 'pplan'"
	fi
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		echo "FAIL $id: pplan $*"
		echo "      $why"
		sed 's/^/      stderr: /' "$tmp/err" | head -8
	else
		passed=$((passed + 1))
	fi
}

# F01, F06-F08: hwloc XML that overflowed the 3.x downgrade or crashed
# libhwloc; refused by pplan's check before hwloc sees it.
for f in "$F"/F01-*/input*.xml "$F"/F0[678]-*/input*.xml; do
	run 2 "$(basename "$(dirname "$f")" | cut -c1-3)" topo --xml "$f"
done

# F02-F04: case files with zero or overflowing degrees and counts: the
# case is "not predicted" with its reason, the file still validated (0).
run 0 F02 validate "$F/F02-cases-div0-layout_check-mbs0/input.json" --quiet
run 0 F03 validate "$F/F03-cases-div0-layout_check-vp0/input.json" --quiet
run 0 F03 validate "$F/F03-cases-div0-layout_check-vp0/input-ep0.json" --quiet
run 0 F04 validate "$F/F04-cases-int-overflow-memory_stage_layers/input.json" --quiet
run 0 F04 validate "$F/F04-cases-int-overflow-memory_stage_layers/input-dp-2p32plus8.json"

# F05: a GPU column number past int.
run 2 F05 topo --nvidia-smi-topo "$F/F05-smi-int-overflow-smitopo_parse/input.txt" --gpu h100-sxm

# F09: MoE models with 14,336, 436,808 (HF) and 2^20 experts: the cost of
# a layout no longer loops over its experts.
for f in "$F"/F09-*/input*.json; do
	run "0|2" F09 search --model "$f" --gpus 64 --top 1
done

# F10, F14: huge global batches (given, or 4M tokens of 1-token
# sequences): past SCHEDULE_MAX_CHUNK_MBS the pipeline is priced with the
# closed forms; simulate refuses with the bound.
run 0 F10 predict --model llama3-8b --gpus 64 --layout pp=2,dp=32,gbs=2147483648
run 0 F10 predict --model llama3-8b --gpus 64 --layout pp=2,dp=32,gbs=68719476704
run 0 F10 search --model llama3-8b --gpus 64 --global-batch 1000000000 --top 1
run 2 F10 simulate --model llama3-8b --gpus 64 --layout pp=2,dp=32,gbs=2147483648
run 0 F14 search --model "$F/F14-hf-seq1-slow-search/input.json" --gpus 64 --top 1

# F11: model files past the 1 MiB limit are refused by size, before any
# parsing (a sparse 200 MB file and a real 1.5 MB JSON array).
truncate -s 200M "$tmp/big-sparse.json"
run 2 F11 search --model "$tmp/big-sparse.json" --gpus 64 --top 1
{ printf '{"schema":"pplan.model/1","pad":['; yes 0, | head -c 1500000; printf '0]}'; } >"$tmp/big-array.json"
run 2 F11 search --model "$tmp/big-array.json" --gpus 64 --top 1

# F12: --json naming a device node writes to it and leaves it a device.
# Only a private node made here (as root): never the system's /dev/null,
# which a stale binary (one built before this fix) would replace.
devnode() {
	local node=$1 id=$2
	shift 2
	run 0 "$id" "$@"
	if [ ! -c "$node" ]; then
		failed=$((failed + 1))
		echo "FAIL $id: $node is no longer a character device"
	fi
}
if mknod -m 666 "$tmp/mydevnull" c 1 3 2>/dev/null; then
	devnode "$tmp/mydevnull" F12 predict --model llama3-8b --gpus 64 --layout tp=2 --json "$tmp/mydevnull"
	devnode "$tmp/mydevnull" F12 search --model llama3-8b --gpus 64 --top 1 --json "$tmp/mydevnull"
	devnode "$tmp/mydevnull" F12 topo --nvidia-smi-topo "$S/tests/fixtures/nvidia-smi/dgx-h100.txt" --gpu h100-sxm --out "$tmp/mydevnull"
fi
mkdir "$tmp/dir"
run 2 F12 predict --model llama3-8b --gpus 64 --layout tp=2 --json "$tmp/dir"
run 2 F12 simulate --model llama3-8b --gpus 16 --layout pp=4 --trace "$tmp/dir"
[ -d "$tmp/dir" ] || { failed=$((failed + 1)); echo "FAIL F12: $tmp/dir was replaced"; }

# F13: a FIFO with no writer, as every kind of input file and as an
# output with no reader: refused at once, never waited on.
mkfifo "$tmp/fifo"
run 2 F13 search --model "$tmp/fifo" --gpus 64 --top 1
run 2 F13 search --params 7B --cluster "$tmp/fifo" --gpus 16
run 2 F13 validate "$tmp/fifo"
run 2 F13 topo --xml "$tmp/fifo"
run 2 F13 topo --nvidia-smi-topo "$tmp/fifo" --gpu h100-sxm
run 2 F13 predict --model llama3-8b --gpus 64 --layout tp=2 --json "$tmp/fifo"
[ -p "$tmp/fifo" ] || { failed=$((failed + 1)); echo "FAIL F13: the FIFO was replaced"; }

# F15, F16: a profile with a denormal GEMM dimension or bandwidth is
# refused by the reader, naming the key (it once priced a negative or
# NaN step, caught only as an internal error, exit 1).
for id in F15-profile-denormal-gemm-dim F16-profile-denormal-bandwidth; do
	run 2 "${id%%-*}" predict --model llama3-8b --gpus 8 --layout tp=2,dp=4 --profile "$F/$id/input.json"
	key=$([ "${id%%-*}" = F15 ] && echo "gemm\\[0\\]: n must be" || echo "elementwise\\[1\\]: gbps must be")
	if ! grep -q "$key" "$tmp/err"; then
		failed=$((failed + 1))
		echo "FAIL ${id%%-*}: the refusal does not name the key ($key): $(cat "$tmp/err")"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
