#!/bin/bash
# lambda_empty_root_test.sh ZIP: the Lambda zip (actionloop_add_lambda's hello) runs from a root
# file system that holds nothing but the zip's files, unpacked at /var/task as Lambda does (no
# /bin/sh, no /lib, no /usr), in its own mount and PID namespaces (unshare) with only /proc
# mounted and /var/task read-only, as on Lambda:
#   - bootstrap finds the task root from LAMBDA_TASK_ROOT, else /proc/self/exe, else argv[0]
#     (no /proc), and starts the proxy through the zip's loader, passing its arguments on
#     (-version);
#   - the chain bootstrap -> loader -> proxy: the proxy's process is the zip's loader with
#     --library-path /var/task/lib, its environment says ACTIONLOOP_LOADER, and
#     LAMBDA_TASK_ROOT, which bootstrap sets when it is not given; it takes an /init
#     of the zip's exec (OpenWhisk mode, which needs no Runtime API) and starts it through the
#     same loader, which answers /run;
#   - bootstrap's failures (no loader, a task root without the zip) are one line and status 127.
# The empty root and how programs run in it: empty_root.sh (needs root; reports a skip
# otherwise).
set -euo pipefail
zip=$(readlink -f "$1")
source "$(dirname "$0")/empty_root.sh"
empty_root_skip_unless_root lambda_empty_root_test.sh
work=$(mktemp -d)
ns_pid=
stop() {
    [ -z "$ns_pid" ] || in_root_stop "$ns_pid"
    ns_pid=
}
trap 'stop; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ ! -f "$work/proxy.log" ] || { echo "proxy log:"; cat "$work/proxy.log"; }; exit 1; }
empty_root_make "$zip"

# bootstrap -version, the task root found each way.
for way in "LAMBDA_TASK_ROOT" "/proc/self/exe" "argv[0]"; do
    case "$way" in
        LAMBDA_TASK_ROOT) got=$(in_root LAMBDA_TASK_ROOT=/var/task -- /var/task/bootstrap -version 2>&1) ;;
        /proc/self/exe) got=$(in_root -- /var/task/bootstrap -version 2>&1) ;;
        "argv[0]") got=$(in_root --no-proc -- /var/task/bootstrap -version 2>&1) ;;
    esac || fail "bootstrap -version (task root from $way) failed: $got"
    [[ $got == "OpenWhisk ActionLoop Proxy v"*" (actionloop-cpp)"* ]] ||
        fail "bootstrap -version (task root from $way) printed: $got"
done
echo "ok: bootstrap -version in the empty root, the task root from LAMBDA_TASK_ROOT, /proc/self/exe and argv[0]"

# The chain: the proxy (OpenWhisk mode on a free port) started by bootstrap through the loader.
port=$(free_port)
in_root OW_WAIT_FOR_ACK=1 -- /var/task/bootstrap -host 127.0.0.1 -port "$port" \
    > "$work/proxy.log" 2>&1 &
ns_pid=$!
for _ in $(seq 200); do curl -s -o /dev/null "127.0.0.1:$port/" && break; sleep 0.05; done
curl -s -o /dev/null "127.0.0.1:$port/" || fail "the proxy did not listen on port $port"
loader=$(cd "$root/var/task/lib" && ls ld-linux*)
proxy_pid=$(pgrep -f -x "/var/task/lib/$loader --library-path /var/task/lib /var/task/bin/proxy -host 127.0.0.1 -port $port") ||
    fail "no process '/var/task/lib/$loader --library-path /var/task/lib /var/task/bin/proxy …': $(ps -eo pid,args | grep var/task || true)"
[ "$(readlink "/proc/$proxy_pid/root")" = "$root" ] || fail "the proxy is not in the empty root"
tr '\0' '\n' < "/proc/$proxy_pid/environ" | grep -qx "ACTIONLOOP_LOADER=/var/task/lib/$loader" ||
    fail "the proxy's environment: $(tr '\0' ' ' < "/proc/$proxy_pid/environ")"
tr '\0' '\n' < "/proc/$proxy_pid/environ" | grep -qx "ACTIONLOOP_LIBRARY_PATH=/var/task/lib" ||
    fail "the proxy's environment: $(tr '\0' ' ' < "/proc/$proxy_pid/environ")"
tr '\0' '\n' < "/proc/$proxy_pid/environ" | grep -qx "LAMBDA_TASK_ROOT=/var/task" ||
    fail "bootstrap did not set LAMBDA_TASK_ROOT: $(tr '\0' ' ' < "/proc/$proxy_pid/environ")"
(cd "$root/var/task" && zip -q "$work/action.zip" exec)
base64 -w0 "$work/action.zip" | jq -Rs '{value:{code:.,binary:true,main:"main"}}' > "$work/init.json"
init=$(curl -s -X POST --data-binary "@$work/init.json" "127.0.0.1:$port/init")
[ "$init" = '{"ok":true}' ] || fail "/init of the zip's exec: $init"
run=$(curl -s -X POST -d '{"value":{"name":"Root"}}' "127.0.0.1:$port/run")
[ "$run" = '{"greeting":"Hello, Root!"}' ] || fail "/run: $run"
action_pid=$(pgrep -P "$proxy_pid") || fail "the proxy has no action process"
action=$(tr '\0' ' ' < "/proc/$action_pid/cmdline")
[ "$action" = "/var/task/lib/$loader --library-path /var/task/lib /action/1/bin/exec " ] ||
    fail "the action was started as: $action"
top=$(cd "$root" && ls -A | tr '\n' ' ')
[ "$top" = "action proc var " ] || fail "the root holds more than the zip, /proc and the proxy's action/: $top"
stop
for _ in $(seq 100); do [ -d "/proc/$action_pid" ] || break; sleep 0.02; done
[ ! -d "/proc/$action_pid" ] || fail "the action outlived its namespace"
echo "ok: bootstrap -> $loader -> bin/proxy in the empty root, which starts exec through $loader: $run"

# bootstrap's own failures: one line, exit status 127.
expect_127() {  # TEXT ENV... -- PROGRAM
    local text=$1 got code
    shift
    set +e
    got=$(in_root "$@" 2>&1)
    code=$?
    set -e
    [ "$code" = 127 ] || fail "exit status $code, not 127: $got"
    [ "$got" = "$text" ] || fail "said '$got', not '$text'"
}
expect_127 "bootstrap: no proxy at /nowhere/bin/proxy: No such file or directory (the task root /nowhere must hold the zip made by lambda-zip, unpacked whole)" \
    LAMBDA_TASK_ROOT=/nowhere -- /var/task/bootstrap -version
mv "$root/var/task/lib/$loader" "$root/var/task/lib/$loader.moved"
expect_127 "bootstrap: cannot start the loader /var/task/lib/$loader: No such file or directory (the zip made by lambda-zip holds it in lib/)" \
    LAMBDA_TASK_ROOT=/var/task -- /var/task/bootstrap -version
echo "ok: bootstrap says why it cannot start, with exit status 127"
