// deployed_config.hpp — the config a deployment decides with: the file ALERT_CONFIG names, read
// once per /init. The first process started after an /init reads the file and keeps a copy of
// its bytes in the action's directory (its working directory, action/N/bin, new with every
// /init); a process the proxy starts again after a crash or an OOM kill reads that copy, so an
// edited file changes nothing until the next /init (docs/alerts.md, "Config", "Restarts").
// A copy counts only for the proxy process that started this one (its pid and start time, and
// the boot): one shipped in a zip or left in a reused directory is ignored.
#pragma once

#include <filesystem>
#include <string>

namespace alerts {

struct deployed_config {
    std::string text;        // the bytes, exactly as read
    std::string sha256;      // of `text`, as `sha256sum FILE` prints it
    std::string file;        // ALERT_CONFIG, absolute (a relative one is the action directory's)
    std::string copy;        // the kept copy's path ("" when none could be written)
    bool from_copy = false;  // this process was started again and read the kept copy
};

/// Who started this process: the proxy that starts an action again after a crash is the one
/// that started it first ("<boot id>/<parent pid>/<its start time>"). The copy's name is a
/// hash of this and of the file's absolute path.
std::string starter_identity();

/// Reads ALERT_CONFIG (`config_file`, relative to `dir`), or the copy kept in `dir` for
/// `starter` when there is one. Throws config_error naming the file.
deployed_config read_deployed_config(const std::string& config_file,
                                     const std::filesystem::path& dir, const std::string& starter);

/// Keeps a copy of a config just read from its file (written aside, then renamed), and removes
/// copies left by other starters. Returns "" or why no copy could be kept.
std::string keep_deployed_config(deployed_config& config, const std::filesystem::path& dir,
                                 const std::string& starter);

/// The line each process writes when it starts: `alerts: config sha256=… bytes=… file=…
/// read=file|copy copy=…` (with OW_LOG_FORMAT=json, the same fields as one JSON object).
std::string config_line(const deployed_config& config, bool json);

/// The line for a config given by value.config: at start without ALERT_CONFIG (`sha256`
/// empty: `alerts: config read=value.config`), and each time its text changes.
std::string value_config_line(const std::string& sha256, std::size_t bytes, bool json);

}  // namespace alerts
