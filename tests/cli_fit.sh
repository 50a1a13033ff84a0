#!/usr/bin/env bash
# cli_fit.sh: `pplan fit` writes a pplan.profile/1 file that --profile
# reads back (predict, validate); `validate --cross-validate source` and
# `--baseline constant-mfu` report their figures in the table and the
# JSON; bad requests are one sentence and exit 2, with nothing written.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

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
check() { # [JQ-OPTIONS...] JQ-EXPR FILE: must print true
	local n=$# expr file
	expr=${*:n-1:1}
	file=${*:n:1}
	if [ "$(jq -r "${@:1:n-2}" "$expr" "$file")" != true ]; then
		echo "FAIL: $expr on $file"; fail=1
	fi
}

F="$S/tests/fixtures/cases/fit-small.json"
run 0 "# wrote $tmp/p.json" fit "$F" --out "$tmp/p.json" --closed-form --rounds 6
check '.schema == "pplan.profile/1" and .kind == "fitted" and .device.name == "any"' "$tmp/p.json"
check '.fit.sources | length == 4' "$tmp/p.json"
check '(.constants["gemm_ceiling.hopper"] >= 0.3) and (.constants["gemm_ceiling.hopper"] <= 0.95)' "$tmp/p.json"
check '.provenance.command | startswith("pplan fit")' "$tmp/p.json"
run 0 "# constants $tmp/p.json" predict --model llama3-8b --gpus 8 --layout tp=8 --profile "$tmp/p.json"
run 0 "# constants $tmp/p.json" validate "$F" --profile "$tmp/p.json" --quiet

# --profile: the constants not moved keep the profile's values (the one
# moved is fitted from there); a missing profile is one sentence, exit 2
run 0 "# wrote $tmp/p2.json" fit "$F" --out "$tmp/p2.json" --closed-form --rounds 6 \
	--profile "$tmp/p.json" --constants step_fixed_ms
check --slurpfile a "$tmp/p.json" '[.constants | to_entries[] | select(.key != "step_fixed_ms") | .value == $a[0].constants[.key]] | all' "$tmp/p2.json"
run 0 "start" fit "$F" --out "$tmp/p3.json" --closed-form --rounds 6 --profile "$tmp/p.json" --constants step_fixed_ms
run 2 "nothere.json" fit "$F" --out "$tmp/x.json" --profile "$tmp/nothere.json"

run 0 "LOSO" validate "$F" --quiet --closed-form --cross-validate source --baseline constant-mfu --json "$tmp/v.json"
check '.summary.cross_validation.step_time_mape_pct > 0' "$tmp/v.json"
check '.summary.cross_validation.by_source | length == 4' "$tmp/v.json"
check '.summary.baseline.mfu > 0.1 and .summary.baseline.mfu < 0.9' "$tmp/v.json"
check '.summary.predicted_fraction == 1' "$tmp/v.json"
check '[.cases[] | .cross_validation_step_time_s > 0] | all' "$tmp/v.json"

run 2 "--out PROFILE is required" fit "$F"
run 2 "--rounds must be" fit "$F" --out "$tmp/x.json" --rounds 0
run 2 "--cross-validate takes 'source'" validate "$F" --cross-validate case
run 2 "--baseline takes 'constant-mfu'" validate "$F" --baseline mean
run 2 "not a constant of the cost model (did you mean gemm_ceiling.hopper?)" \
	predict --model llama3-8b --gpus 8 --layout tp=8 --profile "$S/tests/fixtures/profile/bad-constant-name.json"
run 2 "the profile describes h100-sxm, but the cluster's GPU is a100-80gb" \
	predict --model llama3-8b --gpus 8 --gpu a100-80gb --layout tp=8 --profile "$S/tests/fixtures/profile/good.json"
[ -e "$tmp/x.json" ] && { echo "FAIL: a refused fit wrote its output"; fail=1; }

[ "$fail" -eq 0 ] && echo "cli_fit: all passed"
exit "$fail"
