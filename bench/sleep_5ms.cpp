// bench/workers' I/O-bound action: it waits 5 ms (the stand-in for one Redis or HTTP round
// trip) and answers as the hello does, {"name": "Mike"} -> {"greeting": "Hello, Mike!"}.
// Compiled by `compile` at /init, as the C++ hello is.
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

nlohmann::json main(nlohmann::json args) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::string name = args.value("name", std::string("stranger"));
    return {{"greeting", "Hello, " + name + "!"}};
}
