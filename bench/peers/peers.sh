# shellcheck shell=bash
# The peers bench/run measures us against (sourced after lib.sh):
#   nginx   one worker answering POST /run with the hello's JSON from nginx.conf: the HTTP
#           ceiling of the machine, no action behind it
#   go      the upstream Go ActionLoop proxy (apache/openwhisk-runtime-go, built by the user:
#           bench/README.md) at the path in ACTIONLOOP_BENCH_GO_PROXY, running hello_fd3.c.
#           It listens on :8080 (fixed in its main) and has no lock around /run, so it is
#           started afresh for every wrk run and checked after it (crashed, hung or ok).

GO_PORT=8080

# start_nginx PORT DIR: nginx from bench/peers/nginx.conf with every path under DIR, pinned to
# CPU 0 (its one worker inherits the pinning); the master's pid goes to PIDS.
start_nginx() {
    local port=$1 dir=$2
    mkdir -p "$dir/temp"
    sed -e "s|@DIR@|$dir|g; s|@PORT@|$port|g" "$ROOT/bench/peers/nginx.conf" > "$dir/nginx.conf"
    "${SERVER_CPU[@]}" nginx -p "$dir" -c nginx.conf -e error.log > "$dir/stdout" 2>&1 &
    PIDS+=($!)
    wait_port "$port" || { cat "$dir/stdout" "$dir/error.log" >&2 2> /dev/null; return 1; }
}

# port_free PORT: nothing listens on PORT (any address) in this network namespace.
port_free() {
    python3 -c 'import socket, sys; s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("::", int(sys.argv[1])))
except OSError: sys.exit(1)' "$1"
}

# go_skip_reason: why the Go rows cannot run (one line), or nothing when they can.
go_skip_reason() {
    local go=${ACTIONLOOP_BENCH_GO_PROXY:-}
    if [ -z "$go" ]; then
        echo "ACTIONLOOP_BENCH_GO_PROXY not set (bench/README.md: building the Go proxy)"
    elif [ ! -x "$go" ] || [ -d "$go" ]; then
        echo "ACTIONLOOP_BENCH_GO_PROXY=$go is not an executable file"
    elif ! "$go" -version 2> /dev/null | grep -q 'ActionLoop'; then
        echo "ACTIONLOOP_BENCH_GO_PROXY=$go does not answer -version as the ActionLoop proxy"
    elif ! port_free "$GO_PORT"; then
        echo "port $GO_PORT (fixed in the Go proxy) is taken and bench/run could not get a" \
             "private network namespace (unshare -n needs root)"
    fi
}

# start_go DIR ZIP: the Go proxy in DIR (it extracts the action into DIR/action), pinned to
# CPU 0, with the ack asked for as our proxy asks for it; then /init with ZIP. Sets GO_PID.
start_go() {
    local dir=$1 zip=$2
    mkdir -p "$dir"
    (cd "$dir" && exec env OW_WAIT_FOR_ACK=1 "${SERVER_CPU[@]}" "$ACTIONLOOP_BENCH_GO_PROXY" \
        > "$dir/stdout" 2> "$dir/stderr") &
    GO_PID=$!
    PIDS+=("$GO_PID")
    wait_port "$GO_PORT" && init_file "$GO_PORT" "$zip" binary
}

# stop_go: stops the Go proxy started last (and so its action, whose stdin closes) and forgets
# its pid: SIGTERM, and SIGKILL when it is still there 5 s later.
stop_go() {
    local keep=() pid
    kill "$GO_PID" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$GO_PID" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$GO_PID" 2> /dev/null || true
    wait "$GO_PID" 2> /dev/null || true
    for pid in "${PIDS[@]}"; do [ "$pid" = "$GO_PID" ] || keep+=("$pid"); done
    PIDS=("${keep[@]}")
}
