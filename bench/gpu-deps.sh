#!/usr/bin/env bash
# bench/gpu-deps.sh: fetches, HERE (a Debian machine with network to its
# apt mirror), the Debian packages pplan builds and runs against, and
# unpacks them into bench/gpu-deps/root (ignored by git) for a GPU machine
# that is offline and has none of them: hwloc, cJSON, Open MPI, OpenBLAS,
# pkg-config and the libraries they load that a bare CUDA + PyTorch image
# likely lacks.  bench/gpu-check.sh finds that folder and points PATH,
# LD_LIBRARY_PATH, PKG_CONFIG_*, CMAKE_PREFIX_PATH and OPAL_PREFIX into it;
# the device tool carries it (`carry: ["bench/gpu-deps"]`).
#
# What it does:
#   1. `apt-get download` the packages below (this machine's Debian
#      release and versions; no root needed, nothing installed);
#   2. `dpkg-deb -x` each into the root; drops documentation, manuals,
#      static libraries, Fortran and Java parts;
#   3. makes the links Debian's alternatives would make at install time
#      (mpirun, mpicc, openblas.pc, libopenblas.so.0);
#   4. checks that every shared library and program in the root finds
#      each library it needs either in the root or among the base system
#      libraries any glibc machine has (BASE_LIBS below), and that the
#      whole folder is under LIMIT_MIB (default 56: the device tool
#      carries 64 MiB, the working tree about 5 of them).
# Writes bench/gpu-deps/MANIFEST (package, version, size).  Run again to
# refresh: the root is rebuilt from scratch.
#
# Usage: bash bench/gpu-deps.sh   (settings: LIMIT_MIB, APT_UPDATE=1 to run
# `apt-get update` first, which needs root)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=$here/gpu-deps
root=$dest/root
LIMIT_MIB=${LIMIT_MIB:-56}
arch=$(dpkg --print-architecture)
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

# The packages: each -dev package pplan's CMake asks pkg-config or FindMPI
# for, its runtime library, and the libraries those link or dlopen (Open
# MPI's: PMIx, libevent, munge).
PACKAGES=(
	pkgconf pkgconf-bin libpkgconf3
	libhwloc15 libhwloc-dev
	libcjson1 libcjson-dev
	libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libgfortran5 libquadmath0
	openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev
	libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2 libatomic1
)
# Open MPI's components for networks between hosts (libfabric, UCX, PSM,
# verbs) are left out with their libraries: one host needs only its
# shared-memory (vader), self and TCP transports, and without them the
# folder fits the device tool's 64 MiB with room for the working tree.
NETWORK_COMPONENTS='mca_(btl_ofi|btl_openib|btl_usnic|mtl_ofi|mtl_psm|mtl_psm2|pml_ucx|osc_ucx|spml_ucx|atomic_ucx|reachable_netlink)\.so|libmca_common_(ofi|ucx|verbs)'

# Libraries every glibc machine (the CUDA image too) has: not carried.
BASE_LIBS='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libutil|libresolv|libanl|libcrypt|libstdc\+\+|libgcc_s|libz|libudev|libsystemd|liblzma|libzstd|liblz4|libcap|libgcrypt|libgpg-error|libbz2|libselinux|libpcre2-8|libuuid)\.so'

command -v apt-get >/dev/null || { echo "gpu-deps: needs apt-get (a Debian or Ubuntu machine)" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "gpu-deps: needs dpkg-deb" >&2; exit 1; }
if [ "${APT_UPDATE:-0}" = 1 ]; then
	apt-get update -q
fi

debs=$(mktemp -d)
chmod 777 "$debs" # apt downloads as its _apt user where it can
trap 'rm -rf "$debs"' EXIT
echo "== downloading ${#PACKAGES[@]} packages ($arch)"
(cd "$debs" && apt-get download -q "${PACKAGES[@]/%/:$arch}" 2>&1 | grep -v '^Get:' || true)
n=$(find "$debs" -name '*.deb' | wc -l)
[ "$n" -eq "${#PACKAGES[@]}" ] || {
	echo "gpu-deps: got $n of ${#PACKAGES[@]} packages (APT_UPDATE=1 if the lists are stale)" >&2
	exit 1
}

echo "== unpacking into $root"
rm -rf "$root"
mkdir -p "$root"
: >"$dest/MANIFEST.tmp"
for d in "$debs"/*.deb; do
	dpkg-deb -x "$d" "$root"
	dpkg-deb -W --showformat='${Package} ${Version} ${Installed-Size}\n' "$d" >>"$dest/MANIFEST.tmp"
done
sort "$dest/MANIFEST.tmp" >"$dest/MANIFEST"
rm -f "$dest/MANIFEST.tmp"

# Documentation, manuals, static archives, Fortran and Java: not needed
# to build or run pplan.
rm -rf "$root"/usr/share/{doc,man,info,lintian,bug,locale} "$root"/etc/openmpi/openmpi-mca-params.conf.d
find "$root" -name '*.a' -delete
rm -rf "$root/usr/lib/$multi/fortran" "$root/usr/lib/$multi"/openmpi/lib/*.mod
find "$root" \( -name '*java*' -o -name '*mpifh*' -o -name '*usempi*' -o -name 'mpif*' \) -exec rm -rf {} + 2>/dev/null || true
# OpenSHMEM, LAPACK, and Open MPI's internal headers (mpi.h for C needs
# none of them): to fit the device tool's 64 MiB.
ompi=$root/usr/lib/$multi/openmpi
rm -rf "$ompi"/include/{openshmem,shmem*,pshmem*,mpp} "$ompi"/include/openmpi/{opal,orte,oshmem}
find "$ompi/include/openmpi/ompi" -mindepth 1 -maxdepth 1 ! -name mpi -exec rm -rf {} +
find "$ompi/include/openmpi/ompi/mpi" -mindepth 1 -maxdepth 1 ! -name cxx -exec rm -rf {} +
find "$root" \( -name '*oshmem*' -o -name 'mca_memheap_*' -o -name 'mca_spml_*' -o -name 'mca_sshmem_*' \
	-o -name 'mca_scoll_*' -o -name 'mca_atomic_*' -o -name 'osh*' -o -name 'shmem*' \) -exec rm -rf {} + 2>/dev/null || true
rm -f "$root/usr/lib/$multi"/openblas-pthread/liblapack.so*
find "$root" -regextype posix-extended -regex ".*/($NETWORK_COMPONENTS)[^/]*" -delete

# What update-alternatives would link at install time.
ln -sf mpirun.openmpi "$root/usr/bin/mpirun"
ln -sf mpiexec.openmpi "$root/usr/bin/mpiexec"
ln -sf mpicc.openmpi "$root/usr/bin/mpicc"
ln -sf pkgconf "$root/usr/bin/pkg-config"
ln -sf openblas-pthread/libopenblas.so.0 "$root/usr/lib/$multi/libopenblas.so.0"
ln -sf openblas-pthread/libopenblas.so "$root/usr/lib/$multi/libopenblas.so"
mkdir -p "$root/usr/lib/$multi/pkgconfig"
ln -sf ../openblas-pthread/pkgconfig/openblas.pc "$root/usr/lib/$multi/pkgconfig/openblas.pc"
ln -sf "$multi/openblas-pthread/cblas.h" "$root/usr/include/cblas.h"
ln -sf ../libpsm1/libpsm_infinipath.so.1.16 "$root/usr/lib/$multi/libpsm_infinipath.so.1"

echo "== checking that every library and program finds what it needs"
# The sonames the root provides, then each ELF file's NEEDED entries.
provided=$(find "$root" \( -type f -o -type l \) -name '*.so*' -printf '%f\n' | sort -u)
missing=0
while IFS= read -r f; do
	file -b "$f" | grep -q '^ELF' || continue
	for need in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		if grep -qxF "$need" <<<"$provided" || grep -qE "$BASE_LIBS" <<<"$need"; then
			continue
		fi
		echo "  ${f#"$root"/} needs $need, which is neither in the root nor a base library"
		missing=1
	done
done < <(find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \))
[ "$missing" -eq 0 ] || { echo "gpu-deps: add the packages above to PACKAGES" >&2; exit 1; }
# (objdump fails on the shell scripts among the programs: ignored)
glibc=$(find "$root" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec objdump -T {} + 2>/dev/null |
	grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1 || true)
echo "  all resolved; the newest glibc symbol version needed: ${glibc:-none} (the GPU image must have it)"

mib=$(du -sm "$dest" | cut -f1)
echo "== $dest: $mib MiB ($(find "$root" -type f | wc -l) files, $(wc -l <"$dest/MANIFEST") packages; limit $LIMIT_MIB MiB)"
[ "$mib" -le "$LIMIT_MIB" ] || { echo "gpu-deps: over $LIMIT_MIB MiB: the device tool carries 64 MiB with the working tree" >&2; exit 1; }
echo "gpu-deps: done; carry bench/gpu-deps with the device tool"
