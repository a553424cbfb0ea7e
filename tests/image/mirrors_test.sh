#!/bin/bash
# tests/image/run takes its Debian mirrors only from the machine's apt configuration: with
# none it fails and says what to add; with one (one-line or deb822) it uses exactly that.
set -euo pipefail
run=$(dirname "$0")/run
etc=$(mktemp -d)
trap 'rm -rf "$etc"' EXIT
mkdir -p "$etc/sources.list.d"
fail() { echo "FAIL: $*"; exit 1; }

if out=$(ACTIONLOOP_APT_ETC=$etc "$run" --mirrors 2>&1); then fail "no sources, yet: $out"; fi
[[ $out == *"no Debian mirror for 'debian' in this machine's apt sources"* ]] || fail "message: $out"
# No host of its own: with nothing configured, the only URL it names is the placeholder.
urls=$(grep -o '[a-z]*://[^ /]*' <<< "$out" | sort -u)
[ "$urls" = "http://MIRROR" ] || fail "a fallback host: $urls in $out"

echo "deb [arch=amd64] http://mirror.example/debian bookworm main" > "$etc/sources.list"
if out=$(ACTIONLOOP_APT_ETC=$etc "$run" --mirrors 2>&1); then fail "no security source, yet: $out"; fi
[[ $out == *"no Debian mirror for 'debian-security'"* ]] || fail "message: $out"

printf 'Types: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n' \
    > "$etc/sources.list.d/debian.sources"
out=$(ACTIONLOOP_APT_ETC=$etc "$run" --mirrors)
[ "$out" = $'http://mirror.example/debian\nhttp://security.example/debian-security' ] ||
    fail "mirrors: $out"
echo "ok: no mirror is an error; the configured mirrors are used as they are"
