// The launcher's int main(): finds the user's entry point and runs the activation loop.
//
// `compile` renames the user's function to actionloop_main with a macro. It may take its
// argument by value or by const reference, with or without the context, or be the raw entry
// point (action.hpp); all are declared weak here, and whichever the user defined is non-null
// at run time.
#include <iostream>

#include "loop.hpp"

using actionloop::context;
using nlohmann::json;

json actionloop_main(json args) __attribute__((weak));
json actionloop_main(const json& args) __attribute__((weak));
json actionloop_main(json args, const context& ctx) __attribute__((weak));
json actionloop_main(const json& args, const context& ctx) __attribute__((weak));
void actionloop_main(std::string_view value, std::string& answer) __attribute__((weak));
void actionloop_main(std::string_view value, std::string& answer, const context& ctx)
    __attribute__((weak));

namespace {

// The raw entry point the user defined, if any.
actionloop::raw_entry_point raw_entry() {
    auto with_context =
        static_cast<void (*)(std::string_view, std::string&, const context&)>(&actionloop_main);
    auto plain = static_cast<void (*)(std::string_view, std::string&)>(&actionloop_main);
    if (with_context != nullptr) return with_context;
    if (plain != nullptr) {
        return [plain](std::string_view value, std::string& answer, const context&) {
            plain(value, answer);
        };
    }
    return nullptr;
}

// The json entry point the user defined, if any.
actionloop::entry_point json_entry() {
    auto by_value = static_cast<json (*)(json)>(&actionloop_main);
    auto by_ref = static_cast<json (*)(const json&)>(&actionloop_main);
    auto by_value_ctx = static_cast<json (*)(json, const context&)>(&actionloop_main);
    auto by_ref_ctx = static_cast<json (*)(const json&, const context&)>(&actionloop_main);
    if (by_value != nullptr) {
        return [by_value](json&& args, const context&) { return by_value(std::move(args)); };
    }
    if (by_ref != nullptr) return [by_ref](json&& args, const context&) { return by_ref(args); };
    if (by_value_ctx != nullptr) {
        return [by_value_ctx](json&& args, const context& ctx) {
            return by_value_ctx(std::move(args), ctx);
        };
    }
    if (by_ref_ctx != nullptr) {
        return [by_ref_ctx](json&& args, const context& ctx) { return by_ref_ctx(args, ctx); };
    }
    return nullptr;
}

}  // namespace

int main() {
    if (auto raw = raw_entry()) return actionloop::run_raw_loop(raw);
    if (auto entry = json_entry()) return actionloop::run_loop(entry);
    std::cerr << "actionloop: the action defines no entry point; write "
                 "`nlohmann::json main(nlohmann::json args)`"
              << std::endl;
    return 1;
}
