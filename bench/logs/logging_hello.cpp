// The hello action that also logs one line per activation on stdout: what OW_LOG_FORMAT=json
// costs is measured with it (bench/logs/run).
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

nlohmann::json main(nlohmann::json args) {
    const std::string name = args.value("name", std::string("stranger"));
    std::cout << "greeting " << name << '\n';
    return {{"greeting", "Hello, " + name + "!"}};
}
