// platform_of_environment: see platform.hpp.
#include "platform.hpp"

#include <cstdlib>

namespace actionloop {

platform platform_of_environment() {
    const char* api = std::getenv("AWS_LAMBDA_RUNTIME_API");
    return api != nullptr && *api != '\0' ? platform::lambda : platform::openwhisk;
}

}  // namespace actionloop
