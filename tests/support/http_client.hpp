// HTTP to the proxy under test: ordinary requests through httplib::Client, and raw-socket
// requests for what httplib will not send (chunked bodies, Expect: 100-continue, GET with a
// body, malformed requests).
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace support {

/// One HTTP answer. status is -1 when no (complete) response arrived; `error` says why.
struct http_reply {
    int status = -1;
    std::string body;
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string error;

    bool has_header(const std::string& name) const;
    /// The header's value, "" when absent (name is case-insensitive).
    std::string header(const std::string& name) const;
};

/// Extra request headers for http_post.
using header_map = std::map<std::string, std::string>;

/// POST `body` to 127.0.0.1:`port``path` with Content-Type and Accept application/json, like
/// OpenWhisk's container client.
http_reply http_post(int port, const std::string& path, const std::string& body,
                     std::chrono::seconds timeout = std::chrono::seconds(60),
                     const header_map& headers = {});

/// GET 127.0.0.1:`port``path` with no body.
http_reply http_get(int port, const std::string& path,
                    std::chrono::seconds timeout = std::chrono::seconds(60));

/// Sends `request` verbatim on a fresh connection and reads one response (skipping 1xx
/// interim responses), until the response is complete, the peer closes, or `timeout`.
http_reply raw_exchange(int port, const std::string& request,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Sends `bytes` verbatim on a fresh connection (several requests, say) and returns all
/// the server sent until it closed the connection or `timeout` passed.
std::string raw_until_close(int port, const std::string& bytes,
                            std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Sends `head` (request line and headers, ending in a blank line, which should carry
/// `Expect: 100-continue`), then waits for the server: on `100 Continue`, or when the server
/// says nothing for `continue_wait`, sends `body`. A final response sent before the body is
/// returned as is (the body is then never sent).
http_reply raw_expect_continue(int port, const std::string& head, const std::string& body,
                               std::chrono::milliseconds continue_wait,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// `body` encoded as HTTP/1.1 chunks of at most `chunk` bytes, with the final 0 chunk.
std::string chunked(const std::string& body, std::size_t chunk = 4096);

/// Parses one HTTP response from `raw`. `complete` tells whether all of it was there.
http_reply parse_response(const std::string& raw, bool& complete);

/// Whether 127.0.0.1:`port` accepts a TCP connection right now.
bool port_accepts(int port);

/// A port that was free a moment ago (bind 127.0.0.1:0, read it, close).
int pick_free_port();

/// A TCP connection to 127.0.0.1:`port` with TCP_NODELAY, for tests that write raw bytes;
/// throws when it cannot connect. The caller closes the descriptor.
int connect_to(int port);

/// Writes all of `text` to `fd`; throws when the peer is gone.
void send_text(int fd, const std::string& text);

}  // namespace support
