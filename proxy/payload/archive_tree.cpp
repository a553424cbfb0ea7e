// The tree of an archive's entries and the linear check of its symlinks.
//
// The check resolves each symlink's target once, from the folder that holds the link, and keeps
// the answer (where it lands, how many hops it took); a link met again later costs one lookup.
// A link met while its own target is being resolved is a loop. The resolution runs on an
// explicit stack, so a chain of 100000 links needs no deep recursion.
#include "payload/archive_tree.hpp"

#include <algorithm>
#include <utility>

namespace actionloop {
namespace {

constexpr std::size_t MAX_NAME_IN_MESSAGE = 200;
constexpr int MAX_SYMLINK_HOPS = 40;  // Linux MAXSYMLINKS

// The components of a name, without empty and "." ones.
std::vector<std::string_view> components(std::string_view name) {
    std::vector<std::string_view> parts;
    while (!name.empty()) {
        const std::size_t slash = std::min(name.find('/'), name.size());
        const std::string_view part = name.substr(0, slash);
        if (!part.empty() && part != ".") parts.push_back(part);
        name.remove_prefix(std::min(slash + 1, name.size()));
    }
    return parts;
}

}  // namespace

std::string quote_entry_name(std::string_view name) {
    if (name.size() <= MAX_NAME_IN_MESSAGE) return "'" + std::string(name) + "'";
    return "'" + std::string(name.substr(0, MAX_NAME_IN_MESSAGE)) + "...'";
}

// ---- building --------------------------------------------------------------------------------

archive_tree::archive_tree() : nodes_(1) {}

std::optional<std::string> archive_tree::place(std::string_view name, std::size_t& at) {
    const std::vector<std::string_view> parts = components(name);
    at = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string key(parts[i]);
        const auto found = nodes_[at].children.find(key);
        if (found == nodes_[at].children.end()) {
            const std::size_t made = nodes_.size();
            nodes_[at].children.emplace(key, made);
            node folder;
            folder.parent = at;
            folder.order = entries_;
            folder.name = std::move(key);
            nodes_.push_back(std::move(folder));
            at = made;
            continue;
        }
        const std::size_t child = found->second;
        if (i + 1 < parts.size() && nodes_[child].type == kind::symlink) {
            return "is under the symlink " + quote_entry_name(name_of(child));
        }
        if (i + 1 < parts.size() && nodes_[child].type == kind::file) {
            reset(child, kind::folder);  // the disk writer replaces a file in the way
        }
        at = child;
    }
    return std::nullopt;
}

void archive_tree::reset(std::size_t at, kind type, std::string target) {
    node& n = nodes_[at];
    n.type = type;
    n.target = std::move(target);
    n.children.clear();
    n.order = entries_;
}

std::optional<std::string> archive_tree::add_folder(std::string_view name) {
    ++entries_;
    std::size_t at = 0;
    if (auto refused = place(name, at)) return refused;
    if (nodes_[at].type != kind::folder) reset(at, kind::folder);
    return std::nullopt;
}

std::optional<std::string> archive_tree::add_file(std::string_view name) {
    ++entries_;
    std::size_t at = 0;
    if (auto refused = place(name, at)) return refused;
    if (at == 0) return std::string("has no name");
    reset(at, kind::file);
    return std::nullopt;
}

std::optional<std::string> archive_tree::add_symlink(std::string_view name, std::string target) {
    ++entries_;
    std::size_t at = 0;
    if (auto refused = place(name, at)) return refused;
    if (at == 0) return std::string("has no name");
    reset(at, kind::symlink, std::move(target));
    return std::nullopt;
}

// Why a hard link to `target` is refused: only an earlier regular file, reached through
// folders, can be linked.
std::optional<std::string> archive_tree::find_link_target(std::string_view target) const {
    const std::vector<std::string_view> parts = components(target);
    const std::string quoted = quote_entry_name(target);
    std::size_t at = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto found = nodes_[at].children.find(std::string(parts[i]));
        const bool last = i + 1 == parts.size();
        if (found == nodes_[at].children.end() ||
            (!last && nodes_[found->second].type == kind::file)) {
            return "is a hard link to " + quoted + ", which is not an earlier entry";
        }
        at = found->second;
        if (nodes_[at].type == kind::symlink) {
            return last ? "is a hard link to the symlink " + quoted
                        : "is a hard link through the symlink " + quote_entry_name(name_of(at));
        }
    }
    if (nodes_[at].type == kind::folder) return "is a hard link to the folder " + quoted;
    return std::nullopt;
}

std::optional<std::string> archive_tree::add_hard_link(std::string_view name,
                                                       std::string_view target) {
    if (auto refused = find_link_target(target)) {
        ++entries_;
        return refused;
    }
    return add_file(name);
}

std::string archive_tree::name_of(std::size_t at) const {
    std::vector<const std::string*> parts;
    for (; at != 0; at = nodes_[at].parent) parts.push_back(&nodes_[at].name);
    std::string name;
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
        if (!name.empty()) name += '/';
        name += **part;
    }
    return name;
}

// ---- checking --------------------------------------------------------------------------------

class archive_tree::resolver {
public:
    explicit resolver(const std::vector<node>& nodes)
        : nodes_(nodes),
          state_(nodes.size(), state::unseen),
          at_(nodes.size()),
          hops_(nodes.size(), 0) {}

    // Whether the symlink `link` resolves inside the root.
    bool inside(std::size_t link) {
        if (state_[link] == state::unseen) {
            push(link);
            while (!stack_.empty()) step();
        }
        return state_[link] == state::inside;
    }

private:
    enum class state : unsigned char { unseen, busy, inside, outside };
    // Where a resolution stands: a node, or `missing` levels of names that do not exist below
    // it (taken as folders, as the check always has: the kernel would stop there).
    struct place {
        std::size_t node = 0;
        std::size_t missing = 0;
    };
    struct frame {
        std::size_t link;
        std::size_t next;  // where the next component of the link's target starts
        place at;
        int hops;
    };

    void push(std::size_t link) {
        state_[link] = state::busy;
        stack_.push_back({link, 0, {nodes_[link].parent, 0}, 0});
    }

    // Takes the next component of the top frame's target.
    void step() {
        frame& top = stack_.back();
        const std::string& target = nodes_[top.link].target;
        if (top.next == 0 && !target.empty() && target.front() == '/') return fail();
        while (top.next < target.size() && target[top.next] == '/') ++top.next;
        if (top.next >= target.size()) return finish();
        const std::size_t end = std::min(target.find('/', top.next), target.size());
        const std::string_view part(target.data() + top.next, end - top.next);
        top.next = end;
        if (part == ".") return;
        if (part == "..") {
            if (!up(top.at)) fail();
            return;
        }
        enter(part);
    }

    void enter(std::string_view part) {
        frame& top = stack_.back();
        if (top.at.missing > 0) {
            ++top.at.missing;
            return;
        }
        key_.assign(part);
        const auto& children = nodes_[top.at.node].children;
        const auto found = children.find(key_);
        if (found == children.end()) {
            top.at.missing = 1;
            return;
        }
        const std::size_t child = found->second;
        if (nodes_[child].type != kind::symlink) {
            top.at.node = child;
        } else if (state_[child] == state::inside) {
            follow(child);
        } else if (state_[child] == state::unseen) {
            push(child);
        } else {
            fail();  // outside, or busy: a loop
        }
    }

    // ".." from `at`; false above the root.
    bool up(place& at) const {
        if (at.missing > 0) {
            --at.missing;
            return true;
        }
        if (at.node == 0) return false;
        at.node = nodes_[at.node].parent;
        return true;
    }

    void finish() {
        const frame done = stack_.back();
        stack_.pop_back();
        state_[done.link] = state::inside;
        at_[done.link] = done.at;
        hops_[done.link] = done.hops;
        if (!stack_.empty()) follow(done.link);
    }

    // The top frame goes through `link`, already resolved inside.
    void follow(std::size_t link) {
        frame& top = stack_.back();
        top.hops += 1 + hops_[link];
        if (top.hops > MAX_SYMLINK_HOPS) return fail();
        top.at = at_[link];
    }

    // Every link on the stack needs the top one: none resolves inside.
    void fail() {
        for (const frame& f : stack_) state_[f.link] = state::outside;
        stack_.clear();
    }

    const std::vector<node>& nodes_;
    std::vector<state> state_;
    std::vector<place> at_;
    std::vector<int> hops_;
    std::vector<frame> stack_;
    std::string key_;
};

std::optional<archive_tree::link> archive_tree::first_escaping_link() const {
    std::vector<std::size_t> links;
    std::vector<std::size_t> pending{0};
    while (!pending.empty()) {
        const std::size_t at = pending.back();
        pending.pop_back();
        if (nodes_[at].type == kind::symlink) links.push_back(at);
        for (const auto& child : nodes_[at].children) pending.push_back(child.second);
    }
    std::sort(links.begin(), links.end(), [this](std::size_t a, std::size_t b) {
        return std::pair(nodes_[a].order, a) < std::pair(nodes_[b].order, b);
    });
    resolver check(nodes_);
    for (const std::size_t at : links) {
        if (!check.inside(at)) return link{name_of(at), nodes_[at].target};
    }
    return std::nullopt;
}

}  // namespace actionloop
