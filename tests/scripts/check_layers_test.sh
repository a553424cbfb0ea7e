#!/bin/bash
# check_layers_test.sh SOURCE_DIR: scripts/check-layers passes on the tree; on a copy of proxy/
# with one new upward include (the host's framing including http/'s session), or a proxy
# header included bare instead of from proxy/, it fails and names the file, line and header;
# a file in a folder that is no layer fails too; and the same for the second house,
# actions/alerts (its core including the Redis store, a "../core/" include, alertgw's ledger
# including a transport); and between houses: the proxy and the alerts may include common/
# (the library both link), never each other, and common/ includes neither.
set -euo pipefail
source_dir=$1
check=$source_dir/scripts/check-layers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$check" "$source_dir" 2>&1) || fail "the tree fails: $out"
[[ $out == *"check-layers: layers respected; proxy: "*"; actions/alerts: "*"; 0 upward"* ]] || fail "summary: $out"

cp -r "$source_dir/proxy" "$work/"
"$check" "$work" > /dev/null 2>&1 || fail "the copy fails before any change"
sed -i '1i #include "http/session.hpp"' "$work/proxy/engine/framing.cpp"
if out=$("$check" "$work" 2>&1); then fail "a new upward include passes: $out"; fi
[[ $out == *'proxy/engine/framing.cpp:1: upward include: action layer includes http/session.hpp (http layer)'* ]] \
    || fail "message: $out"
[ "$(grep -c 'upward include' <<< "$out")" = 1 ] || fail "more than the new edge: $out"

rm -rf "$work/proxy" && cp -r "$source_dir/proxy" "$work/"
sed -i '1i #include "process.hpp"' "$work/proxy/engine/reaper.cpp"
if out=$("$check" "$work" 2>&1); then fail "a bare include passes: $out"; fi
[[ $out == *'proxy/engine/reaper.cpp:1: "process.hpp" is not written from proxy/: "engine/process.hpp"'* ]] \
    || fail "message: $out"
# A folder the layers do not name: its files belong nowhere, so nothing can be checked.
rm -rf "$work/proxy" && cp -r "$source_dir/proxy" "$work/"
mkdir "$work/proxy/misc" && echo '#pragma once' > "$work/proxy/misc/extra.hpp"
if out=$("$check" "$work" 2>&1); then fail "a file in no layer passes: $out"; fi
[[ $out == *'proxy/misc/extra.hpp: in no layer'* ]] || fail "message: $out"
# The alert pipeline's house: its pure core including the Redis store is an upward include,
# and a "../core/..." include is not written from actions/alerts/.
rm -rf "$work/proxy" && cp -r "$source_dir/proxy" "$work/"
mkdir -p "$work/actions" && cp -r "$source_dir/actions/alerts" "$work/actions/"
"$check" "$work" > /dev/null 2>&1 || fail "the copy with actions/alerts fails before any change"
sed -i '1i #include "redis/redis_store.hpp"' "$work/actions/alerts/core/types.cpp"
sed -i '1i #include "../core/hash.hpp"' "$work/actions/alerts/redis/redis_records.cpp"
if out=$("$check" "$work" 2>&1); then fail "an upward include in actions/alerts passes: $out"; fi
[[ $out == *'actions/alerts/core/types.cpp:1: upward include: core layer includes redis/redis_store.hpp (redis layer)'* ]] \
    || fail "message: $out"
[[ $out == *'actions/alerts/redis/redis_records.cpp:1: "../core/hash.hpp" is not written from actions/alerts/: "core/hash.hpp"'* ]] \
    || fail "message: $out"
# alertgw's pure ledger including its libcurl transport is upward too.
rm -rf "$work/actions/alerts" && cp -r "$source_dir/actions/alerts" "$work/actions/"
sed -i '1i #include "gateway/transport/curl_transport.hpp"' \
    "$work/actions/alerts/gateway/ledger/delivery_ledger.cpp"
if out=$("$check" "$work" 2>&1); then fail "the ledger including a transport passes: $out"; fi
[[ $out == *'actions/alerts/gateway/ledger/delivery_ledger.cpp:1: upward include: gw-core layer includes gateway/transport/curl_transport.hpp (gw-io layer)'* ]] \
    || fail "message: $out"
# Between houses: alertgw including a proxy header (it links no proxy), common/ including a
# proxy or an alerts header; the proxy and alertgw including common/'s listener pass (the tree).
rm -rf "$work/actions/alerts" && cp -r "$source_dir/actions/alerts" "$work/actions/"
cp -r "$source_dir/common" "$work/"
"$check" "$work" > /dev/null 2>&1 || fail "the copy with common/ fails before any change"
sed -i '1i #include "ops/metrics.hpp"' "$work/actions/alerts/gateway/gateway_run.cpp"
sed -i '1i #include "logging.hpp"' "$work/common/metrics/metrics_server.cpp"
sed -i '1i #include "core/log_text.hpp"' "$work/common/metrics/metrics_server.hpp"
if out=$("$check" "$work" 2>&1); then fail "includes between houses pass: $out"; fi
[[ $out == *'actions/alerts/gateway/gateway_run.cpp:1: includes ops/metrics.hpp of proxy/, which actions/alerts/ may not (it may include common/)'* ]] \
    || fail "message: $out"
[[ $out == *'common/metrics/metrics_server.cpp:1: includes logging.hpp of proxy/, which common/ may not (it may include no other house)'* ]] \
    || fail "message: $out"
[[ $out == *'common/metrics/metrics_server.hpp:1: includes core/log_text.hpp of actions/alerts/, which common/ may not (it may include no other house)'* ]] \
    || fail "message: $out"
echo "check_layers_test: ok"
