#!/bin/bash
# SPDX-License-Identifier: MIT
# ferry-info shows the protocols with each setting's value and where it
# comes from, and --pvars lists the MPI_T performance variables (every
# one named ferry_*, the mailbox counter among them).
# Usage: ferry_info.sh FERRY-INFO
. "$(dirname "$0")/lib.sh"
info=$1
[[ -x $info ]] || mt_fail "usage: ferry_info.sh FERRY-INFO"
out=$(FERRY_BTP=8k FERRY_RECV_WRITE=0 FERRY_PROTO=pushzero "$info") ||
    mt_fail "ferry-info exited $?"
echo "$out" | sed -n '/^Protocols/,$p'
want() { grep -qE -- "$1" <<<"$out" || mt_fail "ferry-info: no line matching '$1'"; }
want '^Protocols '
want '^  eager, mailbox +0 \.\. [0-9]+ B \(FERRY_FASTBOX_MAX, '
want '^  eager, cells +\.\. [0-9]+ B \(FERRY_EAGER_MAX, '
want 'FERRY_PROTO = pushzero \(environment\)'
want '^    FERRY_BTP +8192 B \(environment\)'
want '^    FERRY_BTP1 +[0-9]+ B \(default\)'
want '^    FERRY_PUSH_BUF +[0-9]+ B \(default\)'
want '^  receiver write +off \(FERRY_RECV_WRITE, environment\)'
want '^    FERRY_PUSH_MAX +auto '
# Under auto the push crossover is measured here, or ferry-info says why not.
auto=$("$info") || mt_fail "ferry-info exited $?"
grep -qE '^ +(measured here: [0-9]+ B \(cap [0-9]+ B|not measured: )' <<<"$auto" ||
    mt_fail "ferry-info (defaults): no push crossover line"
want '^    FERRY_RECV_WRITE_MIN +[0-9]+ B \(default\)'
# Lines other tests read stay.
want '^  shared cma copy  '
want '^Thresholds in force:'
# The network channels, and whether the libfabric one can start here.
want '^Network channels to other nodes \(FERRY_NET=auto\):'
want '^  tcp +yes '
want '^  ofi +(yes +libfabric, provider .+|NO +libfabric)$'

pv=$("$info" --pvars) || mt_fail "ferry-info --pvars exited $?"
n=$(grep -c '^  ferry_' <<<"$pv")
(( n >= 4 )) || mt_fail "--pvars lists $n variables"
grep -qE '^MPI_T performance variables \('"$n"'; ' <<<"$pv" ||
    mt_fail "--pvars header does not say $n"
grep -qE '^  ferry_eager_mailbox_msgs +[a-z]' <<<"$pv" ||
    mt_fail "--pvars: no ferry_eager_mailbox_msgs with a description"
echo "ferry_info: OK"
