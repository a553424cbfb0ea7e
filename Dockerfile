# actionloop-cpp: the OpenWhisk runtime image for C++ actions (and any fd-3 executable).
#
#   docker build -t actionloop/actionloop-cpp .        (or: tests/image/run, with buildah)
#   docker run -i actionloop/actionloop-cpp -compile main < hello.cpp > hello.zip
#
# Dockerfile.dedicated builds on this image: one action compiled into it at build time
# (--build-arg ACTION=hello.cpp), served in single-entrypoint (Knative) mode.
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
      build-essential cmake pkg-config binutils \
      nlohmann-json3-dev libspdlog-dev libarchive-dev libhiredis-dev \
      libboost-dev prometheus-cpp-dev zip \
 && rm -rf /var/lib/apt/lists/*
COPY . .
# The shipped zips hold the exec.env the proxy checks (actionloop_add_action writes it, as
# `compile` does for sources), and the installed SDK's default is the image's name too.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DACTIONLOOP_BUILD_TESTS=OFF \
      -DACTIONLOOP_WARNINGS_AS_ERRORS=ON -DACTIONLOOP_EXEC_ENV="$EXECUTION_ENV" \
 && cmake --build /build -j"$JOBS" \
 && DESTDIR=/out cmake --install /build --prefix /usr/local

# --- runtime: the proxy, compile and what compile needs at /init ---------------------------
FROM debian:bookworm-slim
ARG EXECUTION_ENV
ENV OW_COMPILER=/bin/compile \
    OW_WAIT_FOR_ACK=1 \
    OW_LOG_INIT_ERROR=1 \
    OW_EXECUTION_ENV=${EXECUTION_ENV}
WORKDIR /action
EXPOSE 8080
ENTRYPOINT ["/bin/proxy"]
# g++ (with libstdc++-12-dev and binutils: readelf, ld.gold) and nlohmann-json3-dev: compile;
# libspdlog1.10, libfmt9, libarchive13, libprometheus-cpp-core1.0: the proxy (which serves
# HTTP with Boost.Beast, header-only); jq: shell actions.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ libstdc++-12-dev binutils nlohmann-json3-dev \
      libspdlog1.10 libfmt9 libarchive13 libprometheus-cpp-core1.0 \
      jq \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log
COPY --from=build /out/usr/local /usr/local
# /bin/proxy and /bin/compile are links: compile finds include/ and lib/ from its real path.
# The precompiled headers (-O1, and -O2 for ACTIONLOOP_CXXFLAGS=-O2) are rebuilt by this
# stage's g++, the one that will use them (GCC ignores a .gch made by any other build of it).
RUN ln -s /usr/local/bin/proxy /bin/proxy \
 && ln -s /usr/local/bin/compile /bin/compile \
 && /usr/local/bin/compile --make-pch /usr/local/lib/actionloop/pch 1 \
 && /usr/local/bin/compile --make-pch /usr/local/lib/actionloop/pch-O2 2
