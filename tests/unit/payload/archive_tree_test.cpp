// Unit tests for proxy/payload/archive_tree: the tree an archive's entries make (what each name
// finally is, in the order the entries come), the entries it refuses, and the linear check that
// every symlink resolves inside — compared, on thousands of random trees, with the plain
// recursive resolution the extractor used before (kept here as the reference).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "payload/archive_tree.hpp"
#include "test_util.hpp"

using actionloop::archive_tree;

namespace {

// The name of the first escaping link, or "" when every link stays inside.
std::string first_escaping(const archive_tree& tree) {
    const auto link = tree.first_escaping_link();
    return link ? link->name : "";
}

// ---- the reference: the old check, one resolution per link, recursive ------------------------

std::vector<std::string> parts_of(const std::string& name) {
    std::vector<std::string> parts;
    std::string part;
    for (const char c : name + "/") {
        if (c != '/') {
            part += c;
            continue;
        }
        if (!part.empty() && part != ".") parts.push_back(part);
        part.clear();
    }
    return parts;
}

std::string joined(const std::vector<std::string>& parts) {
    std::string name;
    for (const auto& part : parts) name += (name.empty() ? "" : "/") + part;
    return name;
}

bool reference_inside(const std::map<std::string, std::string>& links,
                      std::vector<std::string>& path, const std::string& target, int& hops) {
    if (!target.empty() && target.front() == '/') return false;
    for (const std::string& part : parts_of(target)) {
        if (part == "..") {
            if (path.empty()) return false;
            path.pop_back();
            continue;
        }
        path.push_back(part);
        const auto link = links.find(joined(path));
        if (link == links.end()) continue;
        path.pop_back();
        if (++hops > 40 || !reference_inside(links, path, link->second, hops)) return false;
    }
    return true;
}

struct random_link {
    std::string name;
    std::string target;
};

std::string reference_first_escaping(const std::vector<random_link>& links) {
    std::map<std::string, std::string> by_name;
    for (const auto& link : links) by_name[link.name] = link.target;
    for (const auto& link : links) {
        std::vector<std::string> folder = parts_of(link.name);
        folder.pop_back();
        int hops = 0;
        if (!reference_inside(by_name, folder, link.target, hops)) return link.name;
    }
    return "";
}

}  // namespace

// ---- building --------------------------------------------------------------------------------

TEST_CASE("archive_tree: symlinks inside are fine, the folders above a name are made") {
    archive_tree tree;
    CHECK_FALSE(tree.add_file("venv/bin/python3"));
    CHECK_FALSE(tree.add_symlink("venv/bin/python", "python3"));
    CHECK_FALSE(tree.add_symlink("venv/lib64", "lib"));
    CHECK_FALSE(tree.add_symlink("exec", "venv/bin/python"));
    CHECK_FALSE(tree.add_symlink("dangling", "missing/deeper/../x"));
    CHECK(tree.size() == 8);  // root, venv, venv/bin and the five entries
    CHECK(first_escaping(tree).empty());
}

TEST_CASE("archive_tree: a name under a symlink is refused") {
    archive_tree tree;
    CHECK_FALSE(tree.add_symlink("d", "sub"));
    CHECK(tree.add_file("d/x") == "is under the symlink 'd'");
    CHECK(tree.add_folder("d/e/") == "is under the symlink 'd'");
    CHECK_FALSE(tree.add_folder("a"));
    CHECK_FALSE(tree.add_symlink("a/up", ".."));
    CHECK(tree.add_symlink("a/up/a/x", "y") == "is under the symlink 'a/up'");
}

TEST_CASE("archive_tree: only an earlier regular file can be hard-linked") {
    archive_tree tree;
    CHECK_FALSE(tree.add_file("f"));
    CHECK_FALSE(tree.add_folder("d"));
    CHECK_FALSE(tree.add_symlink("l", "f"));
    CHECK_FALSE(tree.add_symlink("s", "d"));
    CHECK_FALSE(tree.add_hard_link("h", "f"));
    CHECK_FALSE(tree.add_file("d/g"));
    CHECK_FALSE(tree.add_hard_link("d/h", "d/g"));
    CHECK(tree.add_hard_link("x", "l") == "is a hard link to the symlink 'l'");
    CHECK(tree.add_hard_link("x", "s/g") == "is a hard link through the symlink 's'");
    CHECK(tree.add_hard_link("x", "d") == "is a hard link to the folder 'd'");
    CHECK(tree.add_hard_link("x", "later") ==
          "is a hard link to 'later', which is not an earlier entry");
    CHECK(tree.add_hard_link("x", "f/under") ==
          "is a hard link to 'f/under', which is not an earlier entry");
    CHECK(tree.add_hard_link("s/x", "f") == "is under the symlink 's'");
}

TEST_CASE("archive_tree: the last entry of a name is what counts") {
    SUBCASE("a symlink pointing out, replaced by a file") {
        archive_tree tree;
        CHECK_FALSE(tree.add_symlink("exec", "/etc/passwd"));
        CHECK_FALSE(tree.add_file("exec"));
        CHECK(first_escaping(tree).empty());
    }
    SUBCASE("a file replaced by a symlink pointing out") {
        archive_tree tree;
        CHECK_FALSE(tree.add_file("exec"));
        CHECK_FALSE(tree.add_symlink("exec", "../x"));
        CHECK(first_escaping(tree) == "exec");
    }
    SUBCASE("a folder replaced by a file loses what was under it") {
        archive_tree tree;
        CHECK_FALSE(tree.add_symlink("d/up", "../.."));
        CHECK_FALSE(tree.add_file("d"));
        CHECK(first_escaping(tree).empty());
    }
    SUBCASE("a file in the way of a name becomes a folder") {
        archive_tree tree;
        CHECK_FALSE(tree.add_file("d"));
        CHECK_FALSE(tree.add_symlink("d/up", "../.."));
        CHECK(first_escaping(tree) == "d/up");
    }
    SUBCASE("a symlink replaced by a folder") {
        archive_tree tree;
        CHECK_FALSE(tree.add_symlink("d", "/"));
        CHECK_FALSE(tree.add_folder("d"));
        CHECK_FALSE(tree.add_file("d/a"));
        CHECK(first_escaping(tree).empty());
    }
}

// ---- checking --------------------------------------------------------------------------------

TEST_CASE("archive_tree: links that leave the root are found, in the order they came") {
    archive_tree tree;
    CHECK_FALSE(tree.add_symlink("fine", "."));
    CHECK_FALSE(tree.add_symlink("b", "a"));
    CHECK_FALSE(tree.add_symlink("a", "b"));  // a loop: b is reported, it came first
    CHECK_FALSE(tree.add_symlink("up", ".."));
    const auto link = tree.first_escaping_link();
    REQUIRE(link);
    CHECK(link->name == "b");
    CHECK(link->target == "a");

    archive_tree absolute;
    CHECK_FALSE(absolute.add_symlink("deep/er/link", "/etc"));
    CHECK(first_escaping(absolute) == "deep/er/link");

    // d/s -> .. is the root itself; a -> d/s/.. is lexically "d" but really above the root.
    archive_tree through;
    CHECK_FALSE(through.add_folder("d"));
    CHECK_FALSE(through.add_symlink("d/s", ".."));
    CHECK_FALSE(through.add_symlink("a", "d/s/.."));
    CHECK(first_escaping(through) == "a");
}

TEST_CASE("archive_tree: 40 hops resolve, 41 do not") {
    for (const int links : {41, 42}) {
        archive_tree tree;
        CHECK_FALSE(tree.add_file("exec"));
        for (int i = 0; i < links; ++i) {
            const std::string target = i == 0 ? "exec" : "l" + std::to_string(i - 1);
            CHECK_FALSE(tree.add_symlink("l" + std::to_string(i), target));
        }
        CHECK(first_escaping(tree) == (links == 41 ? "" : "l41"));
    }
}

TEST_CASE("archive_tree: the check agrees with the recursive resolution on random trees") {
    const std::vector<std::string> names{"a", "b", "c", "d/a", "d/b", "d/e/a", "d/e/b", "d/e/c"};
    const std::vector<std::string> tokens{".", "..", "a", "b", "c", "d", "e", "x", ".."};
    std::mt19937 random(33);
    int escaping = 0;
    for (int trial = 0; trial < 5000; ++trial) {
        std::vector<std::string> chosen = names;
        std::shuffle(chosen.begin(), chosen.end(), random);
        chosen.resize(1 + random() % chosen.size());
        std::vector<random_link> links;
        for (const auto& name : chosen) {
            std::string target = random() % 10 == 0 ? "/" : "";
            const std::size_t parts = 1 + random() % 4;
            for (std::size_t i = 0; i < parts; ++i) {
                target += (i == 0 ? "" : "/") + tokens[random() % tokens.size()];
            }
            links.push_back({name, target});
        }
        archive_tree tree;
        CHECK_FALSE(tree.add_folder("d/e"));
        for (const auto& link : links) CHECK_FALSE(tree.add_symlink(link.name, link.target));
        const std::string expected = reference_first_escaping(links);
        CAPTURE(trial);
        CHECK(first_escaping(tree) == expected);
        escaping += expected.empty() ? 0 : 1;
    }
    CHECK(escaping > 1000);  // both outcomes are well covered
    CHECK(escaping < 4000);
}

TEST_CASE("archive_tree: long targets and long chains take linear time") {
    std::string back_and_forth;  // "x/../x/../...": 2000 components, each a real lookup
    for (int i = 0; i < 1000; ++i) back_and_forth += i == 0 ? "x/.." : "/x/..";
    archive_tree tree;
    CHECK_FALSE(tree.add_folder("x"));
    for (int i = 0; i < 2000; ++i) {
        CHECK_FALSE(tree.add_symlink("w" + std::to_string(i), back_and_forth));
    }
    // Then a chain of 50000 links, each listed before the one it names: only the last 40
    // reach exec within 40 hops, so the first is reported, after every link above was checked.
    for (int i = 0; i < 50000; ++i) {
        const std::string target = i + 1 == 50000 ? "exec" : "c" + std::to_string(i + 1);
        CHECK_FALSE(tree.add_symlink("c" + std::to_string(i), target));
    }
    CHECK_FALSE(tree.add_file("exec"));
    const auto start = std::chrono::steady_clock::now();
    CHECK(first_escaping(tree) == "c0");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < support::LINEAR_SECONDS);
}

TEST_CASE("archive_tree: quote_entry_name cuts long names after 200 bytes") {
    CHECK(actionloop::quote_entry_name("a/b") == "'a/b'");
    CHECK(actionloop::quote_entry_name(std::string(201, 'n')) ==
          "'" + std::string(200, 'n') + "...'");
}
