#!/usr/bin/env bash
# cli_report.sh: `pplan report compare` end to end with the real binary on
# the hand-written reports of tests/fixtures/reports/: the table (provenance
# lines, names and units rows, hand-computed errors), pplan.comparison/1,
# warnings for other models and machines; exit status 2, one sentence and
# no file written for bad input.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
F=${PPLAN_SOURCE_DIR:?}/tests/fixtures/reports
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
# expect PATTERN: a line of the last stdout matches the extended regex.
expect() {
	grep -qE -- "$1" "$tmp/out" || { echo "FAIL: no line matching '$1'"; cat "$tmp/out"; fail=1; }
}

# Two reports: per-report rows with the errors worked out by hand
# (fixtures README), and the MAPE over both.
run 0 "# pplan report compare: pplan " report compare "$F/cpu-pp2-1f1b.json" \
	"$F/cpu-tp2.json" --json "$tmp/cmp.json"
expect '^# pplan report compare: pplan [0-9.]+, git [0-9a-f]+'
expect '^#  report  quantity +unit +predicted +measured +diff +error$'
expect '^# +\(unit\) +\(%\)$'
expect '^ +1  step time +s +0\.20000 +0\.25000 +-0\.05000 +-20\.0$'
expect '^ +2  step time +s +0\.30000 +0\.24000 +\+0\.06000 +\+25\.0$'
expect '^ +1  bubble fraction +% +14\.406 +18\.401 +-3\.995 +-$'
expect '^ +1  PP comm +s .* -60\.0$'
expect '^ +2  TP comm +s .* \+25\.0$'
expect '^   step time +s +2 +22\.5 +\+25\.0 +2 '
expect '^   bubble fraction +% +2 +- +- +1 +1\.997 +-3\.995$'
expect '^# step time MAPE 22\.5 % over 2 reports'
grep -q '"schema":[[:space:]]*"pplan.comparison/1"' "$tmp/cmp.json" || { echo "FAIL: comparison schema"; fail=1; }
if grep -qE '^ +[0-9]+  recompute ' "$tmp/out"; then echo "FAIL: a class with no time on either side is printed"; fail=1; fi

# Other models and machines: compared, with a warning naming the difference.
run 0 "warning: the reports are of different models: [1] gpt-tiny, [2] gpt-small" \
	report compare "$F/cpu-pp2-1f1b.json" "$F/other-model.json" "$F/failed.json"
grep -qF "different machines" "$tmp/err" || { echo "FAIL: no machine warning"; fail=1; }
expect '^# \[3\] the run failed after 2 steps: rank 1 stopped answering'

# A run whose --check failed: its numbers compared as any run's, the
# verdict printed beside them, the status kept in pplan.comparison/1.
run 0 "CHECK FAILED" report compare "$F/check-failed.json" --json "$tmp/chk.json"
expect '^# \[1\] CHECK FAILED: --check: the run differs from the single-rank reference beyond rounding: gradient of layer1.mlp.fc1.weight\[1234\] in step 1'
expect '^ +1  step time +s +0\.30000 +0\.24000 +\+0\.06000 +\+25\.0$'
grep -q '"status":[[:space:]]*"check_failed"' "$tmp/chk.json" || { echo "FAIL: the comparison lost check_failed"; fail=1; }
run 2 'status is "check_failed" but check.passed is true' report compare "$F/bad-check-status.json"

# Bad input: exit 2, one sentence, nothing written.
run 2 "no report files given" report compare
run 2 'schema is "pplan.report/2"' report compare "$F/cpu-tp2.json" \
	"$F/bad-schema-version.json" --json "$tmp/bad.json"
run 2 "measured.step_time_s must be a number" report compare "$F/bad-type.json" --json "$tmp/bad.json"
run 2 "malformed JSON" report compare "$F/bad-truncated.json" --json "$tmp/bad.json"
run 2 "cannot open" report compare "$tmp/none.json"
run 2 "unknown option" report compare --bogus "$F/cpu-tp2.json"
run 2 "unknown action" report draw "$F/cpu-tp2.json"
[ -e "$tmp/bad.json" ] && { echo "FAIL: a file was written for bad input"; fail=1; }
run 2 "does not exist" report compare "$F/cpu-tp2.json" --json "$tmp/no/such/dir/x.json"
[ -s "$tmp/out" ] && { echo "FAIL: the table was printed though the JSON could not be written"; fail=1; }
ls "$tmp"/no 2>/dev/null && fail=1
# pplan search --json carries every priced layout for report html's plot.
run 0 "Best layout" search --model llama3-8b --gpus 8 --global-batch 64 --json "$tmp/search.json"
for key in '"memory_cap_gib"' '"point_fields"' '"family_names"' '"points":'; do
	grep -qF "$key" "$tmp/search.json" || { echo "FAIL: no $key in pplan.search/1"; fail=1; }
done

# report html: one page, written atomically; bad input refused, nothing written.
run 0 "wrote $tmp/page.html (3 sections)" report html "$F/cpu-pp2-1f1b.json" \
	"$F/failed.json" "$tmp/search.json" -o "$tmp/page.html"
grep -q '^</html>$' "$tmp/page.html" || { echo "FAIL: the page is not complete"; fail=1; }
run 0 "wrote $tmp/chk.html" report html "$F/check-failed.json" -o "$tmp/chk.html"
grep -q 'class="banner failed">Check failed: --check: the run differs' "$tmp/chk.html" ||
	{ echo "FAIL: the page does not show the failed check"; fail=1; }
ls "$tmp"/page.html.tmp.* 2>/dev/null && { echo "FAIL: a temporary file was left"; fail=1; }
run 2 "no input files given" report html -o "$tmp/bad.html"
run 2 "give -o PAGE.html" report html "$F/cpu-tp2.json"
run 2 'schema is "pplan.report/2"' report html "$F/cpu-tp2.json" "$F/bad-schema-version.json" -o "$tmp/bad.html"
run 2 "report html draws only" report html "$F/bad-prediction.json" -o "$tmp/bad.html"
run 2 "does not exist" report html "$F/cpu-tp2.json" -o "$tmp/no/such/page.html"
run 2 "not a file name" report html "$F/cpu-tp2.json" -o "$tmp"
sed -e 's/"point_fields":/"point_fields_x":/' "$tmp/search.json" >"$tmp/bad-search.json"
run 2 "point_fields must name" report html "$F/cpu-tp2.json" "$tmp/bad-search.json" -o "$tmp/bad.html"
[ -e "$tmp/bad.html" ] && { echo "FAIL: a page was written for bad input"; fail=1; }
exit $fail
