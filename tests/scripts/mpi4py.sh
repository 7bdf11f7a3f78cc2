#!/bin/bash
# SPDX-License-Identifier: MIT
# mpi4py as a real client: build mpi4py from its PyPI sdist with Debian's
# python3 and Ferry's mpicc in a virtual environment cached outside the
# repository (keyed by the mpi4py version, mpi.h and the names libmpi.so.12
# exports, so a library change that adds or removes calls rebuilds it),
# check that the extension links Ferry's libmpi, then run mpi4py's suite at
# 1 and 2 ranks through Ferry's mpiexec. Tests listed in
# tests/mpi4py/known_failures.txt (each with its reason) are skipped.
# Exit 77 (skip) when neither a cached build nor PyPI is available.
# Usage: mpi4py.sh SRCDIR BUILDDIR
# Environment: FERRY_MPI4PY_VERSION (default 4.1.2), FERRY_MPI4PY_CACHE
# (default ~/.cache/ferry-mpi4py), FERRY_MPI4PY_NPS (default "1 2"),
# FERRY_SKIP_MPI4PY=1 skips the test.
set -euo pipefail
src=$(cd "$1" && pwd -P)
build=$(cd "$2" && pwd -P)
version=${FERRY_MPI4PY_VERSION:-4.1.2}
cache=${FERRY_MPI4PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry-mpi4py}
nps=${FERRY_MPI4PY_NPS:-1 2}
py=/usr/bin/python3
lib=$build/lib
skip() { echo "mpi4py: SKIP: $*"; exit 77; }
fail() { echo "mpi4py: FAIL: $*" >&2; exit 1; }

[[ ${FERRY_SKIP_MPI4PY:-0} == 0 ]] || skip "FERRY_SKIP_MPI4PY is set"
[[ -x $py ]] || skip "no Debian python3 at $py"
"$py" -c 'import venv, sysconfig, os; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' \
    2>/dev/null || skip "python3-venv or python3-dev missing"

key=$( {
    echo "$version"
    cat "$src/include/mpi.h"
    nm -D --defined-only "$lib/libmpi.so.12" | awk '{ print $3 }' | sort
} | sha256sum | cut -c1-16)
dir=$cache/$version-$key
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time (parallel ctest, several worktrees)

if [[ ! -f $dir/ok ]]; then
    echo "mpi4py: building mpi4py $version into $dir"
    t0=$SECONDS
    rm -rf "$dir"
    mkdir -p "$dir"
    "$py" -m venv "$dir/venv"
    # Short network timeouts: without PyPI the test skips in seconds rather
    # than after pip's retries. No pip cache: a wheel built against another
    # mpi.h must never be reused.
    pip="$dir/venv/bin/pip --disable-pip-version-check -q --no-cache-dir --timeout 30 --retries 2"
    # Build requirements first (binary wheels), so that fetching the sdist
    # below needs no build of its own requirements from source.
    $pip install wheel setuptools 'Cython>=3.0.1' >"$dir/deps.log" 2>&1 ||
        { tail -5 "$dir/deps.log"; rm -rf "$dir"; skip "cannot install mpi4py's build requirements from PyPI (no network?)"; }
    if ! $pip download --no-deps --no-binary mpi4py --no-build-isolation \
            "mpi4py==$version" -d "$dir/sdist" >"$dir/download.log" 2>&1; then
        tail -5 "$dir/download.log"
        rm -rf "$dir"
        skip "cannot download mpi4py $version from PyPI (no network?)"
    fi
    echo "mpi4py: requirements and sdist in $((SECONDS - t0)) s"
    # Ferry's own mpicc, whatever MPI the system has besides. -O0: the
    # generated MPI.c is large and the suite tests Ferry, not mpi4py's speed.
    if ! MPICC=$build/bin/mpicc CFLAGS=-O0 $pip install --no-build-isolation \
            -v "$dir/sdist/mpi4py-$version.tar.gz" >"$dir/build.log" 2>&1; then
        tail -30 "$dir/build.log" >&2
        fail "mpi4py does not build against Ferry (log: $dir/build.log)"
    fi
    tar xzf "$dir/sdist/mpi4py-$version.tar.gz" -C "$dir" "mpi4py-$version/test"
    touch "$dir/ok"
    echo "mpi4py: built in $((SECONDS - t0)) s"
fi

export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ext=$("$dir/venv/bin/python" -c 'import mpi4py.MPI as m; print(m.__file__)' \
    2>&1) || fail "import mpi4py.MPI: $ext"
resolved=$(ldd "$ext" | awk '$1 ~ /^libmpi/ { print $3 }')
[[ $(readlink -f "$resolved") == "$lib"/* ]] ||
    fail "mpi4py's extension links '$resolved', not Ferry's $lib"
echo "mpi4py: $ext -> $resolved"

# known_failures.txt: a line naming a test module (test/<name>.py) excludes
# the whole module (main.py -e; some fail at import), any other line is a
# pattern for test ids (main.py --xfile).
testdir=$dir/mpi4py-$version/test
xfile=$(mktemp)
trap 'rm -f "$xfile"' EXIT
excl=()
while read -r name; do
    if [[ -f $testdir/$name.py ]]; then
        excl+=(-e "^$name\.py\$")
    else
        echo "$name" >>"$xfile"
    fi
done < <(sed 's/#.*//; s/[[:space:]]*$//; /^$/d' "$src/tests/mpi4py/known_failures.txt")
status=0
for np in $nps; do
    log=$dir/test.np$np.log
    set +e
    (cd "$testdir" &&
        "$build/bin/mpiexec" --timeout 300 -n "$np" "$dir/venv/bin/python" \
            main.py -v --no-builddir --xfile "$xfile" "${excl[@]}" >"$log" 2>&1)
    rc=$?
    set -e
    summary=$(grep -E '^(Ran|OK|FAILED)' "$log" | sort -u | tr '\n' ' ')
    echo "mpi4py: np=$np exit=$rc: $summary(log: $log)"
    if [[ $rc != 0 ]]; then
        grep -E '^(FAIL|ERROR):| \.\.\. (FAIL|ERROR)$' "$log" | sort -u | head -40 >&2
        status=1
    fi
done
[[ $status == 0 ]] || fail "mpi4py's suite failed (see above)"
echo "mpi4py: OK"
