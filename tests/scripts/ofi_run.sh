#!/bin/bash
# SPDX-License-Identifier: MIT
# Run a test of the libfabric channel (FERRY_NET=ofi) only where it can
# work: ferry-info probes it with the job's FERRY_OFI_PROVIDER; where
# libfabric, its headers at build time or the provider are missing, the
# test is skipped (exit 77) with ferry-info's reason.
# Usage: ofi_run.sh FERRY-INFO COMMAND [ARGS...]
info=$1
shift
[[ -x $info && $# -gt 0 ]] || { echo "usage: ofi_run.sh FERRY-INFO COMMAND [ARGS...]" >&2; exit 2; }
out=$("$info" 2>&1 | sed -n '/^Network channels/,/^$/p')
if ! grep -qE '^  ofi +yes ' <<<"$out"; then
    echo "SKIP: the ofi channel cannot start here:"
    grep -A1 '^  ofi ' <<<"$out"
    exit 77
fi
exec "$@"
