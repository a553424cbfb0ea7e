// One keep-alive HTTP/1.1 connection to the Lambda Runtime API, on the event loop (Beast):
// one request at a time, its response handed to a callback. Each worker's poller has its
// own, so a parked `GET …/next` never holds another worker's post.
#pragma once

#include <cstddef>
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

    /// Sends one request (none may be pending) and calls `done` on the loop with its answer.
    /// A keep-alive connection the server closed meanwhile is opened again, and the request
    /// sent once more, when nothing of the answer came.
    void request(http::verb method, const std::string& target, std::string body,
                 const header_list& headers, reply_fn done);

    /// Closes the socket: a pending request ends with an error.
    void close();

private:
    using socket_type = boost::asio::basic_stream_socket<boost::asio::ip::tcp,
                                                         boost::asio::io_context::executor_type>;
    void connect();
    void send();
    void receive();
    void fail(const boost::system::error_code& ec);

    boost::asio::ip::tcp::endpoint api_;
    std::string host_;
    std::size_t max_body_bytes_;
    socket_type socket_;
    boost::beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    std::optional<http::response_parser<http::string_body>> parser_;
    reply_fn done_;
    bool reused_ = false;   // the request went out on a connection an earlier one used
    bool retried_ = false;  // it was sent again once already
};

}  // namespace actionloop::lambda
