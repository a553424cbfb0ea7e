# Shared helpers for the bench scripts (sourced).
# Server processes are pinned to CPU 0 and wrk to CPU 1 when the machine has two or more
# cores: on a 2-core machine this keeps the load generator from stealing the server's core
# and steadies the figures.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# BENCH_BUILD_DIR: another build dir to reuse (CI points it at scripts/test's build/, whose
# Release objects are the same: only the bench targets are added).
BUILD=${BENCH_BUILD_DIR:-$ROOT/build-bench}
PREFIX=$BUILD/prefix
PIDS=()

if [ "$(nproc)" -ge 2 ]; then SERVER_CPU=(taskset -c 0); LOAD_CPU=(taskset -c 1);
else SERVER_CPU=(); LOAD_CPU=(); fi

# Debian packages the bench scripts need beyond the build's (scripts/install-deps).
BENCH_PACKAGES=(libbenchmark-dev gnuplot-nox time nginx-light liburing-dev)
# Debian packages of the OpenWhisk Node.js runtime that bench/workers measures against, installed
# by bench/peers/build-nodejs when node or npm is missing (never by CI).
NODEJS_PACKAGES=(nodejs npm)

# bench_build: installs what is missing, builds Release into build-bench/ (the benchmarks on)
# and installs to build-bench/prefix. BENCH_SKIP_BUILD=1 skips it (a caller has just built);
# BENCH_WERROR=ON|OFF turns warnings into errors or not (the CI smoke test sets ON).
bench_build() {
    [ "${BENCH_SKIP_BUILD:-0}" = 1 ] && return 0
    "$ROOT/scripts/install-deps"
    local missing=() p
    for p in "${BENCH_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" > /dev/null
    fi
    local werror=()  # unset: keep the cache's value (flipping it rebuilds everything)
    [ -z "${BENCH_WERROR:-}" ] || werror=(-DACTIONLOOP_WARNINGS_AS_ERRORS="$BENCH_WERROR")
    # A fresh build dir builds no tests; an existing one (BENCH_BUILD_DIR=build, the tree
    # scripts/test built) keeps them, so the next scripts/test does not lose its targets.
    local tests=()
    [ -f "$BUILD/CMakeCache.txt" ] || tests=(-DACTIONLOOP_BUILD_TESTS=OFF)
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${tests[@]}" \
          -DACTIONLOOP_BUILD_BENCH=ON "${werror[@]}" > /dev/null
    cmake --build "$BUILD" -j"$(nproc)" > "$BUILD/build.log" 2>&1 \
        || { tail -40 "$BUILD/build.log" >&2; return 1; }
    cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

wait_port() {
    for _ in $(seq 200); do curl -s -o /dev/null "127.0.0.1:$1/" && return 0; sleep 0.05; done
    echo "server on port $1 did not come up" >&2; return 1
}

stop_all() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2> /dev/null || true; done
    PIDS=()
}

# start_proxy PORT DIR [ENV...]: the installed proxy, in DIR, with the compiler and ack.
start_proxy() {
    local port=$1 dir=$2; shift 2
    mkdir -p "$dir"
    (cd "$dir" && exec env OW_COMPILER="$PREFIX/bin/compile" OW_WAIT_FOR_ACK=1 "$@" \
        "${SERVER_CPU[@]}" "$PREFIX/bin/proxy" -port "$port" > "$dir/stdout" 2> "$dir/stderr") &
    PIDS+=($!)
    wait_port "$port"
}

# init_file PORT FILE [binary] [ENV_JSON]: POST /init with FILE as code (base64 when binary),
# ENV_JSON (an object) as the action's env. The body goes through a file: a zip's base64 is
# longer than one argument may be.
init_file() {
    local port=$1 file=$2 env=${4:-null} body answer
    body=$(mktemp)
    if [ "${3:-}" = binary ]; then
        base64 -w0 "$file" | jq -Rs --argjson env "$env" \
            '{value:({code:.,binary:true} + if $env then {env:$env} else {} end)}' > "$body"
    else
        jq -n --rawfile c "$file" --argjson env "$env" \
            '{value:({code:$c} + if $env then {env:$env} else {} end)}' > "$body"
    fi
    answer=$(curl -s -X POST --data-binary "@$body" "127.0.0.1:$port/init")
    rm -f "$body"
    [ "$answer" = '{"ok":true}' ] || { echo "init of $file failed: $answer" >&2; return 1; }
}

median() {
    sort -g | awk '{a[NR] = $1}
        END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2];
             else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# to_us "114.20us" | "1.20ms" | "2.00s" -> microseconds
to_us() {
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000;
                           else if (v ~ /s$/) print n * 1000000; else print n }'
}

rss_kb() { ps -o rss= -p "$1" 2> /dev/null | tr -d ' '; }

# peak_rss_kb PID: the process's peak resident set (VmHWM), 0 when it is gone.
peak_rss_kb() {
    local kb
    kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2> /dev/null || true)
    echo "${kb:-0}"
}

# cpu_ticks PID: the CPU time (user + system, in clock ticks) PID and its descendants have
# used so far (a proxy and its action; nginx's master and worker; 0 when PID is gone). The
# process tree is read once (a walk with ps per process would find its own subshells).
cpu_ticks() {
    local pid total=0 ticks
    for pid in $(ps -e -o pid=,ppid= | awk -v root="$1" '
            {parent[$1] = $2} END {
                for (p in parent) { q = p; while (q != "" && q != 0 && q != root) q = parent[q]
                                    if (q == root) print p } }'); do
        ticks=$(awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$pid/stat" 2> /dev/null) || ticks=0
        total=$((total + ${ticks:-0}))
    done
    echo "$total"
}

# children_peak_rss_kb PID: the summed peak RSS of PID's children (a proxy's action process).
children_peak_rss_kb() {
    local total=0 c
    for c in $(ps -o pid= --ppid "$1" 2> /dev/null); do total=$((total + $(peak_rss_kb "$c"))); done
    echo "$total"
}
