#!/bin/bash
# serve_test.sh SOURCE_DIR BUILD_DIR: scripts/serve as a user runs it, on a copy of the
# scripts with BUILD_DIR installed in its build/prefix (--no-build: the build is CTest's):
# --help lists every option the script parses; a zip given by a path relative to another directory is served; the proxy listens on
# loopback only by default and on every interface with --host 0.0.0.0; --no-action serves a
# proxy that takes a source /init; the default (monitor) prints a batch to try that changes
# none of the README's answers; --config serves monitor with another config (alertgen's); a
# port in use, an option without its value, a proxy that cannot start or an /init that fails
# end with a clear message, no "serving", and no temp dir left behind; so does a build dir
# configured for another source path (a moved clone), before anything is installed or built.
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
mkdir -p "$work/repo" "$work/elsewhere" "$work/tmp"
export TMPDIR=$work/tmp  # where scripts/serve makes its temp dir: empty again after each run
cp -r "$source_dir/scripts" "$work/repo/"
cmake --install "$build" --prefix "$work/repo/build/prefix" > /dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# --help prints the whole usage: every option the script parses is in it.
help=$("$work/repo/scripts/serve" --help) || fail "--help exited with $?"
options=$(sed -n '/^while \[ \$# -gt 0 \]; do$/,/^done$/p' "$work/repo/scripts/serve" |
    grep -oE -- '^ *-[^)]*\)' | grep -oE -- '--?[a-z][a-z-]*' | sort -u)
[ "$(wc -l <<< "$options")" -ge 8 ] || fail "found only these options in scripts/serve: $options"
for option in $options; do
    grep -qE -- "(^|[ ,(])$option([ ,=)]|$)" <<< "$help" || fail "--help does not list $option: $help"
done
# Each (FILE, "SECTION") it points at is a heading or a bold paragraph title of that file.
refs=$(grep -oE '[A-Za-z/]+\.md, "[^"]+"' <<< "$help") || fail "--help points at no section"
while IFS= read -r ref; do
    file=${ref%%,*} section=${ref#*\"}; section=${section%\"}
    grep -qE "^(#+ |\*\*)$section" "$source_dir/$file" || fail "--help points at $ref: not there"
done <<< "$refs"

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
no_temp_left() {  # WHAT
    [ -z "$(ls -A "$work/tmp")" ] || fail "$1: left behind $(ls "$work/tmp")"
}
stop
no_temp_left "scripts/serve stopped (Ctrl-C)"
# ARGS...: scripts/serve must fail at once with status $status and say $want, and nothing else
# that looks like bash's own error (a line number).
refused() {
    local out code=0
    out=$(cd "$work/elsewhere" && timeout 60 ../repo/scripts/serve --no-build "$@" 2>&1) || code=$?
    [ "$code" = "$status" ] || fail "scripts/serve $*: status $code, not $status: $out"
    [[ $out == *"$want"* ]] || fail "scripts/serve $*: no '$want' in: $out"
    if [[ $out == *serving* || $out =~ line\ [0-9]+: ]]; then fail "scripts/serve $*: $out"; fi
    no_temp_left "scripts/serve $*"
}
status=2
for option in --port --host --config; do
    want="$option needs a"
    refused "$option"
    refused "$option" --no-action
    refused "$option="
done
want="--port needs a number from 1 to 65535, not 'eighty'" refused --port eighty
want="--port needs a number from 1 to 65535, not '65536'" refused --port=65536
status=1 want="cannot read the config file no/such.json" refused --config no/such.json
want="one of --no-action, --redis and --sentinel" refused --redis --sentinel
want="one of --no-action, --redis and --sentinel" refused --sentinel --no-action
want="--sentinel serves on PORT and PORT+1: --port below 65535" refused --sentinel --port 65535

# The default action (monitor with the sample config): the batch its banner proposes, then the
# README's first batch, which still gets its Alert (not a duplicate, not suppressed).
serve
banner=$(grep -o "curl -s -d .*/run" "$work/serve.log") || fail "no curl line in the banner"
[[ $banner == *"127.0.0.1:$port/run" ]] || fail "banner: $banner"
answer=$(bash -c "$banner")
[ "$(jq -c '[.notifications[].notifType, .stats.duplicates]' <<< "$answer")" = '["Alert",0]' ] ||
    fail "the banner's batch: $answer"
answer=$(curl -s -d '{"value":{"etags":[
 {"id":"e-1","account":"00001234","device":"100a1b2c","type":"motion","ts":1764460800.125,"region":"door","magnitude":0.8},
 {"id":"e-2","account":"00001234","device":"100a1b2c","type":"status","ts":1764460801.0,"state":"offline"}],
 "now":1764460802.5}}' "127.0.0.1:$port/run")
[ "$(jq -c '[.notifications[] | [.notifType, .alertDelay, .region]], .stats.duplicates, .stats.suppressed' <<< "$answer" | tr -d '\n')" = '[["Alert",2.375,"door"]]00' ] ||
    fail "the README's first batch after the banner's: $answer"

# --config FILE: monitor with a generated config knows the generated devices.
gen=$work/repo/build/prefix/bin/alertgen
"$gen" --devices 50 --config > "$work/elsewhere/generated.json"
"$gen" --devices 50 --minutes 1 --batch 200 --seed 3 > "$work/batches.jsonl"
head -n 1 "$work/batches.jsonl" > "$work/batch.json"
serve --config generated.json
grep -q "initialising monitor.zip with ALERT_CONFIG=$work/elsewhere/generated.json" "$work/serve.log" ||
    fail "--config: the file is not named"
answer=$(printf '{"value":%s}' "$(cat "$work/batch.json")" | curl -s --data-binary @- "127.0.0.1:$port/run")
jq -e '.stats.etags > 0 and .stats.unknown == 0 and .stats.rejected == 0' <<< "$answer" > /dev/null ||
    fail "--config: $(jq -c .stats <<< "$answer")"
stop
no_temp_left "scripts/serve --config stopped"

# A port in use: said before anything starts; what listens there is not spoken to.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
print("listening", flush=True); c, _ = s.accept(); print("spoken to", flush=True)' "$port" \
    > "$work/listener.log" &
listener=$!
for _ in $(seq 100); do grep -q listening "$work/listener.log" && break; sleep 0.05; done
status=1 want="cannot serve on 127.0.0.1:$port: Address already in use" refused --port "$port"
status=1 want="Address already in use" refused --port="$port" --no-action   # the = form too
status=1 want="Address already in use" refused --port "$((port - 1))" --redis
kill "$listener"; wait "$listener" 2> /dev/null || true
! grep -q "spoken to" "$work/listener.log" || fail "scripts/serve connected to the other listener"

# A proxy that cannot start, and an /init that fails: the temp dir goes too.
mkdir -p "$work/broken/build/prefix/bin"
cp -r "$source_dir/scripts" "$work/broken/"
printf '#!/bin/sh\necho "[critical] cannot listen" >&2\nexit 1\n' > "$work/broken/build/prefix/bin/proxy"
chmod +x "$work/broken/build/prefix/bin/proxy"
out=$("$work/broken/scripts/serve" --no-build --port "$port" --no-action 2>&1) && fail "a dead proxy served"
[[ $out == *"the proxy did not start"* ]] || fail "a dead proxy: $out"
no_temp_left "a proxy that did not start"
# A build dir CMake made for another source path (a clone moved or copied with its build/):
# refused before anything is installed or built, with what to do.
mkdir -p "$work/moved/build"
cp -r "$source_dir/scripts" "$work/moved/"
printf '#!/bin/sh\necho "install-deps ran"\n' > "$work/moved/scripts/install-deps"
cp "$build/CMakeCache.txt" "$work/moved/build/"
out=$(cd "$work/elsewhere" && timeout 60 ../moved/scripts/serve --port "$port" --no-action 2>&1) &&
    fail "a moved clone's build dir was used: $out"
want="build/ was configured for the sources in $source_dir, not for this clone ($work/moved)"
[[ $out == *"$want"* && $out == *"\`rm -rf '$work/moved/build'\` and run scripts/serve again"* ]] ||
    fail "a moved clone: $out"
[[ $out != *"install-deps ran"* ]] || fail "a moved clone: install-deps ran first: $out"
no_temp_left "a moved clone"
echo "not a zip" > "$work/elsewhere/bad.zip"
status=1 want="/init answered: {\"error\":" refused --port "$port" bad.zip

echo "ok: scripts/serve --help, a relative zip, loopback by default, --host, --no-action, the" \
     "default banner, --config, refused options, a port in use, failed starts, a moved clone"
