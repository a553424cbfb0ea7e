// Settings: the command line (upstream's flags plus -port) and the OW_* environment.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace actionloop {

struct settings {
    // Command line.
    int port = 8080;
    bool debug = false;          // -debug: verbose logs, re-init allowed, failed dirs kept
    bool version = false;        // -version
    std::optional<std::string> compile_main;  // -compile MAIN
    std::string env_json;        // -env JSON (with -compile)

    // Upstream's environment.
    std::string compiler;        // OW_COMPILER
    std::string wait_for_ack;    // OW_WAIT_FOR_ACK
    std::string execution_env;   // OW_EXECUTION_ENV
    bool log_init_error = false; // OW_LOG_INIT_ERROR
    std::string save_jar;        // OW_SAVE_JAR

    // Ours (documented in the README).
    size_t max_body_bytes = 50u << 20;     // OW_MAX_BODY_BYTES
    size_t max_answer_bytes = 50u << 20;   // OW_MAX_ANSWER_BYTES
    int deadline_grace_ms = 100;           // OW_DEADLINE_GRACE_MS
    int ack_timeout_ms = 60000;            // OW_ACK_TIMEOUT_MS
    int compile_timeout_ms = 300000;       // OW_COMPILE_TIMEOUT_MS
    size_t threads = 64;                   // OW_THREADS (HTTP worker threads)
    bool pipeline = true;                  // OW_PIPELINE=0 turns pipelining off
    std::string action_dir = "action";     // where action/N/{src,bin} live (cwd-relative)
};

/// Parses argv (single or double dash) and the environment. Throws std::invalid_argument
/// with a usage message on a bad flag.
settings load_settings(int argc, char** argv);

}  // namespace actionloop
