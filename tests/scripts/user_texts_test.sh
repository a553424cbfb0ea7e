#!/bin/bash
# user_texts_test.sh SOURCE_DIR: what a user reads or runs (the README, docs/SDK.md, scripts/,
# compile, packaging/, examples/) names no internal issue number ("issue 23"): the reader cannot
# look it up. The help of each script that has one prints its whole first comment block.
set -euo pipefail
cd "$1"
found=$(grep -rniE '\bissue #?[0-9]+' README.md docs/SDK.md scripts compile packaging examples || true)
[ -z "$found" ] || { echo "FAIL: internal issue numbers in user-facing files:"; echo "$found"; exit 1; }
for script in scripts/serve examples/alerts-demo/run packaging/lambda-zip; do
    want=$(sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$script")
    got=$("$script" --help)
    [ "$got" = "$want" ] || { echo "FAIL: $script --help is not its first comment block:"; echo "$got"; exit 1; }
done
echo "ok: no internal issue numbers in user-facing files; --help prints the whole usage"
