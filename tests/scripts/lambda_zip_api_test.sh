#!/bin/bash
# lambda_zip_api_test.sh LAMBDA_API ZIP: the Lambda zip end to end, as Lambda runs it. The local
# Runtime API (LAMBDA_API, on a free loopback port) and the zip's bootstrap started in a root
# file system that holds nothing but the zip's files (empty_root.sh: /var/task read-only, /proc
# and a writable /tmp, as on Lambda) with the environment Lambda gives a provided.al2023 function
# (AWS_LAMBDA_RUNTIME_API, LAMBDA_TASK_ROOT, _HANDLER, AWS_LAMBDA_FUNCTION_NAME, …). Invoked
# through the emulator's POST /2015-03-31/functions/function/invocations, as the docs' curl
# does: the hello answers each event, its process is the zip's loader running /var/task/exec,
# and the proxy polls through the same loader. Needs root (reports a skip otherwise).
set -euo pipefail
lambda_api=$1
zip=$(readlink -f "$2")
source "$(dirname "$0")/empty_root.sh"
empty_root_skip_unless_root lambda_zip_api_test.sh
work=$(mktemp -d)
api_pid= ns_pid=
stop() {
    [ -z "$ns_pid" ] || in_root_stop "$ns_pid"
    if [ -n "$api_pid" ]; then
        kill "$api_pid" 2> /dev/null || true
        wait "$api_pid" 2> /dev/null || true
    fi
    ns_pid= api_pid=
}
trap 'stop; rm -rf "$work"' EXIT
fail() {
    echo "FAIL: $*"
    for log in api function; do
        [ ! -f "$work/$log.log" ] || { echo "$log log:"; cat "$work/$log.log"; }
    done
    exit 1
}
empty_root_make "$zip"

port=$(free_port)
"$lambda_api" -host 127.0.0.1 -port "$port" -function-name hello -timeout 10 > "$work/api.log" 2>&1 &
api_pid=$!
for _ in $(seq 200); do
    curl -s -o /dev/null "127.0.0.1:$port/" && break
    kill -0 "$api_pid" 2> /dev/null || fail "lambda-api exited"
    sleep 0.05
done
curl -s -o /dev/null "127.0.0.1:$port/" || fail "lambda-api did not listen on port $port"

in_root --tmp AWS_LAMBDA_RUNTIME_API="127.0.0.1:$port" LAMBDA_TASK_ROOT=/var/task _HANDLER=main \
    AWS_LAMBDA_FUNCTION_NAME=hello AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128 \
    AWS_LAMBDA_FUNCTION_VERSION='$LATEST' AWS_REGION=us-east-1 TZ=:UTC \
    -- /var/task/bootstrap > "$work/function.log" 2>&1 &
ns_pid=$!

invoke() {  # EVENT: the answer's body
    curl -s -m 30 -X POST -d "$1" "127.0.0.1:$port/2015-03-31/functions/function/invocations"
}
answer=$(invoke '{"name":"Lambda"}') || fail "the first invocation got no answer (curl: $?)"
[ "$answer" = '{"greeting":"Hello, Lambda!"}' ] || fail "the first invocation answered: $answer"
answer=$(invoke '{"name":"again"}') || fail "the second invocation got no answer (curl: $?)"
[ "$answer" = '{"greeting":"Hello, again!"}' ] || fail "the second invocation answered: $answer"

loader=$(cd "$root/var/task/lib" && ls ld-linux*)
proxy_pid=$(pgrep -f -x "/var/task/lib/$loader --library-path /var/task/lib /var/task/bin/proxy") ||
    fail "no proxy started by bootstrap through the loader: $(ps -eo pid,args | grep var/task || true)"
[ "$(readlink "/proc/$proxy_pid/root")" = "$root" ] || fail "the proxy is not in the empty root"
action_pid=$(pgrep -P "$proxy_pid" | head -n1) || fail "the proxy has no action process"
action=$(tr '\0' ' ' < "/proc/$action_pid/cmdline")
[ "$action" = "/var/task/lib/$loader --library-path /var/task/lib /var/task/exec " ] ||
    fail "the action was started as: $action"
stop
echo "ok: the zip's bootstrap in an empty root served two invocations of lambda-api; the action ran as $action"
