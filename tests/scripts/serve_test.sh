#!/bin/bash
# serve_test.sh SOURCE_DIR BUILD_DIR: scripts/serve as a user runs it, on a copy of the
# scripts with BUILD_DIR installed in its build/prefix (--no-build: the build is CTest's):
# a zip given by a path relative to another directory is served; the proxy listens on
# loopback only by default and on every interface with --host 0.0.0.0; --no-action serves a
# proxy that takes a source /init.
set -euo pipefail
source_dir=$1 build=$2
work=$(mktemp -d)
serve_pid=
stop() {
    if [ -n "$serve_pid" ]; then
        kill -TERM -- "-$serve_pid" 2> /dev/null || true
        wait "$serve_pid" 2> /dev/null || true
        serve_pid=
    fi
}
trap 'stop; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/serve.log" ] && cat "$work/serve.log"; exit 1; }
mkdir -p "$work/repo" "$work/elsewhere"
cp -r "$source_dir/scripts" "$work/repo/"
cmake --install "$build" --prefix "$work/repo/build/prefix" > /dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

serve() {  # ARGS: starts scripts/serve in the background from $work/elsewhere; waits for it
    stop
    (cd "$work/elsewhere" && exec setsid ../repo/scripts/serve --no-build --port "$port" "$@") \
        > "$work/serve.log" 2>&1 &
    serve_pid=$!
    for _ in $(seq 1200); do
        grep -q "scripts/serve: serving" "$work/serve.log" && return 0
        kill -0 "$serve_pid" 2> /dev/null || fail "scripts/serve $* exited"
        sleep 0.05
    done
    fail "scripts/serve $* did not say 'serving' within 60 s"
}

serve ../repo/build/prefix/share/actionloop-cpp/actions/hello.zip
grep -q "serving hello.zip on http://127.0.0.1:$port" "$work/serve.log" || fail "serving line"
grep -q "starting the proxy on port $port (127.0.0.1 only)" "$work/serve.log" || fail "interface"
answer=$(curl -s -d '{"value":{"name":"Mike"}}' "127.0.0.1:$port/run")
[ "$answer" = '{"greeting":"Hello, Mike!"}' ] || fail "run: $answer"
if curl -s -o /dev/null "127.0.0.2:$port/"; then fail "answers on 127.0.0.2 (not loopback-only)"; fi

serve --host 0.0.0.0 --no-action
grep -q "starting the proxy on port $port (all interfaces)" "$work/serve.log" || fail "all interfaces"
curl -s -o /dev/null "127.0.0.2:$port/" || fail "no answer on 127.0.0.2 with --host 0.0.0.0"
printf 'nlohmann::json main(nlohmann::json) { return {{"ok", 1}}; }\n' > "$work/one.cpp"
init=$(jq -n --rawfile c "$work/one.cpp" '{value:{code:$c}}' |
    curl -s --data-binary @- "127.0.0.1:$port/init")
[ "$init" = '{"ok":true}' ] || fail "init after --no-action: $init"
[ "$(curl -s -d '{"value":{}}' "127.0.0.1:$port/run")" = '{"ok":1}' ] || fail "run after init"

out=$(cd "$work/elsewhere" && ../repo/scripts/serve --no-build no/such.zip 2>&1) && fail "no such zip served"
[[ $out == *"no such file: no/such.zip"* ]] || fail "message for a missing zip: $out"
echo "ok: scripts/serve with a relative zip, loopback by default, --host, --no-action"
