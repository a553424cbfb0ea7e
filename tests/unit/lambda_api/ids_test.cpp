// Request ids and X-Ray trace headers: their exact shapes, fresh each time, the same from the
// same seed.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <string>

#include "lambda_api/ids.hpp"

using actionloop::lambda_api::id_source;

TEST_CASE("ids: a request id is a lower-case version 4 UUID, a fresh one each time") {
    id_source ids(42);
    const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::string id = ids.uuid();
        REQUIRE(std::regex_match(id, uuid));
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
}

TEST_CASE("ids: the same seed gives the same ids, another seed others") {
    id_source a(7);
    id_source b(7);
    id_source c(8);
    const std::string first = a.uuid();
    CHECK(first == b.uuid());
    CHECK(first != c.uuid());
}

TEST_CASE("ids: a trace header is X-Ray's, its root naming the epoch second in hex") {
    id_source ids(1);
    const std::string trace = ids.trace_header(1'700'000'000'123);  // second 0x6553f100
    const std::regex xray("Root=1-6553f100-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1");
    CHECK_MESSAGE(std::regex_match(trace, xray), trace);
    CHECK(ids.trace_header(1'700'000'000'123) != trace);
}
