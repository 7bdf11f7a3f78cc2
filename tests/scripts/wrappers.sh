#!/bin/bash
# SPDX-License-Identifier: MIT
# The compiler wrappers and pkg-config file always give Ferry: a build that
# passes another MPI's -I/-L first (Open MPI's libmpi.so sits in
# /usr/lib/x86_64-linux-gnu) still gets Ferry's mpi.h and libmpi.so.12;
# mpicxx builds C++ against the C API; the query flags print commands that
# name Ferry; CMake's FindMPI finds Ferry through mpicc.
# Usage: wrappers.sh BUILDDIR
set -euo pipefail
build=$(cd "$1" && pwd -P)
bin=$build/bin lib=$build/lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "wrappers: FAIL: $*" >&2; exit 1; }

# Ferry's header defines FERRY; a shadowing mpi.h would not.
cat >"$tmp/p.c" <<'C'
#include <mpi.h>
#ifndef FERRY
#error not the mpi.h of Ferry
#endif
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
C
cp "$tmp/p.c" "$tmp/p.cc"

# Another MPI's paths given first, as a distribution's build would.
other="-I/usr/lib/x86_64-linux-gnu/openmpi/include -L/usr/lib/x86_64-linux-gnu"
linked_to_ferry() {
    local r
    r=$(ldd "$1" | awk '$1 ~ /^libmpi/ { print $3 }')
    [[ $(readlink -f "$r") == "$lib"/* ]] || fail "$1 links '$r', not Ferry's"
}
# shellcheck disable=SC2086
"$bin/mpicc" $other -o "$tmp/p" "$tmp/p.c" || fail "mpicc with foreign -I/-L"
linked_to_ferry "$tmp/p"
"$tmp/p" || fail "singleton run of the mpicc-built program"
if command -v c++ >/dev/null; then
    # shellcheck disable=SC2086
    "$bin/mpicxx" $other -o "$tmp/pxx" "$tmp/p.cc" || fail "mpicxx"
    linked_to_ferry "$tmp/pxx"
    "$bin/mpic++" -show | grep -q '^c++ ' || fail "mpic++ -show: not c++"
fi

# Queries, MPICH and Open MPI style.
"$bin/mpicc" -show -o x x.c | grep -q -- "-I[^ ]*include .*x.c .*libmpi" ||
    fail "-show: $("$bin/mpicc" -show -o x x.c)"
"$bin/mpicc" -compile-info | grep -q -- "-I" || fail "-compile-info"
"$bin/mpicc" -link-info | grep -q -- "libmpi" || fail "-link-info"
"$bin/mpicc" --showme:compile | grep -q -- "-I" || fail "--showme:compile"
"$bin/mpicc" --showme:link | grep -q -- "$lib" || fail "--showme:link"
"$bin/mpicc" --showme -c x.c | grep -q -- "-c x.c" || fail "--showme"

# pkg-config, under each name (its flags come where the build puts them:
# only the library, named by path, is safe from a foreign -L).
if command -v pkg-config >/dev/null; then
    for pc in ferry mpich mpi; do
        flags=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs $pc)
        # shellcheck disable=SC2086
        cc -o "$tmp/pc" "$tmp/p.c" $flags -L/usr/lib/x86_64-linux-gnu ||
            fail "pkg-config $pc"
        linked_to_ferry "$tmp/pc"
    done
fi

# CMake's FindMPI with Ferry's wrapper.
if command -v cmake >/dev/null; then
    mkdir "$tmp/cm"
    cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(findmpi C)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(p p.c)
target_link_libraries(p PRIVATE MPI::MPI_C)
CM
    cp "$tmp/p.c" "$tmp/cm/p.c"
    cmake -S "$tmp/cm" -B "$tmp/cm/b" -DMPI_C_COMPILER="$bin/mpicc" \
        >"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "FindMPI"; }
    cmake --build "$tmp/cm/b" >>"$tmp/cm.log" 2>&1 ||
        { cat "$tmp/cm.log"; fail "FindMPI build"; }
    linked_to_ferry "$tmp/cm/b/p"
fi
echo "wrappers: OK"
