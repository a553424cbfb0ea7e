# actionloop-cpp: the OpenWhisk runtime image for C++ actions (and any fd-3 executable).
#
#   docker build -t actionloop/actionloop-cpp .        (or: tests/image/run, with buildah)
#   docker run -i actionloop/actionloop-cpp -compile main < hello.cpp > hello.zip
#   docker build --target run -t actionloop/actionloop-cpp:run .   (prebuilt actions only)
#
# Dockerfile.dedicated builds on both: one action compiled by this image at build time
# (--build-arg ACTION=hello.cpp) into the run-only image, served in single-entrypoint
# (Knative) mode.
#
# EXECUTION_ENV is the image's name: OW_EXECUTION_ENV, which the proxy requires every action's
# bin/exec.env to hold; `compile` and actionloop_add_action write it. Build with
# --build-arg EXECUTION_ENV=<your registry/name> when you push under another name.
# Metadata instructions come first in each stage: a layer after a big one costs a copy of it
# with some storage drivers (buildah's vfs, which tests/image/run uses).
ARG EXECUTION_ENV=actionloop/actionloop-cpp

# --- build: the CI build (Release, warnings as errors), without the tests -----------------
FROM debian:bookworm-slim AS build
# tests/image/run finds this stage's image by the label, to keep its cache when it prunes.
# First, so that the two stages share no step: built in parallel, a shared step is made
# twice, and the next build's cache then follows only one of the copies.
LABEL actionloop-cpp.stage=build
ARG EXECUTION_ENV
ARG JOBS=2
WORKDIR /src
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config binutils libgcc-12-dev \
      nlohmann-json3-dev libspdlog-dev libarchive-dev libhiredis-dev libcurl4-openssl-dev \
      libboost-dev libboost-program-options-dev prometheus-cpp-dev zip \
      libhowardhinnant-date-dev \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# The shipped zips hold the exec.env the proxy checks (actionloop_add_action writes it, as
# `compile` does for sources), and the installed SDK's default is the image's name too.
# The install's precompiled headers are dropped: the runtime stage makes its own with its g++
# (copied and then remade, they were 164 MB of the image twice).
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DACTIONLOOP_BUILD_TESTS=OFF \
      -DACTIONLOOP_WARNINGS_AS_ERRORS=ON -DACTIONLOOP_EXEC_ENV="$EXECUTION_ENV" \
 && cmake --build /build -j"$JOBS" \
 && DESTDIR=/out cmake --install /build --prefix /usr/local \
 && rm -rf /out/usr/local/lib/actionloop/pch /out/usr/local/lib/actionloop/pch-O*

# --- slimroot: the run-only image's filesystem (image/slim-rootfs) --------------------------
# Debian's runtime packages of the proxy (no -dev, no compiler), jq, tzdata and netbase
# (/etc/services, /etc/protocols), libdate-tz3 (the alert actions' time zones, on tzdata);
# image/slim-rootfs
# copies out of this system the proxy, the shell tools, and the shared libraries they load.
FROM debian:bookworm-slim AS slimroot
# First, for the build stage's reason: no step shared with the runtime stage.
LABEL actionloop-cpp.stage=slimroot
ARG EXECUTION_ENV
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libspdlog1.10 libfmt9 libarchive13 libprometheus-cpp-core1.0 jq tzdata netbase \
      libdate-tz3 \
 && rm -rf /var/lib/apt/lists/*
COPY image/ /tmp/image/
COPY --from=build /out/usr/local /staging/usr/local
RUN /tmp/image/slim-rootfs /rootfs "$EXECUTION_ENV"

# --- run: the runtime for prebuilt actions only (`--target run`) ---------------------------
# No compiler: /init takes zips made by `proxy -compile` in the full image (below), shell
# actions and other prebuilt executables; a source gets an error naming the full image (from
# its OW_COMPILER, image/compile-unavailable; OW_LOG_INIT_ERROR is unset so that the answer
# says it). Dockerfile.dedicated's final stage is FROM this image.
FROM scratch AS run
ARG EXECUTION_ENV
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    OW_COMPILER=/bin/compile \
    OW_WAIT_FOR_ACK=1 \
    OW_EXECUTION_ENV=${EXECUTION_ENV}
WORKDIR /action
EXPOSE 8080
ENTRYPOINT ["/bin/proxy"]
COPY --from=slimroot /rootfs/ /

# --- runtime (the default target): the proxy, compile and what compile needs at /init -----
FROM debian:bookworm-slim
ARG EXECUTION_ENV
ENV OW_COMPILER=/bin/compile \
    OW_WAIT_FOR_ACK=1 \
    OW_LOG_INIT_ERROR=1 \
    OW_EXECUTION_ENV=${EXECUTION_ENV}
WORKDIR /action
EXPOSE 8080
ENTRYPOINT ["/bin/proxy"]
# g++ (with libstdc++-12-dev, libgcc-12-dev for libbacktrace.a, the crash backtraces every
# action links, and binutils: readelf, ld.gold) and nlohmann-json3-dev: compile;
# libspdlog1.10, libfmt9, libarchive13, libprometheus-cpp-core1.0: the proxy (which serves
# HTTP with Boost.Beast, header-only); jq: shell actions; libcurl4 and ca-certificates: alertgw,
# the alert gateway (its SMTP and webhooks, TLS included; hiredis is linked in statically);
# libhowardhinnant-date-dev (libdate-tz3 and date/tz.h) and tzdata: the alert actions' time
# zones, and any action's (`ACTIONLOOP_CXXFLAGS=-ldate-tz`). dpkg leaves out what compile never
# runs: lto-dump (a tool, 30 MB), cc1 (the C compiler: compile builds C++ sources with
# cc1plus; 32 MB) and gprofng (a profiler).
RUN printf '%s\n' 'path-exclude=/usr/bin/*lto-dump*' 'path-exclude=/usr/lib/gcc/*/*/cc1' \
      'path-exclude=/usr/bin/*gprofng*' 'path-exclude=/usr/lib/*/gprofng/*' \
      'path-exclude=/usr/lib/*/libgprofng.so*' > /etc/dpkg/dpkg.cfg.d/actionloop-runtime \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ libstdc++-12-dev libgcc-12-dev binutils nlohmann-json3-dev \
      libspdlog1.10 libfmt9 libarchive13 libprometheus-cpp-core1.0 \
      jq libcurl4 ca-certificates libhowardhinnant-date-dev tzdata \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log
COPY --from=build /out/usr/local /usr/local
# /bin/proxy and /bin/compile are links: compile finds include/ and lib/ from its real path.
# The precompiled headers (-O1, and -O2 for ACTIONLOOP_CXXFLAGS=-O2) are rebuilt by this
# stage's g++, the one that will use them (GCC ignores a .gch made by any other build of it).
RUN ln -s /usr/local/bin/proxy /bin/proxy \
 && ln -s /usr/local/bin/compile /bin/compile \
 && /usr/local/bin/compile --make-pch /usr/local/lib/actionloop/pch 1 \
 && /usr/local/bin/compile --make-pch /usr/local/lib/actionloop/pch-O2 2
