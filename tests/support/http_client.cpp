#include "http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <httplib.h>

namespace support {
namespace {

using steady = std::chrono::steady_clock;

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

http_reply from_result(const httplib::Result& result) {
    http_reply reply;
    if (!result) {
        reply.error = httplib::to_string(result.error());
        return reply;
    }
    reply.status = result->status;
    reply.body = result->body;
    for (const auto& [name, value] : result->headers) {
        reply.headers[lower(name)] = value;
    }
    return reply;
}

void configure(httplib::Client& client, std::chrono::seconds timeout) {
    client.set_connection_timeout(std::chrono::seconds(5));
    client.set_read_timeout(timeout);
    client.set_write_timeout(timeout);
    client.set_keep_alive(false);
}

sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

// A connected socket, or -1.
int connect_loopback(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    const sockaddr_in addr = loopback(port);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends everything it can; false when the peer stopped accepting data.
bool send_all(int fd, const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

// Waits up to `wait` for data; appends it to `raw`. Returns false on EOF, error or timeout.
bool receive_some(int fd, std::string& raw, std::chrono::milliseconds wait) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::max<long long>(0, wait.count())));
    if (ready <= 0) {
        return false;
    }
    char buffer[65536];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
        return false;
    }
    raw.append(buffer, static_cast<std::size_t>(n));
    return true;
}

std::chrono::milliseconds left(steady::time_point deadline) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
}

// Reads until one full response is in `raw`, the peer closes, or the deadline passes.
http_reply read_response(int fd, std::string& raw, steady::time_point deadline) {
    bool complete = false;
    http_reply reply = parse_response(raw, complete);
    while (!complete && left(deadline).count() > 0) {
        if (!receive_some(fd, raw, left(deadline))) {
            reply = parse_response(raw, complete);
            if (!complete && reply.status > 0 && !reply.has_header("content-length") &&
                !reply.has_header("transfer-encoding")) {
                reply.error.clear();  // the body ran until the peer closed
            }
            return reply;
        }
        reply = parse_response(raw, complete);
    }
    if (!complete && reply.error.empty()) {
        reply.error = "timed out waiting for the response";
    }
    return reply;
}

bool parse_head(const std::string& head, http_reply& reply) {
    std::istringstream lines(head);
    std::string line;
    std::getline(lines, line);
    if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) {
        return false;
    }
    reply.status = std::atoi(line.c_str() + 9);
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos) {
            const std::size_t start = line.find_first_not_of(' ', colon + 1);
            reply.headers[lower(line.substr(0, colon))] =
                start == std::string::npos ? "" : line.substr(start);
        }
    }
    return true;
}

// Decodes a chunked body; false while incomplete.
bool decode_chunked(const std::string& data, std::string& body) {
    std::size_t pos = 0;
    body.clear();
    while (true) {
        const std::size_t eol = data.find("\r\n", pos);
        if (eol == std::string::npos) {
            return false;
        }
        const std::size_t size = std::strtoul(data.substr(pos, eol - pos).c_str(), nullptr, 16);
        if (size == 0) {
            return data.find("\r\n", eol + 2) != std::string::npos;
        }
        if (data.size() < eol + 2 + size + 2) {
            return false;
        }
        body.append(data, eol + 2, size);
        pos = eol + 2 + size + 2;
    }
}

}  // namespace

bool http_reply::has_header(const std::string& name) const {
    return headers.count(lower(name)) != 0;
}

std::string http_reply::header(const std::string& name) const {
    const auto found = headers.find(lower(name));
    return found == headers.end() ? std::string() : found->second;
}

http_reply http_post(int port, const std::string& path, const std::string& body,
                     std::chrono::seconds timeout, const header_map& headers) {
    httplib::Client client("127.0.0.1", port);
    configure(client, timeout);
    httplib::Headers request_headers{{"Accept", "application/json"}};
    for (const auto& [name, value] : headers) {
        request_headers.emplace(name, value);
    }
    return from_result(client.Post(path.c_str(), request_headers, body, "application/json"));
}

http_reply http_get(int port, const std::string& path, std::chrono::seconds timeout) {
    httplib::Client client("127.0.0.1", port);
    configure(client, timeout);
    return from_result(client.Get(path.c_str()));
}

http_reply parse_response(const std::string& raw, bool& complete) {
    complete = false;
    http_reply reply;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = raw.find("\r\n\r\n", start);
        if (end == std::string::npos) {
            reply.error = raw.empty() ? "no response" : "incomplete response head";
            return reply;
        }
        reply = http_reply{};
        if (!parse_head(raw.substr(start, end - start), reply)) {
            reply.error = "malformed response: " + raw.substr(start, 80);
            return reply;
        }
        start = end + 4;
        if (reply.status >= 200) {
            break;
        }
    }
    const std::string rest = raw.substr(start);
    if (reply.has_header("content-length")) {
        const std::string declared = reply.header("content-length");
        const std::size_t length = std::strtoul(declared.c_str(), nullptr, 10);
        complete = rest.size() >= length;
        reply.body = rest.substr(0, length);
    } else if (lower(reply.header("transfer-encoding")) == "chunked") {
        complete = decode_chunked(rest, reply.body);
    } else {
        reply.body = rest;
    }
    if (!complete) {
        reply.error = "incomplete response body";
    }
    return reply;
}

http_reply raw_exchange(int port, const std::string& request, std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    const int fd = connect_loopback(port);
    if (fd < 0) {
        http_reply reply;
        reply.error = "cannot connect";
        return reply;
    }
    send_all(fd, request);  // a server may answer (and close) before reading it all
    std::string raw;
    http_reply reply = read_response(fd, raw, deadline);
    ::close(fd);
    return reply;
}

std::string raw_until_close(int port, const std::string& bytes, std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    const int fd = connect_loopback(port);
    if (fd < 0) return "";
    send_all(fd, bytes);
    std::string raw;
    while (left(deadline).count() > 0 && receive_some(fd, raw, left(deadline))) {
    }
    ::close(fd);
    return raw;
}

http_reply raw_expect_continue(int port, const std::string& head, const std::string& body,
                               std::chrono::milliseconds continue_wait,
                               std::chrono::milliseconds timeout) {
    const auto deadline = steady::now() + timeout;
    const int fd = connect_loopback(port);
    http_reply reply;
    if (fd < 0) {
        reply.error = "cannot connect";
        return reply;
    }
    send_all(fd, head);
    std::string raw;
    receive_some(fd, raw, continue_wait);
    bool complete = false;
    if (parse_response(raw, complete).status < 200) {  // nothing yet, or 100 Continue
        send_all(fd, body);
    }
    reply = read_response(fd, raw, deadline);
    ::close(fd);
    return reply;
}

std::string chunked(const std::string& body, std::size_t chunk) {
    std::string out;
    char size[32];
    for (std::size_t pos = 0; pos < body.size(); pos += chunk) {
        const std::size_t n = std::min(chunk, body.size() - pos);
        std::snprintf(size, sizeof size, "%zx\r\n", n);
        out += size;
        out.append(body, pos, n);
        out += "\r\n";
    }
    out += "0\r\n\r\n";
    return out;
}

bool port_accepts(int port) {
    const int fd = connect_loopback(port);
    if (fd < 0) {
        return false;
    }
    ::close(fd);
    return true;
}

int pick_free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = loopback(0);
    socklen_t size = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        throw std::runtime_error("cannot pick a free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

int connect_to(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot connect to port " + std::to_string(port));
    }
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    return fd;
}

void send_text(int fd, const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
        const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            throw std::runtime_error("send() failed after " + std::to_string(sent) + " bytes");
        sent += static_cast<size_t>(n);
    }
}

}  // namespace support
