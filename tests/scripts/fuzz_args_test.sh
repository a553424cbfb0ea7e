#!/bin/bash
# fuzz_args_test.sh SOURCE: tests/fuzz/run refuses a bad SECONDS or FUZZ_JOBS before any work
# (exit 2, one line on stderr naming what was given, no build folder made).
set -euo pipefail
source_dir=$1
fail() { echo "FAIL: $*"; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# refused EXPECTED JOBS ARGS...: tests/fuzz/run ARGS with FUZZ_JOBS=JOBS exits 2 with EXPECTED.
refused() {
    local expected=$1 jobs=$2 err rc=0
    shift 2
    FUZZ_JOBS=$jobs FUZZ_BUILD_DIR="$scratch/build" "$source_dir/tests/fuzz/run" "$@" \
        > "$scratch/out" 2> "$scratch/err" < /dev/null || rc=$?
    err=$(cat "$scratch/err")
    [ "$rc" = 2 ] || fail "FUZZ_JOBS='$jobs' tests/fuzz/run $* exits $rc, not 2 (stderr: $err)"
    [ ! -s "$scratch/out" ] || fail "FUZZ_JOBS='$jobs' tests/fuzz/run $* printed: $(cat "$scratch/out")"
    [ "$err" = "$expected" ] || fail "FUZZ_JOBS='$jobs' tests/fuzz/run $*: stderr '$err'"
    [ ! -e "$scratch/build" ] || fail "FUZZ_JOBS='$jobs' tests/fuzz/run $* made the build folder"
}

usage="usage: tests/fuzz/run [SECONDS]"
refused "$usage" 2 abc
refused "$usage" 2 -5
refused "$usage" 2 1.5
for jobs in 0 -1 abc 1000 "2 3" 07; do
    refused "tests/fuzz/run: FUZZ_JOBS must be a number of targets from 1 to 999, not '$jobs'" \
        "$jobs" 1
done
echo "fuzz_args: every bad argument refused before any work"
