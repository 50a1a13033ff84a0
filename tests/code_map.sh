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
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
