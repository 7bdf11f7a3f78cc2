#!/bin/bash
# SPDX-License-Identifier: MIT
# Every MPI 4.0 C binding, taken from MPICH 4.0.2's headers (mpi_proto.h
# and mpio.h of Debian's libmpich-dev, one implementation declaring them
# all), must be declared by Ferry's mpi.h (as a function or a macro) and,
# unless mpi.h makes it a macro, defined by libmpi.so.12. MPICH's own
# extensions (MPIX_*) are not MPI; tests/abi/mpi40_excluded.txt lists any
# other name left out on purpose, with the reason. Skips (77) when MPICH's
# headers are not installed.
# Usage: mpi40_names.sh INCLUDEDIR LIBDIR EXCLUDED [MPICH_INCLUDEDIR]
set -euo pipefail
incdir=$1 libdir=$2 excluded=$3
mpich=${4:-/usr/include/x86_64-linux-gnu/mpich}
hdr=$incdir/mpi.h
lib=$libdir/libmpi.so.12
[[ -f $hdr && -f $lib && -f $excluded ]] ||
    { echo "usage: mpi40_names.sh INCLUDEDIR LIBDIR EXCLUDED [MPICH_INCLUDEDIR]" >&2; exit 2; }
if [[ ! -f $mpich/mpi_proto.h ]]; then
    echo "mpi40_names: SKIP: $mpich/mpi_proto.h not found (libmpich-dev)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# MPI 4.0's functions as MPICH 4.0.2 declares them: "int MPI_x(" (and the
# few returning something else) at the start of a line.
grep -hoE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]MPI_[A-Za-z0-9_]+\(' \
    "$mpich/mpi_proto.h" "$mpich/mpio.h" |
    grep -oE 'MPI_[A-Za-z0-9_]+\($' | tr -d '(' | sort -u >"$tmp/mpich"
sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$excluded" | sort -u >"$tmp/excluded"

# Ferry's: FERRY_DECL functions, plain declarations, function-like and
# object-like macros named MPI_x (MPI_Comm_c2f, MPI_DUP_FN, ...).
{
    grep -o '^FERRY_DECL([^,]*, *[A-Za-z0-9_]*' "$hdr" | sed 's/.*, *//; s/^/MPI_/'
    grep -oE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]MPI_[A-Za-z0-9_]+\(' "$hdr" |
        grep -oE 'MPI_[A-Za-z0-9_]+\($' | tr -d '(' || true
    grep -oE '^#define MPI_[A-Za-z0-9_]+' "$hdr" | sed 's/#define //'
} | sort -u >"$tmp/ferry"
grep -oE '^#define MPI_[A-Za-z0-9_]+' "$hdr" | sed 's/#define //' |
    sort -u >"$tmp/macros"
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u >"$tmp/defined"

comm -23 "$tmp/mpich" "$tmp/excluded" >"$tmp/wanted"
undeclared=$(comm -23 "$tmp/wanted" "$tmp/ferry")
# Declared as functions (not macros) but not in the library.
undefined=$(comm -23 "$tmp/wanted" "$tmp/macros" | comm -23 - "$tmp/defined")
stale=$(comm -23 "$tmp/excluded" "$tmp/mpich")
rc=0
if [[ -n $undeclared ]]; then
    echo "mpi40_names: MPI 4.0 names mpi.h does not declare ($(wc -w <<<"$undeclared")):" \
        $undeclared >&2
    rc=1
fi
if [[ -n $undefined ]]; then
    echo "mpi40_names: MPI 4.0 names libmpi.so.12 does not define ($(wc -w <<<"$undefined")):" \
        $undefined >&2
    rc=1
fi
if [[ -n $stale ]]; then
    echo "mpi40_names: excluded names MPICH does not declare:" $stale >&2
    rc=1
fi
((rc == 0)) || exit 1
echo "mpi40_names: OK: $(wc -l <"$tmp/wanted") MPI 4.0 functions of MPICH" \
    "4.0.2 declared and defined ($(wc -l <"$tmp/excluded") excluded)"
