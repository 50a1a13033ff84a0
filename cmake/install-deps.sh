#!/usr/bin/env bash
# Installs what pplan needs to build and test on Debian 12 (run as root).
# The CUDA toolkit is optional: where /usr/local/cuda/bin/nvcc exists the
# build also compiles the CUDA backend; without it pplan builds CPU-only.
# --ci also installs what only .ci/run uses: clang and its runtime
# libraries (libFuzzer, for the fuzz build), valgrind, and the framework
# environment below.  --frameworks (or --ci) builds a Python virtual
# environment at /opt/pplan-frameworks (PPLAN_FRAMEWORKS names another)
# with the pinned torchtitan, Megatron-Core and DeepSpeed of
# tests/conformance/requirements.txt, and the source of NeMo and
# Megatron-Bridge (the wheels of tests/conformance/sources.txt, unpacked),
# for the conformance test only:
# pplan itself never runs Python.  About 6 GiB from PyPI, two minutes.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  libopenmpi-dev openmpi-bin libhwloc-dev hwloc libcjson-dev \
  libcriterion-dev libopenblas-dev zlib1g-dev chromium jq >/dev/null
if [ "${1:-}" = "--ci" ]; then
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
    clang libclang-rt-14-dev valgrind >/dev/null
  echo "install-deps: clang (libFuzzer) and valgrind for CI are installed"
fi
if [ "${1:-}" = "--ci" ] || [ "${1:-}" = "--frameworks" ]; then
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
    python3 python3-venv >/dev/null
  venv=${PPLAN_FRAMEWORKS:-/opt/pplan-frameworks}
  req=$(cd "$(dirname "$0")/.." && pwd)/tests/conformance/requirements.txt
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "$(grep '^torch==' "$req")"
  DS_BUILD_OPS=0 "$venv/bin/pip" install -q -r "$req"
  # sources.txt: wheels read as source (NeMo), unpacked, not installed
  mkdir -p "$venv/src"
  while read -r pin; do
    case $pin in '' | '#'*) continue ;; esac
    dir="$venv/src/${pin%%==*}-${pin#*==}"
    [ -d "$dir" ] && continue
    "$venv/bin/pip" download -q --no-deps -d "$venv/src" "$pin"
    "$venv/bin/python" -m zipfile -e "$venv/src/${pin%%==*}-${pin#*==}"-*.whl "$dir"
    rm -f "$venv/src/${pin%%==*}-${pin#*==}"-*.whl
  done <"$(dirname "$req")/sources.txt"
  echo "install-deps: torchtitan, Megatron-Core and DeepSpeed for the conformance test are in $venv, the sources of NeMo and Megatron-Bridge in $venv/src"
fi
echo "install-deps: build tools, Open MPI, hwloc, cJSON, Criterion, OpenBLAS, zlib, Chromium (the report page's browser test) and jq (the tests' JSON checks) are installed"
