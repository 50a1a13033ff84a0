# shellcheck shell=bash
# bench/gpu-deps-env.sh: sourced (not run) by bench/gpu-check.sh, or by
# hand: `. bench/gpu-deps-env.sh`.  Points the environment at the Debian
# packages bench/gpu-deps.sh unpacked into bench/gpu-deps/root, so that
# CMake's pkg-config and FindMPI, the compiler, the loader and mpirun take
# hwloc, cJSON, OpenBLAS and Open MPI from there and from nowhere else:
#   PATH              the root's pkg-config, mpicc, mpirun
#   LD_LIBRARY_PATH   its libraries (OpenBLAS's, Open MPI's, PMIx's folders)
#   PKG_CONFIG_LIBDIR only its .pc files (the system's are not searched),
#   PKG_CONFIG_SYSROOT_DIR  with the root before their /usr paths
#   CMAKE_PREFIX_PATH the root's /usr
#   OPAL_PREFIX       Open MPI relocated: its components, help texts and
#                     wrapper data under the root
#   PMIX_MCA_mca_base_component_path  PMIx's plugins from the root
#   HWLOC_PLUGINS_PATH  hwloc's plugins from the root (none carried: not
#                     the system's, which may not match)
# Sets GPU_DEPS_ROOT; returns non-zero (nothing changed) without the root.

gpu_deps_root=${GPU_DEPS_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gpu-deps/root}
if [ ! -d "$gpu_deps_root/usr/lib" ]; then
	echo "gpu-deps-env: no $gpu_deps_root (run bench/gpu-deps.sh on a machine with apt)" >&2
	return 1
fi
GPU_DEPS_ROOT=$gpu_deps_root
gpu_deps_lib=$GPU_DEPS_ROOT/usr/lib/x86_64-linux-gnu
export GPU_DEPS_ROOT
export PATH=$GPU_DEPS_ROOT/usr/bin:$PATH
export LD_LIBRARY_PATH=$gpu_deps_lib:$gpu_deps_lib/openblas-pthread:$gpu_deps_lib/openmpi/lib:$gpu_deps_lib/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_LIBDIR=$gpu_deps_lib/pkgconfig:$GPU_DEPS_ROOT/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$GPU_DEPS_ROOT
unset PKG_CONFIG_PATH
export CMAKE_PREFIX_PATH=$GPU_DEPS_ROOT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
export OPAL_PREFIX=$GPU_DEPS_ROOT/usr
export PMIX_MCA_mca_base_component_path=$gpu_deps_lib/pmix2/lib/pmix
export HWLOC_PLUGINS_PATH=$gpu_deps_lib/hwloc
unset gpu_deps_root gpu_deps_lib
