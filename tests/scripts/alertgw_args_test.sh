#!/bin/bash
# alertgw_args_test.sh ALERTGW: the real alertgw's command line, without Redis or a target: a
# bad flag or value is refused with exit 2 and a message naming the flag (never a webhook's
# URL, which may hold a token); both spellings of a value (--flag VALUE, --flag=VALUE) and the
# order of the flags are kept.
set -euo pipefail
alertgw=$1
fail() { echo "FAIL: $*"; exit 1; }
export ALERT_REDIS_URL=redis://127.0.0.1:1  # read after the flags; nothing listens there

# refused EXPECTED ARGS...: exit 2, nothing on stdout, EXPECTED as stderr's first line.
refused() {
    local expected=$1 out err rc=0
    shift
    out=$("$alertgw" "$@" 2> /tmp/alertgw_args.$$) || rc=$?
    err=$(cat /tmp/alertgw_args.$$)
    rm -f /tmp/alertgw_args.$$
    [ "$rc" = 2 ] || fail "alertgw $* exits $rc, not 2 (stderr: $err)"
    [ -z "$out" ] || fail "alertgw $* prints on stdout: $out"
    [[ $err == "alertgw: $expected"$'\n'"(alertgw --help lists the flags)" ]] ||
        fail "alertgw $*: stderr '$err', expected 'alertgw: $expected'"
}

refused "unknown flag '--nope'" --nope 1
refused "unknown flag '--webhok'" --webhok=http://x/hook?token=SECRET
refused "unknown flag 'stray'" stray
refused "--timeout needs a value" --webhook http://x/ --timeout
refused "--timeout needs a value" --webhook http://x/ --timeout=
refused "--smtp-require-tls takes no value" --smtp-require-tls=yes
refused "--timeout: 'soon' is not a number from 0.010000 to 3600.000000" --timeout=soon
refused "--max-attempts: '0' is not a number from 1.000000 to 1000.000000" --max-attempts 0
refused "--window: '1.5' is not a whole number" --window 1.5
refused "--webhook: not a URL starting with http://, https://" --webhook=ftp://x/?token=SECRET
refused "--from: 'nobody' is not an e-mail address" --from nobody
# In the order given: --webhook-auth-file names a webhook given before it.
refused "--webhook-auth-file: no webhook named 'ops' (give --webhook first)" \
    --webhook-auth-file ops=/dev/null --webhook ops=http://x/
refused "nothing to deliver to: give --smtp and/or --webhook" --timeout 5
refused "--smtp-require-tls needs --smtp" --webhook http://x/ --smtp-require-tls
# The replicas that must confirm what is read (the actions' variables, read the same way).
ALERT_REDIS_MIN_REPLICAS=two refused \
    "ALERT_REDIS_MIN_REPLICAS: 'two' is not a number from 0.000000 to 100.000000" --webhook http://x/
ALERT_REDIS_WAIT_MS=0.5 refused "ALERT_REDIS_WAIT_MS: '0.5' is not a number from 1.000000 to 600000.000000" \
    --webhook http://x/

for help in -h --help; do
    text=$("$alertgw" "$help")
    [[ $text == *"--webhook [NAME=]URL"* ]] || fail "$help does not list --webhook"
done
echo "alertgw_args: ok"
