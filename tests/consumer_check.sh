#!/bin/bash
# consumer_check.sh BUILD_DIR SOURCE_DIR: the installed CMake package builds an action.
# `cmake --install` into a fresh prefix; configure and build examples/hello against it alone
# (find_package(actionloop CONFIG REQUIRED) + actionloop_add_action), an action with MAIN
# and DATA, and the hello's AWS Lambda zip (actionloop_add_lambda); then /init each OpenWhisk
# zip into the installed proxy started as the runtime image starts it (the Dockerfile's ENV:
# OW_EXECUTION_ENV, OW_WAIT_FOR_ACK, ...) and check the answers.
set -euo pipefail
build=$1
source_dir=$2
work=$(mktemp -d)
proxy_pid=
cleanup() {
    if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > /dev/null
for f in lib/cmake/actionloop/actionloop-config.cmake \
         lib/cmake/actionloop/actionloop-config-version.cmake \
         lib/cmake/actionloop/actionloop-targets.cmake lib/cmake/actionloop/actionloop-action.cmake; do
    [ -e "$prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
done

# The example's own build: nothing from this repository but the installed prefix.
cp -r "$source_dir/examples/hello" "$work/hello"
if ! out=$(cmake -S "$work/hello" -B "$work/hello-build" -DCMAKE_PREFIX_PATH="$prefix" \
               -DCMAKE_BUILD_TYPE=Release 2>&1); then
    echo "configuring examples/hello failed:"; echo "$out"; exit 1
fi
if ! out=$(cmake --build "$work/hello-build" 2>&1); then
    echo "building examples/hello failed:"; echo "$out"; exit 1
fi
zip=$work/hello-build/hello.zip
[ -f "$zip" ] || { echo "examples/hello made no hello.zip"; exit 1; }
zip_names() {
    python3 -c 'import sys, zipfile; print(" ".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' "$1"
}
entries=$(zip_names "$zip")
[ "$entries" = "exec exec.env" ] || { echo "hello.zip holds '$entries', expected exec and exec.env"; exit 1; }

# An action with another entry point and a data file it reads at run time.
mkdir -p "$work/greeter"
cat > "$work/greeter/CMakeLists.txt" << 'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(greeter LANGUAGES CXX)
find_package(actionloop CONFIG REQUIRED)
actionloop_add_action(greeter greeter.cpp MAIN handler DATA greeting.txt)
CMAKE
cat > "$work/greeter/greeter.cpp" << 'CPP'
#include <algorithm>
#include <fstream>
#include <string>

#include <actionloop/action.hpp>

// std::count and json::parse used as written next to the entry point.
nlohmann::json handler(const nlohmann::json& args) {
    std::ifstream in("greeting.txt");
    std::string greeting;
    std::getline(in, greeting);
    const std::string name = args.value("name", std::string("stranger"));
    return {{"text", greeting + ", " + name},
            {"es", std::count(name.begin(), name.end(), 'e')},
            {"parsed", nlohmann::json::parse("[1]")}};
}
CPP
echo "Greetings" > "$work/greeter/greeting.txt"
if ! out=$(cmake -S "$work/greeter" -B "$work/greeter-build" -DCMAKE_PREFIX_PATH="$prefix" \
               -DCMAKE_BUILD_TYPE=Release 2>&1 && cmake --build "$work/greeter-build" 2>&1); then
    echo "building the greeter (MAIN handler, DATA greeting.txt) failed:"; echo "$out"; exit 1
fi
greeter=$work/greeter-build/greeter.zip
entries=$(zip_names "$greeter")
[ "$entries" = "exec exec.env greeting.txt" ] || { echo "greeter.zip holds '$entries'"; exit 1; }

# A wrong signature fails the build, naming the accepted ones (not /init later).
mkdir -p "$work/wrong"
sed 's/greeter/wrong/g' "$work/greeter/CMakeLists.txt" | sed 's/ DATA greeting.txt//' \
    > "$work/wrong/CMakeLists.txt"
echo 'std::string handler(nlohmann::json args) { return args.dump(); }' > "$work/wrong/wrong.cpp"
if out=$(cmake -S "$work/wrong" -B "$work/wrong-build" -DCMAKE_PREFIX_PATH="$prefix" \
             -DCMAKE_BUILD_TYPE=Release 2>&1 && cmake --build "$work/wrong-build" 2>&1); then
    echo "an entry point returning std::string was built"; exit 1
fi
case "$out" in
    *"the entry point 'handler' must be one of"*"void handler(std::string_view value, std::string& answer)"*) ;;
    *) echo "a wrong signature's build failed without naming the accepted ones:"; echo "$out"; exit 1 ;;
esac

# actionloop_add_lambda (x86_64 and arm64, where Lambda runs): the same hello as an AWS Lambda
# zip, made by the installed lambda-zip with the installed proxy and bootstrap; its bootstrap
# starts the packaged proxy through the zip's own loader and libraries.
case "$(uname -m)" in
x86_64 | aarch64)
    for f in bin/lambda-zip lib/actionloop/lambda/bootstrap lib/cmake/actionloop/actionloop-lambda.cmake; do
        [ -e "$prefix/$f" ] || { echo "missing from the install: $f"; exit 1; }
    done
    mkdir -p "$work/lambda"
    cat > "$work/lambda/CMakeLists.txt" << 'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(hello_lambda LANGUAGES CXX)
find_package(actionloop CONFIG REQUIRED)
actionloop_add_lambda(hello hello.cpp)
CMAKE
    cp "$source_dir/examples/hello/hello.cpp" "$work/lambda/"
    if ! out=$(cmake -S "$work/lambda" -B "$work/lambda-build" -DCMAKE_PREFIX_PATH="$prefix" \
                   -DCMAKE_BUILD_TYPE=Release 2>&1 && cmake --build "$work/lambda-build" 2>&1); then
        echo "building a Lambda zip with actionloop_add_lambda failed:"; echo "$out"; exit 1
    fi
    lambda_zip=$work/lambda-build/hello.zip
    entries=$(zip_names "$lambda_zip")
    for entry in bootstrap bin/proxy exec lib/libc.so.6 lib/libstdc++.so.6; do
        [[ " $entries " == *" $entry "* ]] || { echo "the Lambda zip has no $entry: $entries"; exit 1; }
    done
    mkdir -p "$work/lambda-task"
    (cd "$work/lambda-task" && unzip -q "$lambda_zip")
    version=$(env -u AWS_LAMBDA_RUNTIME_API LAMBDA_TASK_ROOT="$work/lambda-task" \
        "$work/lambda-task/bootstrap" -version 2>&1) || { echo "the Lambda zip's bootstrap: $version"; exit 1; }
    [[ $version == "OpenWhisk ActionLoop Proxy v"* ]] || { echo "the Lambda zip's bootstrap -version: $version"; exit 1; }
    ;;
esac

# The proxy as the runtime image runs it: the ENV of the Dockerfile's last stage, the default
# target (OW_EXECUTION_ENV is the image's name, EXECUTION_ENV's default; OW_COMPILER is this
# prefix's compile), in a fresh directory.
read_image_env='
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
default = re.search(r"^ARG EXECUTION_ENV=(\S+)", text, re.M).group(1)
last_stage = text[[m.start() for m in re.finditer(r"^FROM ", text, re.M)][-1]:]
env = re.search(r"^ENV (.*)$", last_stage, re.M).group(1)
for key, value in re.findall(r"(OW_[A-Z_]+)=(\S+)", env):
    value = value.replace("${EXECUTION_ENV}", default)
    print(key + "=" + (sys.argv[2] if key == "OW_COMPILER" else value))
'
image_env=()
while IFS= read -r kv; do image_env+=("$kv"); done \
    < <(python3 -c "$read_image_env" "$source_dir/Dockerfile" "$prefix/bin/compile")
for needed in OW_EXECUTION_ENV=actionloop/ OW_WAIT_FOR_ACK= OW_LOG_INIT_ERROR=; do
    case " ${image_env[*]} " in
        *" $needed"*) ;;
        *) echo "the Dockerfile's ENV was not understood (no $needed): ${image_env[*]}"; exit 1 ;;
    esac
done
start_proxy() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    rm -rf "$work/run" && mkdir -p "$work/run"
    (cd "$work/run" && exec env "${image_env[@]}" "$prefix/bin/proxy" -port "$port" > "$work/proxy.log" 2>&1) &
    proxy_pid=$!
    up=0
    for _ in $(seq 200); do
        if curl -s -o /dev/null "127.0.0.1:$port/"; then up=1; break; fi
        sleep 0.05
    done
    [ $up = 1 ] || { echo "the installed proxy did not listen on port $port"; exit 1; }
}
stop_proxy() { kill "$proxy_pid"; wait "$proxy_pid" 2> /dev/null || true; proxy_pid=; }
init_zip() {  # ZIP MAIN
    base64 -w0 "$1" | jq -Rs --arg main "$2" '{value:{code:.,binary:true,main:$main}}' > "$work/init.json"
    curl -s -X POST --data-binary "@$work/init.json" "127.0.0.1:$port/init"
}

start_proxy
init=$(init_zip "$zip" main)
[ "$init" = '{"ok":true}' ] || { echo "init of examples/hello's hello.zip: $init"; cat "$work/proxy.log"; exit 1; }
run=$(curl -s -X POST -d '{"value":{"name":"Mike"},"activation_id":"a1"}' "127.0.0.1:$port/run")
[ "$run" = '{"activation":"a1","greeting":"Hello, Mike!"}' ] || { echo "run: $run"; exit 1; }
stop_proxy

start_proxy
init=$(init_zip "$greeter" handler)
[ "$init" = '{"ok":true}' ] || { echo "init of greeter.zip: $init"; cat "$work/proxy.log"; exit 1; }
run=$(curl -s -X POST -d '{"value":{"name":"Steve"}}' "127.0.0.1:$port/run")
[ "$run" = '{"es":2,"parsed":[1],"text":"Greetings, Steve"}' ] || { echo "greeter run: $run"; exit 1; }
stop_proxy
echo "consumer build ok: examples/hello, an action with MAIN and DATA, and a Lambda zip, against $prefix"
