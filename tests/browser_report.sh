#!/usr/bin/env bash
# browser_report.sh: `pplan report html` as a browser sees it.  Renders a
# page of two hand-written exec reports (tests/fixtures/reports/) and a
# search in headless Chromium; checks that the page is self-contained (no
# script, nothing from the network), that the DOM Chromium built holds the
# expected SVG elements (one <rect class="op ..."> per op of the fixtures'
# timelines, counted from the fixtures), and that the screenshot is not
# blank (tests/png_check.c; a blank page must fail the same check).
# Skipped (77) where no Chromium is installed (cmake/install-deps.sh installs it).
set -u
B=${PPLAN_BIN:?PPLAN_BIN must name the pplan binary}
PNG_CHECK=${PNG_CHECK:?PNG_CHECK must name the png_check helper}
F=${PPLAN_SOURCE_DIR:?}/tests/fixtures/reports
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	echo "skipped: no chromium (bash cmake/install-deps.sh installs Debian's chromium)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
chrome() { # chrome ARGS... URL: headless, no profile of the user's, no GPU
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chrome.log"
}

"$B" search --model llama3-8b --gpus 16 --global-batch 64 --json "$tmp/search.json" >/dev/null ||
	{ echo "FAIL: pplan search"; exit 1; }
"$B" report html "$F/cpu-pp2-1f1b.json" "$F/cpu-tp2.json" "$tmp/search.json" \
	-o "$tmp/page.html" >"$tmp/out" 2>&1 || { echo "FAIL: report html"; cat "$tmp/out"; exit 1; }

# Self-contained: no script, no font, image or style from anywhere.
if grep -qiE '<script|@import|@font-face|<link|<img|https?://' "$tmp/page.html"; then
	echo "FAIL: the page is not self-contained:"
	grep -oiE '<script|@import|@font-face|<link|<img|https?://[^" ]*' "$tmp/page.html" | sort -u
	fail=1
fi

# The DOM as Chromium parsed it.
chrome --dump-dom "file://$tmp/page.html" >"$tmp/dom.html"
count() { grep -oF -- "$1" "$tmp/dom.html" | wc -l; }
want() { # want N NEEDLE
	local got
	got=$(count "$2")
	if [ "$got" -ne "$1" ]; then echo "FAIL: $got x '$2' in the DOM, want $1"; fail=1; fi
}
atleast() {
	local got
	got=$(count "$2")
	if [ "$got" -lt "$1" ]; then echo "FAIL: $got x '$2' in the DOM, want at least $1"; fail=1; fi
}
# Timeline ops of the fixtures: cpu-pp2-1f1b.json has 17 per lane, 2 lanes a
# side (68); cpu-tp2.json 9 in its one lane a side (18).
want 86 '<rect class="op '
# By class: 4 F and 4 B in each of the 6 lanes; 8 sends and receives in
# each of the 4 pipeline lanes; one optimizer step per lane.
want 24 '<rect class="op forward"'
want 24 '<rect class="op backward"'
want 32 '<rect class="op pp_comm"'
want 6 '<rect class="op optimizer"'
want 1 '<section id="overview">'       # two runs: the overview first
want 2 '<svg class="overview"'
want 2 '<svg class="timeline"'
want 2 '<svg class="memory"'
want 2 '<svg class="classes"'
want 1 '<svg class="scatter"'
want 1 '<svg class="families"'
want 1 '<line class="cap"'
want 1 '<g class="chosen">'
atleast 1 '<path class="pts fam'
atleast 1 '<path class="pts oom"'
for title in "time from the start of the step (ms)" "memory per GPU (GiB)" "time per step (ms)" \
	"memory per GPU, most-loaded GPU (GiB)" "step time (s)" "best step time (s)"; do
	atleast 1 ">$title</text>"
done

# A screenshot 1280 px wide, and a blank page as the control.
chrome --window-size=1280,2400 --screenshot="$tmp/page.png" "file://$tmp/page.html" >/dev/null
"$PNG_CHECK" "$tmp/page.png" 1280 3 1 || fail=1
printf '<!DOCTYPE html><html><body style="background:#f4f5f7"><p>pplan</p></body></html>\n' >"$tmp/blank.html"
chrome --window-size=1280,2400 --screenshot="$tmp/blank.png" "file://$tmp/blank.html" >/dev/null
if "$PNG_CHECK" "$tmp/blank.png" 1280 3 1 >/dev/null; then
	echo "FAIL: the blank control page passes the screenshot check"
	fail=1
fi
[ "$fail" -ne 0 ] && tail -5 "$tmp/chrome.log"
exit $fail
