// The launcher's int main(): finds the user's entry point and runs the activation loop.
//
// `compile` renames the user's function to actionloop_main with a macro. It may take its
// argument by value or by const reference, or be the raw entry point (action.hpp); all are
// declared weak here, and whichever the user defined is non-null at run time.
#include <iostream>

#include "loop.hpp"

nlohmann::json actionloop_main(nlohmann::json args) __attribute__((weak));
nlohmann::json actionloop_main(const nlohmann::json& args) __attribute__((weak));
void actionloop_main(std::string_view value, std::string& answer) __attribute__((weak));

int main() {
    using nlohmann::json;
    auto raw = static_cast<void (*)(std::string_view, std::string&)>(&actionloop_main);
    auto by_value = static_cast<json (*)(json)>(&actionloop_main);
    auto by_ref = static_cast<json (*)(const json&)>(&actionloop_main);
    if (raw != nullptr) return actionloop::run_raw_loop(raw);
    actionloop::entry_point entry;
    if (by_value != nullptr) {
        entry = [by_value](json&& args) { return by_value(std::move(args)); };
    } else if (by_ref != nullptr) {
        entry = [by_ref](json&& args) { return by_ref(args); };
    } else {
        std::cerr << "actionloop: the action defines no entry point; write "
                     "`nlohmann::json main(nlohmann::json args)`"
                  << std::endl;
        return 1;
    }
    return actionloop::run_loop(entry);
}
