// Connection timeouts without a timer per operation. Beast's tcp_stream arms a timer for every
// read and write and cancels it when the operation completes (a timerfd update and a cancelled
// handler per request); here each connection only writes down when it expires, and one timer,
// once a second, closes the connections whose time has passed (their pending operation ends
// with operation_aborted, which the session treats as the client gone).
#pragma once

#include <chrono>
#include <list>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

namespace actionloop {

/// A connection's socket, bound to the loop's own executor type: the type-erased default
/// (any_io_executor) costs a copy and a destruction of the executor per operation.
using loop_socket =
    boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

class connection_timeouts {
public:
    using clock = std::chrono::steady_clock;

    struct entry {
        loop_socket* socket;
        clock::time_point expires = clock::time_point::max();
    };
    using handle = std::list<entry>::iterator;

    explicit connection_timeouts(boost::asio::io_context& loop);

    /// A connection to watch (its deadline: none yet). On the loop, as all of this.
    handle add(loop_socket& socket);
    void remove(handle connection) { entries_.erase(connection); }
    /// The connection is closed if still waiting `after` from now (1 s granularity).
    static void expires_after(handle connection, clock::duration after) {
        connection->expires = clock::now() + after;
    }
    static void expires_never(handle connection) { connection->expires = clock::time_point::max(); }

private:
    void sweep();

    std::list<entry> entries_;
    boost::asio::steady_timer timer_;
};

}  // namespace actionloop
