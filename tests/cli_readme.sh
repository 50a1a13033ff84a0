#!/usr/bin/env bash
# cli_readme.sh: README.md and the command pages (docs/commands/*.md) say
# what pplan does, to the digit.
#
# 1. Option tables: each table after a `<!-- options: CMD ... -->` marker
#    lists options of those subcommands; for every subcommand that
#    `pplan --help` lists and whose --help prints options, the union of its
#    tables over all those files is exactly the set of options its --help
#    prints.  A subcommand with options and no table fails.
# 2. Examples: every code block line `$ pplan ARGS` in those files is run
#    (in a scratch directory that sees the repository's tests/ and
#    validation/), and the lines shown under it must appear in the output
#    in that order ("..." stands for lines left out).  The git hash, clock
#    times and the search timing are masked; nothing else is.
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
# The files checked, README.md first; names relative to the source tree.
DOCS="README.md"
for f in "$S"/docs/commands/*.md; do
	[ -f "$f" ] && DOCS="$DOCS docs/commands/${f##*/}"
done
files=()
for f in $DOCS; do files+=("$S/$f"); done

# ---- 1. option tables against the usage texts ------------------------------------
# Every subcommand `pplan --help` lists ("  NAME  what it does").
cmds=$("$B" --help 2>&1 | awk '/^  [a-z]+ / { print $1 }')
case " $(echo $cmds) " in
*" search "*" report "*) ok ;;
*) ko "pplan --help lists no subcommands (got: $cmds)" ;;
esac
for cmd in $cmds; do
	# Its page, and the README's commands table links to it.
	if [ ! -f "$S/docs/commands/$cmd.md" ]; then
		ko "no page docs/commands/$cmd.md for pplan $cmd"
	elif ! grep -q "](docs/commands/$cmd.md)" "$S/README.md"; then
		ko "README.md does not link to docs/commands/$cmd.md"
	else
		ok
	fi
	awk -v cmd="$cmd" '
		FNR == 1 { on = 0 }
		/^<!-- options:/ { on = 0; for (i = 3; i < NF; i++) if ($i == cmd) on = 1; next }
		on && /^\|/ { t = $0; gsub(/\\\|/, "/", t); split(t, c, "|"); s = c[2]
			while (match(s, /--[a-z][a-z0-9-]*/)) { print substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) } next }
		on && !/^\|/ && NF { on = 0 }' "${files[@]}" | sort -u >"$tmp/readme.$cmd"
	# One CI run under ASan/UBSan got no usage at all from a --help: a
	# LeakSanitizer report ends the process before stdout is flushed, and
	# the grep below kept none of it.  Ask again once and show the first
	# answer; the sanitizer's report itself still fails the test through
	# ctest's FAIL_REGULAR_EXPRESSION.
	"$B" "$cmd" --help >"$tmp/raw.$cmd" 2>&1
	rc=$?
	if ! grep -q '^usage:' "$tmp/raw.$cmd"; then
		echo "note: pplan $cmd --help printed no usage (exit $rc); it printed:"
		head -12 "$tmp/raw.$cmd" | sed 's/^/      /'
		"$B" "$cmd" --help >"$tmp/raw.$cmd" 2>&1
	fi
	# An option line of a usage text: "  --name ..." or "  -o, --name ...".
	grep -oE "^  (-[a-zA-Z], )?--[a-z0-9-]+" "$tmp/raw.$cmd" | sed 's/^.*--/--/' | sort -u >"$tmp/help.$cmd"
	if [ ! -s "$tmp/help.$cmd" ]; then
		ok # no options to document
	elif [ ! -s "$tmp/readme.$cmd" ]; then
		ko "no option table for $cmd in README.md or docs/commands/*.md"
	elif diff "$tmp/help.$cmd" "$tmp/readme.$cmd" >"$tmp/diff"; then
		ok
	else
		ko "the option tables for $cmd differ from pplan $cmd --help (< help, > the tables):"
		sed 's/^/      /' "$tmp/diff"
	fi
done

# ---- 2. examples ---------------------------------------------------------------------
mask() {
	sed -E -e 's/git [0-9a-f]{7,40}/git HASH/g' \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIME/g' \
		-e 's/ in [0-9.]+ s \([0-9]+ layouts\/s\)/ in T s (R layouts\/s)/' \
		-e 's/[[:space:]]+$//'
}
mkdir -p "$tmp/run"
ln -s "$S/tests" "$tmp/run/tests"
ln -s "$S/validation" "$tmp/run/validation"
for f in $DOCS; do
	echo "@@FILE $f"
	awk '
		/^```/ { inblock = !inblock; if (!inblock && n) { print "@@END"; n = 0 } next }
		inblock && /^\$ pplan / { if (n) print "@@END"; print "@@CMD " substr($0, 9); n = 1; next }
		inblock && n { print "@@LINE " $0 }
		END { if (n) print "@@END" }' "$S/$f"
done >"$tmp/examples"
ncmd=0
run_example() {
	local args=$1 exp=$2
	ncmd=$((ncmd + 1))
	(cd "$tmp/run" && eval "\"\$B\" $args") >"$tmp/actual.raw" 2>&1
	mask <"$tmp/actual.raw" >"$tmp/actual"
	mask <"$exp" >"$tmp/expected"
	# Each expected line, in order, somewhere after the previous one.
	# A `predict it:` hint shown in a page runs as printed.
	grep -o "predict it: pplan .*" "$exp" | sed 's/^predict it: pplan //' | while IFS= read -r h; do
		if (cd "$tmp/run" && eval "\"\$B\" $h") >/dev/null 2>&1; then
			echo ok >>"$tmp/hints"
		else
			echo "      $file: the hint fails: pplan $h" >>"$tmp/hints_bad"
		fi
	done
	if awk '
		NR == FNR { want[++nw] = $0; next }
		{ got[++ng] = $0 }
		END {
			j = 1
			for (i = 1; i <= nw; i++) {
				if (want[i] ~ /^#? *\.\.\.$/) continue
				while (j <= ng && got[j] != want[i]) j++
				if (j > ng) { print "      missing: " want[i]; exit 1 }
				j++
			}
		}' "$tmp/expected" "$tmp/actual" >"$tmp/why"; then
		ok
	else
		ko "$file: example 'pplan $args' does not match its output"
		cat "$tmp/why"
	fi
}
cur=""
file=""
: >"$tmp/exp"
while IFS= read -r line; do
	case "$line" in
	"@@FILE "*) file=${line#@@FILE }; cur="" ;;
	"@@CMD "*) cur=${line#@@CMD }; : >"$tmp/exp" ;;
	"@@LINE "*) printf '%s\n' "${line#@@LINE }" >>"$tmp/exp" ;;
	"@@END") [ -n "$cur" ] && run_example "$cur" "$tmp/exp"; cur="" ;;
	esac
done <"$tmp/examples"
if [ "$ncmd" -ge 8 ]; then ok; else ko "only $ncmd examples found in $DOCS"; fi
if grep -q '^@@FILE README.md$' "$tmp/examples" &&
	sed -n '1,/^@@FILE docs/p' "$tmp/examples" | grep -q '^@@CMD '; then
	ok
else
	ko "README.md shows no \`\$ pplan\` example"
fi
if [ -s "$tmp/hints_bad" ]; then ko "predict-it hints:"; cat "$tmp/hints_bad"; fi
if [ -s "$tmp/hints" ]; then ok; else ko "no predict-it hint was run"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
