#!/usr/bin/env bash
# run.sh NAME SECONDS [BUILD]: runs the libFuzzer target fuzz_NAME of the
# fuzz build BUILD (default build-fuzz: cmake -S . -B build-fuzz
# -DCMAKE_C_COMPILER=clang -DPPLAN_FUZZ=ON -DPPLAN_TESTS=OFF -DPPLAN_CUDA=OFF)
# for SECONDS under ASan+UBSan, nice'd, on one core.  New inputs go to
# BUILD/fuzz-corpus/NAME, findings to BUILD/fuzz-artifacts/NAME/, the log
# to BUILD/fuzz-logs/NAME.log; the last lines printed are libFuzzer's
# final statistics (executions, executions per second).  Exit status:
# libFuzzer's (0: no finding).
set -u
name=${1:?usage: run.sh NAME SECONDS [BUILD]}
secs=${2:?usage: run.sh NAME SECONDS [BUILD]}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${3:-$src/build-fuzz}
bin=$build/tests/fuzz/fuzz_$name
[ -x "$bin" ] || { echo "run.sh: no $bin (build with -DPPLAN_FUZZ=ON)" >&2; exit 1; }
read -r -a seeds < <(tr ';' ' ' <"$build/fuzz-seeds-$name.txt")
corpus=$build/fuzz-corpus/$name
art=$build/fuzz-artifacts/$name
mkdir -p "$corpus" "$art" "$build/fuzz-logs"
dict=()
case $name in
model|hf|cluster|cases|report|profile) dict=(-dict="$src/tests/fuzz/json.dict") ;;
hwloc) dict=(-dict="$src/tests/fuzz/xml.dict") ;;
esac
export ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=1:allocator_may_return_null=0
export LSAN_OPTIONS=suppressions=$src/tests/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export HWLOC_COMPONENTS=-x86
nice -n 10 "$bin" "${dict[@]}" -max_total_time="$secs" -timeout=10 \
	-rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$art/" "$corpus" "${seeds[@]}" \
	"$src/tests/fuzz/regressions/$name" >"$build/fuzz-logs/$name.log" 2>&1
rc=$?
grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" \
	"$build/fuzz-logs/$name.log"
grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error)" "$build/fuzz-logs/$name.log" | head -5
exit $rc
