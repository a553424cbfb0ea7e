#include "archive_builder.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "process_tools.hpp"
#include "test_util.hpp"

namespace support {
namespace {

constexpr unsigned S_FILE = 0100000;
constexpr unsigned S_DIR = 0040000;
constexpr unsigned S_LINK = 0120000;

std::uint32_t crc32(const std::string& data) {
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) {
                c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
            }
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t crc = 0xFFFFFFFFU;
    for (unsigned char byte : data) {
        crc = table[(crc ^ byte) & 0xFFU] ^ (crc >> 8);
    }
    return crc ^ 0xFFFFFFFFU;
}

void put16(std::string& out, unsigned value) {
    out.push_back(static_cast<char>(value & 0xFFU));
    out.push_back(static_cast<char>((value >> 8) & 0xFFU));
}

void put32(std::string& out, std::uint32_t value) {
    put16(out, value & 0xFFFFU);
    put16(out, (value >> 16) & 0xFFFFU);
}

unsigned unix_mode(const archive_entry& entry) {
    switch (entry.type) {
        case archive_entry::kind::directory:
            return S_DIR | (entry.mode & 07777U);
        case archive_entry::kind::symlink:
            return S_LINK | 0777U;
        case archive_entry::kind::hard_link:
            throw std::runtime_error("zip has no hard links");
        case archive_entry::kind::file:
            break;
    }
    return S_FILE | (entry.mode & 07777U);
}

// Fields shared by the local header and the central directory record, from "version
// needed" to "extra field length".
std::string common_fields(const archive_entry& entry) {
    std::string out;
    const auto size = static_cast<std::uint32_t>(entry.content.size());
    put16(out, 10);    // version needed to extract: 1.0 (stored)
    put16(out, 0);     // flags
    put16(out, 0);     // method: stored
    put16(out, 0);     // mod time
    put16(out, 0x21);  // mod date: 1980-01-01
    put32(out, crc32(entry.content));
    put32(out, size);  // compressed size
    put32(out, size);  // uncompressed size
    put16(out, static_cast<unsigned>(entry.name.size()));
    put16(out, 0);  // extra field length
    return out;
}

std::string central_record(const archive_entry& entry, bool unix_modes, std::uint32_t offset) {
    std::string out;
    put32(out, 0x02014b50U);
    put16(out, unix_modes ? (3U << 8) | 20U : 20U);  // made by: Unix or MS-DOS, zip 2.0
    out += common_fields(entry);
    put16(out, 0);  // comment length
    put16(out, 0);  // disk number
    put16(out, 0);  // internal attributes
    const std::uint32_t dos_dir = entry.type == archive_entry::kind::directory ? 0x10U : 0U;
    put32(out,
          unix_modes ? (static_cast<std::uint32_t>(unix_mode(entry)) << 16) | dos_dir : dos_dir);
    put32(out, offset);
    return out + entry.name;
}

void put_octal(char* field, std::size_t width, unsigned long long value) {
    std::snprintf(field, width, "%0*llo", static_cast<int>(width - 1), value);
}

char tar_type(archive_entry::kind type) {
    switch (type) {
        case archive_entry::kind::directory:
            return '5';
        case archive_entry::kind::symlink:
            return '2';
        case archive_entry::kind::hard_link:
            return '1';
        case archive_entry::kind::file:
            break;
    }
    return '0';
}

bool is_link(const archive_entry& entry) {
    return entry.type == archive_entry::kind::symlink ||
           entry.type == archive_entry::kind::hard_link;
}

// One 512-byte ustar header; `name` and `link` must fit their fields (99 bytes each).
std::string ustar_block(const std::string& name, const std::string& link, char type, unsigned mode,
                        std::size_t size) {
    std::array<char, 512> block{};
    std::memcpy(block.data(), name.data(), std::min<std::size_t>(name.size(), 99));
    put_octal(block.data() + 100, 8, mode & 07777U);
    put_octal(block.data() + 108, 8, 0);  // uid
    put_octal(block.data() + 116, 8, 0);  // gid
    put_octal(block.data() + 124, 12, size);
    put_octal(block.data() + 136, 12, 0);  // mtime
    block[156] = type;
    std::memcpy(block.data() + 157, link.data(), std::min<std::size_t>(link.size(), 99));
    std::memcpy(block.data() + 257, "ustar", 6);
    std::memcpy(block.data() + 263, "00", 2);
    std::memset(block.data() + 148, ' ', 8);
    unsigned long sum = 0;
    for (char c : block) {
        sum += static_cast<unsigned char>(c);
    }
    std::snprintf(block.data() + 148, 8, "%06lo", sum);
    block[155] = ' ';
    return std::string(block.data(), block.size());
}

// A pax record "<length> key=value\n", its length counting its own digits.
std::string pax_record(const std::string& key, const std::string& value) {
    const std::size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
    std::size_t length = body + 1;
    while (std::to_string(length).size() + body != length) ++length;
    return std::to_string(length) + " " + key + "=" + value + "\n";
}

std::string padded(std::string data) {
    data.append((512 - data.size() % 512) % 512, '\0');
    return data;
}

// The entry's header, preceded by a pax extended header when its name or link is too long.
std::string tar_header(const archive_entry& entry) {
    const std::string link = is_link(entry) ? entry.content : "";
    std::string records;
    if (entry.name.size() > 99) records += pax_record("path", entry.name);
    if (link.size() > 99) records += pax_record("linkpath", link);
    const bool has_data = entry.type == archive_entry::kind::file;
    std::string out;
    if (!records.empty()) {
        out = ustar_block("PaxHeader", "", 'x', 0644, records.size()) + padded(records);
    }
    return out + ustar_block(entry.name, link, tar_type(entry.type), entry.mode,
                             has_data ? entry.content.size() : 0);
}

}  // namespace

archive_entry file_entry(const std::string& name, const std::string& content, unsigned mode) {
    return archive_entry{name, content, mode, archive_entry::kind::file};
}

archive_entry dir_entry(const std::string& name) {
    const std::string slashed = !name.empty() && name.back() == '/' ? name : name + "/";
    return archive_entry{slashed, "", 0755, archive_entry::kind::directory};
}

archive_entry symlink_entry(const std::string& name, const std::string& target) {
    return archive_entry{name, target, 0777, archive_entry::kind::symlink};
}

archive_entry hard_link_entry(const std::string& name, const std::string& target) {
    return archive_entry{name, target, 0644, archive_entry::kind::hard_link};
}

std::vector<archive_entry> entries_from_dir(const std::string& dir) {
    std::vector<archive_entry> entries;
    for (const auto& item : fs::recursive_directory_iterator(dir)) {
        if (item.is_regular_file()) {
            const auto mode = static_cast<unsigned>(item.status().permissions()) & 0777U;
            entries.push_back(file_entry(fs::relative(item.path(), dir).generic_string(),
                                         read_file(item.path()), mode));
        }
    }
    std::sort(entries.begin(), entries.end(),
              [](const archive_entry& a, const archive_entry& b) { return a.name < b.name; });
    return entries;
}

std::string make_zip(const std::vector<archive_entry>& entries, bool unix_modes) {
    std::string out;
    std::string directory;
    for (const auto& entry : entries) {
        const auto offset = static_cast<std::uint32_t>(out.size());
        put32(out, 0x04034b50U);
        out += common_fields(entry) + entry.name + entry.content;
        directory += central_record(entry, unix_modes, offset);
    }
    const auto directory_offset = static_cast<std::uint32_t>(out.size());
    out += directory;
    put32(out, 0x06054b50U);
    put16(out, 0);  // this disk
    put16(out, 0);  // disk with the central directory
    put16(out, static_cast<unsigned>(entries.size()));
    put16(out, static_cast<unsigned>(entries.size()));
    put32(out, static_cast<std::uint32_t>(directory.size()));
    put32(out, directory_offset);
    put16(out, 0);  // comment length
    return out;
}

std::string make_tar_gz(const std::vector<archive_entry>& entries) {
    std::string tar;
    for (const auto& entry : entries) {
        tar += tar_header(entry);
        if (entry.type == archive_entry::kind::file) {
            tar += padded(entry.content);
        }
    }
    tar.append(1024, '\0');
    return gzip(tar);
}

std::string gzip(const std::string& data) {
    temp_dir dir("actionloop-gzip");
    const command_result result =
        run_command({"gzip", "-c", "-n"}, data, path_only_env(), dir.path());
    if (result.exit_code != 0) {
        throw std::runtime_error("gzip failed: " + result.err);
    }
    return result.out;
}

std::string base64_encode(const std::string& data) {
    static const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        const unsigned n = (static_cast<unsigned char>(data[i]) << 16) |
                           (static_cast<unsigned char>(data[i + 1]) << 8) |
                           static_cast<unsigned char>(data[i + 2]);
        out += alphabet[(n >> 18) & 63U];
        out += alphabet[(n >> 12) & 63U];
        out += alphabet[(n >> 6) & 63U];
        out += alphabet[n & 63U];
    }
    if (i < data.size()) {
        unsigned n = static_cast<unsigned char>(data[i]) << 16;
        const bool two = i + 1 < data.size();
        if (two) {
            n |= static_cast<unsigned char>(data[i + 1]) << 8;
        }
        out += alphabet[(n >> 18) & 63U];
        out += alphabet[(n >> 12) & 63U];
        out += two ? alphabet[(n >> 6) & 63U] : '=';
        out += '=';
    }
    return out;
}

}  // namespace support
