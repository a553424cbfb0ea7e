// redis_credentials_test.cpp — read_redis_credentials (runtime/redis_url.hpp): the Redis and
// Sentinel users and passwords from the environment or from files (…_PASSWORD_FILE), each
// refusal naming the variable and never the secret. A map stands in for the environment.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "runtime/redis_url.hpp"

using alerts::read_redis_credentials;
using alerts::redis_url;

namespace {

using vars = std::map<std::string, std::string>;

redis_url read(const vars& env) {
    redis_url url = alerts::parse_redis_url("redis://127.0.0.1:6379");
    read_redis_credentials(url, [&env](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
    return url;
}

std::string refusal(const vars& env) {
    try {
        read(env);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

struct secret_file {
    std::filesystem::path path;
    explicit secret_file(const std::string& content) {
        path = std::filesystem::temp_directory_path() /
               ("alerts-secret-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
        std::ofstream(path, std::ios::binary) << content;
    }
    ~secret_file() { std::filesystem::remove(path); }
    secret_file(const secret_file&) = delete;
    secret_file& operator=(const secret_file&) = delete;
};

}  // namespace

TEST_CASE("redis credentials: from the environment, from files, none") {
    const redis_url none = read({});
    CHECK(none.user.empty());
    CHECK(none.password.empty());
    CHECK(none.sentinel_password.empty());

    const redis_url direct = read({{"ALERT_REDIS_USER", "alerts"},
                                   {"ALERT_REDIS_PASSWORD", "p1"},
                                   {"ALERT_REDIS_SENTINEL_PASSWORD", "s1"}});
    CHECK(direct.user == "alerts");
    CHECK(direct.password == "p1");
    CHECK(direct.sentinel_user.empty());
    CHECK(direct.sentinel_password == "s1");

    const secret_file redis("p2 with spaces\n"), sentinel("s2\r\n");
    const redis_url files = read({{"ALERT_REDIS_PASSWORD_FILE", redis.path.string()},
                                  {"ALERT_REDIS_SENTINEL_USER", "watcher"},
                                  {"ALERT_REDIS_SENTINEL_PASSWORD_FILE", sentinel.path.string()}});
    CHECK(files.password == "p2 with spaces");  // one trailing newline dropped, nothing else
    CHECK(files.sentinel_user == "watcher");
    CHECK(files.sentinel_password == "s2");
}

TEST_CASE("redis credentials: refusals name the variable, never the secret") {
    const secret_file redis("hunter2\n"), empty(""), big(std::string(4097, 'x'));
    CHECK(refusal({{"ALERT_REDIS_PASSWORD", "hunter2"},
                   {"ALERT_REDIS_PASSWORD_FILE", redis.path.string()}}) ==
          "set ALERT_REDIS_PASSWORD or ALERT_REDIS_PASSWORD_FILE, not both");
    CHECK(refusal({{"ALERT_REDIS_SENTINEL_PASSWORD_FILE", "/nonexistent/secret"}}) ==
          "ALERT_REDIS_SENTINEL_PASSWORD_FILE '/nonexistent/secret': cannot read it: No such "
          "file or directory");
    CHECK(refusal({{"ALERT_REDIS_PASSWORD_FILE", empty.path.string()}}) ==
          "ALERT_REDIS_PASSWORD_FILE '" + empty.path.string() + "': empty");
    CHECK(refusal({{"ALERT_REDIS_PASSWORD_FILE", big.path.string()}}) ==
          "ALERT_REDIS_PASSWORD_FILE '" + big.path.string() + "': larger than 4096 bytes");
    CHECK(refusal({{"ALERT_REDIS_USER", "alerts"}}) ==
          "ALERT_REDIS_USER is set without a password: set ALERT_REDIS_PASSWORD_FILE (or "
          "ALERT_REDIS_PASSWORD)");
    CHECK(refusal({{"ALERT_REDIS_SENTINEL_USER", "w"}}).find("ALERT_REDIS_SENTINEL_USER is set") ==
          0);
    const std::string both = refusal(
        {{"ALERT_REDIS_PASSWORD", "hunter2"}, {"ALERT_REDIS_PASSWORD_FILE", redis.path.string()}});
    CHECK(both.find("hunter2") == std::string::npos);
}
