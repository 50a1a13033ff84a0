#!/usr/bin/env bash
# cli_exec_predict.sh: `pplan exec` and `pplan predict` of the same model,
# machine and --layout (gbs left out) price the same job: one resolver
# (sim/job.c) completes the layout with the same framework defaults and the
# same default batch, and one pipeline prices it.  The machine is a CPU
# profile (tests/fixtures/profiles/cpu-2rank.json), which both take as the
# ranks; the predicted step time, bubble fraction, global batch and memory
# in exec's report must equal predict's JSON to the digit.
# (Before sim/job.c, exec priced gbs = mbs x dp x 4 x pp with no framework
# defaults and predict 1024 tokens per GPU: different jobs.)  Real MPI
# processes (2 ranks); the measured numbers are not compared.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
M=$S/tests/fixtures/exec/gpt-small.json
P=$S/tests/fixtures/profiles/cpu-2rank.json
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# first VALUE of "KEY": in FILE after the line that opens SECTION ("" = anywhere)
value() { # FILE SECTION KEY
	sed -n "/\"$2\"[[:space:]]*:/,\$p" "$1" |
		grep -m1 -o "\"$3\"[[:space:]]*:[[:space:]]*[^,}[:space:]]*" | sed 's/.*:[[:space:]]*//'
}

# layout:gbs, the executor's default batch worked out by hand: 4
# microbatches per pipeline stage and replica, mbs 1 (pp=2: 4 x 2 = 8;
# dp=2: 4 x 2 = 8; tp=2, cp=2: 4).
for case in pp=2:8 tp=2:4 dp=2:8 cp=2:4 pp=2,vp=2:8 dp=2,zero=0:8; do
	layout=${case%:*} want=${case##*:}
	if ! "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout "$layout" --backend cpu \
		--steps 1 --warmup 0 --profile "$P" --report "$tmp/r.json" >"$tmp/exec.out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $layout: pplan exec failed:"
		tail -5 "$tmp/exec.out" | sed 's/^/      /'
		continue
	fi
	if ! "$B" predict --model "$M" --layout "$layout" --profile "$P" --json "$tmp/p.json" \
		>"$tmp/pred.out" 2>&1; then
		failed=$((failed + 1))
		echo "FAIL $layout: pplan predict failed: $(tail -1 "$tmp/pred.out")"
		continue
	fi
	for key in step_time_s bubble_fraction tokens_per_s; do
		e=$(value "$tmp/r.json" predicted "$key")
		p=$(value "$tmp/p.json" schema "$key")
		if [ -n "$e" ] && [ "$e" = "$p" ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAIL $layout: $key: exec's report predicts '$e', pplan predict '$p'"
		fi
	done
	# The model's memory, counted by the executor's allocator (its own
	# buffers at their peak), within 15 % of what sim's memory model
	# prices (a second method); the process's peak resident set holds MPI
	# and OpenBLAS too, so it is above the model's.  The clocks: ranks on
	# one host share CLOCK_MONOTONIC, so each measured offset lies within
	# its own bound (half the shortest round trip) of 0.
	mm=$(value "$tmp/r.json" measured memory_gib_peak)
	mp=$(value "$tmp/r.json" measured memory_gib_process_peak)
	pm=$(value "$tmp/r.json" predicted total)
	co=$(value "$tmp/r.json" measured clock_offset_max_s)
	cb=$(value "$tmp/r.json" measured clock_bound_max_s)
	if awk -v m="$mm" -v p="$pm" -v r="$mp" 'BEGIN { d = (m - p) / p; if (d < 0) d = -d;
		exit !(m > 0 && d <= 0.15 && r > m) }'; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $layout: the model's memory $mm GiB against $pm GiB predicted (within 15 %), the process's $mp GiB (above it)"
	fi
	if awk -v o="$co" -v b="$cb" 'BEGIN { exit !(o >= 0 && b > 0 && o <= b) }'; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $layout: a clock offset of $co s on one host, beyond its bound $cb s"
	fi
	e=$(value "$tmp/r.json" layout gbs)
	p=$(value "$tmp/p.json" layout gbs)
	if [ "$e" = "$want" ] && [ "$p" = "$want" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $layout: gbs: exec ran $e sequences, predict priced $p, want $want"
	fi
done

# A search on CPU ranks ends with the pplan exec line that runs its best
# layout, not a framework's flags (there is no --bf16 in an fp32 run);
# pasted, it runs.
"$B" search --model "$M" --profile "$P" --gpus 2 --global-batch 8 >"$tmp/search.out" 2>&1
run=$(sed -n 's/^  mpirun -np 2 pplan exec /exec /p' "$tmp/search.out")
if [ -n "$run" ] && ! grep -q -- "--bf16\|Megatron-LM flags" "$tmp/search.out" &&
	eval "\"\$MPIEXEC\" -n 2 \"\$B\" $run --steps 1 --warmup 0" >"$tmp/run.out" 2>&1; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	echo "FAIL the search's pplan exec line: '$run': $(tail -2 "$tmp/run.out" 2>/dev/null)"
fi

# A profile that knows where it came from: measured with 4 ranks, 4 per
# host (2 per core on the fixture's 2 cores), this run 2: the header and
# the report say so.  The fixture itself records no conditions: said too.
sed 's/"cores": 2,/"cores": 2, "ranks": 4, "ranks_per_host": 4,/' "$P" >"$tmp/p4.json"
for prof in "$tmp/p4.json" "$P"; do
	if [ "$prof" = "$P" ]; then
		want="the profile does not record the ranks, load and clock it was measured under"
	else
		want="the profile was measured with 4 ranks (4 per host, 2 per core)"
	fi
	"$MPIEXEC" -n 2 "$B" exec --model "$M" --layout pp=2 --backend cpu --steps 1 --warmup 0 \
		--profile "$prof" --report "$tmp/r.json" >"$tmp/exec.out" 2>&1
	if grep -q "^# profile   $prof: $want" "$tmp/exec.out" &&
		grep -q "\"profile_note\":[[:space:]]*\"$want" "$tmp/r.json" &&
		grep -q '"ranks_per_host":[[:space:]]*2' "$tmp/r.json"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: the profile's conditions ($(basename "$prof")): no '$want' in the header and the report"
		grep '^# ' "$tmp/exec.out" | head -8
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
