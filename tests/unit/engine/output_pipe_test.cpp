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

// Lambda mode: the action writes no sentinel and the proxy writes none either; the proxy's
// marks of each activation's end (write_sentinels with no text) alone move the lines on, also
// when activations are pipelined and each mark lands later than the next one is written.
TEST_CASE("log_attribution: with no sentinel from the action, the proxy's end marks alone end "
          "each activation") {
    log_attribution tags;
    tags.written(1, {"r1", "", ""});
    tags.written(2, {"r2", "", ""});  // written before r1's end is marked (pipelined)
    CHECK(current_id(tags, log_attribution::OUT) == "r1");
    tags.end(1);
    CHECK(current_id(tags, log_attribution::OUT) == "r1");  // r1's lines still in the pipe
    proxy_sentinel(tags, log_attribution::OUT);
    CHECK(current_id(tags, log_attribution::OUT) == "r2");
    CHECK(current_id(tags, log_attribution::ERR) == "r1");
    proxy_sentinel(tags, log_attribution::ERR);
    CHECK(current_id(tags, log_attribution::ERR) == "r2");
    tags.written(3, {"r3", "", ""});
    tags.end(2);
    proxy_sentinel(tags, log_attribution::ERR);  // the streams' marks land in either order
    proxy_sentinel(tags, log_attribution::OUT);
    CHECK(current_id(tags, log_attribution::OUT) == "r3");
    CHECK(current_id(tags, log_attribution::ERR) == "r3");
    tags.end(3);
    proxy_sentinel(tags, log_attribution::OUT);
    proxy_sentinel(tags, log_attribution::ERR);
    CHECK(current_id(tags, log_attribution::OUT).empty());  // none running: lines untagged
    CHECK(current_id(tags, log_attribution::ERR).empty());
    // The next invocation after a quiet spell starts clean.
    tags.written(4, {"r4", "", ""});
    CHECK(current_id(tags, log_attribution::OUT) == "r4");
    CHECK(current_id(tags, log_attribution::ERR) == "r4");
}
