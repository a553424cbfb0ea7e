#!/bin/bash
# alertgen_args_test.sh ALERTGEN: every bad argument of the real alertgen is refused before any
# work, with exit 2 and a message naming the flag, what was given and what is allowed; an
# unknown flag and a missing value are named too; good arguments still work.
set -euo pipefail
alertgen=$1
fail() { echo "FAIL: $*"; exit 1; }

# refused EXPECTED ARGS...: exit 2, nothing on stdout, EXPECTED in the one-line stderr.
refused() {
    local expected=$1 out err rc=0
    shift
    out=$("$alertgen" "$@" 2> /tmp/alertgen_args.$$) || rc=$?
    err=$(cat /tmp/alertgen_args.$$)
    rm -f /tmp/alertgen_args.$$
    [ "$rc" = 2 ] || fail "alertgen $* exits $rc, not 2 (stderr: $err)"
    [ -z "$out" ] || fail "alertgen $* prints on stdout: $out"
    [[ $err == "alertgen: $expected (alertgen --help lists the flags)" ]] ||
        fail "alertgen $*: stderr '$err', expected 'alertgen: $expected …'"
}

refused "--devices: '-5' is not a whole number from 1 to 10000000" --devices -5
refused "--devices: 'abc' is not a whole number from 1 to 10000000" --devices abc
refused "--devices: '0' is not a whole number from 1 to 10000000" --devices 0
refused "--devices: '12x' is not a whole number from 1 to 10000000" --devices=12x
refused "--batch: '0' is not a whole number from 1 to 10000000" --batch 0
refused "--minutes: '-1' is not a whole number from 0 to 1000000" --minutes -1
refused "--accounts: '2000000' is not a whole number from 0 to 1000000" --accounts 2000000
refused "--datacenters: '0' is not a whole number from 1 to 999" --datacenters 0
refused "--rate: '0' is not a whole number from 1 to 10000" --rate 0
refused "--bridge-size: '-2' is not a whole number from 0 to 100000" --bridge-size -2
refused "--seed: '1.5' is not a whole number from 0 to 18446744073709551615" --seed 1.5
refused "--start: 'now' is not a number from 0 to 100000000000" --start now
refused "--reorder: '-1' is not a number from 0 to 3600" --reorder -1
refused "--lag: 'nan' is not a number from 0 to 3600" --lag nan
for f in --motion --flap --outage --slow-flap --bridge-outage --duplicates; do
    refused "$f: '1.5' is not a number from 0 to 1" "$f" 1.5
done
refused "unknown flag '--device'" --device 5
refused "unknown flag 'devices'" devices
refused "--batch needs a value" --devices 10 --batch
refused "--batch needs a value" --batch=
refused "--config takes no value" --config=1
refused "--help takes no value" -hx  # no grouped one-letter flags
# In the order given: the first bad one is named; a repeated flag's last value wins.
refused "--devices: '0' is not a whole number from 1 to 10000000" --devices 0 --nope
[ "$("$alertgen" --devices 1 --devices 100 --minutes 1 --batch 1 | wc -l)" -ge 500 ] ||
    fail "a repeated flag: the last value wins"

"$alertgen" --help | grep -q -- '--devices N        devices (1000; 1..10000000)' ||
    fail "--help does not list --devices with its range"
lines=$("$alertgen" --devices 10 --minutes 1 --batch 50 --seed=3 | wc -l)
[ "$lines" -ge 2 ] || fail "good arguments: $lines batches"
# Read whole before matching: grep -q stops at the first match, and under pipefail the
# generator's SIGPIPE would fail the pipeline when it had more to write.
config=$("$alertgen" --devices 10 --config)
grep -q '"accounts"' <<<"$config" || fail "--config"
echo "alertgen_args: ok"
