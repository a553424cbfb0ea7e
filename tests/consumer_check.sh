#!/bin/bash
# consumer_check.sh BUILD_DIR SOURCE_DIR: the installed CMake package builds an action.
# `cmake --install` into a fresh prefix; configure and build examples/hello against it alone
# (find_package(actionloop CONFIG REQUIRED) + actionloop_add_action); then /init its hello.zip
# into the installed proxy and check the answer over HTTP.
set -euo pipefail
build=$1
source_dir=$2
work=$(mktemp -d)
proxy_pid=
cleanup() {
    if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > /dev/null
for f in lib/cmake/actionloop/actionloop-config.cmake \
         lib/cmake/actionloop/actionloop-config-version.cmake \
         lib/cmake/actionloop/actionloop-targets.cmake lib/cmake/actionloop/actionloop-action.cmake; do
    [ -e "$prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
done

# The example's own build: nothing from this repository but the installed prefix.
cp -r "$source_dir/examples/hello" "$work/hello"
if ! out=$(cmake -S "$work/hello" -B "$work/hello-build" -DCMAKE_PREFIX_PATH="$prefix" \
               -DCMAKE_BUILD_TYPE=Release 2>&1); then
    echo "configuring examples/hello failed:"; echo "$out"; exit 1
fi
if ! out=$(cmake --build "$work/hello-build" 2>&1); then
    echo "building examples/hello failed:"; echo "$out"; exit 1
fi
zip=$work/hello-build/hello.zip
[ -f "$zip" ] || { echo "examples/hello made no hello.zip"; exit 1; }
entries=$(python3 -c 'import sys, zipfile; print(" ".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$zip")
[ "$entries" = "exec" ] || { echo "hello.zip holds '$entries', expected one top-level exec"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/run"
(cd "$work/run" && exec env OW_WAIT_FOR_ACK=1 "$prefix/bin/proxy" -port "$port" > /dev/null 2>&1) &
proxy_pid=$!
up=0
for _ in $(seq 200); do
    if curl -s -o /dev/null "127.0.0.1:$port/"; then up=1; break; fi
    sleep 0.05
done
[ $up = 1 ] || { echo "the installed proxy did not listen on port $port"; exit 1; }
base64 -w0 "$zip" | jq -Rs '{value:{code:.,binary:true}}' > "$work/init.json"
init=$(curl -s -X POST --data-binary "@$work/init.json" "127.0.0.1:$port/init")
[ "$init" = '{"ok":true}' ] || { echo "init of examples/hello's hello.zip: $init"; exit 1; }
run=$(curl -s -X POST -d '{"value":{"name":"Mike"},"activation_id":"a1"}' "127.0.0.1:$port/run")
[ "$run" = '{"activation":"a1","greeting":"Hello, Mike!"}' ] || { echo "run: $run"; exit 1; }
echo "consumer build ok: examples/hello against $prefix"
