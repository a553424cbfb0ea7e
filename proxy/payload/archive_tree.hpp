// The tree an archive's entries make, kept in memory in the order they come, so that what each
// name finally is (a folder, a file, a symlink) is known before anything is written, and so that
// every symlink can be checked to stay inside the action directory. The extractor fills it from
// the archive's headers before writing, then again from the disk after writing (the check of
// what was really written). Names are normal relative names: "a/b", no empty, "." or ".."
// components ("" is the root itself).
//
// Each add_* mirrors what libarchive's disk writer does with the name (a later entry replaces
// an earlier one of the same name, folders above a name are made when missing) and refuses what
// could reach outside in some order of entries: a name under a symlink, a hard link to a
// symlink (it would be a second name for the link, which a later entry can no longer change),
// a hard link through a symlink, to a folder, or to a name not made yet.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace actionloop {

class archive_tree {
public:
    archive_tree();

    // Each returns why the entry is refused, worded to follow "archive entry 'NAME' "
    // (e.g. "is under the symlink 'd'"), or nullopt when the entry is taken.
    std::optional<std::string> add_folder(std::string_view name);
    std::optional<std::string> add_file(std::string_view name);
    std::optional<std::string> add_symlink(std::string_view name, std::string target);
    // `target` is a normal name too: the entry the hard link names.
    std::optional<std::string> add_hard_link(std::string_view name, std::string_view target);

    struct link {
        std::string name;
        std::string target;
    };
    // The first symlink of the final tree, in the order the entries came, that does not resolve
    // inside the root the way the kernel resolves it: absolute, climbing above the root (even
    // on the way back in), in a loop, or needing more than 40 hops (Linux's MAXSYMLINKS).
    // Names that do not exist are taken as folders. Takes time linear in the size of the names
    // and targets: each symlink's target is followed once.
    std::optional<link> first_escaping_link() const;

    // Files, folders and links in the tree, the root and the folders that names imply
    // included (the extractor bounds it like the number of entries).
    std::size_t size() const { return nodes_.size(); }

private:
    enum class kind { folder, file, symlink };
    struct node {
        kind type = kind::folder;
        std::size_t parent = 0;
        std::size_t order = 0;  // the entry that last made it
        std::string name;       // its last component
        std::string target;     // a symlink's
        std::unordered_map<std::string, std::size_t> children;
    };
    class resolver;  // the linear check behind first_escaping_link

    std::optional<std::string> place(std::string_view name, std::size_t& at);
    std::optional<std::string> find_link_target(std::string_view target) const;
    void reset(std::size_t at, kind type, std::string target = {});
    std::string name_of(std::size_t at) const;

    std::vector<node> nodes_;  // nodes_[0]: the root
    std::size_t entries_ = 0;
};

// `name` in single quotes for a message, cut after 200 bytes ("'abc...'").
std::string quote_entry_name(std::string_view name);

}  // namespace actionloop
