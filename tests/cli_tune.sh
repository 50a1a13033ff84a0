#!/usr/bin/env bash
# cli_tune.sh: `pplan tune`, the closed loop, end to end on real MPI
# processes (the CPU backend, a tiny model, the CPU profile of
# tests/fixtures/profiles/cpu-2rank.json):
#   - K = 3 on 2 ranks: every run measures a step; the measured ranks are
#     the order of the step times in the runs' own reports (read here, not
#     from tune's table); the layout booked is the fastest of them; the
#     refitted profile is one `pplan predict --profile` takes, and predicts
#     the refit time tune printed;
#   - the same with the first-ranked run slowed on purpose (--fault: rank 1
#     sleeps 1.5 s a step): that run measures at least 1.5 s a step and
#     drops to the last measured rank, and another layout is booked;
#   - --families on 4 ranks: the best member of every family that fits on
#     4 ranks (DP, TP, PP, TP+DP, PP+DP, TP+PP; 3D needs 8, CP a longer
#     sequence) runs and measures;
#   - bad input: one sentence, exit status 2, nothing run.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
P=$S/tests/fixtures/profiles/cpu-2rank.json
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# A GPT-2 of 4 layers, hidden 128: a step of 16 sequences in well under a second.
M=$S/tests/fixtures/exec/gpt-tiny.json

# every value of "KEY": in FILE, in order
values() { grep -o "\"$2\":[[:space:]]*[^,}]*" "$1" | sed 's/^[^:]*:[[:space:]]*//; s/"//g'; }
# every string value of "KEY": in FILE, in order, without its quotes
svalues() { grep -o "\"$2\":[[:space:]]*\"[^\"]*\"" "$1" | sed 's/^[^:]*:[[:space:]]*"//; s/"$//'; }
# first VALUE of "KEY": in FILE after the line that opens SECTION
value() { # FILE SECTION KEY
	sed -n "/\"$2\"[[:space:]]*:/,\$p" "$1" |
		grep -m1 -o "\"$3\"[[:space:]]*:[[:space:]]*[^,}[:space:]]*" | sed 's/.*:[[:space:]]*//'
}

tune() { # DIR ARGS...
	local d=$1
	shift
	"$B" tune --model "$M" --profile "$P" --out "$d" --launcher "$MPIEXEC -n {ranks}" "$@" \
		>"$d.out" 2>&1
}

# The measured ranks from the runs' reports: run numbers, fastest first.
measured_order() { # DIR N
	for i in $(seq 1 "$2"); do
		echo "$(value "$1/run-$i.json" measured step_time_s) $i"
	done | sort -g | awk '{print $2}' | tr '\n' ' '
}

# tune's measured ranks as the run numbers, fastest first.
tune_order() { # DIR
	values "$1/tune.json" measured_rank | awk '{print $1, NR}' | sort -n | awk '{print $2}' |
		tr '\n' ' '
}

check_loop() { # NAME DIR N
	local name=$1 d=$2 n=$3 st want got
	st=$(values "$d/tune.json" status | sort | uniq -c | awk '{print $1, $2}')
	if [ "$(value "$d/tune.json" schema schema)" = '"pplan.tune/1"' ] && [ "$st" = "$n ok" ]; then
		ok
	else
		bad "$name: want pplan.tune/1 with $n runs all ok, got schema $(value "$d/tune.json" schema schema), statuses '$st'"
	fi
	want=$(measured_order "$d" "$n")
	got=$(tune_order "$d")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok; else
		bad "$name: measured ranking (runs, fastest first): reports say '$want', tune '$got'"
	fi
	# the booked layout is the fastest run's
	first=${want%% *}
	want=$(svalues "$d/tune.json" layout | sed -n "${first}p")
	got=$(sed -n '/"booked"/,$p' "$d/tune.json" | grep -m1 '"layout"' | sed 's/.*:[[:space:]]*"//; s/".*//')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok; else
		bad "$name: booked '$got', the fastest measured run $first is '$want'"
	fi
}

# ---- K = 3 on 2 ranks -------------------------------------------------------
d=$tmp/k3
if tune "$d" --gpus 2 --best 3 --steps 3 --warmup 1; then
	check_loop "K=3" "$d" 3
	# the refitted profile: predict takes it, and prices run 1 as tune's refit did
	l1=$(svalues "$d/tune.json" layout | sed -n 1p)
	want=$(values "$d/tune.json" refit_step_time_s | sed -n 1p)
	if "$B" predict --model "$M" --gpus 2 --profile "$d/profile-refit.json" \
		--layout "$l1" --json "$tmp/p.json" >"$tmp/p.out" 2>&1; then
		got=$(value "$tmp/p.json" schema step_time_s)
		if awk -v a="$got" -v b="$want" 'BEGIN { exit !(a > 0 && (a - b) / b < 1e-9 && (b - a) / b < 1e-9) }'; then
			ok
		else
			bad "K=3: predict --profile profile-refit.json gives $got s for run 1, tune's refit $want s"
		fi
	else
		bad "K=3: predict refused the refitted profile: $(tail -1 "$tmp/p.out")"
	fi
	for f in profile-refit.json tune.html run-1.log; do
		[ -s "$d/$f" ] && ok || bad "K=3: $f missing"
	done
	grep -q '^Would now book: ' "$d.out" && ok || bad "K=3: no 'Would now book' line"
else
	bad "K=3: pplan tune failed: $(tail -3 "$d.out")"
fi

# ---- the first-ranked run slowed on purpose ---------------------------------
d=$tmp/fault
if tune "$d" --gpus 2 --best 3 --steps 3 --warmup 1 --fault 1:1:1500; then
	check_loop "fault" "$d" 3
	t1=$(value "$d/run-1.json" measured step_time_s)
	r1=$(values "$d/tune.json" measured_rank | sed -n 1p)
	p1=$(values "$d/tune.json" predicted_rank | sed -n 1p)
	if [ "$p1" = 1 ] && [ "$r1" = 3 ] && awk -v t="$t1" 'BEGIN { exit !(t >= 1.5) }'; then
		ok
	else
		bad "fault: run 1 (predicted rank $p1) measured $t1 s, rank $r1; want rank 1 -> 3 and at least 1.5 s"
	fi
	b=$(sed -n '/"booked"/,$p' "$d/tune.json" | grep -m1 '"layout"' | sed 's/.*:[[:space:]]*"//; s/".*//')
	l1=$(svalues "$d/tune.json" layout | sed -n 1p)
	[ "$b" != "$l1" ] && ok || bad "fault: the slowed layout $l1 is still booked"
else
	bad "fault: pplan tune failed: $(tail -3 "$d.out")"
fi

# ---- every family on 4 ranks ------------------------------------------------
# (not under the sanitizers, where six 4-rank runs on two cores take minutes)
d=$tmp/fam
if [ -n "${PPLAN_TEST_SANITIZED:-}" ]; then
	echo "note: --families skipped under the sanitizers"
elif tune "$d" --gpus 4 --families --steps 2 --warmup 1; then
	check_loop "families" "$d" 6
	got=$(svalues "$d/tune.json" family | tr '\n' ',')
	want="DP only,TP only,PP only,TP+DP,PP+DP,TP+PP,"
	[ "$got" = "$want" ] && ok || bad "families: ran '$got', want '$want'"
else
	bad "families: pplan tune failed: $(tail -3 "$d.out")"
fi

# ---- bad input ----------------------------------------------------------------
touch "$tmp/afile"
while IFS='|' read -r what args; do
	# shellcheck disable=SC2086
	"$B" tune --model "$M" --profile "$P" $args >"$tmp/bad.out" 2>&1
	rc=$?
	lines=$(wc -l <"$tmp/bad.out")
	if [ "$rc" -eq 2 ] && [ "$lines" -le 2 ] && grep -q 'pplan' "$tmp/bad.out" &&
		! ls "$tmp"/badout/run-1.json >/dev/null 2>&1; then
		ok
	else
		bad "$what: want exit 2 and one sentence, got $rc: $(head -2 "$tmp/bad.out")"
	fi
done <<EOF
no --out|--gpus 2
--best 0|--gpus 2 --out $tmp/badout --best 0
--best and --families|--gpus 2 --out $tmp/badout --best 2 --families
--warmup not below --steps|--gpus 2 --out $tmp/badout --steps 2 --warmup 2
--fault malformed|--gpus 2 --out $tmp/badout --fault 1:x:10
--fault beyond the runs|--gpus 2 --out $tmp/badout --best 2 --fault 3:0:10
--framework megatron|--gpus 2 --out $tmp/badout --framework megatron
--launcher without ranks|--gpus 2 --out $tmp/badout --launcher mpiexec
--out is a file|--gpus 2 --out $tmp/afile
--backend cuda on CPU ranks|--gpus 2 --out $tmp/badout --backend cuda
no --gpus|--out $tmp/badout
EOF

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
