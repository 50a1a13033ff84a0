#!/usr/bin/env bash
# cli_simulate.sh: `pplan simulate` end to end with the real binary: a
# table, a timeline, Chrome trace and pplan.prediction/1 JSON for a good
# layout; exit status 2, one sentence and no files for bad ones.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run CODE NEEDLE ARGS...: expects exit CODE and NEEDLE in stdout+stderr.
run() {
	local code=$1 needle=$2 rc
	shift 2
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		echo "FAIL: exit $rc, want $code: pplan $*"
		cat "$tmp/err"
		fail=1
	elif ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
		echo "FAIL: no '$needle' in the output of: pplan $*"
		cat "$tmp/out" "$tmp/err"
		fail=1
	fi
}

M="--model llama3-8b --gpus 8"

# A small 1F1B pipeline: table with units, timeline, trace, JSON.
run 0 "(chunk-mb)" simulate $M --layout pp=4,dp=2,gbs=16 \
	--trace "$tmp/trace.json" --json "$tmp/sim.json"
grep -q '^stage  3 |' "$tmp/out" || { echo "FAIL: no timeline row"; fail=1; }
grep -q '"traceEvents"' "$tmp/trace.json" || { echo "FAIL: trace"; fail=1; }
grep -q '"pplan.prediction/1"' "$tmp/sim.json" || { echo "FAIL: schema"; fail=1; }
grep -q '"stages"' "$tmp/sim.json" || { echo "FAIL: stages"; fail=1; }
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/sim.json" "$tmp/trace.json" <<'PY' || fail=1
import json, sys
sim = json.load(open(sys.argv[1]))
st = sim["stages"]
assert len(st) == 4, st
# 1F1B: stage i holds p - i microbatches at its peak
assert [s["peak_inflight"] for s in st] == [4, 3, 2, 1], st
for s in st:
    for k in ("busy_s", "idle_s", "bubble_fraction", "peak_inflight"):
        assert k in s, k
    assert 0 <= s["bubble_fraction"] < 1
trace = json.load(open(sys.argv[2]))
pids = {e["pid"] for e in trace["traceEvents"]}
assert pids == {0, 1, 2, 3}, pids
PY
fi

# Interleaved and zero-bubble run; --timeline forces the drawing.
run 0 "stage  0 |" simulate $M --layout pp=4,vp=2,dp=2,gbs=16 --timeline
run 0 "weight gradient W" simulate $M --layout pp=4,dp=2,schedule=zb-h1,gbs=16

# Bad input: exit 2, a sentence, nothing written.
run 2 "multiple of pp" simulate $M --layout pp=4,vp=2,dp=2,gbs=20 --json "$tmp/bad.json"
run 2 "does not divide" simulate $M --layout pp=4,vp=3,dp=2,gbs=16 --json "$tmp/bad.json"
run 2 "schedule=interleaved" simulate $M --layout pp=4,vp=2,dp=2,gbs=16,schedule=zb-h1 --json "$tmp/bad.json"
run 2 "vp >= 2" simulate $M --layout pp=4,dp=2,gbs=16,schedule=interleaved --json "$tmp/bad.json"
run 2 "priced by its closed form" simulate $M --layout pp=4,dp=2,gbs=16,schedule=dualpipe --framework other --json "$tmp/bad.json"
run 2 "--layout is required" simulate $M
run 2 "--dp-buckets" simulate $M --layout pp=4,dp=2 --dp-buckets 0
run 2 "unknown" simulate $M --layout pp=4,dp=2 --frobnicate
[ -e "$tmp/bad.json" ] && { echo "FAIL: a report was written for bad input"; fail=1; }
run 0 "--trace FILE" simulate --help

exit $fail
