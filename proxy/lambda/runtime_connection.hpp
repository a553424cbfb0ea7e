// One keep-alive HTTP/1.1 connection to the Lambda Runtime API, on the event loop (Beast
// reads the answers; the requests, a few fixed shapes, are written as text): each worker's
// poller has its own, so a parked `GET …/next` never holds another worker's post.
//
// A post and the next `GET …/next` go out in one write (HTTP/1.1 pipelining), so the API
// has the `/next` in hand when it hands the post's answer to the caller: a caller that
// invokes again at once finds the worker parked (a Managed-Instances API refuses an invoke
// when no `/next` is parked, and the gap of a 202's round trip was enough for that).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace actionloop::lambda {

namespace http = boost::beast::http;

using header_list = std::vector<std::pair<std::string, std::string>>;
using response = http::response<http::string_body>;

class runtime_connection {
public:
    /// `ec` set: the request failed (connect, write, read, a response past the bounds); else
    /// `res` is the answer.
    using reply_fn = std::function<void(const boost::system::error_code& ec, response& res)>;

    /// `api`: the Runtime API's address, `host`: its Host header ("127.0.0.1:9001");
    /// `max_body_bytes`: the bound of a response body (an event).
    runtime_connection(boost::asio::io_context& loop, boost::asio::ip::tcp::endpoint api,
                       std::string host, std::size_t max_body_bytes);

    /// `GET target`; `done` gets its answer on the loop. Nothing else may be pending.
    void get(const std::string& target, reply_fn done);
    /// `POST target` with a JSON body; `done` gets its answer. With `then_get` (a target), a
    /// GET of it follows in the same write and `then_done` gets that answer after `done`.
    /// A keep-alive connection the server closed meanwhile is opened again, and what was
    /// written sent once more, when nothing of the answers came.
    void post(const std::string& target, const std::string& body, const header_list& headers,
              reply_fn done, const std::string& then_get = {}, reply_fn then_done = {});

    /// Closes the socket: the pending requests end with an error.
    void close();

private:
    using socket_type = boost::asio::basic_stream_socket<boost::asio::ip::tcp,
                                                         boost::asio::io_context::executor_type>;
    void append_request(const char* method, const std::string& target, const std::string* body,
                        const header_list& headers);
    void start();
    void connect();
    void send();
    void receive();
    void fail(const boost::system::error_code& ec);

    boost::asio::ip::tcp::endpoint api_;
    std::string host_;
    std::size_t max_body_bytes_;
    socket_type socket_;
    boost::beast::flat_buffer buffer_;
    std::string out_;               // the requests written together
    std::deque<reply_fn> waiting_;  // one per request written, in order
    std::optional<http::response_parser<http::string_body>> parser_;
    bool reused_ = false;    // the requests went out on a connection used before
    bool retried_ = false;   // they were sent again once already
    bool answered_ = false;  // some answer of this write came
};

}  // namespace actionloop::lambda
