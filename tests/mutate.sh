#!/usr/bin/env bash
# mutate.sh: does the suite catch a wrong model, not only a changed one?
# Plants each wrong term of tests/mutations.txt, one at a time, in a
# scratch copy of the working tree, rebuilds it, and runs the suite
# without the README golden (cli_readme pins example output to the digit:
# it catches change, not wrongness).  A term no other test catches is a
# survivor; the script lists them and exits 1 if there is one.
#
#   bash tests/mutate.sh [--short] [--keep] [--check] [ID...]
#
#   --check  only that every term's text is in its file exactly once (no
#            build; ctest's mutations_current runs it, so an edit that
#            moves a term fails the suite, not only CI's short list)
#   --short  only the terms marked "short" (what .ci/run runs)
#   --keep   leave the scratch copy (its path is printed)
#   ID...    only these terms
#
# The suite is run the quick way first: the unit tests (tests/test_*.c),
# stopping at the first failure; only a term they miss goes on to the
# command-line tests.  Tests that do not price anything (the executor's
# multi-rank runs, calibrate, fuzz replays, valgrind, the browser, the
# CUDA checks) are left out: a term of the cost model cannot change them.
# About 1 minute per term on two cores, after one build of the copy.
set -u
S=$(cd "$(dirname "$0")/.." && pwd)
LIST=$S/tests/mutations.txt
short=0 keep=0 check=0
ids=()
for a in "$@"; do
	case $a in
	--short) short=1 ;;
	--keep) keep=1 ;;
	--check) check=1 ;;
	-*) echo "mutate.sh: unknown option $a (--short, --keep, --check, or term IDs)" >&2; exit 2 ;;
	*) ids+=("$a") ;;
	esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1

# The terms: id, file, short flag, sentence, from, to (tab-separated).
terms=$(awk '
	/^@ / { id = $2; file = $3; sh = ($4 == "short"); what = ""; from = ""; next }
	/^- / { from = substr($0, 3); next }
	/^\+ / { print id "\t" file "\t" sh "\t" what "\t" from "\t" substr($0, 3); next }
	/^#/ || /^$/ { next }
	{ what = $0 }' "$LIST")
[ -n "$terms" ] || { echo "mutate.sh: no terms in $LIST" >&2; exit 2; }
for id in "${ids[@]}"; do
	cut -f1 <<<"$terms" | grep -qx -- "$id" || { echo "mutate.sh: no term '$id' in $LIST" >&2; exit 2; }
done

if [ "$check" = 1 ]; then
	stale=0
	while IFS=$'\t' read -r id file sh what from to; do
		if [ "$(grep -cF -- "$from" "$S/$file")" != 1 ]; then
			echo "FAIL $id: '$from' is not found exactly once in $file (update tests/mutations.txt)"
			stale=$((stale + 1))
		fi
	done <<<"$terms"
	echo "mutate.sh --check: $(wc -l <<<"$terms") terms, $stale stale"
	[ "$stale" = 0 ]
	exit
fi

scratch=$(mktemp -d /tmp/pplan-mutate-XXXXXX)
if [ "$keep" = 1 ]; then echo "# scratch copy: $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi
src=$scratch/src build=$scratch/build
mkdir -p "$src"
# the working tree as it is (tracked files and new ones git does not ignore)
(cd "$S" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$src" 2>/dev/null)
# a repository of its own, so that the copy's outputs carry a git hash as
# the suite expects of a checkout
(cd "$src" && git init -q && git add -A && git -c user.name=mutate -c user.email=mutate@localhost \
	commit -qm "scratch copy for tests/mutate.sh") || { echo "mutate.sh: git init in the copy failed" >&2; exit 1; }

echo "# building the scratch copy (no CUDA module)"
if ! cmake -S "$src" -B "$build" -DPPLAN_CUDA=OFF >"$scratch/cmake.log" 2>&1 ||
	! cmake --build "$build" -j2 >"$scratch/build.log" 2>&1; then
	echo "mutate.sh: the unmutated copy does not build:"; tail -20 "$scratch/build.log"; exit 1
fi

UNIT='^test_'
# mutations_current checks the terms' text, which a planted term has replaced:
# it fails for every term, so it would call each one caught
REST_OUT='^test_|cli_readme|mutations_current|cli_exec|cli_calibrate|cli_topo|cli_fuzz|mpi_|cuda_|fuzz_|valgrind|browser|code_map'

# suite: 0 when every test passes; else prints the first failing test
suite() {
	local log=$scratch/ctest.log
	if ! ctest --test-dir "$build" -R "$UNIT" -j2 --stop-on-failure >"$log" 2>&1; then
		grep -m1 -oE '[0-9]+ - [A-Za-z0-9_]+ \((Failed|Timeout|SEGFAULT|Child aborted|Exception)\)' "$log" ||
			grep -m1 -E 'Failed|\*\*\*' "$log"
		return 1
	fi
	if ! ctest --test-dir "$build" -E "$REST_OUT" -j2 --stop-on-failure >"$log" 2>&1; then
		grep -m1 -oE '[0-9]+ - [A-Za-z0-9_]+ \((Failed|Timeout|SEGFAULT|Child aborted|Exception)\)' "$log" ||
			grep -m1 -E 'Failed|\*\*\*' "$log"
		return 1
	fi
	return 0
}

echo "# the unmutated suite"
if ! suite >"$scratch/base.txt"; then
	echo "mutate.sh: the suite fails without a mutation: $(cat "$scratch/base.txt")"; exit 1
fi

survivors=() n=0
while IFS=$'\t' read -r id file sh what from to; do
	if [ "${#ids[@]}" -gt 0 ]; then
		printf '%s\n' "${ids[@]}" | grep -qx -- "$id" || continue
	elif [ "$short" = 1 ] && [ "$sh" != 1 ]; then
		continue
	fi
	n=$((n + 1))
	f=$src/$file
	if [ "$(grep -cF -- "$from" "$f")" != 1 ]; then
		echo "FAIL $id: '$from' is not found exactly once in $file (update tests/mutations.txt)"
		survivors+=("$id")
		continue
	fi
	cp "$f" "$scratch/orig"
	F=$from T=$to perl -pi -e 's/\Q$ENV{F}\E/$ENV{T}/' "$f"
	start=$(date +%s)
	# stdin is the list of terms: nothing the suite runs (mpirun forwards
	# stdin to its rank 0) may read it
	if ! cmake --build "$build" -j2 >"$scratch/build.log" 2>&1 </dev/null; then
		echo "caught   $id ($what): does not build"
	elif caught=$(suite </dev/null); then
		echo "SURVIVED $id ($what)"
		survivors+=("$id")
	else
		echo "caught   $id ($what): $caught [$(( $(date +%s) - start )) s]"
	fi
	cp "$scratch/orig" "$f"
	touch "$f"
done <<<"$terms"

# the copy rebuilt as it was, for --keep
cmake --build "$build" -j2 >/dev/null 2>&1
echo "# $n terms planted, ${#survivors[@]} survived${survivors:+: ${survivors[*]}}"
[ "${#survivors[@]}" -eq 0 ]
