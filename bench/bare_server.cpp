// bare_server PORT: cpp-httplib alone, set up like the proxy (TCP_NODELAY, keep-alive, a
// thread pool), answering every request with the hello action's JSON. No action behind it:
// a reference server (the proxy itself serves with Boost.Beast, not cpp-httplib).
#include <httplib.h>
#include <sys/socket.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    int port = argc > 1 ? std::atoi(argv[1]) : 8090;
    httplib::Server server;
    server.new_task_queue = [] { return new httplib::ThreadPool(64); };
    server.set_tcp_nodelay(true);
    server.set_keep_alive_max_count(1u << 30);
    server.set_keep_alive_timeout(60);
    const std::string answer = "{\"greeting\":\"Hello, Mike!\"}\n";
    auto handler = [&answer](const httplib::Request&, httplib::Response& res) {
        res.set_content(answer, "application/json");
    };
    server.Post(".*", handler);
    server.Get(".*", handler);
    // The proxy's listen_on(): SO_REUSEADDR only, and a backlog of SOMAXCONN instead of
    // the library's 5, so both servers keep the same HTTP layer.
    int listener = -1;
    server.set_socket_options([&listener](int sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        if (listener < 0) listener = sock;
    });
    if (!server.bind_to_port("127.0.0.1", port)) return 1;
    if (listener >= 0) ::listen(listener, SOMAXCONN);
    return server.listen_after_bind() ? 0 : 1;
}
