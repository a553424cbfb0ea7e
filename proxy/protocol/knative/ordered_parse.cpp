// parse_ordered: nlohmann's SAX parser driving a builder of ordered_json that indexes the keys
// of wide objects.
#include "protocol/knative/ordered_parse.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace actionloop::knative {
namespace {

using object_t = ordered_json::object_t;  // nlohmann::ordered_map: a vector of pairs
using members_t = std::vector<std::pair<const std::string, ordered_json>>;

// Below this many members an object's keys are compared one by one (no allocation, and as
// fast as a hash for a handful); from it on, an index is built and kept.
constexpr size_t INDEX_FROM = 16;

// The index of a wide object's keys: an open-addressing table of member positions (no
// allocation per key, no copy of a key), compared with the members themselves.
class key_index {
public:
    explicit key_index(const members_t& members) {
        size_t size = 64;
        while (size < 2 * members.size()) size *= 2;
        rebuild(members, size, members.size());
    }
    // The position of the member named `name`, or members.size() when there is none.
    size_t find(const members_t& members, std::string_view name) const {
        for (size_t at = hash(name) & mask_;; at = (at + 1) & mask_) {
            const std::uint32_t slot = slots_[at];
            if (slot == EMPTY) return members.size();
            if (members[slot].first == name) return slot;
        }
    }
    // Records the member just added at the end of `members`.
    void added(const members_t& members) {
        if (2 * members.size() > slots_.size()) {
            rebuild(members, 2 * slots_.size(), members.size() - 1);
        }
        place(members, members.size() - 1);
    }

private:
    static constexpr std::uint32_t EMPTY = UINT32_MAX;
    static size_t hash(std::string_view text) { return std::hash<std::string_view>()(text); }
    // `size` slots (a power of two), holding the first `count` members.
    void rebuild(const members_t& members, size_t size, size_t count) {
        slots_.assign(size, EMPTY);
        mask_ = size - 1;
        for (size_t i = 0; i < count; ++i) place(members, i);
    }
    void place(const members_t& members, size_t i) {
        size_t at = hash(members[i].first) & mask_;
        while (slots_[at] != EMPTY) at = (at + 1) & mask_;
        slots_[at] = static_cast<std::uint32_t>(i);
    }

    std::vector<std::uint32_t> slots_;
    size_t mask_ = 0;
};

class ordered_builder {
public:
    explicit ordered_builder(ordered_json& root) : root_(root) {}

    bool null() { return put(nullptr); }
    bool boolean(bool value) { return put(value); }
    bool number_integer(ordered_json::number_integer_t value) { return put(value); }
    bool number_unsigned(ordered_json::number_unsigned_t value) { return put(value); }
    bool number_float(ordered_json::number_float_t value, const std::string& /*text*/) {
        return put(value);
    }
    bool string(std::string& value) { return put(std::move(value)); }
    bool binary(ordered_json::binary_t& value) {
        return put(ordered_json::binary(std::move(value)));
    }
    bool start_object(std::size_t /*size*/) { return open(ordered_json::object()); }
    bool start_array(std::size_t /*size*/) { return open(ordered_json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool key(std::string& name);
    bool parse_error(std::size_t /*at*/, const std::string& /*token*/,
                     const nlohmann::detail::exception& /*error*/) {
        return false;
    }

private:
    // A container being filled. Its node lives in its parent's members, which do not grow
    // while it is open (only the innermost container grows).
    struct level {
        ordered_json* node;
        size_t slot = 0;  // an object's: the member the next value goes to
        std::unique_ptr<key_index> index;
    };

    ordered_json* next_slot();
    template <class Value>
    bool put(Value&& value) {
        *next_slot() = ordered_json(std::forward<Value>(value));
        return true;
    }
    bool open(ordered_json container) {
        ordered_json* node = next_slot();
        *node = std::move(container);
        stack_.push_back(level{node, 0, nullptr});
        return true;
    }
    bool close() {
        stack_.pop_back();
        return true;
    }
    static size_t find_or_add(level& top, members_t& members, std::string& name);

    ordered_json& root_;
    std::vector<level> stack_;
};

ordered_json* ordered_builder::next_slot() {
    if (stack_.empty()) return &root_;
    level& top = stack_.back();
    if (top.node->is_array()) {
        auto& elements = top.node->get_ref<ordered_json::array_t&>();
        elements.emplace_back();
        return &elements.back();
    }
    return &static_cast<members_t&>(top.node->get_ref<object_t&>())[top.slot].second;
}

bool ordered_builder::key(std::string& name) {
    level& top = stack_.back();
    top.slot = find_or_add(top, top.node->get_ref<object_t&>(), name);
    return true;
}

// The member named `name`: the existing one (its place kept, its value to be replaced, as
// ordered_json's operator[] does), else a new one at the end.
size_t ordered_builder::find_or_add(level& top, members_t& members, std::string& name) {
    if (!top.index && members.size() < INDEX_FROM) {
        for (size_t i = 0; i < members.size(); ++i) {
            if (members[i].first == name) return i;
        }
    } else {
        if (!top.index) top.index = std::make_unique<key_index>(members);
        const size_t found = top.index->find(members, name);
        if (found < members.size()) return found;
        members.emplace_back(std::move(name), nullptr);
        top.index->added(members);
        return members.size() - 1;
    }
    members.emplace_back(std::move(name), nullptr);
    return members.size() - 1;
}

}  // namespace

ordered_json parse_ordered(std::string_view text) {
    ordered_json root;
    ordered_builder builder(root);
    if (!ordered_json::sax_parse(text.begin(), text.end(), &builder)) {
        return ordered_json(ordered_json::value_t::discarded);
    }
    return root;
}

}  // namespace actionloop::knative
