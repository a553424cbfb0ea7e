#!/bin/bash
# install_check.sh BUILD_DIR: `cmake --install` into a fresh prefix, then use that prefix the
# way the image does: compile a C++ action with P/bin/compile (launcher, headers and the
# precompiled header found relative to it), run it through P/bin/proxy, and init the
# shipped P/share/actionloop-cpp/actions/hello.zip.
set -euo pipefail
build=$1
work=$(mktemp -d)
proxy_pid=
cleanup() { [ -n "$proxy_pid" ] && kill "$proxy_pid" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > /dev/null
for f in bin/proxy bin/lambda-api bin/compile lib/libactionloop_launcher.a \
         include/actionloop/action.hpp include/actionloop/entry.hpp \
         lib/actionloop/pch/actionloop/action.hpp.gch share/actionloop-cpp/actions/hello.zip; do
    [ -e "$prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
done
# The derived json.hpp (literal operators declared; cmake/json_literals.cmake), when the build
# made one: compile needs it beside the precompiled header that was built with it.
if [ -e "$build/stage/lib/actionloop/json/nlohmann/json.hpp" ]; then
    [ -e "$prefix/lib/actionloop/json/nlohmann/json.hpp" ] \
        || { echo "missing from the install: lib/actionloop/json/nlohmann/json.hpp"; exit 1; }
fi

cat > "$work/hi.cpp" << 'CPP'
#include <actionloop/action.hpp>
nlohmann::json main(const nlohmann::json& args) {
    return {{"hi", args.value("name", std::string("?"))}};
}
CPP
mkdir -p "$work/a/src" "$work/a/bin"
cp "$work/hi.cpp" "$work/a/src/exec"
out=$(cd "$work/a" && "$prefix/bin/compile" main src bin)
[ -z "$out" ] || { echo "compile printed: $out"; exit 1; }
answer=$(echo '{"value":{"name":"installed"}}' | "$work/a/bin/exec" 3>&1 1> /dev/null)
[ "$answer" = '{"hi":"installed"}' ] || { echo "unexpected answer: $answer"; exit 1; }

# The json literals link from the installed launcher.
mkdir -p "$work/b/src" "$work/b/bin"
cat > "$work/b/src/exec" << 'CPP'
nlohmann::json main(nlohmann::json) {
    return {{"lit", R"({"a": [1]})"_json.at("/a/0"_json_pointer)}};
}
CPP
out=$(cd "$work/b" && "$prefix/bin/compile" main src bin)
[ -z "$out" ] || { echo "compile (literals) printed: $out"; exit 1; }
answer=$(echo '{"value":{}}' | "$work/b/bin/exec" 3>&1 1> /dev/null)
[ "$answer" = '{"lit":1}' ] || { echo "unexpected answer (literals): $answer"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/run"
(cd "$work/run" && exec env OW_WAIT_FOR_ACK=1 "$prefix/bin/proxy" -port "$port" > /dev/null 2>&1) &
proxy_pid=$!
for _ in $(seq 200); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.05; done
base64 -w0 "$prefix/share/actionloop-cpp/actions/hello.zip" | jq -Rs '{value:{code:.,binary:true}}' \
    > "$work/init.json"
init=$(curl -s -X POST --data-binary "@$work/init.json" "127.0.0.1:$port/init")
[ "$init" = '{"ok":true}' ] || { echo "init of hello.zip: $init"; exit 1; }
run=$(curl -s -X POST -d '{"value":{"name":"Mike"}}' "127.0.0.1:$port/run")
[ "$run" = '{"greeting":"Hello, Mike!"}' ] || { echo "run: $run"; exit 1; }
echo "install layout ok: $prefix"
