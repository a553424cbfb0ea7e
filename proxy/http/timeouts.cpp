#include "http/timeouts.hpp"

namespace actionloop {

connection_timeouts::connection_timeouts(boost::asio::io_context& loop) : timer_(loop) { sweep(); }

connection_timeouts::handle connection_timeouts::add(loop_socket& socket) {
    return entries_.insert(entries_.end(), entry{&socket});
}

void connection_timeouts::sweep() {
    const clock::time_point now = clock::now();
    for (entry& connection : entries_) {
        if (connection.expires > now) continue;
        connection.expires = clock::time_point::max();
        boost::system::error_code ignored;
        connection.socket->shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        connection.socket->close(ignored);
    }
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) sweep();
    });
}

}  // namespace actionloop
