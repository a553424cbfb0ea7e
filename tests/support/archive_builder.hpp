// Builds the archives tests send to /init, byte by byte, so that entry names (`../x`,
// `/abs`), modes and symlinks are exactly what a test needs — including the hostile ones
// the `zip` and `tar` commands refuse to write.
#pragma once

#include <string>
#include <vector>

namespace support {

/// One archive member.
struct archive_entry {
    enum class kind { file, directory, symlink, hard_link };

    std::string name;     // stored verbatim (a directory name gets a trailing '/')
    std::string content;  // file bytes, or the target of a symlink or hard link
    unsigned mode = 0644;
    kind type = kind::file;
};

archive_entry file_entry(const std::string& name, const std::string& content, unsigned mode = 0644);
archive_entry dir_entry(const std::string& name);
archive_entry symlink_entry(const std::string& name, const std::string& target);
/// A hard link to the earlier entry `target` (tar only: zip has no hard links).
archive_entry hard_link_entry(const std::string& name, const std::string& target);

/// Every file under `dir` (recursively, sorted), named relative to it, with its mode.
std::vector<archive_entry> entries_from_dir(const std::string& dir);

/// A zip (stored, no compression). With `unix_modes` false the entries carry no Unix mode,
/// like a zip made by Java's zipfs or on Windows (symlinks then need unix_modes).
std::string make_zip(const std::vector<archive_entry>& entries, bool unix_modes = true);

/// A ustar archive, gzip-compressed (through the `gzip` command). A name or link target longer
/// than 99 bytes goes in a pax extended header (path=, linkpath=) before its entry.
std::string make_tar_gz(const std::vector<archive_entry>& entries);

/// `data` gzip-compressed (through the `gzip` command).
std::string gzip(const std::string& data);

/// Standard base64 with padding.
std::string base64_encode(const std::string& data);

}  // namespace support
