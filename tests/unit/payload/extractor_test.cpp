// Unit tests for proxy/extractor: payload detection (exact byte rules and size thresholds), safe
// zip and tar.gz extraction (hostile, corrupt and oversized archives are refused and nothing is
// written outside the action directory), and zip_directory round trips. Archives are built in
// memory with libarchive's writer, so no binary fixtures are needed.
#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <locale.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "payload/extractor.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using actionloop::detect_kind;
using actionloop::extract_archive;
using actionloop::extract_error;
using actionloop::payload_kind;
using namespace std::string_literals;

namespace {

// ---- archive building ------------------------------------------------------------------------

enum class format { zip, tar_gz };
constexpr format FORMATS[] = {format::zip, format::tar_gz};

std::string format_name(format f) { return f == format::zip ? "zip" : "tar.gz"; }

constexpr mode_t HARD_LINK = 0;  // test_entry::type for a hard link

struct test_entry {
    std::string name;
    std::string data;  // file content, or the target of a link
    mode_t type = AE_IFREG;
    mode_t perm = 0644;
};

test_entry file(std::string name, std::string data, mode_t perm = 0644) {
    return {std::move(name), std::move(data), AE_IFREG, perm};
}
test_entry folder(std::string name) { return {std::move(name), "", AE_IFDIR, 0755}; }
test_entry soft_link(std::string name, std::string target) {
    return {std::move(name), std::move(target), AE_IFLNK, 0777};
}
test_entry hard_link(std::string name, std::string target) {
    return {std::move(name), std::move(target), HARD_LINK, 0644};
}

la_ssize_t append(archive*, void* out, const void* buffer, size_t length) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(buffer), length);
    return static_cast<la_ssize_t>(length);
}

// Writes one entry; false on any libarchive failure.
bool add_entry(archive* a, const test_entry& e) {
    archive_entry* entry = archive_entry_new();
    archive_entry_copy_pathname(entry, e.name.c_str());
    if (e.type == HARD_LINK) {
        archive_entry_set_mode(entry, AE_IFREG | e.perm);
        archive_entry_copy_hardlink(entry, e.data.c_str());
    } else {
        archive_entry_set_mode(entry, e.type | e.perm);
    }
    if (e.type == AE_IFLNK) archive_entry_copy_symlink(entry, e.data.c_str());
    if (e.type == AE_IFCHR) archive_entry_set_rdev(entry, makedev(1, 3));
    const bool has_data = e.type == AE_IFREG;
    archive_entry_set_size(entry, has_data ? static_cast<la_int64_t>(e.data.size()) : 0);
    bool ok = archive_write_header(a, entry) == ARCHIVE_OK;
    if (ok && has_data && !e.data.empty()) {
        ok = archive_write_data(a, e.data.data(), e.data.size()) ==
             static_cast<la_ssize_t>(e.data.size());
    }
    archive_entry_free(entry);
    return ok;
}

std::string write_archive(archive* a, const std::vector<test_entry>& entries) {
    std::string out;
    REQUIRE(archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK);
    REQUIRE(archive_write_open(a, &out, nullptr, append, nullptr) == ARCHIVE_OK);
    bool ok = true;
    for (const auto& e : entries) ok = ok && add_entry(a, e);
    REQUIRE(ok);
    REQUIRE(archive_write_close(a) == ARCHIVE_OK);
    archive_write_free(a);
    return out;
}

std::string make_archive(format f, const std::vector<test_entry>& entries) {
    archive* a = archive_write_new();
    if (f == format::zip) {
        REQUIRE(archive_write_set_format_zip(a) == ARCHIVE_OK);
    } else {
        REQUIRE(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK);
        REQUIRE(archive_write_add_filter_gzip(a) == ARCHIVE_OK);
    }
    return write_archive(a, entries);
}

// A gzip stream whose content is `text`, not a tar.
std::string make_gzip(const std::string& text) {
    archive* a = archive_write_new();
    REQUIRE(archive_write_set_format_raw(a) == ARCHIVE_OK);
    REQUIRE(archive_write_add_filter_gzip(a) == ARCHIVE_OK);
    return write_archive(a, {file("data", text)});
}

unsigned read_u16(const std::string& s, std::size_t at) {
    return static_cast<unsigned char>(s[at]) | static_cast<unsigned char>(s[at + 1]) << 8U;
}

unsigned long read_u32(const std::string& s, std::size_t at) {
    return read_u16(s, at) | static_cast<unsigned long>(read_u16(s, at + 2)) << 16U;
}

// Rewrites a zip's central directory the way Java's zipfs writes it: "made by" MS-DOS and no
// external attributes, so there is no unix mode at all.
std::string strip_unix_modes(std::string zip) {
    REQUIRE(zip.size() >= 22);
    const std::size_t end = zip.size() - 22;
    REQUIRE(zip.compare(end, 4, "PK\x05\x06") == 0);
    const unsigned count = read_u16(zip, end + 10);
    std::size_t at = read_u32(zip, end + 16);
    for (unsigned i = 0; i < count; ++i) {
        REQUIRE(zip.compare(at, 4, "PK\x01\x02") == 0);
        zip[at + 5] = '\0';
        zip.replace(at + 38, 4, 4, '\0');
        at += 46 + read_u16(zip, at + 28) + read_u16(zip, at + 30) + read_u16(zip, at + 32);
    }
    return zip;
}

// ---- file system helpers ---------------------------------------------------------------------

// A unique folder under the system temp dir with an empty `action` folder inside (the
// destination); removed at the end of the test. The root is the destination's parent, which a
// hostile archive must never touch.
struct temp_dir {
    fs::path root;
    fs::path dest;
    temp_dir() {
        static std::atomic<int> counter{0};
        root = fs::temp_directory_path() / ("actionloop-extractor-" + std::to_string(getpid()) +
                                            "-" + std::to_string(counter++));
        fs::remove_all(root);
        dest = root / "action";
        fs::create_directories(dest);
    }
    ~temp_dir() {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

// Every path under `dir`, relative, sorted, symlinks not followed.
std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& item : fs::recursive_directory_iterator(dir)) {
        names.push_back(item.path().lexically_relative(dir).generic_string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// path -> "file:<content>", "dir" or "link:<target>" for everything under `dir`.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> tree;
    for (const auto& name : listing(dir)) {
        const fs::path path = dir / name;
        if (fs::is_symlink(path)) {
            tree[name] = "link:" + fs::read_symlink(path).string();
        } else if (fs::is_directory(path)) {
            tree[name] = "dir";
        } else {
            std::ifstream in(path, std::ios::binary);
            tree[name] = "file:" + std::string(std::istreambuf_iterator<char>(in), {});
        }
    }
    return tree;
}

void write_file(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

unsigned perms_of(const fs::path& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// The extract_error message, or nullopt when extraction succeeded.
std::optional<std::string> extract_failure(const std::string& data, const fs::path& dest) {
    try {
        extract_archive(data, dest);
    } catch (const extract_error& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

// Refused with exactly `message`, and nothing at all was written, inside or outside dest.
void check_refused(const temp_dir& tmp, const std::string& data, const std::string& message) {
    const auto failure = extract_failure(data, tmp.dest);
    REQUIRE(failure.has_value());
    CHECK(*failure == message);
    CHECK(listing(tmp.root) == std::vector<std::string>{"action"});
}

struct scoped_env {
    std::string name;
    scoped_env(std::string n, const char* value) : name(std::move(n)) {
        ::setenv(name.c_str(), value, 1);
    }
    ~scoped_env() { ::unsetenv(name.c_str()); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

struct scoped_umask {
    mode_t old;
    explicit scoped_umask(mode_t mask) : old(::umask(mask)) {}
    ~scoped_umask() { ::umask(old); }
    scoped_umask(const scoped_umask&) = delete;
    scoped_umask& operator=(const scoped_umask&) = delete;
};

// Switches this thread's LC_CTYPE to C.UTF-8 for the scope.
struct utf8_thread_locale {
    locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
    locale_t previous = uselocale(utf8);
    utf8_thread_locale() { REQUIRE(utf8 != locale_t{}); }
    ~utf8_thread_locale() {
        uselocale(previous);
        freelocale(utf8);
    }
    utf8_thread_locale(const utf8_thread_locale&) = delete;
    utf8_thread_locale& operator=(const utf8_thread_locale&) = delete;
};

std::string bytes(std::initializer_list<int> values) {
    std::string s;
    for (int v : values) s.push_back(static_cast<char>(v));
    return s;
}

const std::string ELF_HEAD = bytes({0x7f, 'E', 'L', 'F'});
const std::string SCRIPT = "#!/bin/sh\necho hello\n";

}  // namespace

// ---- detection -------------------------------------------------------------------------------

TEST_CASE("detect_kind: zip is PK, then byte2 in {3,5,7} and byte3 in {4,6,8}") {
    for (int b2 = 0; b2 < 10; ++b2) {
        for (int b3 = 0; b3 < 10; ++b3) {
            const bool zip = (b2 == 3 || b2 == 5 || b2 == 7) && (b3 == 4 || b3 == 6 || b3 == 8);
            const std::string data = bytes({'P', 'K', b2, b3});
            CAPTURE(b2);
            CAPTURE(b3);
            CHECK((detect_kind(data) == payload_kind::zip) == zip);
        }
    }
    CHECK(detect_kind("PK\x03") == payload_kind::other);
    CHECK(detect_kind("pk\x03\x04") == payload_kind::other);
    CHECK(detect_kind(make_archive(format::zip, {file("exec", SCRIPT)})) == payload_kind::zip);
}

TEST_CASE("detect_kind: gzip is 1f 8b 08") {
    CHECK(detect_kind(bytes({0x1f, 0x8b, 0x08})) == payload_kind::gzip);
    CHECK(detect_kind(bytes({0x1f, 0x8b, 0x09})) == payload_kind::other);
    CHECK(detect_kind(bytes({0x1f, 0x8b})) == payload_kind::other);
    CHECK(detect_kind(make_archive(format::tar_gz, {file("exec", SCRIPT)})) == payload_kind::gzip);
}

TEST_CASE("detect_kind: ELF is 7f E L F and more than 52 bytes") {
    CHECK(detect_kind(ELF_HEAD + std::string(49, '\0')) == payload_kind::elf);    // 53 bytes
    CHECK(detect_kind(ELF_HEAD + std::string(48, '\0')) == payload_kind::other);  // 52 bytes
    CHECK(detect_kind("\177ELG" + std::string(60, '\0')) == payload_kind::other);
}

TEST_CASE("detect_kind: a script is #! and more than 2 bytes") {
    CHECK(detect_kind("#!x") == payload_kind::script);
    CHECK(detect_kind(SCRIPT) == payload_kind::script);
    CHECK(detect_kind("#!") == payload_kind::other);
    CHECK(detect_kind("# !/bin/sh") == payload_kind::other);
}

TEST_CASE("detect_kind: anything else is other") {
    CHECK(detect_kind("") == payload_kind::other);
    CHECK(detect_kind("hello") == payload_kind::other);
    CHECK(detect_kind("#include <nlohmann/json.hpp>\n") == payload_kind::other);
}

TEST_CASE("is_runnable: only ELF and scripts") {
    CHECK(actionloop::is_runnable(ELF_HEAD + std::string(60, '\1')));
    CHECK(actionloop::is_runnable(SCRIPT));
    CHECK_FALSE(actionloop::is_runnable(ELF_HEAD));
    CHECK_FALSE(actionloop::is_runnable("PK\x03\x04 and more bytes"));
    CHECK_FALSE(actionloop::is_runnable(bytes({0x1f, 0x8b, 0x08, 0})));
    CHECK_FALSE(actionloop::is_runnable("int main() {}"));
}

TEST_CASE("is_runnable_file: reads the head of the file") {
    const temp_dir tmp;
    write_file(tmp.dest / "elf", ELF_HEAD + std::string(100000, '\2'));
    write_file(tmp.dest / "script", SCRIPT);
    write_file(tmp.dest / "short", "#!");
    write_file(tmp.dest / "source", "json main(json args) { return args; }");
    CHECK(actionloop::is_runnable_file(tmp.dest / "elf"));
    CHECK(actionloop::is_runnable_file(tmp.dest / "script"));
    CHECK_FALSE(actionloop::is_runnable_file(tmp.dest / "short"));
    CHECK_FALSE(actionloop::is_runnable_file(tmp.dest / "source"));
    CHECK_FALSE(actionloop::is_runnable_file(tmp.dest / "missing"));
    CHECK_FALSE(actionloop::is_runnable_file(tmp.dest));
}

// ---- unpack_payload --------------------------------------------------------------------------

TEST_CASE("unpack_payload: a plain payload becomes exec with mode 0755") {
    const temp_dir tmp;
    const scoped_umask mask(077);
    const std::string source = "#include <nlohmann/json.hpp>\n";
    actionloop::unpack_payload(source, tmp.dest);
    CHECK(listing(tmp.dest) == std::vector<std::string>{"exec"});
    CHECK(read_file(tmp.dest / "exec") == source);
    CHECK(perms_of(tmp.dest / "exec") == 0755);
}

TEST_CASE("unpack_payload: an archive is extracted") {
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const temp_dir tmp;
        actionloop::unpack_payload(make_archive(f, {file("exec", SCRIPT, 0755)}), tmp.dest);
        CHECK(listing(tmp.dest) == std::vector<std::string>{"exec"});
        CHECK(read_file(tmp.dest / "exec") == SCRIPT);
    }
}

// ---- extraction that works -------------------------------------------------------------------

TEST_CASE("extract_archive: a top-level exec and nested sources round-trip") {
    const std::string binary = ELF_HEAD + std::string(3000, '\0') + "tail";
    const std::map<std::string, std::string> expected{
        {"empty.txt", "file:"},
        {"exec", "file:" + binary},
        {"src", "dir"},
        {"src/main.cpp", "file:int f();\n"},
        {"src/util", "dir"},
        {"src/util/strings.cpp", "file:// strings\n"},
        {"src/util/strings.hpp", "file:#pragma once\n"}};
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const temp_dir tmp;
        extract_archive(
            make_archive(f, {file("exec", binary, 0755), folder("src/"), folder("src/util/"),
                             file("src/main.cpp", "int f();\n"),
                             file("src/util/strings.hpp", "#pragma once\n"),
                             file("src/util/strings.cpp", "// strings\n"), file("empty.txt", "")}),
            tmp.dest);
        CHECK(snapshot(tmp.dest) == expected);
        CHECK(perms_of(tmp.dest / "exec") == 0755);
        CHECK(perms_of(tmp.dest / "src/main.cpp") == 0644);
        CHECK(actionloop::is_runnable_file(tmp.dest / "exec"));
    }
}

TEST_CASE("extract_archive: a tar without folder entries creates the parents 0755") {
    const temp_dir tmp;
    const scoped_umask mask(077);
    extract_archive(make_archive(format::tar_gz,
                                 {file("lib/sub/data.txt", "data"), file("lib/top.txt", "top")}),
                    tmp.dest);
    CHECK(listing(tmp.dest) ==
          std::vector<std::string>{"lib", "lib/sub", "lib/sub/data.txt", "lib/top.txt"});
    CHECK(read_file(tmp.dest / "lib/sub/data.txt") == "data");
    CHECK(perms_of(tmp.dest / "lib") == 0755);
    CHECK(perms_of(tmp.dest / "lib/sub") == 0755);
}

TEST_CASE("extract_archive: ./ names and the archive's own root folder work") {
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const temp_dir tmp;
        fs::permissions(tmp.dest, fs::perms(0750));
        extract_archive(make_archive(f, {folder("./"), file("./exec", SCRIPT, 0755),
                                         file("./lib/./a.txt", "a")}),
                        tmp.dest);
        CHECK(snapshot(tmp.dest) == std::map<std::string, std::string>{{"exec", "file:" + SCRIPT},
                                                                       {"lib", "dir"},
                                                                       {"lib/a.txt", "file:a"}});
        CHECK(perms_of(tmp.dest) == 0750);  // the root entry does not touch dest itself
    }
}

TEST_CASE("extract_archive: a zip without unix modes (Java zipfs) gives readable files") {
    const temp_dir tmp;
    const std::string zip = strip_unix_modes(
        make_archive(format::zip, {file("exec", SCRIPT, 0755), file("lib/data.txt", "data")}));
    extract_archive(zip, tmp.dest);
    CHECK(read_file(tmp.dest / "exec") == SCRIPT);
    CHECK(read_file(tmp.dest / "lib/data.txt") == "data");
    CHECK((perms_of(tmp.dest / "exec") & 0600) == 0600);
    CHECK(fs::is_directory(tmp.dest / "lib"));
}

TEST_CASE("extract_archive: symlinks inside the action directory are kept (virtualenv)") {
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const temp_dir tmp;
        extract_archive(
            make_archive(
                f,
                {folder("venv/"), folder("venv/bin/"), file("venv/bin/python3", SCRIPT, 0755),
                 soft_link("venv/bin/python", "python3"), folder("venv/lib/"),
                 file("venv/lib/site.py", "# site\n"), soft_link("venv/lib64", "lib"),
                 soft_link("venv/include", "./lib/../lib"), soft_link("exec", "venv/bin/python")}),
            tmp.dest);
        CHECK(fs::read_symlink(tmp.dest / "venv/bin/python") == "python3");
        CHECK(fs::read_symlink(tmp.dest / "venv/lib64") == "lib");
        CHECK(fs::read_symlink(tmp.dest / "exec") == "venv/bin/python");
        CHECK(read_file(tmp.dest / "exec") == SCRIPT);  // followed through two links
        CHECK(read_file(tmp.dest / "venv/lib64/site.py") == "# site\n");
    }
}

TEST_CASE("extract_archive: UTF-8 names (zip UTF-8 flag, pax headers) keep their bytes") {
    const std::string name = "d\xc3\xafr/\xe6\x97\xa5\xe6\x9c\xac.txt";  // dïr/日本.txt
    for (const format f : FORMATS) {
        INFO(format_name(f));
        std::string data;
        {
            // Written the way Java and Python write them: as UTF-8, flagged as UTF-8.
            const utf8_thread_locale utf8;
            data = make_archive(f, {file(name, "hi")});
        }
        if (f == format::zip) {
            const std::size_t central = read_u32(data, data.size() - 22 + 16);
            REQUIRE((read_u16(data, central + 8) & 0x800U) != 0);  // the UTF-8 flag
        }
        const temp_dir tmp;
        extract_archive(data, tmp.dest);  // in this process's default "C" locale
        CHECK(read_file(tmp.dest / name) == "hi");
    }
}

TEST_CASE("extract_archive: a hard link inside the archive works") {
    const temp_dir tmp;
    extract_archive(
        make_archive(format::tar_gz, {file("a.txt", "same"), hard_link("lib/b.txt", "a.txt")}),
        tmp.dest);
    CHECK(read_file(tmp.dest / "lib/b.txt") == "same");
    CHECK(fs::equivalent(tmp.dest / "a.txt", tmp.dest / "lib/b.txt"));
}

TEST_CASE("extract_archive: setuid, setgid and sticky bits are dropped") {
    const temp_dir tmp;
    extract_archive(make_archive(format::tar_gz, {file("exec", SCRIPT, 07755)}), tmp.dest);
    CHECK(perms_of(tmp.dest / "exec") == 0755);
}

// ---- hostile archives ------------------------------------------------------------------------

// Each case builds its archive and expected message from the temp dir (so absolute names can aim
// at the test's own folder) and runs in both formats.
using hostile_case = std::function<std::pair<std::string, std::string>(format, const temp_dir&)>;

void check_refused_in_both(const hostile_case& make) {
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const temp_dir tmp;
        const auto [data, message] = make(f, tmp);
        check_refused(tmp, data, message);
    }
}

TEST_CASE("extract_archive: a name with .. is refused and nothing is written") {
    SUBCASE("../escape.txt after a good entry") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {file("ok.txt", "ok"), file("../escape.txt", "x")}),
                             "archive entry '../escape.txt' escapes the action directory"s};
        });
    }
    SUBCASE("a/../../x") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {file("a/../../x", "x")}),
                             "archive entry 'a/../../x' escapes the action directory"s};
        });
    }
    SUBCASE("a folder sub/../../up/") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {folder("sub/../../up/")}),
                             "archive entry 'sub/../../up/' escapes the action directory"s};
        });
    }
}

TEST_CASE("extract_archive: an absolute name is refused and nothing is written") {
    SUBCASE("aimed next to dest") {
        check_refused_in_both([](format f, const temp_dir& tmp) {
            const std::string name = (tmp.root / "abs.txt").string();
            return std::pair{make_archive(f, {file(name, "x")}),
                             "archive entry '" + name + "' escapes the action directory"};
        });
    }
    SUBCASE("/abs.txt") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {file("/abs.txt", "x")}),
                             "archive entry '/abs.txt' escapes the action directory"s};
        });
    }
}

TEST_CASE("extract_archive: a symlink to an absolute path is refused") {
    SUBCASE("link -> /etc") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{
                make_archive(f, {soft_link("link", "/etc")}),
                "archive entry 'link' is a symlink to '/etc' outside the action directory"s};
        });
    }
    SUBCASE("link -> dest's parent, then link/passwd") {
        // The same attack as link -> /etc then link/passwd, aimed at a folder the test owns
        // (the tests may run as root); check_refused checks that no passwd appeared there.
        check_refused_in_both([](format f, const temp_dir& tmp) {
            const std::string target = tmp.root.string();
            return std::pair{make_archive(f, {soft_link("link", target), file("link/passwd", "x")}),
                             "archive entry 'link/passwd' is under the symlink 'link'"s};
        });
    }
}

TEST_CASE("extract_archive: a symlink climbing out of the action directory is refused") {
    SUBCASE("up -> ../..") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{
                make_archive(f, {soft_link("up", "../..")}),
                "archive entry 'up' is a symlink to '../..' outside the action directory"s};
        });
    }
    SUBCASE("deep/er/up -> ../../..") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {soft_link("deep/er/up", "../../..")}),
                             "archive entry 'deep/er/up' is a symlink to '../../..' outside the "
                             "action directory"s};
        });
    }
    SUBCASE("a chain of links that each look inside") {
        // d/s -> .. is dest itself; a -> d/s/.. is lexically "d" but really dest's parent.
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{
                make_archive(f, {folder("d/"), soft_link("d/s", ".."), soft_link("a", "d/s/..")}),
                "archive entry 'a' is a symlink to 'd/s/..' outside the action directory"s};
        });
    }
    SUBCASE("a chain through links listed later") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{
                make_archive(f, {soft_link("a", "s/y/.."), soft_link("s", "d"), folder("d/"),
                                 soft_link("d/y", "..")}),
                "archive entry 'a' is a symlink to 's/y/..' outside the action directory"s};
        });
    }
    SUBCASE("a loop") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {soft_link("a", "b"), soft_link("b", "a")}),
                             "archive entry 'a' is a symlink to 'b' outside the action directory"s};
        });
    }
}

TEST_CASE("extract_archive: a hard link to a path outside is refused") {
    const temp_dir tmp;
    write_file(tmp.root / "outside.txt", "secret");
    const auto refused = [&](const std::string& data, const std::string& message) {
        const auto failure = extract_failure(data, tmp.dest);
        REQUIRE(failure.has_value());
        CHECK(*failure == message);
        CHECK(listing(tmp.dest).empty());
        CHECK(read_file(tmp.root / "outside.txt") == "secret");
    };
    refused(make_archive(format::tar_gz, {hard_link("h", "../outside.txt")}),
            "archive entry 'h' is a hard link to '../outside.txt' outside the action directory");
    const std::string target = (tmp.root / "outside.txt").string();
    refused(make_archive(format::tar_gz, {hard_link("h", target)}),
            "archive entry 'h' is a hard link to '" + target + "' outside the action directory");
}

TEST_CASE("extract_archive: devices and fifos are refused") {
    const temp_dir tmp;
    check_refused(tmp, make_archive(format::tar_gz, {{"null", "", AE_IFCHR, 0666}}),
                  "archive entry 'null' is not a file, a folder or a link");
    check_refused(tmp, make_archive(format::tar_gz, {{"pipe", "", AE_IFIFO, 0644}}),
                  "archive entry 'pipe' is not a file, a folder or a link");
}

TEST_CASE("extract_archive: nothing is written through a symlink even when it points inside") {
    check_refused_in_both([](format f, const temp_dir&) {
        return std::pair{
            make_archive(f, {folder("sub/"), soft_link("link", "sub"), file("link/file", "x")}),
            "archive entry 'link/file' is under the symlink 'link'"s};
    });
}

// ---- links whose meaning depends on the order of entries ---------------------------------------

namespace {

// Each case is refused before anything is written, and the bait file next to dest keeps its
// content and its mode.
void check_refused_keeping_bait(const std::vector<test_entry>& entries, const temp_dir& tmp,
                                const std::string& message) {
    const fs::path bait = tmp.root / "bait.sh";
    write_file(bait, SCRIPT);
    fs::permissions(bait, fs::perms(0644));
    const auto failure = extract_failure(make_archive(format::tar_gz, entries), tmp.dest);
    REQUIRE(failure.has_value());
    CHECK(*failure == message);
    CHECK(listing(tmp.root) == std::vector<std::string>{"action", "bait.sh"});
    CHECK(read_file(bait) == SCRIPT);
    CHECK(perms_of(bait) == 0644);
}

}  // namespace

TEST_CASE("extract_archive: a hard link to a symlink is refused, whatever comes later") {
    const temp_dir tmp;
    const std::string bait = (tmp.root / "bait.sh").string();
    SUBCASE("the symlink replaced by a file afterwards (exec would point outside)") {
        check_refused_keeping_bait({soft_link("l", bait), hard_link("exec", "l"), file("l", "x")},
                                   tmp, "archive entry 'exec' is a hard link to the symlink 'l'");
    }
    SUBCASE("a relative symlink climbing out, replaced by a folder") {
        check_refused_keeping_bait(
            {soft_link("l", "../bait.sh"), hard_link("sub/exec", "l"), folder("l/")}, tmp,
            "archive entry 'sub/exec' is a hard link to the symlink 'l'");
    }
    SUBCASE("a symlink that points inside") {
        check_refused_keeping_bait({file("x", SCRIPT), soft_link("l", "x"), hard_link("exec", "l")},
                                   tmp, "archive entry 'exec' is a hard link to the symlink 'l'");
    }
}

TEST_CASE("extract_archive: a hard link through a symlinked folder is refused") {
    const temp_dir tmp;
    check_refused_keeping_bait(
        {soft_link("s", tmp.root.string()), hard_link("exec", "s/bait.sh"), folder("s/")}, tmp,
        "archive entry 'exec' is a hard link through the symlink 's'");
}

TEST_CASE("extract_archive: a hard link to a name the archive has not made yet is refused") {
    const temp_dir tmp;
    check_refused_keeping_bait({hard_link("exec", "later"), file("later", SCRIPT)}, tmp,
                               "archive entry 'exec' is a hard link to 'later', which is not an "
                               "earlier entry");
    check_refused_keeping_bait({folder("d/"), hard_link("exec", "d")}, tmp,
                               "archive entry 'exec' is a hard link to the folder 'd'");
}

TEST_CASE("extract_archive: an entry under a symlinked folder is refused before anything is "
          "written, even when a later entry replaces the link") {
    check_refused_in_both([](format f, const temp_dir& tmp) {
        return std::pair{make_archive(f, {soft_link("d", tmp.root.string()),
                                          file("d/escape.txt", "x"), folder("d/")}),
                         "archive entry 'd/escape.txt' is under the symlink 'd'"s};
    });
    check_refused_in_both([](format f, const temp_dir&) {
        return std::pair{make_archive(f, {folder("a/"), soft_link("a/up", ".."),
                                          file("a/up/a/x", "x"), file("a/up", "x")}),
                         "archive entry 'a/up/a/x' is under the symlink 'a/up'"s};
    });
}

TEST_CASE("extract_archive: what the last entry of a name makes is what counts") {
    SUBCASE("a file replaced by a symlink pointing out is refused") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{
                make_archive(f, {file("exec", SCRIPT, 0755), soft_link("exec", "../bait.sh")}),
                "archive entry 'exec' is a symlink to '../bait.sh' outside the action directory"s};
        });
    }
    SUBCASE("a hard link keeps the file when its target is replaced by a symlink pointing out") {
        const temp_dir tmp;
        check_refused_keeping_bait(
            {file("f", SCRIPT), hard_link("exec", "f"), soft_link("f", "../bait.sh")}, tmp,
            "archive entry 'f' is a symlink to '../bait.sh' outside the action directory");
    }
    SUBCASE("a symlink pointing out, replaced by a file, is a file") {
        for (const format f : FORMATS) {
            INFO(format_name(f));
            const temp_dir tmp;
            extract_archive(
                make_archive(f, {soft_link("exec", "../../etc/passwd"), file("exec", SCRIPT)}),
                tmp.dest);
            CHECK(snapshot(tmp.dest) ==
                  std::map<std::string, std::string>{{"exec", "file:" + SCRIPT}});
        }
    }
    SUBCASE("a symlink pointing out, replaced by a folder, is a folder") {
        for (const format f : FORMATS) {
            INFO(format_name(f));
            const temp_dir tmp;
            extract_archive(make_archive(f, {soft_link("d", tmp.root.string()), folder("d/"),
                                             file("d/a", "a")}),
                            tmp.dest);
            CHECK(snapshot(tmp.dest) ==
                  std::map<std::string, std::string>{{"d", "dir"}, {"d/a", "file:a"}});
            CHECK(listing(tmp.root) ==
                  std::vector<std::string>{"action", "action/d", "action/d/a"});
        }
    }
    SUBCASE("a hard link keeps the file its target was when the target becomes a symlink") {
        const temp_dir tmp;
        extract_archive(
            make_archive(format::tar_gz,
                         {file("f", SCRIPT, 0755), hard_link("exec", "f"), soft_link("f", "exec")}),
            tmp.dest);
        CHECK(snapshot(tmp.dest) ==
              std::map<std::string, std::string>{{"exec", "file:" + SCRIPT}, {"f", "link:exec"}});
    }
}

TEST_CASE("extract_archive: names and link targets longer than PATH_MAX are refused") {
    const std::string long_name = "d/" + std::string(4094, 'n');
    const std::string long_target = std::string(4096, 't');
    check_refused_in_both([&](format f, const temp_dir&) {
        return std::pair{make_archive(f, {file(long_name, "x")}),
                         "archive entry '" + long_name.substr(0, 200) +
                             "...' has a name longer than 4095 bytes"};
    });
    check_refused_in_both([&](format f, const temp_dir&) {
        return std::pair{make_archive(f, {soft_link("l", long_target)}),
                         "archive entry 'l' has a link target longer than 4095 bytes"s};
    });
}

// The check that links stay inside follows each symlink once: long targets and long chains cost
// time in proportion to their size (the old check re-joined the path at every component: 50 s
// for the first case). The last link points out, so the whole check runs and nothing is
// written: the time measured is the check's alone.
TEST_CASE("extract_archive: many long link targets are checked in linear time") {
    std::string deep;  // "x/x/x/...": 2000 components, 3999 bytes
    for (int i = 0; i < 2000; ++i) deep += i == 0 ? "x" : "/x";
    std::vector<test_entry> entries{folder("x/"), file("exec", SCRIPT, 0755)};
    for (int i = 0; i < 1000; ++i) entries.push_back(soft_link("l" + std::to_string(i), deep));
    entries.push_back(soft_link("out", "x/../.."));
    const std::string data = make_archive(format::tar_gz, entries);
    CHECK(data.size() < 100000);
    const temp_dir tmp;
    const auto start = std::chrono::steady_clock::now();
    check_refused(tmp, data,
                  "archive entry 'out' is a symlink to 'x/../..' outside the action directory");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < support::LINEAR_SECONDS);
}

TEST_CASE("extract_archive: links with long targets inside are kept") {
    std::string deep;
    for (int i = 0; i < 2000; ++i) deep += i == 0 ? "x" : "/x";
    const temp_dir tmp;
    extract_archive(
        make_archive(format::tar_gz, {folder("x/"), soft_link("l", deep), soft_link("m", "l/x")}),
        tmp.dest);
    CHECK(fs::read_symlink(tmp.dest / "l") == deep);
    CHECK(fs::read_symlink(tmp.dest / "m") == "l/x");
}

TEST_CASE("extract_archive: a long chain of symlinks is checked in linear time") {
    // l0 -> l1 -> ... -> l29999 -> exec, each listed before its target: only the last 40
    // resolve within the kernel's 40 hops, so the first is refused.
    std::vector<test_entry> entries;
    const int count = 30000;
    for (int i = 0; i + 1 < count; ++i) {
        entries.push_back(soft_link("l" + std::to_string(i), "l" + std::to_string(i + 1)));
    }
    entries.push_back(soft_link("l" + std::to_string(count - 1), "exec"));
    entries.push_back(file("exec", SCRIPT, 0755));
    const temp_dir tmp;
    const auto start = std::chrono::steady_clock::now();
    check_refused(tmp, make_archive(format::tar_gz, entries),
                  "archive entry 'l0' is a symlink to 'l1' outside the action directory");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < support::LINEAR_SECONDS);
}

TEST_CASE("extract_archive: 40 hops resolve, 41 do not (Linux's MAXSYMLINKS)") {
    const auto chain = [](int links) {
        std::vector<test_entry> entries{file("exec", SCRIPT, 0755)};
        for (int i = 0; i < links; ++i) {
            const std::string target = i == 0 ? "exec" : "l" + std::to_string(i - 1);
            entries.push_back(soft_link("l" + std::to_string(i), target));
        }
        return make_archive(format::tar_gz, entries);
    };
    const temp_dir ok;
    extract_archive(chain(41), ok.dest);  // l40's target, l39, reaches exec in 40 hops
    CHECK(fs::read_symlink(ok.dest / "l40") == "l39");
    CHECK(read_file(ok.dest / "l39") == SCRIPT);
    const temp_dir refused;
    check_refused(refused, chain(42),
                  "archive entry 'l41' is a symlink to 'l40' outside the action directory");
}

// ---- corrupt archives ------------------------------------------------------------------------

TEST_CASE("extract_archive: corrupt archives give an error, not a crash") {
    const std::string content = SCRIPT + std::string(2000, 'x');
    const std::string zip = make_archive(format::zip, {file("exec", content, 0755)});
    const std::string tgz = make_archive(format::tar_gz, {file("exec", content, 0755)});
    std::string data;
    SUBCASE("zip magic then garbage") { data = "PK\x03\x04" + std::string(200, '\x5a'); }
    SUBCASE("zip magic alone") { data = "PK\x03\x04"; }
    SUBCASE("truncated zip") { data = zip.substr(0, zip.size() / 2); }
    SUBCASE("gzip that is not a tar") { data = make_gzip("hello world\n"); }
    SUBCASE("truncated tar.gz") { data = tgz.substr(0, tgz.size() / 2); }
    SUBCASE("gzip magic then garbage") { data = bytes({0x1f, 0x8b, 8}) + std::string(50, 'g'); }
    SUBCASE("not an archive") { data = SCRIPT; }
    const temp_dir tmp;
    const auto failure = extract_failure(data, tmp.dest);
    REQUIRE(failure.has_value());
    INFO(*failure);
    CHECK(starts_with(*failure, "cannot extract archive"));
    CHECK(failure->size() > std::string("cannot extract archive: ").size());
    CHECK(listing(tmp.root) == std::vector<std::string>{"action"});  // refused by the first pass
}

TEST_CASE("extract_archive: every truncation and many byte flips end cleanly") {
    for (const format f : FORMATS) {
        INFO(format_name(f));
        const std::string good =
            make_archive(f, {folder("lib/"), file("lib/a.txt", std::string(300, 'a')),
                             soft_link("l", "lib/a.txt"), file("exec", SCRIPT, 0755)});
        std::vector<std::string> inputs;
        for (std::size_t size = 0; size < good.size(); size += 3) {
            inputs.push_back(good.substr(0, size));
        }
        std::mt19937 random(42);
        for (int i = 0; i < 150; ++i) {
            std::string flipped = good;
            const std::size_t at = random() % flipped.size();
            flipped[at] = static_cast<char>(flipped[at] ^ static_cast<char>(1 + random() % 255));
            inputs.push_back(flipped);
        }
        const temp_dir tmp;
        for (const auto& data : inputs) {
            CHECK_NOTHROW(extract_failure(data, tmp.dest));  // success or extract_error only
            CHECK(listing(tmp.root).size() == listing(tmp.dest).size() + 1);
            for (const auto& item : fs::directory_iterator(tmp.dest)) fs::remove_all(item);
        }
    }
}

// ---- limits ----------------------------------------------------------------------------------

TEST_CASE("extract_archive: OW_MAX_EXTRACT_BYTES caps the extracted size") {
    const scoped_env limit("OW_MAX_EXTRACT_BYTES", "1000");
    SUBCASE("one big file") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {file("big", std::string(2000, '0'))}),
                             "archive expands to more than 1000 bytes"s};
        });
    }
    SUBCASE("several files together") {
        check_refused_in_both([](format f, const temp_dir&) {
            return std::pair{make_archive(f, {file("a", std::string(600, '0')),
                                              file("b", std::string(600, '0'))}),
                             "archive expands to more than 1000 bytes"s};
        });
    }
    SUBCASE("exactly the limit") {
        for (const format f : FORMATS) {
            INFO(format_name(f));
            const temp_dir tmp;
            extract_archive(make_archive(f, {file("a", std::string(1000, '0'))}), tmp.dest);
            CHECK(fs::file_size(tmp.dest / "a") == 1000);
        }
    }
}

TEST_CASE("extract_archive: a zip lying about its sizes still stops at the limit") {
    const temp_dir tmp;
    const scoped_env limit("OW_MAX_EXTRACT_BYTES", "1000");
    std::string zip = make_archive(format::zip, {file("bomb", std::string(100000, '0'))});
    const std::size_t central = read_u32(zip, zip.size() - 22 + 16);
    zip.replace(central + 24, 4, bytes({10, 0, 0, 0}));  // uncompressed size: 10 bytes
    const auto failure = extract_failure(zip, tmp.dest);
    REQUIRE(failure.has_value());
    INFO(*failure);
    CHECK(listing(tmp.root).size() <= 2);
    if (fs::exists(tmp.dest / "bomb")) CHECK(fs::file_size(tmp.dest / "bomb") <= 1000);
}

TEST_CASE("extract_archive: an invalid OW_MAX_EXTRACT_BYTES keeps the 1 GiB default") {
    for (const char* value : {"", "abc", "0", "-5", "12x", " 7"}) {
        INFO(std::string(value));
        const temp_dir tmp;
        const scoped_env limit("OW_MAX_EXTRACT_BYTES", value);
        extract_archive(make_archive(format::zip, {file("a", std::string(5000, '0'))}), tmp.dest);
        CHECK(fs::file_size(tmp.dest / "a") == 5000);
    }
}

TEST_CASE("extract_archive: more than 100000 entries are refused") {
    const temp_dir tmp;
    std::vector<test_entry> entries;
    for (int i = 0; i <= 100000; ++i) entries.push_back(file(std::to_string(i), ""));
    check_refused(tmp, make_archive(format::zip, entries), "archive has more than 100000 entries");
}

TEST_CASE("extract_archive: the folders that names imply count toward the 100000 entries") {
    // 50 entries of 2047 components each would make 102350 folders.
    std::string deep;
    for (int i = 0; i < 2046; ++i) deep += "/x";
    std::vector<test_entry> entries;
    for (int i = 0; i < 50; ++i)
        entries.push_back(file("d" + std::to_string(i % 10) + std::to_string(i / 10) + deep, ""));
    const temp_dir tmp;
    check_refused(tmp, make_archive(format::tar_gz, entries),
                  "archive has more than 100000 entries");
}

TEST_CASE("extract_archive: OW_EXTRACT_TIMEOUT_MS bounds the time extraction takes") {
    const scoped_env limit("OW_EXTRACT_TIMEOUT_MS", "1");
    SUBCASE("checked while the headers are read: nothing is written") {
        std::vector<test_entry> entries(30000);
        for (std::size_t i = 0; i < entries.size(); ++i)
            entries[i] = file("f" + std::to_string(i), "");
        check_refused_in_both([&](format f, const temp_dir&) {
            return std::pair{make_archive(f, entries), "archive takes more than 1 ms to extract"s};
        });
    }
    SUBCASE("checked while the data is written") {
        // The zip's headers are read in microseconds; writing 32 MiB takes longer. (Freed
        // midway, libarchive's writer still sets the file's declared size: the rest is a hole.)
        const temp_dir tmp;
        const std::size_t size = std::size_t{32} << 20;
        const auto failure = extract_failure(
            make_archive(format::zip, {file("big", std::string(size, 'z'))}), tmp.dest);
        REQUIRE(failure.has_value());
        CHECK(*failure == "archive takes more than 1 ms to extract");
        const std::string written = read_file(tmp.dest / "big");
        CHECK(static_cast<std::size_t>(std::count(written.begin(), written.end(), 'z')) < size);
    }
}

TEST_CASE(
    "extract_archive: an invalid OW_EXTRACT_TIMEOUT_MS keeps the 60 s default, a huge one works") {
    for (const char* value : {"", "abc", "0", "-5", "12x", " 7", "18446744073709551615"}) {
        INFO(std::string(value));
        const temp_dir tmp;
        const scoped_env limit("OW_EXTRACT_TIMEOUT_MS", value);
        extract_archive(make_archive(format::zip, {file("a", "a")}), tmp.dest);
        CHECK(read_file(tmp.dest / "a") == "a");
    }
}

// ---- zip_directory ---------------------------------------------------------------------------

TEST_CASE("zip_directory: the zip re-extracts to the same tree, all 0755, links kept") {
    const temp_dir tmp;
    const fs::path bin = tmp.root / "bin";
    fs::create_directories(bin / "lib/deep");
    fs::create_directories(bin / "empty");
    write_file(bin / "exec", SCRIPT);
    fs::permissions(bin / "exec", fs::perms(0700));
    write_file(bin / "exec.env", "openwhisk/action-cpp-v17");
    write_file(bin / "lib/x.txt", "x");
    write_file(bin / "lib/deep/y.bin", std::string("\0\1\2\3", 4) + std::string(100000, 'y'));
    fs::create_symlink("x.txt", bin / "lib/link");

    const std::string zip = actionloop::zip_directory(bin);
    CHECK(detect_kind(zip) == payload_kind::zip);
    CHECK(zip.compare(zip.size() - 22, 4, "PK\x05\x06") == 0);  // no padding after the end
    CHECK(zip.size() < 10000);                                  // deflated

    extract_archive(zip, tmp.dest);
    CHECK(snapshot(tmp.dest) == snapshot(bin));
    CHECK(fs::read_symlink(tmp.dest / "lib/link") == "x.txt");
    for (const char* name : {"exec", "exec.env", "lib", "lib/x.txt", "lib/deep", "empty"}) {
        INFO(std::string(name));
        CHECK(perms_of(tmp.dest / name) == 0755);
    }
    CHECK(actionloop::is_runnable_file(tmp.dest / "exec"));
}

TEST_CASE("zip_directory: an empty folder gives an empty zip") {
    const temp_dir tmp;
    const std::string zip = actionloop::zip_directory(tmp.dest);
    CHECK(zip.size() == 22);  // just the end record
    const fs::path out = tmp.root / "out";
    fs::create_directories(out);
    extract_archive(zip, out);
    CHECK(listing(out).empty());
}

TEST_CASE("zip_directory: a missing folder is an extract_error") {
    const temp_dir tmp;
    CHECK_THROWS_AS(actionloop::zip_directory(tmp.root / "missing"), extract_error);
}
