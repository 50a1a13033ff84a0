#!/usr/bin/env bash
# Installs what pplan needs to build and test on Debian 12 (run as root).
# The CUDA toolkit is optional: where /usr/local/cuda/bin/nvcc exists the
# build also compiles the CUDA backend; without it pplan builds CPU-only.
# --ci also installs what only .ci/run uses: clang and its runtime
# libraries (libFuzzer, for the fuzz build) and valgrind.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  libopenmpi-dev openmpi-bin libhwloc-dev hwloc libcjson-dev \
  libcriterion-dev libopenblas-dev zlib1g-dev chromium >/dev/null
if [ "${1:-}" = "--ci" ]; then
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
    clang libclang-rt-14-dev valgrind >/dev/null
  echo "install-deps: clang (libFuzzer) and valgrind for CI are installed"
fi
echo "install-deps: build tools, Open MPI, hwloc, cJSON, Criterion, OpenBLAS, zlib and Chromium (the report page's browser test) are installed"
