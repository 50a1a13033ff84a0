#!/usr/bin/env bash
# code_map.sh: the module map in docs/design.md is the one the code has.
# For every module folder, the set of other modules whose headers its
# sources include (#include "x.h" where x.h lives in that folder) must be
# exactly the row of the "code-map" table in docs/design.md, and the
# table must have no cycle (dependencies point one way).
set -u
S=${PPLAN_SOURCE_DIR:?PPLAN_SOURCE_DIR must name the source tree}
D=$S/docs/design.md
mods="base topology sim kernels exec calibrate reports cli"
passed=0
failed=0
ok() { passed=$((passed + 1)); }
ko() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}
# what the code includes, module by module
actual() { # MODULE
	local m=$1 h o
	for h in $(cat "$S/$m"/*.[ch] "$S/$m"/*.cu "$S/$m"/*.cuh 2>/dev/null |
		sed -n 's/^#include "\([^"]*\)".*/\1/p' | sort -u); do
		for o in $mods; do
			[ "$o" != "$m" ] && [ -f "$S/$o/$h" ] && echo "$o"
		done
	done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# what the table says: | `m/` | `a/`, `b/` | (a dash for none)
table() { # MODULE
	awk -v m="\`$1/\`" '/<!-- code-map -->/ { on = 1; next }
		on && /^\|/ { split($0, c, "|"); gsub(/^ +| +$/, "", c[2]); if (c[2] == m) { print c[3]; exit } next }
		on && !/^\|/ && NF { exit }' "$D" | tr -d '`/,' | tr -s ' ' '\n' | grep -v '^-\?$' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
for m in $mods; do
	a=$(actual "$m")
	t=$(table "$m")
	if [ "$a" = "$t" ]; then ok; else ko "$m includes headers of '${a:-nothing}', docs/design.md says '${t:-nothing}'"; fi
done
# no cycle: repeatedly remove modules whose listed dependencies are gone
left=$mods
for _ in $mods; do
	next=""
	for m in $left; do
		for d in $(table "$m"); do
			case " $left " in *" $d "*) next="$next $m"; continue 2 ;; esac
		done
	done
	left=$next
done
if [ -z "$(echo "$left" | tr -d ' ')" ]; then ok; else ko "the table has a cycle among:$left"; fi
# one owner per JSON format: each schema of the "formats" table is named
# (as a string in code, not in a comment) in its owner and the owner's
# header only, and every schema the code names has a row
formats() {
	awk '/<!-- formats -->/ { on = 1; next }
		on && /^\| `pplan\./ { split($0, c, "|"); gsub(/[ `]/, "", c[2]); gsub(/[ `]/, "", c[3]); print c[2], c[3]; next }
		on && !/^\|/ && NF { exit }' "$D"
}
named_in() { # SCHEMA: the source files whose code (not comments) names it
	(cd "$S" && grep -l "\"$1\"" $(printf '%s/*.[ch] ' $mods) 2>/dev/null |
		while read -r f; do
			sed 's|/\*.*\*/||g; s|^[[:space:]]*\*.*||' "$f" | grep -q "\"$1\"" && echo "$f"
		done)
}
rows=$(formats)
if [ "$(echo "$rows" | grep -c .)" -ge 13 ]; then ok; else ko "docs/design.md's formats table has $(echo "$rows" | grep -c .) rows, expected every schema"; fi
while read -r schema owner; do
	[ -n "$schema" ] || continue
	[ -f "$S/$owner" ] || { ko "$schema: owner $owner is not a file"; continue; }
	bad=$(named_in "$schema" | grep -v -x -e "$owner" -e "${owner%.c}.h")
	if [ -z "$bad" ] && named_in "$schema" | grep -q .; then ok; else ko "$schema is named outside its owner $owner: ${bad:-(nowhere)}"; fi
done <<<"$rows"
for schema in $(cd "$S" && cat $(printf '%s/*.[ch] ' $mods) | sed 's|/\*.*\*/||g; s|^[[:space:]]*\*.*||' |
		grep -o '"pplan\.[a-z]*/[0-9]*"' | tr -d '"' | sort -u); do
	if echo "$rows" | grep -q "^$schema "; then ok; else ko "$schema is written or read but has no row in docs/design.md's formats table"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
