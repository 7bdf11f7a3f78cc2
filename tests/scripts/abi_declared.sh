#!/bin/bash
# SPDX-License-Identifier: MIT
# Nothing declared that is not defined: compile a program that takes the
# address of every function (MPI_x and PMPI_x) and object include/mpi.h
# declares, and link it against libmpi.so.12. The names in PENDING (work in
# progress elsewhere) are left out; each must still be undefined, so the
# list cannot go stale.
# Usage: abi_declared.sh INCLUDEDIR LIBDIR PENDING [CC]
set -euo pipefail
incdir=$1 libdir=$2 pending=$3 cc=${4:-cc}
hdr=$incdir/mpi.h
lib=$libdir/libmpi.so.12
[[ -f $hdr && -f $lib && -f $pending ]] ||
    { echo "usage: abi_declared.sh INCLUDEDIR LIBDIR PENDING [CC]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared names: functions through FERRY_DECL (both MPI_ and PMPI_),
# plus plain declarations of functions and objects (MPIR_Dup_fn,
# MPI_UNWEIGHTED, ...).
{
    grep -o '^FERRY_DECL([^,]*, *[A-Za-z0-9_]*' "$hdr" |
        sed 's/.*, *//' | while read -r n; do echo "MPI_$n"; echo "PMPI_$n"; done
    grep -E '^(extern |int )[^(]*\b(P?MPIR?_[A-Za-z0-9_]+)( *\(|;)' "$hdr" |
        grep -oE '\bP?MPIR?_[A-Za-z0-9_]+( *\(|;)' | tr -d '(; '
} | sort -u >"$tmp/declared"
sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$pending" |
    while read -r n; do echo "MPI_$n"; echo "PMPI_$n"; done |
    sort -u >"$tmp/pending"

bad=$(comm -13 "$tmp/declared" "$tmp/pending")
if [[ -n $bad ]]; then
    echo "abi_declared: pending names mpi.h does not declare:" $bad >&2
    exit 1
fi
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u >"$tmp/defined"
done_now=$(comm -12 "$tmp/pending" "$tmp/defined")
if [[ -n $done_now ]]; then
    echo "abi_declared: now defined, remove from $pending:" $done_now >&2
    exit 1
fi

comm -23 "$tmp/declared" "$tmp/pending" >"$tmp/checked"
{
    echo '#include <mpi.h>'
    echo '#include <stdio.h>'
    echo 'static const void *const refs[] = {'
    sed 's/.*/    (const void *)\&&,/' "$tmp/checked"
    echo '};'
    echo 'int main(void)'
    echo '{'
    echo '    unsigned long n = 0;'
    echo '    for (unsigned long i = 0; i < sizeof(refs) / sizeof(refs[0]); i++)'
    echo '        n += refs[i] != NULL;'
    echo '    printf("%lu\n", n);'
    echo '    return 0;'
    echo '}'
} >"$tmp/refs.c"
if ! "$cc" -w -I"$incdir" -o "$tmp/refs" "$tmp/refs.c" "$lib" \
        -Wl,-rpath,"$libdir" 2>"$tmp/log"; then
    grep -oE "undefined reference to \`[^']*'" "$tmp/log" | sort -u >&2 ||
        cat "$tmp/log" >&2
    echo "abi_declared: FAIL: mpi.h declares names libmpi.so.12 lacks" >&2
    exit 1
fi
n=$("$tmp/refs")
total=$(wc -l <"$tmp/checked")
[[ $n == "$total" ]] || { echo "abi_declared: $n of $total resolved" >&2; exit 1; }
echo "abi_declared: OK: $total declared names defined," \
    "$(wc -l <"$tmp/pending") pending (tests/abi/pending.txt)"
