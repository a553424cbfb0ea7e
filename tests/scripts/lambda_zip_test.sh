#!/bin/bash
# lambda_zip_test.sh LAMBDA_ZIP BUILT_ZIP FIXTURES: the Lambda deployment zip (packaging/,
# docs/LAMBDA.md). LAMBDA_ZIP (the staged lambda-zip) packages the hello fixture;
# its zip and BUILT_ZIP (the same hello by actionloop_add_lambda, tests/CMakeLists.txt) each
# hold exactly bootstrap, bin/proxy, exec, the loader and the libraries ldd names for the proxy
# and exec, and the packages' copyright files, with the modes Lambda needs: bootstrap static and
# executable, the proxy stripped, exec keeping its symbols (its crash backtraces), the loader
# executable, the libraries not. Then what a user gets wrong: a compile error, a reserved name
# at the action's top, bad arguments; a #! script action; the zip on stdout from stdin.
set -euo pipefail
lambda_zip=$1 built_zip=$2 fixtures=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work"

# "NAME MODE" of each file entry of a zip (directories left out), sorted.
entries() {
    python3 -c '
import sys, zipfile
for info in zipfile.ZipFile(sys.argv[1]).infolist():
    if not info.is_dir():
        print(info.filename, oct((info.external_attr >> 16) & 0o7777)[2:])
' "$1" | sort
}

# The libraries ldd names for FILE (what NAME => PATH lines give as NAME), and its loader.
ldd_names() {
    ldd "$1" | sed -n -E 's/^[[:space:]]*([^[:space:]]+) => \/.*/\1/p; s/^[[:space:]]*(\/[^[:space:]]+) \(0x.*/\1/p' |
        sed 's|.*/||'
}

# The whole check of one hello zip: ZIP WHERE (WHERE names it in messages).
check_hello_zip() {
    local zip=$1 where=$2 listing expected got
    listing=$(entries "$zip")
    rm -rf unpacked && mkdir unpacked && unzip -q "$zip" -d unpacked
    # The libraries: ldd's names for the proxy (the staged one, unstripped: the same libraries)
    # and for the packaged exec, and nothing else.
    expected=$( (ldd_names "$(dirname "$lambda_zip")/proxy"; ldd_names unpacked/exec) | sort -u |
        sed 's|^|lib/|')
    got=$(grep '^lib/' <<< "$listing" | cut -d' ' -f1)
    [ "$got" = "$expected" ] || fail "$where: lib/ holds
$got
and ldd names
$expected"
    for lib in lib/libc.so.6 lib/libstdc++.so.6 lib/libm.so.6 lib/libgcc_s.so.1; do
        grep -q "^$lib " <<< "$listing" || fail "$where: no $lib"
    done
    loader=$(grep -E '^lib/ld-linux[^ ]* ' <<< "$listing" | cut -d' ' -f1)
    [ -n "$loader" ] || fail "$where: no loader (lib/ld-linux*) in: $listing"
    # The modes.
    for executable in bootstrap bin/proxy exec "$loader"; do
        grep -qx "$executable 755" <<< "$listing" || fail "$where: $executable is not 755: $listing"
    done
    got=$(grep '^lib/' <<< "$listing" | grep -v "^$loader " | grep -v ' 644$' || true)
    [ -z "$got" ] || fail "$where: libraries not 644: $got"
    # Only these at the top (exec.env with an EXEC_ENV), and copyright files in share/doc/.
    got=$(cut -d' ' -f1 <<< "$listing" | grep -v -E '^(bootstrap|bin/proxy|exec|exec.env|lib/[^/]+|share/doc/[^/]+/copyright)$' || true)
    [ -z "$got" ] || fail "$where: unexpected entries: $got"
    grep -q '^share/doc/libc6/copyright ' <<< "$listing" || fail "$where: no copyright file of libc6"
    # bootstrap is static (no interpreter), the proxy has no symbol table, exec keeps its own.
    ! readelf -l unpacked/bootstrap | grep -q INTERP || fail "$where: bootstrap is not static"
    ! readelf -S unpacked/bin/proxy | grep -q '\.symtab' || fail "$where: bin/proxy is not stripped"
    readelf -S unpacked/exec | grep -q '\.symtab' || fail "$where: exec lost its symbols"
    # The packaged exec answers (run here through the zip's loader and libraries).
    answer=$(echo '{"value":{"name":"Zip"}}' |
        "unpacked/$loader" --library-path unpacked/lib unpacked/exec 3>&1 1> /dev/null) ||
        fail "$where: exec did not run through the zip's loader"
    [ "$answer" = '{"greeting":"Hello, Zip!"}' ] || fail "$where: exec answered $answer"
}

# lambda-zip on a source file: one line on stderr, the zip.
"$lambda_zip" -o hello.zip "$fixtures/cpp/hello.cpp" 2> made.txt || { cat made.txt; fail "lambda-zip failed"; }
grep -qE '^lambda-zip: wrote hello.zip \([0-9]+ KiB; lib/ holds the loader and [0-9]+ libraries\)$' made.txt ||
    fail "lambda-zip said: $(cat made.txt)"
check_hello_zip hello.zip "lambda-zip hello.cpp"
check_hello_zip "$built_zip" "actionloop_add_lambda's zip"
size=$(stat -c %s hello.zip)
echo "ok: the hello's zip holds bootstrap, bin/proxy, exec and $(grep -c '^lib/' <<< "$(entries hello.zip)") files in lib/ ($((size / 1024)) KiB)"

# From stdin to stdout, with another entry point: the same layout.
"$lambda_zip" -main hello -o - - < "$fixtures/cpp/named.cpp" > named.zip 2> /dev/null || fail "stdin to stdout failed"
grep -q '^bootstrap 755$' <<< "$(entries named.zip)" || fail "the zip on stdout: $(entries named.zip)"

# A #! script action: packaged as it is, with the proxy's libraries only.
mkdir script && cp "$fixtures/echo.sh" script/exec && (cd script && zip -q ../script.zip exec)
"$lambda_zip" -o script-lambda.zip script.zip 2> /dev/null || fail "a #! script action was refused"
grep -qx 'exec 755' <<< "$(entries script-lambda.zip)" || fail "the script's zip: $(entries script-lambda.zip)"

# What a user gets wrong: said, exit status 1 (2 for the command line), no zip left behind.
expect_failure() {  # STATUS TEXT ARGS...
    local status=$1 text=$2 got
    shift 2
    rm -f out.zip
    set +e
    got=$("$lambda_zip" "$@" 2>&1)
    local code=$?
    set -e
    [ "$code" = "$status" ] || fail "lambda-zip $*: exit status $code, not $status: $got"
    [[ $got == *"$text"* ]] || fail "lambda-zip $*: said '$got', not '$text'"
    [ ! -e out.zip ] || fail "lambda-zip $*: wrote out.zip anyway"
}
printf 'nlohmann::json main(nlohmann::json args) { return args.nope(); }\n' > broken.cpp
expect_failure 1 "the action was not built" -o out.zip broken.cpp
expect_failure 1 "nope" -o out.zip broken.cpp  # the compiler's message, with the user's file
mkdir -p reserved/lib && cp "$fixtures/echo.sh" reserved/exec && echo x > reserved/lib/data.txt &&
    (cd reserved && zip -q -r ../reserved.zip exec lib)
expect_failure 1 "the action's files include 'lib' at their top" -o out.zip reserved.zip
expect_failure 1 "no such file: missing.cpp" -o out.zip missing.cpp
expect_failure 2 "no INPUT" -o out.zip
expect_failure 2 "-o needs a value" hello.cpp -o
expect_failure 2 "unknown flag -x" -x hello.cpp
expect_failure 2 "one INPUT only" a.cpp b.cpp
help=$("$lambda_zip" -help)
[[ $help == "lambda-zip [-main MAIN] [-env JSON] [-o ZIP] INPUT"* ]] || fail "-help printed: $help"
echo "ok: stdin to stdout, a #! script action, and each mistake said with its exit status"
