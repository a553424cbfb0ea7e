#!/bin/bash
# The soak's crashing action: answers {"ok":true,"n":N} with bash builtins only (fast), and
# exits without answering on every CRASH_EVERY-th activation of a process (from /init's env).
every=${CRASH_EVERY:-50}
n=0
while read -r line
do
    n=$((n + 1))
    if [ $((n % every)) -eq 0 ]
    then exit 3
    fi
    echo "{\"ok\":true,\"n\":$n}" >&3
done
