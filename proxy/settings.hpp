// Settings: the command line (upstream's flags plus -port, -host, -help) and every
// environment variable the proxy reads. help_text() (`proxy -h`) and the README's table list
// the same names and defaults; a test keeps them in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "log_record.hpp"

namespace actionloop {

struct settings {
    // Command line.
    int port = 8080;               // -port N (1..65535)
    std::string host = "0.0.0.0";  // -host ADDR, else OW_HOST: the address to listen on
    int metrics_port = 0;          // -metrics-port N, else OW_METRICS_PORT; 0: no /metrics
    bool debug = false;            // -debug: verbose logs, re-init allowed, failed dirs kept
    bool version = false;          // -version
    bool help = false;             // -h, -help
    std::optional<std::string> compile_main;  // -compile MAIN
    std::string env_json;                     // -env JSON (with -compile)

    // Upstream's environment.
    std::string compiler;         // OW_COMPILER
    std::string wait_for_ack;     // OW_WAIT_FOR_ACK
    std::string execution_env;    // OW_EXECUTION_ENV
    bool log_init_error = false;  // OW_LOG_INIT_ERROR
    std::string save_jar;         // OW_SAVE_JAR

    // Ours (documented in the README).
    size_t max_body_bytes = 50u << 20;    // OW_MAX_BODY_BYTES
    size_t max_answer_bytes = 50u << 20;  // OW_MAX_ANSWER_BYTES
    // OW_MAX_EXTRACT_BYTES and OW_EXTRACT_TIMEOUT_MS are read at each archive:
    // max_extract_bytes_now() and extract_timeout_ms_now() below.
    // JSON bounds (docs/protocol.md, "JSON bounds"): every body the proxy parses into a DOM
    // (/init, single-entrypoint /, the web answer) is checked first (engine/framing.hpp).
    size_t max_json_depth = 512;           // OW_MAX_JSON_DEPTH: containers open at once
    size_t max_json_members = 1000000;     // OW_MAX_JSON_MEMBERS: members and elements in all
    int deadline_grace_ms = 100;           // OW_DEADLINE_GRACE_MS
    std::int64_t run_timeout_ms = 300000;  // OW_RUN_TIMEOUT_MS (0: no bound)
    int ack_timeout_ms = 60000;            // OW_ACK_TIMEOUT_MS
    int compile_timeout_ms = 300000;       // OW_COMPILE_TIMEOUT_MS
    size_t threads = 64;                   // OW_THREADS (HTTP worker threads)
    int shutdown_timeout_ms = 25000;       // OW_SHUTDOWN_TIMEOUT_MS (the drain's cap)
    bool pipeline = true;                  // OW_PIPELINE=0 turns pipelining off
    int spin_us = 50;                      // OW_SPIN_US (http/event_loop.hpp)
    // OW_SCHED_BATCH: auto (while activations overlap, engine/batch_scheduling.hpp), 1: always
    // (main.cpp), 0: never.
    enum class batch_policy { automatic, always, never };
    batch_policy sched_batch = batch_policy::automatic;
    // The log lines' form: OW_LOG_FORMAT=json (else plain); in Lambda mode (AWS_LAMBDA_RUNTIME_API
    // set) AWS_LAMBDA_LOG_FORMAT and AWS_LAMBDA_LOG_LEVEL instead (log_record.hpp). True when
    // the lines are JSON records.
    log_format json_logs;
    size_t log_line_bytes = 16384;      // OW_LOG_LINE_BYTES (JSON mode's cut)
    std::string cxxflags;               // ACTIONLOOP_CXXFLAGS (for -compile)
    std::string cgroup_dir;             // OW_CGROUP_DIR ("": found, engine/cgroup_memory.hpp)
    std::string action_dir = "action";  // where action/N/{src,bin} live (cwd-relative)

    // The port's bounds and the log backlog (issue 33: docs/DEPLOY.md, "Bounds"). 0: no bound.
    size_t max_connections = 4096;       // OW_MAX_CONNECTIONS: past it, 503 and close
    size_t max_queued = 1000;            // OW_MAX_QUEUED (single-entrypoint mode): 503
    size_t log_buffer_bytes = 4u << 20;  // OW_LOG_BUFFER_BYTES: the proxy's own lines held

    // The worker pool (issue 35: docs/protocol.md, "Workers"). OW_WORKERS as written ("" when
    // unset: 1; "auto": the container's CPUs; a number); /init's env may set it too (the
    // action's own wins), resolved by host/ at each init and capped by max_workers.
    std::string workers;        // OW_WORKERS
    unsigned max_workers = 64;  // OW_MAX_WORKERS (at least 1)
    size_t max_inflight = 0;    // OW_MAX_INFLIGHT: /runs admitted at once; past it 429 (0: none)

    // Single-entrypoint mode (proxy/knative/): __OW_RUNTIME_PLATFORM, nullopt when unset.
    // Its other variables (__OW_HTTP_METHODS, __OW_ACTION_*) are read by
    // protocol/knative/platform.cpp.
    std::optional<std::string> runtime_platform;

    // Lambda mode (proxy/lambda/: docs/LAMBDA.md): the proxy is the client of the Lambda
    // Runtime API when AWS_LAMBDA_RUNTIME_API is set.
    std::string lambda_runtime_api;              // AWS_LAMBDA_RUNTIME_API: host:port ("": off)
    std::string lambda_task_root = "/var/task";  // LAMBDA_TASK_ROOT: where `exec` is
    unsigned lambda_concurrency = 1;             // AWS_LAMBDA_MAX_CONCURRENCY: workers and polls
};

/// Parses argv (single or double dash) and the environment. Throws std::invalid_argument
/// with the reason and the usage line on a bad flag or a bad number.
settings load_settings(int argc, char** argv);

/// OW_MAX_EXTRACT_BYTES, read now: a positive decimal number, else the 1 GiB default (the
/// extractor reads it at each archive, so a test or fuzzer can change it in-process).
std::uint64_t max_extract_bytes_now();

/// OW_EXTRACT_TIMEOUT_MS, read now: a positive decimal number of milliseconds, else the 60 s
/// default (the bound of one archive's extraction at /init, read like OW_MAX_EXTRACT_BYTES).
std::uint64_t extract_timeout_ms_now();

/// `proxy -h`: every flag and environment variable with its default and meaning.
std::string help_text();

}  // namespace actionloop
