// The showcase action: {"name": "Mike"} -> {"greeting": "Hello, Mike!"}
#include <nlohmann/json.hpp>

nlohmann::json main(nlohmann::json args) {
    std::string name = args.value("name", std::string("stranger"));
    return {{"greeting", "Hello, " + name + "!"}};
}
