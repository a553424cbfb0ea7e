// Reading the proxy's /metrics: the Prometheus text format as a map from each sample's
// name and labels, exactly as written ("name{a=\"x\"}"), to its value.
#pragma once

#include <map>
#include <string>

namespace support {

using sample_map = std::map<std::string, double>;

/// The samples of a text exposition (comments and blank lines skipped).
sample_map parse_samples(const std::string& text);

/// GET 127.0.0.1:`port`/metrics; REQUIREs a 200 in the text format, returns its samples.
sample_map scrape_metrics(int port);

}  // namespace support
