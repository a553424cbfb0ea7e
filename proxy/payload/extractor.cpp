// Extraction of /init payloads with libarchive.
//
// extract_archive reads the archive twice from memory. The first pass only reads headers: it
// checks every name, type and link, counts entries and declared sizes, and builds the tree the
// entries make (payload/archive_tree.hpp), in their order, so that a hostile archive is refused
// before anything is written, whatever the order of its entries. The second pass writes with
// archive_write_disk under the secure flags, prefixing every name with the canonical destination
// (which is why ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS cannot be used: it refuses the prefixed
// absolute names; our own check refuses absolute names instead), creating missing parent folders
// 0755 and counting the bytes actually written. A last pass reads back what was written and
// checks it again with the same tree: every symlink resolves inside, no file shares its inode
// with one outside. Both passes and the check stop at OW_EXTRACT_TIMEOUT_MS.
#include "payload/extractor.hpp"
#include "payload/archive_tree.hpp"
#include "settings.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

namespace actionloop {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t MAX_ENTRIES = 100000;
constexpr std::size_t MAX_PATH_BYTES = 4095;  // Linux PATH_MAX, its NUL aside
constexpr std::size_t HEAD_BYTES = 64;
constexpr std::size_t WRITE_PIECE = std::size_t{1} << 20;
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

std::string quote_name(std::string_view name) { return quote_entry_name(name); }

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

[[noreturn]] void too_many_entries() {
    throw extract_error("archive has more than " + std::to_string(MAX_ENTRIES) + " entries");
}

void count_entry(std::size_t& entries) {
    if (++entries > MAX_ENTRIES) too_many_entries();
}

// The folders that names imply count as entries too (the root aside): a name of 2,000
// components makes 2,000 folders.
void check_tree_size(const archive_tree& tree) {
    if (tree.size() > MAX_ENTRIES + 1) too_many_entries();
}

// OW_EXTRACT_TIMEOUT_MS, read at each archive (60 s by default): checked before each entry
// and each block of data, in every pass.
// A year: a larger setting would overflow the clock; it means "no practical bound" anyway.
constexpr std::uint64_t MAX_TIMEOUT_MS = std::uint64_t{365} * 24 * 3600 * 1000;

class extract_deadline {
public:
    extract_deadline()
        : limit_ms_(extract_timeout_ms_now()),
          end_(std::chrono::steady_clock::now() +
               std::chrono::milliseconds(std::min(limit_ms_, MAX_TIMEOUT_MS))) {}
    void check() const {
        if (std::chrono::steady_clock::now() <= end_) return;
        throw extract_error("archive takes more than " + std::to_string(limit_ms_) +
                            " ms to extract");
    }

private:
    std::uint64_t limit_ms_;
    std::chrono::steady_clock::time_point end_;
};

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

// Refuses a name or link target that Linux could not hold (PATH_MAX).
void check_length(std::string_view raw, const char* text, const char* what) {
    if (text != nullptr && std::strlen(text) > MAX_PATH_BYTES) {
        refuse(raw, std::string("has ") + what + " longer than " + std::to_string(MAX_PATH_BYTES) +
                        " bytes");
    }
}

// Checks one entry's name, type and hard-link target; returns its normal name ("" for the
// archive's own root folder, e.g. "./").
std::string checked_name(archive_entry* entry) {
    const char* raw = archive_entry_pathname(entry);
    if (raw == nullptr) throw extract_error("archive entry has an unreadable name");
    check_length(raw, raw, "a name");
    check_length(raw, archive_entry_hardlink(entry), "a link target");
    check_length(raw, archive_entry_symlink(entry), "a link target");
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

// Adds a checked entry to the tree, refusing what the tree refuses.
void add_to_tree(archive_tree& tree, archive_entry* entry, const std::string& name) {
    const char* raw = archive_entry_pathname(entry);
    std::optional<std::string> refused;
    if (const char* target = archive_entry_hardlink(entry)) {
        std::string normal_target;
        normalize_name(target, normal_target);
        refused = tree.add_hard_link(name, normal_target);
    } else if (archive_entry_filetype(entry) == AE_IFDIR) {
        refused = tree.add_folder(name);
    } else if (archive_entry_filetype(entry) == AE_IFLNK) {
        const char* link = archive_entry_symlink(entry);
        refused = tree.add_symlink(name, link != nullptr ? link : "");
    } else {
        refused = tree.add_file(name);
    }
    if (refused) refuse(raw, *refused);
    check_tree_size(tree);
}

// Refuses the first symlink of the tree that leads outside.
void check_links(const archive_tree& tree) {
    if (const auto escaping = tree.first_escaping_link()) {
        refuse(escaping->name,
               "is a symlink to " + quote_name(escaping->target) + " outside the action directory");
    }
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
void scan_archive(std::string_view data, std::uint64_t max_bytes, const extract_deadline& time) {
    const archive_reader reader = open_reader(data);
    archive_tree tree;
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
    while (archive_entry* entry = next_entry(reader.get())) {
        time.check();
        count_entry(entries);
        const std::string name = checked_name(entry);
        if (name.empty()) continue;  // the archive's own root folder
        add_to_tree(tree, entry, name);
        const bool is_link =
            archive_entry_filetype(entry) == AE_IFLNK && archive_entry_hardlink(entry) == nullptr;
        if (!is_link && archive_entry_size_is_set(entry) && archive_entry_size(entry) > 0) {
            add_bytes(bytes, static_cast<std::uint64_t>(archive_entry_size(entry)), max_bytes);
        }
    }
    time.check();
    check_links(tree);
}

// ---- writing ---------------------------------------------------------------------------------

struct extraction {
    fs::path root;  // canonical destination
    const extract_deadline* time = nullptr;
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
// A folder is written after all those above it, so the walk up stops at the first one seen.
void write_parents(archive* writer, extraction& x, const std::string& name) {
    std::vector<std::string> missing;
    for (std::size_t slash = name.rfind('/'); slash != std::string::npos && slash > 0;
         slash = name.rfind('/', slash - 1)) {
        std::string parent = name.substr(0, slash);
        if (x.seen.count(parent) != 0) break;
        missing.push_back(std::move(parent));
    }
    for (auto parent = missing.rbegin(); parent != missing.rend(); ++parent) {
        x.seen.insert(*parent);
        const entry_ptr folder{archive_entry_new()};
        archive_entry_copy_pathname(folder.get(), on_disk(x, *parent).c_str());
        archive_entry_set_mode(folder.get(), AE_IFDIR | 0755);
        write_header(writer, folder.get(), *parent);
        finish_entry(writer, *parent);
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

// Writes one block of data in pieces of WRITE_PIECE bytes, checking the time before each (a
// stored zip entry comes as one block, however big).
void write_block(archive* writer, const extraction& x, const char* block, std::size_t size,
                 la_int64_t offset, std::string_view name) {
    for (std::size_t done = 0; done < size; done += WRITE_PIECE) {
        x.time->check();
        const std::size_t piece = std::min(WRITE_PIECE, size - done);
        if (archive_write_data_block(writer, block + done, piece,
                                     offset + static_cast<la_int64_t>(done)) != ARCHIVE_OK) {
            entry_failure(name, writer);
        }
    }
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
        write_block(writer, x, static_cast<const char*>(block), size, offset, name);
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
        x.time->check();
        write_entry(reader.get(), writer.get(), entry, x);
    }
    if (archive_write_close(writer.get()) != ARCHIVE_OK) archive_failure(writer.get());
}

// ---- checking what was written ---------------------------------------------------------------

// A regular file with more than one name: how many names it has, how many the folder holds.
struct shared_inode {
    std::string name;  // the first one met
    nlink_t links = 0;
    nlink_t inside = 0;
};
using inode_key = std::pair<dev_t, ino_t>;

[[noreturn]] void check_failure(const std::string& what) {
    throw extract_error("cannot check the extracted archive: " + what);
}

void add_written(archive_tree& tree, std::map<inode_key, shared_inode>& shared,
                 const fs::path& root, const fs::path& path) {
    const std::string name = path.lexically_relative(root).generic_string();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) check_failure(name + ": " + std::strerror(errno));
    std::optional<std::string> refused;
    if (S_ISLNK(st.st_mode)) {
        std::error_code error;
        const fs::path target = fs::read_symlink(path, error);
        if (error) check_failure(name + ": " + error.message());
        refused = tree.add_symlink(name, target.string());
    } else if (S_ISDIR(st.st_mode)) {
        refused = tree.add_folder(name);
    } else if (S_ISREG(st.st_mode)) {
        refused = tree.add_file(name);
        if (st.st_nlink > 1) {
            shared_inode& file = shared[inode_key{st.st_dev, st.st_ino}];
            if (file.name.empty()) file.name = name;
            file.links = st.st_nlink;
            ++file.inside;
        }
    } else {
        refused = "is not a file, a folder or a link";
    }
    if (refused) refuse(name, *refused);
}

// Last pass: what is on disk now, checked as the archive was (whatever libarchive made of the
// entries), plus hard links: a file with more names than the folder holds shares its inode
// with a file outside.
void check_written(const extraction& x) {
    archive_tree tree;
    std::map<inode_key, shared_inode> shared;
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(x.root, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        x.time->check();
        add_written(tree, shared, x.root, it->path());
    }
    if (error) check_failure(error.message());
    for (const auto& inode : shared) {
        if (inode.second.inside < inode.second.links) {
            refuse(inode.second.name, "is a hard link to a file outside the action directory");
        }
    }
    check_links(tree);
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
    std::vector<char> buffer(std::size_t{64} * 1024);
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
    const extract_deadline time;
    const std::uint64_t max_bytes = max_extract_bytes();
    scan_archive(data, max_bytes, time);
    extraction x;
    x.time = &time;
    std::error_code error;
    x.root = fs::canonical(dest, error);  // no symlinks above: SECURE_SYMLINKS checks them all
    if (error) {
        throw extract_error("cannot extract archive: " + dest.string() + ": " + error.message());
    }
    x.max_bytes = max_bytes;
    write_archive(data, x);
    check_written(x);
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
