// What the lambda_api unit tests share: a reply that records what it is given, and header
// lookups in an answer.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/exchange.hpp"

namespace lambda_test {

/// The answers one client got (shared, so the reply may outlive a copy of the recorder).
struct recorder {
    std::shared_ptr<std::vector<actionloop::answer>> got =
        std::make_shared<std::vector<actionloop::answer>>();

    actionloop::reply_fn reply() const {
        return [got = got](actionloop::answer a) { got->push_back(std::move(a)); };
    }
    size_t count() const { return got->size(); }
    /// The one answer given (fails the test when there is not exactly one).
    const actionloop::answer& only() const {
        REQUIRE(got->size() == 1);
        return got->front();
    }
};

/// The value of header `name` (exact case, as the API writes them), nullopt when absent.
inline std::optional<std::string> header(const actionloop::answer& a, const std::string& name) {
    for (const auto& [field, value] : a.headers) {
        if (field == name) return value;
    }
    return std::nullopt;
}

}  // namespace lambda_test
