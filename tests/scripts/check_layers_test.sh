#!/bin/bash
# check_layers_test.sh SOURCE_DIR: scripts/check-layers passes on the tree; on a copy of proxy/
# with one new upward include (the host's framing including http/'s session), or a proxy
# header included bare instead of from proxy/, it fails and names the file, line and header;
# a file in a folder that is no layer fails too.
set -euo pipefail
source_dir=$1
check=$source_dir/scripts/check-layers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$("$check" "$source_dir" 2>&1) || fail "the tree fails: $out"
[[ $out == *"check-layers: layers respected;"*", 0 upward"* ]] || fail "summary: $out"

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
echo "check_layers_test: ok"
