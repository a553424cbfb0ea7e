// Extraction of /init payloads with libarchive.
//
// extract_archive reads the archive twice from memory. The first pass only reads headers: it
// checks every name, type and link, counts entries and declared sizes, and resolves every symlink
// through the archive's own symlinks, so a hostile archive is refused before anything is written.
// The second pass writes with archive_write_disk under the secure flags, prefixing every name with
// the canonical destination (which is why ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS cannot be used:
// it refuses the prefixed absolute names; our own check refuses absolute names instead), creating
// missing parent folders 0755 and counting the bytes actually written.
#include "payload/extractor.hpp"
#include "settings.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace actionloop {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t MAX_ENTRIES = 100000;
constexpr int MAX_SYMLINK_HOPS = 40;  // Linux MAXSYMLINKS
constexpr std::size_t HEAD_BYTES = 64;
constexpr std::size_t MAX_NAME_IN_MESSAGE = 200;
constexpr int DISK_FLAGS =
    ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT;

struct read_deleter {
    void operator()(archive* a) const { archive_read_free(a); }
};
struct write_deleter {
    void operator()(archive* a) const { archive_write_free(a); }
};
struct entry_deleter {
    void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using archive_reader = std::unique_ptr<archive, read_deleter>;
using archive_writer = std::unique_ptr<archive, write_deleter>;
using entry_ptr = std::unique_ptr<archive_entry, entry_deleter>;

// ---- detection -------------------------------------------------------------------------------

unsigned byte_at(std::string_view data, std::size_t i) {
    return static_cast<unsigned char>(data[i]);
}

bool is_zip(std::string_view d) {
    if (d.size() < 4 || d[0] != 'P' || d[1] != 'K') return false;
    const unsigned b2 = byte_at(d, 2);
    const unsigned b3 = byte_at(d, 3);
    return (b2 == 3 || b2 == 5 || b2 == 7) && (b3 == 4 || b3 == 6 || b3 == 8);
}

bool is_gzip(std::string_view d) {
    return d.size() >= 3 && byte_at(d, 0) == 0x1f && byte_at(d, 1) == 0x8b && byte_at(d, 2) == 8;
}

bool is_elf(std::string_view d) { return d.size() > 52 && d.substr(0, 4) == "\177ELF"; }

bool is_script(std::string_view d) { return d.size() > 2 && d[0] == '#' && d[1] == '!'; }

// ---- messages and limits ---------------------------------------------------------------------

std::string quote_name(std::string_view name) {
    if (name.size() <= MAX_NAME_IN_MESSAGE) return "'" + std::string(name) + "'";
    return "'" + std::string(name.substr(0, MAX_NAME_IN_MESSAGE)) + "...'";
}

[[noreturn]] void refuse(std::string_view name, const std::string& why) {
    throw extract_error("archive entry " + quote_name(name) + " " + why);
}

std::string libarchive_message(archive* a) {
    const char* message = archive_error_string(a);
    std::string text =
        message != nullptr && *message != '\0' ? message : "unknown libarchive error";
    const int error = archive_errno(a);  // e.g. ENOSPC behind a bare "Write failed"
    if (error > 0 && text.find(std::strerror(error)) == std::string::npos) {
        text += std::string(" (") + std::strerror(error) + ")";
    }
    return text;
}

[[noreturn]] void archive_failure(archive* a) {
    throw extract_error("cannot extract archive: " + libarchive_message(a));
}

[[noreturn]] void entry_failure(std::string_view name, archive* a) {
    throw extract_error("cannot extract archive entry " + quote_name(name) + ": " +
                        libarchive_message(a));
}

// OW_MAX_EXTRACT_BYTES, read at each call through settings (1 GiB by default).
std::uint64_t max_extract_bytes() { return max_extract_bytes_now(); }

void add_bytes(std::uint64_t& total, std::uint64_t more, std::uint64_t max) {
    if (more > max - total) {
        throw extract_error("archive expands to more than " + std::to_string(max) + " bytes");
    }
    total += more;
}

void count_entry(std::size_t& entries) {
    if (++entries > MAX_ENTRIES) {
        throw extract_error("archive has more than " + std::to_string(MAX_ENTRIES) + " entries");
    }
}

// libarchive converts UTF-8 names (the zip UTF-8 flag set by Java and Python, pax headers) to the
// current LC_CTYPE and drops a name it cannot convert: in the default "C" locale every non-ASCII
// name would be lost. While extracting, this thread alone uses C.UTF-8, so such names reach the
// disk as their UTF-8 bytes; names without a charset are copied as bytes either way.
class utf8_names {
public:
    utf8_names() : locale_(newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{})) {
        if (locale_ != locale_t{}) previous_ = uselocale(locale_);
    }
    ~utf8_names() {
        if (locale_ == locale_t{}) return;
        uselocale(previous_);
        freelocale(locale_);
    }
    utf8_names(const utf8_names&) = delete;
    utf8_names& operator=(const utf8_names&) = delete;

private:
    locale_t locale_;
    locale_t previous_ = LC_GLOBAL_LOCALE;
};

// ---- names and links -------------------------------------------------------------------------

// The components of a relative name, without empty and "." ones.
std::vector<std::string> split_name(std::string_view name) {
    std::vector<std::string> parts;
    while (!name.empty()) {
        const std::size_t slash = std::min(name.find('/'), name.size());
        const std::string_view part = name.substr(0, slash);
        if (!part.empty() && part != ".") parts.emplace_back(part);
        name.remove_prefix(std::min(slash + 1, name.size()));
    }
    return parts;
}

std::string join_name(const std::vector<std::string>& parts) {
    std::string joined;
    for (const auto& part : parts) joined += (joined.empty() ? "" : "/") + part;
    return joined;
}

// "a/./b//c/" -> "a/b/c"; false when the name is absolute or has a ".." component.
bool normalize_name(std::string_view name, std::string& normal) {
    if (!name.empty() && name.front() == '/') return false;
    const std::vector<std::string> parts = split_name(name);
    if (std::find(parts.begin(), parts.end(), "..") != parts.end()) return false;
    normal = join_name(parts);
    return true;
}

using symlink_map = std::unordered_map<std::string, std::string>;  // normal name -> target

// Follows `target` from the folder `path` the way the kernel would, through the archive's own
// symlinks; false when it is absolute, climbs above the root, or needs too many hops.
bool resolves_inside(const symlink_map& links, std::vector<std::string>& path,
                     std::string_view target, int& hops) {
    if (!target.empty() && target.front() == '/') return false;
    for (const std::string& part : split_name(target)) {
        if (part == "..") {
            if (path.empty()) return false;
            path.pop_back();
            continue;
        }
        path.push_back(part);
        const auto link = links.find(join_name(path));
        if (link == links.end()) continue;
        path.pop_back();
        if (++hops > MAX_SYMLINK_HOPS || !resolves_inside(links, path, link->second, hops)) {
            return false;
        }
    }
    return true;
}

// Checks the archive's final symlinks, in archive order.
void check_symlinks(const symlink_map& links, const std::vector<std::string>& order) {
    for (const std::string& name : order) {
        const auto link = links.find(name);
        if (link == links.end()) continue;  // replaced by a later file or folder
        std::vector<std::string> folder = split_name(name);
        folder.pop_back();
        int hops = 0;
        if (!resolves_inside(links, folder, link->second, hops)) {
            refuse(name,
                   "is a symlink to " + quote_name(link->second) + " outside the action directory");
        }
    }
}

// Checks one entry's name, type and hard-link target; returns its normal name ("" for the
// archive's own root folder, e.g. "./").
std::string checked_name(archive_entry* entry) {
    const char* raw = archive_entry_pathname(entry);
    if (raw == nullptr) throw extract_error("archive entry has an unreadable name");
    std::string name;
    if (!normalize_name(raw, name)) refuse(raw, "escapes the action directory");
    const mode_t type = archive_entry_filetype(entry);
    if (const char* target = archive_entry_hardlink(entry)) {
        std::string normal_target;
        if (!normalize_name(target, normal_target) || normal_target.empty()) {
            refuse(raw,
                   "is a hard link to " + quote_name(target) + " outside the action directory");
        }
    } else if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK && type != 0) {
        refuse(raw, "is not a file, a folder or a link");
    }
    if (name.empty() && type != AE_IFDIR) refuse(raw, "has no name");
    return name;
}

// ---- reading ---------------------------------------------------------------------------------

archive_reader open_reader(std::string_view data) {
    archive_reader reader{archive_read_new()};
    if (!reader) throw extract_error("cannot extract archive: out of memory");
    const payload_kind kind = detect_kind(data);
    if (kind == payload_kind::zip) {
        archive_read_support_format_zip(reader.get());
    } else if (kind == payload_kind::gzip) {
        if (archive_read_support_filter_gzip(reader.get()) != ARCHIVE_OK) {
            archive_failure(reader.get());
        }
        archive_read_support_format_tar(reader.get());
    } else {
        throw extract_error("cannot extract archive: not a zip or tar.gz archive");
    }
    if (archive_read_open_memory(reader.get(), data.data(), data.size()) != ARCHIVE_OK) {
        archive_failure(reader.get());
    }
    return reader;
}

// The next header, or nullptr at the end of the archive.
archive_entry* next_entry(archive* reader) {
    archive_entry* entry = nullptr;
    const int status = archive_read_next_header(reader, &entry);
    if (status == ARCHIVE_EOF) return nullptr;
    if (status != ARCHIVE_OK && status != ARCHIVE_WARN) archive_failure(reader);
    return entry;
}

// First pass: refuses hostile or oversized archives before anything is written.
void scan_archive(std::string_view data, std::uint64_t max_bytes) {
    const archive_reader reader = open_reader(data);
    symlink_map links;
    std::vector<std::string> link_order;
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
    while (archive_entry* entry = next_entry(reader.get())) {
        const std::string name = checked_name(entry);
        count_entry(entries);
        const bool is_link =
            archive_entry_filetype(entry) == AE_IFLNK && archive_entry_hardlink(entry) == nullptr;
        const char* target = archive_entry_symlink(entry);
        if (is_link && target != nullptr) {
            links[name] = target;
            link_order.push_back(name);
        } else {
            links.erase(name);
        }
        if (!is_link && archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0) {
            add_bytes(bytes, static_cast<std::uint64_t>(archive_entry_size(entry)), max_bytes);
        }
    }
    check_symlinks(links, link_order);
}

// ---- writing ---------------------------------------------------------------------------------

struct extraction {
    fs::path root;  // canonical destination
    std::uint64_t max_bytes = 0;
    std::uint64_t bytes = 0;
    std::unordered_set<std::string> seen;  // normal names written so far
};

std::string on_disk(const extraction& x, const std::string& name) {
    return (x.root / name).string();
}

void write_header(archive* writer, archive_entry* entry, std::string_view name) {
    if (archive_write_header(writer, entry) < ARCHIVE_WARN) entry_failure(name, writer);
}

void finish_entry(archive* writer, std::string_view name) {
    // The disk writer reports a failed write(2) (a full disk) as a mere warning.
    if (archive_write_finish_entry(writer) != ARCHIVE_OK) entry_failure(name, writer);
}

// Writes the folders above `name` that the archive did not list (tar often omits them), 0755.
void write_parents(archive* writer, extraction& x, const std::string& name) {
    std::string parent;
    for (std::size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
        parent = name.substr(0, slash);
        if (!x.seen.insert(parent).second) continue;
        const entry_ptr folder{archive_entry_new()};
        archive_entry_copy_pathname(folder.get(), on_disk(x, parent).c_str());
        archive_entry_set_mode(folder.get(), AE_IFDIR | 0755);
        write_header(writer, folder.get(), parent);
        finish_entry(writer, parent);
    }
}

// Owner can always read and write files and enter folders; no setuid, setgid or sticky bits.
void normalize_mode(archive_entry* entry) {
    mode_t perm = archive_entry_perm(entry) & 0777;
    const mode_t type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) {
        perm |= 0700;
    } else if (type != AE_IFLNK) {
        perm |= 0600;
    }
    archive_entry_set_perm(entry, perm);
}

void copy_data(archive* reader, archive* writer, extraction& x, std::string_view name) {
    const void* block = nullptr;
    std::size_t size = 0;
    la_int64_t offset = 0;
    for (;;) {
        const int status = archive_read_data_block(reader, &block, &size, &offset);
        if (status == ARCHIVE_EOF) return;
        if (status < ARCHIVE_WARN) entry_failure(name, reader);
        add_bytes(x.bytes, size, x.max_bytes);
        if (archive_write_data_block(writer, block, size, offset) != ARCHIVE_OK) {
            entry_failure(name, writer);
        }
    }
}

void write_entry(archive* reader, archive* writer, archive_entry* entry, extraction& x) {
    const std::string name = checked_name(entry);  // throws when the name is unreadable
    const std::string raw = archive_entry_pathname(entry);
    if (name.empty()) return;  // the archive's own root folder: dest already exists
    write_parents(writer, x, name);
    if (const char* target = archive_entry_hardlink(entry)) {
        std::string normal_target;
        normalize_name(target, normal_target);
        archive_entry_copy_hardlink(entry, on_disk(x, normal_target).c_str());
    }
    archive_entry_copy_pathname(entry, on_disk(x, name).c_str());
    normalize_mode(entry);
    write_header(writer, entry, raw);
    copy_data(reader, writer, x, raw);
    finish_entry(writer, raw);
    x.seen.insert(name);
}

// Second pass: writes every entry under x.root.
void write_archive(std::string_view data, extraction& x) {
    const archive_reader reader = open_reader(data);
    const archive_writer writer{archive_write_disk_new()};
    if (!writer) throw extract_error("cannot extract archive: out of memory");
    archive_write_disk_set_options(writer.get(), DISK_FLAGS);
    while (archive_entry* entry = next_entry(reader.get())) {
        write_entry(reader.get(), writer.get(), entry, x);
    }
    if (archive_write_close(writer.get()) != ARCHIVE_OK) archive_failure(writer.get());
}

void write_executable(std::string_view data, const fs::path& file) {
    const int fd =
        ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0755);
    if (fd < 0) throw extract_error("cannot write " + file.string() + ": " + std::strerror(errno));
    while (!data.empty()) {
        const ssize_t written = ::write(fd, data.data(), data.size());
        if (written < 0 && errno == EINTR) continue;
        if (written < 0) {
            const int error = errno;
            ::close(fd);
            throw extract_error("cannot write " + file.string() + ": " + std::strerror(error));
        }
        data.remove_prefix(static_cast<std::size_t>(written));
    }
    const bool ok = ::fchmod(fd, 0755) == 0;
    const int error = errno;
    if (::close(fd) != 0 || !ok) {
        throw extract_error("cannot write " + file.string() + ": " + std::strerror(error));
    }
}

// ---- zipping ---------------------------------------------------------------------------------

la_ssize_t append_to_string(archive*, void* out, const void* buffer, std::size_t length) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(buffer), length);
    return static_cast<la_ssize_t>(length);
}

[[noreturn]] void zip_failure(archive* a) {
    throw extract_error("cannot zip: " + libarchive_message(a));
}

archive_writer open_zip_writer(std::string& out) {
    archive_writer writer{archive_write_new()};
    if (!writer) throw extract_error("cannot zip: out of memory");
    archive* a = writer.get();
    if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
        archive_write_zip_set_compression_deflate(a) != ARCHIVE_OK ||
        archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
        archive_write_open(a, &out, nullptr, append_to_string, nullptr) != ARCHIVE_OK) {
        zip_failure(a);
    }
    return writer;
}

void zip_file_data(archive* writer, const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw extract_error("cannot zip: cannot read " + file.string());
    std::vector<char> buffer(64 * 1024);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got > 0 && archive_write_data(writer, buffer.data(), got) < 0) zip_failure(writer);
    }
    if (in.bad()) throw extract_error("cannot zip: cannot read " + file.string());
}

void zip_path(archive* writer, const fs::path& dir, const fs::path& path) {
    const fs::file_status status = fs::symlink_status(path);
    const entry_ptr entry{archive_entry_new()};
    archive_entry_copy_pathname(entry.get(), path.lexically_relative(dir).generic_string().c_str());
    if (fs::is_symlink(status)) {
        archive_entry_set_mode(entry.get(), AE_IFLNK | 0755);
        archive_entry_copy_symlink(entry.get(), fs::read_symlink(path).c_str());
    } else if (fs::is_directory(status)) {
        archive_entry_set_mode(entry.get(), AE_IFDIR | 0755);
    } else if (fs::is_regular_file(status)) {
        archive_entry_set_mode(entry.get(), AE_IFREG | 0755);
        archive_entry_set_size(entry.get(), static_cast<la_int64_t>(fs::file_size(path)));
    } else {
        return;  // sockets, fifos, devices: not part of an action
    }
    if (archive_write_header(writer, entry.get()) != ARCHIVE_OK) zip_failure(writer);
    if (fs::is_regular_file(status)) zip_file_data(writer, path);
}

}  // namespace

payload_kind detect_kind(std::string_view data) {
    if (is_zip(data)) return payload_kind::zip;
    if (is_gzip(data)) return payload_kind::gzip;
    if (is_elf(data)) return payload_kind::elf;
    if (is_script(data)) return payload_kind::script;
    return payload_kind::other;
}

bool is_runnable(std::string_view head) { return is_elf(head) || is_script(head); }

bool is_runnable_file(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::string head(HEAD_BYTES, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return is_runnable(head);
}

void extract_archive(std::string_view data, const std::filesystem::path& dest) {
    const utf8_names names;
    const std::uint64_t max_bytes = max_extract_bytes();
    scan_archive(data, max_bytes);
    extraction x;
    std::error_code error;
    x.root = fs::canonical(dest, error);  // no symlinks above: SECURE_SYMLINKS checks them all
    if (error) {
        throw extract_error("cannot extract archive: " + dest.string() + ": " + error.message());
    }
    x.max_bytes = max_bytes;
    write_archive(data, x);
}

bool is_jar(std::string_view data) {
    if (detect_kind(data) != payload_kind::zip) return false;
    try {
        const utf8_names names;
        const archive_reader reader = open_reader(data);
        while (archive_entry* entry = next_entry(reader.get())) {
            const char* name = archive_entry_pathname(entry);
            if (name != nullptr && std::string_view(name) == "META-INF/MANIFEST.MF") return true;
        }
    } catch (const extract_error&) {
        // not readable: not a jar (extraction will report the error)
    }
    return false;
}

void unpack_payload(std::string_view data, const std::filesystem::path& dest) {
    const payload_kind kind = detect_kind(data);
    if (kind == payload_kind::zip || kind == payload_kind::gzip) {
        extract_archive(data, dest);
    } else {
        write_executable(data, dest / "exec");
    }
}

std::string zip_directory(const std::filesystem::path& dir) {
    try {
        std::vector<fs::path> paths;
        for (const auto& item : fs::recursive_directory_iterator(dir)) paths.push_back(item);
        std::sort(paths.begin(), paths.end());
        std::string out;
        const archive_writer writer = open_zip_writer(out);
        for (const auto& path : paths) zip_path(writer.get(), dir, path);
        if (archive_write_close(writer.get()) != ARCHIVE_OK) zip_failure(writer.get());
        return out;
    } catch (const fs::filesystem_error& e) {
        throw extract_error(std::string("cannot zip: ") + e.what());
    }
}

}  // namespace actionloop
