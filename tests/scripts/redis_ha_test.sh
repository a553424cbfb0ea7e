#!/bin/bash
# redis_ha_test.sh SOURCE_DIR: scripts/redis-ha failover may be repeated: each one brings the
# killed primary back as a replica, so after three in a row the primary still has its replica
# and takes writes. With --keep-down, the primary left without a replica refuses writes
# (NOREPLICAS) and the script says so; `revive` makes it whole again. (One replica, so a
# single kept-down failover leaves none: the fastest topology that shows both.)
set -euo pipefail
ha=$1/scripts/redis-ha
work=$(mktemp -d)
trap '"$ha" stop "$work/ha" 2> /dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; for f in "$work"/ha/*.log; do echo "== $f"; tail -5 "$f"; done; exit 1; }

# write N: a SET on the named primary; prints Redis's answer.
write() {
    local p
    p=$("$ha" primary "$work/ha")
    redis-cli -h "${p%:*}" -p "${p#*:}" SET redis-ha-test "$1" 2>&1
}
replicas() {
    local p
    p=$("$ha" primary "$work/ha")
    redis-cli -h "${p%:*}" -p "${p#*:}" INFO replication | tr -d '\r' |
        sed -n 's/^connected_slaves://p'
}

"$ha" start "$work/ha" --replicas 1 > /dev/null || fail "start"
[ "$(write 0)" = OK ] || fail "the first write: $(write 0)"
for i in 1 2 3; do
    # The README passes DIR relative to the clone (build/sentinel): so does the second one.
    if [ "$i" = 2 ]; then
        out=$(cd "$work" && "$ha" failover ha 2>&1) || fail "failover $i (relative DIR): $out"
    else
        out=$("$ha" failover "$work/ha" 2>&1) || fail "failover $i: $out"
    fi
    [[ $out == *"the sentinels promoted 127.0.0.1:"* ]] || fail "failover $i says: $out"
    [[ $out == *"back as a replica of 127.0.0.1:"* ]] || fail "failover $i revives nothing: $out"
    [ "$(replicas)" = 1 ] || fail "after failover $i, $(replicas) replicas"
    answer=$(write "$i")
    [ "$answer" = OK ] || fail "a write after failover $i: $answer"
done

out=$("$ha" failover "$work/ha" --keep-down 2>&1) || fail "failover --keep-down: $out"
[[ $out == *"no replica left: the primary refuses every write (NOREPLICAS, min-replicas-to-write 1) until \`scripts/redis-ha revive "* ]] ||
    fail "failover --keep-down says: $out"
answer=$(write 4)
[[ $answer == NOREPLICAS* ]] || fail "a write with no replica left: $answer"
out=$("$ha" revive "$work/ha" 2>&1) || fail "revive: $out"
[[ $out == *"back as a replica of 127.0.0.1:"* ]] || fail "revive says: $out"
[ "$(write 5)" = OK ] || fail "a write after revive: $(write 5)"
echo "redis_ha: ok"
