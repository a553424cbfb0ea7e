// The console's parsers, on any bytes (the first byte picks one): a silence request
// (core/silence: the API's POST body), a request's query string and path segment
// (common/http/query_string) and alertctl's command line (ctl/ctl_command, arguments split at
// NUL). Checks: a silence accepted has a matcher, ends after it starts, and comes back equal from
// its stored JSON; a query value decoded is never longer than its text; a command line accepted
// asks for paths under /api/v1/ with a body that is JSON (or none).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/silence.hpp"
#include "ctl/ctl_command.hpp"
#include "fuzz_check.hpp"
#include "http/query_string.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
    const double now = 1796400000;
    switch (data[0] % 3) {
        case 0: {
            const nlohmann::json request = nlohmann::json::parse(input, nullptr, false);
            if (request.is_discarded()) return 0;
            try {
                const alerts::silence s = alerts::parse_silence_request(request, now, "id");
                FUZZ_CHECK(!s.match.empty());
                FUZZ_CHECK(s.ends_at > s.starts_at);
                FUZZ_CHECK(s.until_resolved || s.ends_at > now);
                const nlohmann::json stored = alerts::silence_json(s);
                const alerts::silence back =
                    alerts::silence_from_json(nlohmann::json::parse(stored.dump()));
                FUZZ_CHECK(alerts::silence_json(back) == stored);
            } catch (const alerts::silence_error&) {
            }
            break;
        }
        case 1: {
            for (const char* key : {"count", "account", "a b", ""}) {
                FUZZ_CHECK(actionloop::query_value(input, key).size() <= input.size());
            }
            FUZZ_CHECK(actionloop::percent_decode(input).size() <= input.size());
            break;
        }
        default: {
            std::vector<std::string> args;
            std::string_view rest(input);
            while (true) {
                const auto nul = rest.find('\0');
                args.emplace_back(rest.substr(0, nul));
                if (nul == std::string_view::npos) break;
                rest.remove_prefix(nul + 1);
            }
            try {
                const alerts::ctl::ctl_invocation c = alerts::ctl::parse_command(args, {}, now);
                FUZZ_CHECK(!c.requests.empty());
                for (const auto& r : c.requests) {
                    FUZZ_CHECK(r.path.rfind("/api/v1/", 0) == 0);
                    FUZZ_CHECK(r.path.find_first_of(" \r\n") == std::string::npos);
                    FUZZ_CHECK(r.body.empty() || nlohmann::json::accept(r.body));
                }
            } catch (const alerts::ctl::usage_error&) {
            }
            break;
        }
    }
    return 0;
}
