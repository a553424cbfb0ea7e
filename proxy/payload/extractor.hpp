// Extraction of /init payloads: content-based type detection (zip, gzip, ELF, script), safe
// unpacking of zip and tar.gz archives into the action directory, and the zip writer used by
// `proxy -compile`. See docs/protocol.md, /init.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace actionloop {

enum class payload_kind { zip, gzip, elf, script, other };

// Content-based detection, exactly as upstream (docs/protocol.md, /init): zip = "PK" then byte2 in
// {3,5,7} and byte3 in {4,6,8}; gzip = 1f 8b 08; elf = 7F 'E' 'L' 'F' and size > 52; script =
// starts with
// "#!" and size > 2. Checked in that order.
payload_kind detect_kind(std::string_view data);

// True for an ELF binary or a `#!` script: such a file is run as is, never compiled.
bool is_runnable(std::string_view head);

// is_runnable() on the first 64 bytes of `file`; false when it cannot be read.
bool is_runnable_file(const std::filesystem::path& file);

// Error with a message meant for the 502 body, e.g.
// "archive entry '../x' escapes the action directory".
struct extract_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Unpacks a zip (or jar) or a tar.gz held in memory into `dest` (exists, empty). Every entry is
// checked before anything is written, in the order the entries come (payload/archive_tree.hpp):
// absolute names, `..` components, names or link targets over 4095 bytes, names under a
// symlink, hard links to a symlink, through one, to a folder or to a later entry, symlinks that
// end up leaving `dest`, device/fifo entries, more than 100000 entries or more than
// OW_MAX_EXTRACT_BYTES (default 1 GiB) of content are refused; what was written is checked
// again afterwards. Stops past OW_EXTRACT_TIMEOUT_MS (default 60 s). Throws extract_error.
void extract_archive(std::string_view data, const std::filesystem::path& dest);

// A zip with an entry named exactly META-INF/MANIFEST.MF (for OW_SAVE_JAR).
bool is_jar(std::string_view data);

// Writes `data` as dest/exec (mode 0755) when it is not an archive; calls extract_archive
// otherwise. Throws extract_error.
void unpack_payload(std::string_view data, const std::filesystem::path& dest);

// For `proxy -compile`: a zip (deflate) of the contents of `dir`, entries relative to `dir` in
// sorted order, regular files and folders with mode 0755, symlinks kept as symlinks, no
// timestamps. Throws extract_error.
std::string zip_directory(const std::filesystem::path& dir);

}  // namespace actionloop
