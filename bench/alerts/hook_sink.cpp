// hook_sink: bench/alerts/gateway's timed webhook receiver. Answers every request 200 "ok"
// (HTTP/1.1, kept alive) on 127.0.0.1:PORT, one thread, and writes a line per request to
// stdout: its Idempotency-Key and the wall-clock time at which the request was read, in
// seconds with microseconds. nginx's $msec is the same figure in whole milliseconds, too
// coarse for a p99 of half a millisecond. stdout is flushed every 100 ms and at SIGTERM.
//
//     hook_sink PORT > arrivals.log
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

void note_arrival(std::string_view key) {
    timeval now{};
    gettimeofday(&now, nullptr);
    std::printf("%.*s %ld.%06ld\n", static_cast<int>(key.size()), key.data(),
                static_cast<long>(now.tv_sec), static_cast<long>(now.tv_usec));
}

class connection : public std::enable_shared_from_this<connection> {
public:
    explicit connection(tcp::socket socket) : socket_(std::move(socket)) {}

    void read() {
        request_ = {};
        http::async_read(socket_, buffer_, request_,
                         [self = shared_from_this()](boost::beast::error_code error, std::size_t) {
                             if (!error) self->answer();
                         });
    }

private:
    void answer() {
        const auto key = request_["Idempotency-Key"];
        note_arrival({key.data(), key.size()});
        response_ = {http::status::ok, request_.version()};
        response_.set(http::field::content_type, "text/plain");
        response_.body() = "ok";
        response_.keep_alive(request_.keep_alive());
        response_.prepare_payload();
        http::async_write(socket_, response_,
                          [self = shared_from_this()](boost::beast::error_code error, std::size_t) {
                              if (!error && self->response_.keep_alive()) self->read();
                          });
    }

    tcp::socket socket_;
    boost::beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    http::response<http::string_body> response_;
};

void accept(tcp::acceptor& acceptor) {
    acceptor.async_accept([&acceptor](boost::beast::error_code error, tcp::socket socket) {
        if (!error) {
            socket.set_option(tcp::no_delay(true));
            std::make_shared<connection>(std::move(socket))->read();
        }
        accept(acceptor);
    });
}

void flush_every(asio::steady_timer& timer) {
    timer.expires_after(std::chrono::milliseconds(100));
    timer.async_wait([&timer](boost::beast::error_code error) {
        if (error) return;
        std::fflush(stdout);
        flush_every(timer);
    });
}

}  // namespace

int main(int argc, char** argv) {
    unsigned short port = 0;
    const std::string_view text = argc == 2 ? argv[1] : "";
    if (std::from_chars(text.data(), text.data() + text.size(), port).ec != std::errc() ||
        port == 0) {
        std::fprintf(stderr, "usage: hook_sink PORT\n");
        return 2;
    }
    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), port});
    acceptor.listen(4096);
    accept(acceptor);
    asio::steady_timer timer(io);
    flush_every(timer);
    asio::signal_set stop(io, SIGTERM, SIGINT);
    stop.async_wait([&io](boost::beast::error_code, int) { io.stop(); });
    io.run();
    std::fflush(stdout);
    return 0;
}
