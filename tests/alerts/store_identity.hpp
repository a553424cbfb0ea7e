// store_identity.hpp — one stream of batches through the memory store and through a state dir
// whose process restarts at every activation: the notifications as JSON texts, for tests that
// check every store decides alike, and the same through Redis shared by three containers.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "alert_test_util.hpp"
#include "core/result_json.hpp"
#include "redis/redis_store.hpp"
#include "redis_server.hpp"
#include "runtime/file_store.hpp"
#include "runtime/redis_url.hpp"

namespace alerts::test {

using batch_list = std::vector<std::pair<std::vector<etag>, double>>;

inline std::vector<std::string> notification_texts(const alert_core& core, const batch_result& r) {
    std::vector<std::string> out;
    for (const notification& n : r.notifications) out.push_back(notification_json(core, n).dump());
    return out;
}

inline std::multiset<std::string> through_memory(const nlohmann::json& config,
                                                 const batch_list& batches) {
    std::multiset<std::string> out;
    core_harness h({}, config);
    memory_store store;
    for (const auto& [batch, now] : batches) {
        for (std::string& t : notification_texts(h.core, store.process(h.core, batch, now)))
            out.insert(std::move(t));
    }
    return out;
}

/// A new core and file_store for every activation, on one state dir under the temp dir.
inline std::multiset<std::string> through_restarted_state_dir(const nlohmann::json& config,
                                                              const batch_list& batches,
                                                              const std::string& tag) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / (tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::multiset<std::string> out;
    for (const auto& [batch, now] : batches) {
        core_harness h({}, config);
        file_store store(file_store_options{dir.string(), false});
        store.load(h.core);
        for (std::string& t : notification_texts(h.core, store.process(h.core, batch, now)))
            out.insert(std::move(t));
    }
    std::filesystem::remove_all(dir);
    return out;
}

/// Three containers (a core and a redis_store each) sharing a fresh redis-server, taking the
/// batches in turn.
inline std::multiset<std::string> through_redis(const nlohmann::json& config,
                                                const batch_list& batches) {
    std::multiset<std::string> out;
    redis_server server;
    redis_store_options o;
    o.url = parse_redis_url(server.url());
    std::vector<std::unique_ptr<core_harness>> cores;
    std::vector<std::unique_ptr<redis_store>> stores;
    for (int i = 0; i < 3; ++i) {
        cores.push_back(std::make_unique<core_harness>(core_options{}, config));
        stores.push_back(std::make_unique<redis_store>(o));
    }
    for (std::size_t i = 0; i < batches.size(); ++i) {
        core_harness& h = *cores[i % 3];
        for (std::string& t : notification_texts(
                 h.core, stores[i % 3]->process(h.core, batches[i].first, batches[i].second)))
            out.insert(std::move(t));
    }
    return out;
}

/// How many notifications of each notifType.
inline std::map<std::string, int> types_of(const std::multiset<std::string>& texts) {
    std::map<std::string, int> out;
    for (const std::string& t : texts)
        ++out[nlohmann::json::parse(t)["notifType"].get<std::string>()];
    return out;
}

}  // namespace alerts::test
