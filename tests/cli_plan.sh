#!/usr/bin/env bash
# cli_plan.sh: `pplan plan` (issue 22, item 1) through the real binary.
# Every figure asserted is computed here a second way: days from the
# tokens/s that `pplan predict` gives for the same layout (the plan's own
# "predict it:" line, pasted), the goodput from its formula and the cited
# defaults worked in awk (sim/MODEL.md, "Goodput"), the cost as GPU-hours
# times the price, the deadline's answer as the smallest size that meets it.
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
ko() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}
run() {
	local rc
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		ko "exit $rc: pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -5
		return 1
	fi
	ok
}
refuse() {
	local needle=$1 rc
	shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		ko "exit $rc, want 2: pplan $*"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qF -- "$needle" "$tmp/err"; then
		ko "stderr does not say '$needle': pplan $*"
		sed 's/^/      stderr: /' "$tmp/err" | head -3
	else
		ok
	fi
}
close() {
	awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
		m = b < 0 ? -b : b; exit !(d <= r * m) }'
}
check() { # JQ-EXPR FILE WHAT: must print true
	if [ "$(jq -r "$1" "$2")" = true ]; then ok; else ko "$3: $1"; fi
}
[ -d "$S/tests" ] || { echo "FAIL: no source tree at $S"; exit 1; }

# ---- one size: days from predict's tokens/s, goodput 1 -----------------------------
run plan --model llama3-8b --tokens 1T --gpus 16 --goodput 1 --top 2 --json "$tmp/p.json" && {
	check '.schema == "pplan.plan/1" and .mode == "ladder" and (.sizes | length) == 1' "$tmp/p.json" "one size"
	check '.sizes[0].layouts | length == 2' "$tmp/p.json" "--top 2 layouts"
	hint=$(grep '^  predict it: ' "$tmp/out" | sed 's/^  predict it: pplan //')
	# shellcheck disable=SC2086
	if eval "\"\$B\" $hint --json \"\$tmp/q.json\"" >/dev/null 2>&1; then
		ok
		tps=$(jq -r '.tokens_per_s' "$tmp/q.json")
		days=$(jq -r '.sizes[0].layouts[0].train_days' "$tmp/p.json")
		if close "$days" "$(awk -v t="$tps" 'BEGIN { printf "%.17g", 1e12 / t / 86400 }')" 1e-6; then ok; else ko "days $days, predict's tokens/s $tps"; fi
	else
		ko "the predict-it hint does not run: $hint"
	fi
}

# ---- the goodput's formula and defaults, by hand -------------------------------------
for n in 64 16384; do
	run plan --model llama3-8b --tokens 1T --gpus "$n" --top 1 --json "$tmp/g.json" || continue
	p=$(jq -r '.model.params' "$tmp/g.json")
	g=$(jq -r '.sizes[0].goodput.fraction' "$tmp/g.json")
	# M = 54 d x 24 h x 16384 GPUs / 466 interruptions, per job of n GPUs;
	# C = 14 B/param over 2 TB/s per 16384 GPUs; R = 600 s; T = sqrt(2 C (M + R)).
	want=$(awk -v n="$n" -v p="$p" 'BEGIN { M = 54 * 24 * 16384 / 466 * 3600 / n;
		C = 14 * p / (2e12 / 16384 * n); R = 600; T = sqrt(2 * C * (M + R));
		printf "%.17g", T / (T + C) * (1 - (R + (T + C) / 2) / M) }')
	if close "$g" "$want" 1e-9; then ok; else ko "goodput on $n GPUs $g, by hand $want"; fi
	grep -q "^# goodput   .* interrupted every .*Daly's optimum" "$tmp/out" && ok || ko "the # goodput line names its terms"
done
# Given terms change it as the formula says: a 30-minute interval, a 1 h restart.
run plan --model llama3-8b --tokens 1T --gpus 1024 --checkpoint-interval-min 30 --restart-min 60 \
	--gpu-mtbi-hours 10000 --storage-gbs 100 --json "$tmp/g.json" && {
	p=$(jq -r '.model.params' "$tmp/g.json")
	g=$(jq -r '.sizes[0].goodput.fraction' "$tmp/g.json")
	want=$(awk -v p="$p" 'BEGIN { M = 10000 * 3600 / 1024; C = 14 * p / 100e9; R = 3600; T = 1800;
		printf "%.17g", T / (T + C) * (1 - (R + (T + C) / 2) / M) }')
	if close "$g" "$want" 1e-9; then ok; else ko "goodput with given terms $g, by hand $want"; fi
}

# ---- the ladder and its deadline ------------------------------------------------------
run plan --model llama3-8b --tokens 1T --days 30 --max-gpus 128 --gpu-hour-cost 2.5 --json "$tmp/l.json" && {
	# The sizes are the ladder: 1, 2, 4 within a node, then 1, 2, 3, 4, 6, 8, 12, 16 nodes.
	check '[.sizes[].gpus] as $g | $g == ([1,2,4,8,16,24,32,48,64,96,128] | .[0:($g | length)]) and ($g | length) >= 4' "$tmp/l.json" "the ladder's sizes"
	check '(.answer_gpus as $a | [.sizes[].gpus] | index($a)) as $i | (.sizes | length) == ([$i + 3, 11] | min)' "$tmp/l.json" "two sizes past the answer, then stop"
	check '[.sizes[] | select(.fits) | .layouts[0] | select(.train_days <= 30)] | length > 0' "$tmp/l.json" "some size meets 30 days"
	check '.answer_gpus == ([.sizes[] | select(.fits and .layouts[0].train_days <= 30) | .gpus] | min)' "$tmp/l.json" "the answer is the smallest size that meets the deadline"
	check '[.sizes[] | select(.fits) | .layouts[0] | ((.train_cost - 2.5 * .train_gpu_hours) | fabs) < 1e-6 * .train_cost] | all' "$tmp/l.json" "cost = GPU-hours x price"
	a=$(jq -r '.answer_gpus' "$tmp/l.json")
	grep -q "^Fewest GPUs within the deadline: $a GPUs" "$tmp/out" && ok || ko "the text names the answer $a"
	grep -Eq "^ +$a  .*<- answer" "$tmp/out" && ok || ko "the table marks the answer"
	grep -q '^# price     \$2.50 per GPU-hour' "$tmp/out" && ok || ko "the price is echoed"
}
# GPU-hours are wall-clock hours times GPUs.
jq -e '[.sizes[] | select(.fits) | ((.layouts[0].train_gpu_hours - .layouts[0].train_time_s / 3600 * .gpus) | fabs) < 1e-6 * .layouts[0].train_gpu_hours] | all' "$tmp/l.json" >/dev/null && ok || ko "GPU-hours = hours x GPUs"

# search and predict count the same goodput in their time to train.
run search --model llama3-8b --gpus 64 --top 1 --train-tokens 1T --json "$tmp/s.json" && {
	g=$(jq -r '.goodput' "$tmp/s.json")
	tps=$(jq -r '.layouts[0].tokens_per_s' "$tmp/s.json")
	tt=$(jq -r '.layouts[0].train_time_s' "$tmp/s.json")
	if close "$tt" "$(awk -v t="$tps" -v g="$g" 'BEGIN { printf "%.17g", 1e12 / t / g }')" 1e-9; then ok; else ko "search's train_time_s $tt"; fi
	p=$(jq -r '.model.params' "$tmp/s.json")
	want=$(awk -v p="$p" 'BEGIN { n = 64; M = 54 * 24 * 16384 / 466 * 3600 / n;
		C = 14 * p / (2e12 / 16384 * n); R = 600; T = sqrt(2 * C * (M + R));
		printf "%.17g", T / (T + C) * (1 - (R + (T + C) / 2) / M) }')
	if close "$g" "$want" 1e-9; then ok; else ko "search's goodput $g, by hand $want"; fi
}

# ---- clusters side by side --------------------------------------------------------------
run plan --model llama3-8b --tokens 1T --gpus 64 --compare-clusters dgx-h100:2.5,dgx-h200:3.25 --json "$tmp/c.json" && {
	check '.mode == "compare" and (.clusters | length) == 2 and .clusters[0].cluster == "dgx-h100"' "$tmp/c.json" "two clusters"
	check '.clusters[1].gpu_hour_cost == 3.25 and .clusters[1].hardware.gpu == "h200"' "$tmp/c.json" "each its price and GPU"
	check '[.clusters[] | ((.size.layouts[0].train_cost - .gpu_hour_cost * .size.layouts[0].train_gpu_hours) | fabs) < 1e-6 * .size.layouts[0].train_cost] | all' "$tmp/c.json" "each cost at its own price"
	c=$(jq -r '.clusters[0].size.layouts[0].train_cost' "$tmp/c.json")
	per=$(awk -v c="$c" 'BEGIN { printf "%.3f", c / 1e6 }')
	grep -Eq "^ +dgx-h100 .* $per\$" "$tmp/out" && ok || ko "cost per 1M tokens $per for dgx-h100"
}

# ---- bad input: one sentence, exit 2 ------------------------------------------------------
refuse "--tokens N is required" plan --model llama3-8b --days 30
refuse "--days must be a positive number" plan --model llama3-8b --tokens 1T --days 0
refuse "--days must be a positive number" plan --model llama3-8b --tokens 1T --days soon
refuse "--max-gpus and --gpus/--nodes conflict" plan --model llama3-8b --tokens 1T --gpus 8 --max-gpus 64
refuse "--max-gpus must be a whole number" plan --model llama3-8b --tokens 1T --max-gpus 0
refuse "--compare-clusters and --cluster/--gpu conflict" plan --model llama3-8b --tokens 1T --days 9 --cluster dgx-h100 --compare-clusters dgx-h200
refuse "--compare-clusters needs --days" plan --model llama3-8b --tokens 1T --compare-clusters dgx-h100,dgx-h200
refuse "the price of dgx-h100 must be a positive number" plan --model llama3-8b --tokens 1T --days 9 --compare-clusters dgx-h100:free
refuse "unknown cluster 'dgx-b300'" plan --model llama3-8b --tokens 1T --gpus 8 --compare-clusters dgx-b300
refuse "--goodput must be a fraction" plan --model llama3-8b --tokens 1T --gpus 8 --goodput 1.5
refuse "--goodput gives the fraction itself" plan --model llama3-8b --tokens 1T --gpus 8 --goodput 0.9 --restart-min 5
refuse "--gpu-hour-cost must be a positive price" search --model llama3-8b --gpus 8 --gpu-hour-cost -1
refuse "too often to restart" plan --model llama3-8b --tokens 1T --gpus 8 --gpu-mtbi-hours 0.1
refuse "no layout on 8 GPUs trains 1.00 T tokens within 1.0 days" plan --model llama3-8b --tokens 1T --gpus 8 --days 1
refuse "no size up to 16 GPUs trains" plan --model llama3-8b --tokens 1T --days 1 --max-gpus 16
refuse "unknown model" plan --model nosuch --tokens 1T --days 1

echo "cli_plan: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
