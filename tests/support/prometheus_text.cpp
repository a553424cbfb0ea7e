#include "prometheus_text.hpp"

#include <sstream>

#include <doctest/doctest.h>

#include "http_client.hpp"

namespace support {

sample_map parse_samples(const std::string& text) {
    sample_map samples;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') continue;
        const std::size_t space = line.rfind(' ');
        if (space == std::string::npos) continue;
        samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
    return samples;
}

sample_map scrape_metrics(int port) {
    const http_reply reply = http_get(port, "/metrics");
    REQUIRE_MESSAGE(reply.status == 200, "transport: " << reply.error);
    CHECK(reply.header("content-type") == "text/plain; version=0.0.4; charset=utf-8");
    return parse_samples(reply.body);
}

}  // namespace support
