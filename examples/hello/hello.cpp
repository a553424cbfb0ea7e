// {"name": "Mike"} -> {"greeting": "Hello, Mike!", "activation": "<its id>"}
#include <actionloop/action.hpp>

nlohmann::json main(nlohmann::json args, const actionloop::context& ctx) {
    const std::string name = args.value("name", std::string("stranger"));
    return {{"greeting", "Hello, " + name + "!"}, {"activation", ctx.activation_id()}};
}
