#!/usr/bin/env bash
# cli_exec_faults.sh: a rank that dies, hangs or exits early, and a SIGINT to
# the launcher, each end every rank of `pplan exec` within the timeout, with
# a message naming the rank, exit status 1 (not 0, not 2), no process left
# behind and no report written.  A crash (SIGSEGV) is said by the rank
# itself, exit 1; a rank killed (SIGKILL) is named by the others and by
# the process that watches it (exec/supervise.c), exit 1 with and without
# mpiexec -q (not Open MPI's 137); a
# hang names the rank that stopped first and what the others wait for; a
# supervising process stopped alone is continued as its rank ends, and a
# rank stopped alone is named by the others within the timeout.  Faults come from `pplan exec --fault
# RANK:STEP:KIND` (exec/fault.c), the hang through PPLAN_EXEC_FAULT (the
# same text, for launchers that cannot pass options).  A wrong value in a
# GEMM output or a pipeline message, doubled or changed by 1e-4, must fail
# --check: exit 1, status check_failed in the report.  Bad --fault text: exit 2, one sentence.
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
fail=0

# A seed no other test uses marks this test's processes.
run() { # fault seed extra-args...
	local fault=$1 seed=$2; shift 2
	timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" \
		--layout pp=2 --backend cpu --steps 4 --warmup 1 --seed "$seed" \
		--report "$tmp/r.json" --fault "$fault" "$@" >"$tmp/out" 2>&1
}

orphans() { # seed (and this binary: other checkouts may run this test too)
	local pat="^$B exec --model .* --seed $1( |$)"
	sleep 1
	if pgrep -f "$pat" >/dev/null; then
		echo "FAIL: processes left behind (seed $1)"; pgrep -af "$pat"; fail=1
		pkill -9 -f "$pat"
	fi
}

expect() { # what rc pattern seed
	if [ "$2" -eq 0 ] || [ "$2" -eq 2 ] || [ "$2" -eq 124 ]; then
		echo "FAIL: $1: exit $2"; cat "$tmp/out"; fail=1
	elif ! grep -Eq "$3" "$tmp/out"; then
		echo "FAIL: $1: no message matching /$3/"; cat "$tmp/out"; fail=1
	elif [ -e "$tmp/r.json" ]; then
		echo "FAIL: $1: a report was written"; fail=1
	else
		echo "ok: $1: exit $2: $(grep -Em1 "$3" "$tmp/out")"
	fi
	rm -f "$tmp/r.json"
	orphans "$4"
}

run 1:2:exit 90001
expect "a rank exits early" $? "rank 1|exiting early|exited" 90001

run 1:2:crash 90002
rc=$?
expect "a rank crashes (SIGSEGV)" $rc "rank 1 \(.*\) crashed: SIGSEGV in step 2" 90002
[ $rc -eq 1 ] || { echo "FAIL: a crash: exit $rc, want 1"; fail=1; }

for q in -q ""; do
	timeout 120 "$MPIEXEC" $q -n 2 "$B" exec --model "$M" --layout pp=2 --backend cpu --steps 4 \
		--warmup 1 --seed 90005 --report "$tmp/r.json" --fault 1:2:kill >"$tmp/out" 2>&1
	rc=$?
	expect "a rank is killed (SIGKILL), mpiexec $q" $rc "rank 1 \(pid [0-9]+\) died \(its process is gone\) in step 2" 90005
	grep -Eq "rank 1 \(pid [0-9]+, .*\) was killed by SIGKILL" "$tmp/out" ||
		{ echo "FAIL: a killed rank, mpiexec $q: its watcher does not name it"; cat "$tmp/out"; fail=1; }
	[ $rc -eq 1 ] || { echo "FAIL: a killed rank, mpiexec $q: exit $rc, want 1"; fail=1; }
done

start=$(date +%s)
PPLAN_EXEC_FAULT=1:2:hang timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" \
	--layout pp=2 --backend cpu --steps 4 --warmup 1 --seed 90003 \
	--report "$tmp/r.json" --timeout 5 >"$tmp/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
expect "a rank hangs (timeout 5 s)" $rc "rank 1 stopped first: no progress for [0-9]+ s since step 2" 90003
if [ $took -gt 60 ]; then
	echo "FAIL: the hang was noticed after $took s, not within the timeout"; fail=1
fi
# Four stages, the third hangs: the first and second wait behind it, the
# last waits for it; whoever times out names rank 2 and what the others wait for.
PPLAN_EXEC_FAULT=2:2:hang timeout 120 "$MPIEXEC" -n 4 "$B" exec --model "$M" \
	--layout pp=4 --backend cpu --steps 4 --warmup 1 --seed 90006 \
	--report "$tmp/r.json" --timeout 5 >"$tmp/out" 2>&1
rc=$?
expect "one of four stages hangs" $rc "rank 2 stopped first.*waits for the" 90006
# Two replicas, the second hangs: the first ends its ops and waits for
# the last gradient bucket, which a report names as the step's end, not
# the step's last op.
PPLAN_EXEC_FAULT=1:2:hang timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" \
	--layout dp=2 --backend cpu --steps 4 --warmup 1 --seed 90011 \
	--report "$tmp/r.json" --timeout 5 >"$tmp/out" 2>&1
rc=$?
expect "a replica hangs" $rc \
	"rank 0 .* in step 2 at the step's end \(gradient reduction, optimizer, closing exchanges\); rank 1 stopped first" 90011

# One rank's supervising process (the one the launcher started, whose
# child is the rank) stopped by SIGSTOP: the rank, as it ends, says so and
# continues it, so the run ends as it would have (exit 0), where the
# launcher had waited on the stopped process for ever.
timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout dp=2 --backend cpu --steps 6 \
	--warmup 1 --seed 90012 >"$tmp/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 1 100); do grep -q '^# run' "$tmp/out" && break; sleep 0.2; done
sup=
for p in $(pgrep -f "^$B exec --model .* --seed 90012( |$)"); do
	pgrep -P "$p" >/dev/null && { sup=$p; break; }
done
if [ -z "$sup" ]; then
	echo "FAIL: no supervising process found"; fail=1
else
	kill -STOP "$sup"
fi
wait $pid
rc=$?
if [ $rc -ne 0 ] || ! grep -Eq "rank [01]'s supervising process \(pid $sup\) was stopped \(SIGSTOP\).*continued" "$tmp/out"; then
	echo "FAIL: a stopped supervising process: exit $rc"; cat "$tmp/out"; fail=1
else
	echo "ok: a stopped supervising process: exit 0: $(grep -m1 'supervising process' "$tmp/out")"
fi
orphans 90012

# One rank itself stopped (SIGSTOP to the rank, not its supervising
# process), as a debugger or a stray signal leaves it: the other rank's
# watchdog names it as the one that stopped first and ends the run, exit
# 1 (the launcher's kill reaches the stopped rank through its supervising
# process, which continues it).  The bound here only tells an end from a
# hang on a loaded machine; the 4 + 3 s of issue 20 is a figure of the
# closing notes (7-8 s on the development machine).
timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout pp=2 --backend cpu --steps 400 \
	--warmup 1 --seed 90013 --report "$tmp/r.json" --timeout 4 >"$tmp/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 1 100); do grep -q '^# run' "$tmp/out" && break; sleep 0.2; done
sleep 1
stopped=
for p in $(pgrep -f "^$B exec --model .* --seed 90013( |$)"); do
	if ! pgrep -P "$p" >/dev/null && tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
		grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
		stopped=$p
	fi
done
start=$(date +%s)
[ -n "$stopped" ] && kill -STOP "$stopped"
wait $pid
rc=$?
took=$(( $(date +%s) - start ))
if [ -z "$stopped" ]; then
	echo "FAIL: a stopped rank: rank 1's process not found"; fail=1
else
	expect "a rank stopped (SIGSTOP, timeout 4 s)" $rc "rank 1 stopped first: no progress for [0-9]+ s" 90013
	[ $rc -eq 1 ] || { echo "FAIL: a stopped rank: exit $rc, want 1"; fail=1; }
	[ $took -le 60 ] || { echo "FAIL: a stopped rank: the run ended $took s after the stop"; fail=1; }
fi

# SIGINT to the launcher mid-run (to mpiexec itself: a timeout wrapper in
# a script would not pass SIGINT on), within the timeout.
PPLAN_EXEC_FAULT= "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout pp=2 \
	--backend cpu --steps 1000 --warmup 1 --seed 90004 --report "$tmp/r.json" \
	>"$tmp/out" 2>&1 </dev/null &
pid=$!
# The guard's sleep dies with it and holds none of the test's output
# open (ctest waits for every writer of the pipe to go).
( trap 'kill $s 2>/dev/null; exit 0' TERM; sleep 120 & s=$!; wait $s; kill -9 $pid 2>/dev/null ) \
	>/dev/null 2>&1 &
guard=$!
for _ in $(seq 1 100); do grep -q '^# run' "$tmp/out" && break; sleep 0.2; done
sleep 2
start=$(date +%s)
kill -INT $pid
wait $pid
rc=$?
took=$(( $(date +%s) - start ))
kill $guard 2>/dev/null
expect "SIGINT to mpiexec" $rc "SIGINT|SIGTERM" 90004
if [ $took -gt 60 ]; then
	echo "FAIL: SIGINT took $took s to end the run"; fail=1
fi
# Wrong values: one element of rank 1's first forward GEMM output in step 1
# doubled (a change the gradient norms do not see), then the middle element
# of rank 0's first activation message doubled.  The run ends, writes its
# report, and fails --check.
run 1:1:gemm:1 90006 --check --steps 1 --warmup 0
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "^# check FAILED: step 1's gradients" "$tmp/out"; then
	echo "FAIL: a doubled GEMM output element under --check: exit $rc, want 1 and a failed check"; cat "$tmp/out"; fail=1
else
	echo "ok: a doubled GEMM output element fails --check: $(grep -m1 'check failed' "$tmp/out" | cut -c1-120)"
fi
rm -f "$tmp/r.json"
orphans 90006
run 0:1:message:1 90005 --check --steps 2
rc=$?
if [ "$rc" -ne 1 ]; then
	echo "FAIL: a wrong message under --check: exit $rc, want 1"; cat "$tmp/out"; fail=1
elif ! grep -q "^pplan exec: --check failed" "$tmp/out" ||
	! grep -q "element [0-9]* of the first pipeline message changed" "$tmp/out"; then
	echo "FAIL: a wrong message under --check: no fault or verdict line"; cat "$tmp/out"; fail=1
elif ! grep -q '"status":[[:space:]]*"check_failed"' "$tmp/r.json"; then
	echo "FAIL: the report of a failed check does not say check_failed"; fail=1
else
	echo "ok: a doubled message element fails --check: $(grep -m1 'check failed' "$tmp/out" | cut -c1-110)"
fi
rm -f "$tmp/r.json"
orphans 90005

# Wrong values of 1e-4 relative, below rounding's reach in the gradients:
# caught where they are made (exec/integrity.c), on either rank, with the
# GEMM or the pair of ranks named.
for f in 0:1:gemm 1:1:gemm 0:1:message 1:1:message; do
	run "$f:1e-4" 90007 --check --steps 1 --warmup 0
	rc=$?
	case $f in *gemm) want="GEMM .* differs from its recomputation" ;; *) want="hashes differ" ;; esac
	if [ "$rc" -ne 1 ] || ! grep -q "^# check FAILED" "$tmp/out" || ! grep -Eq "$want" "$tmp/out"; then
		echo "FAIL: --fault $f:1e-4 under --check: exit $rc, want 1 and '$want'"; cat "$tmp/out"; fail=1
	elif ! grep -q '"status":[[:space:]]*"check_failed"' "$tmp/r.json"; then
		echo "FAIL: --fault $f:1e-4: the report does not say check_failed"; fail=1
	else
		echo "ok: --fault $f:1e-4 fails --check: $(grep -Eom1 "$want" "$tmp/out")"
	fi
	rm -f "$tmp/r.json"
	orphans 90007
done

# A slow rank: the other waits for it inside every TP collective, in
# the CP ring for its posts, and with DP for the last gradient bucket
# after its backward.  That wait is the ranks' imbalance, not the
# transfer the model prices: it is measured as idle, and the TP, CP or
# DP communication keeps the transfers (exec/steps.c).  Rank 1 sleeps
# at the start of each step: rank 0's wait would double the mean
# communication time.
# Under TP and CP rank 0 waits at the step's first collective, the whole
# delay; with DP only at the last bucket, by which time other processes
# on the cores (a parallel ctest) may have slowed its own compute while
# rank 1 slept: 0.08 s of idle a step was seen so with 400 ms, against
# 0.4 s on a quiet machine.  So rank 1 sleeps 1500 ms there, more than
# a step's compute.  The spec's fourth field is the sleep.
for spec in "tp=2 tp_comm 90008 400" "cp=2 cp_comm 90009 400" "dp=2 dp_comm_exposed 90010 1500"; do
	set -- $spec
	timeout 120 "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout "$1" --backend cpu --steps 3 \
		--warmup 1 --seed "$3" --fault "1:1:slow:$4" >"$tmp/out" 2>&1
	rc=$?
	comm=$(awk -v k="$2" '$1 == k { print $4 }' "$tmp/out")
	idle=$(awk '$1 == "idle" { print $4 }' "$tmp/out")
	if [ "$rc" -ne 0 ] || [ -z "$comm" ] || [ -z "$idle" ]; then
		echo "FAIL: a slow rank, $1: exit $rc, $2 '$comm', idle '$idle'"; cat "$tmp/out"; fail=1
	elif ! awk -v c="$comm" -v i="$idle" 'BEGIN { exit !(i > 0.3 && c < i / 2) }'; then
		echo "FAIL: a slow rank, $1: $2 $comm s, idle $idle s (want idle > 0.3 s and $2 under half of it)"; fail=1
	else
		echo "ok: a slow rank's wait, $1, is idle ($idle s a step, mean over ranks), $2 $comm s"
	fi
	orphans "$3"
done

# Bad --fault text or a fault the run cannot have: exit 2, one sentence.
bad() { # pattern fault [layout]
	local rc=0
	timeout 60 "$MPIEXEC" -n 2 "$B" exec --model "$M" --layout "${3:-pp=2}" --backend cpu \
		--steps 2 --warmup 1 --fault "$2" --report "$tmp/r.json" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q "$1" "$tmp/out" || [ -e "$tmp/r.json" ]; then
		echo "FAIL: --fault '$2': exit $rc (want 2), or no '$1', or a report"; cat "$tmp/out"; fail=1
	else
		echo "ok: --fault '$2' refused: $(grep -m1 -- "$1" "$tmp/out" | cut -c1-110)"
	fi
	rm -f "$tmp/r.json"
}
bad "KIND exit, crash, kill, hang" "1:2:explode"
bad "STEP from 1" "1:0:exit"
bad "exit takes no value" "1:2:exit:3"
bad "non-zero finite relative change" "1:1:gemm:0"
bad "slow:MS needs 1 to 3600000" "1:1:slow:-4"
bad "names rank 5, but the run has 2 ranks" "5:1:exit"
bad "names step 9, but the run has 3 steps" "1:9:exit"
bad "pp=1 sends none" "0:1:message:0.5" "dp=2"
exit $fail
