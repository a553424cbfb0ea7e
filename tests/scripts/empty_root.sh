# empty_root.sh, sourced by the Lambda zip's tests (lambda_empty_root_test.sh,
# lambda_zip_api_test.sh): a root file system that holds nothing but a zip's files, unpacked
# at /var/task as Lambda does (no /bin/sh, no /lib, no /usr), and programs run in it in their
# own mount and PID namespaces with /var/task read-only and only /proc mounted (and /tmp when
# asked for), as on Lambda.
# Needs root (unshare, chroot, mount): as another user the test reports a skip (exit 77; CTest
# shows it as skipped, with the reason in its output). Sets `work` (removed at exit) and `root`.

empty_root_skip_unless_root() {  # TEST_NAME
    if [ "$(id -u)" != 0 ]; then
        echo "SKIPPED: $1 needs root (unshare, chroot, mount); it runs as root in CI"
        exit 77
    fi
    local tool
    for tool in unshare chroot mount curl jq python3; do
        command -v "$tool" > /dev/null || { echo "FAIL: $1 needs $tool"; exit 1; }
    done
}

# empty_root_make ZIP: $root with the zip at var/task and an empty proc/ (its mount point).
empty_root_make() {
    root=$work/root
    mkdir -p "$root/var/task" "$root/proc"
    unzip -q "$1" -d "$root/var/task"
}

# in_root [--no-proc] [--tmp] ENV... -- PROGRAM ARGS...: PROGRAM run in $root with only ENV and
# a PATH as Lambda's (which names nothing there), /var/task read-only, /proc mounted (unless
# --no-proc), and with --tmp a writable /tmp (a tmpfs), as Lambda gives a function. It becomes
# the process (exec): call it in a subshell, `$(in_root …)` or `in_root … &`, whose output and
# exit status are PROGRAM's. That process is unshare, which blocks SIGTERM and SIGINT while it
# waits: in_root_stop PID (SIGKILL) ends it, and with it (--kill-child) PROGRAM and everything
# in its PID namespace.
in_root() {
    local proc=1 tmp=0
    if [ "$1" = --no-proc ]; then proc=0; shift; fi
    if [ "$1" = --tmp ]; then tmp=1; mkdir -p "$root/tmp"; shift; fi
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${env[@]}" \
        unshare --mount --pid --fork --kill-child /bin/sh -c '
            root=$1 proc=$2 tmp=$3; shift 3
            mount --bind "$root/var/task" "$root/var/task"
            mount -o remount,bind,ro "$root/var/task"
            [ "$proc" = 0 ] || mount -t proc proc "$root/proc"
            [ "$tmp" = 0 ] || mount -t tmpfs -o size=64m tmpfs "$root/tmp"
            exec chroot "$root" "$@"' sh "$root" "$proc" "$tmp" "$@"
}

in_root_stop() {  # PID
    kill -KILL "$1" 2> /dev/null || true
    wait "$1" 2> /dev/null || true
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
