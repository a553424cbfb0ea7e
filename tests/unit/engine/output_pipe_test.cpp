// log_attribution (engine/output_pipe.hpp): which activation a line of JSON log mode belongs
// to, and how the proxy's sentinels, forwarded later than they are written, end the right one.
#include <doctest/doctest.h>

#include <mutex>

#include "engine/output_pipe.hpp"

using namespace actionloop;

namespace {

std::string current_id(log_attribution& tags, log_attribution::stream s) {
    std::lock_guard<std::mutex> guard(tags.lock());
    const activation_tags* now = tags.current(s);
    return now == nullptr ? "" : now->activation_id;
}

void proxy_sentinel(log_attribution& tags, log_attribution::stream s) {
    const std::uint64_t ending = tags.take_ending(s);
    std::lock_guard<std::mutex> guard(tags.lock());
    tags.proxy_sentinel(s, ending);
}

}  // namespace

TEST_CASE("log_attribution: end() waits for the proxy's sentinel on each stream") {
    log_attribution tags;
    tags.written(1, {"a1", "", ""});
    tags.written(2, {"a2", "", ""});
    tags.end(1);
    // Lines still to be forwarded before the sentinel belong to a1 on both streams.
    CHECK(current_id(tags, log_attribution::OUT) == "a1");
    CHECK(current_id(tags, log_attribution::ERR) == "a1");
    proxy_sentinel(tags, log_attribution::OUT);
    CHECK(current_id(tags, log_attribution::OUT) == "a2");
    CHECK(current_id(tags, log_attribution::ERR) == "a1");
    proxy_sentinel(tags, log_attribution::ERR);
    CHECK(current_id(tags, log_attribution::ERR) == "a2");
}

TEST_CASE("log_attribution: the proxy's sentinel for an activation ends older ones left open") {
    log_attribution tags;
    tags.written(1, {"a1", "", ""});  // its own sentinel never came (the action died)
    tags.written(2, {"a2", "", ""});
    tags.written(3, {"a3", "", ""});
    tags.end(2);
    proxy_sentinel(tags, log_attribution::OUT);
    CHECK(current_id(tags, log_attribution::OUT) == "a3");
    proxy_sentinel(tags, log_attribution::ERR);  // end(2) holds for stderr too
    CHECK(current_id(tags, log_attribution::ERR) == "a3");
    // A sentinel with no end() before it ends the oldest open one.
    tags.written(4, {"a4", "", ""});
    proxy_sentinel(tags, log_attribution::OUT);
    CHECK(current_id(tags, log_attribution::OUT) == "a4");
}
