// fleet_sink: the receiving end of alertgw in bench/alerts/fleet, the whole-pipeline benchmark:
// hook_sink's bigger sibling. One process is one kind of receiver, on 127.0.0.1:PORT, one
// thread:
//
//     fleet_sink --http PORT [--fail-seconds N] > hooks.log    a webhook target
//     fleet_sink --smtp PORT [--down-seconds N] > mails.log    an SMTP server
//
// It writes one line per message it accepted to stdout. Times are wall-clock seconds since the
// epoch with microseconds (hook_sink's figure); a line is written only once the answer that
// accepts the message is written to the socket, so a message the sender never learned was
// accepted is never counted:
//
//     hook <Idempotency-Key> <arrival> <due>    a webhook POST answered 200 "ok"
//     hook500 <Idempotency-Key> <arrival>       one answered 500 (the failing window below)
//     mail <X-Alert-Dedup-Key> <arrival> <recipients>    a message answered 250 after DATA
//     fail <time> / ok <time>                   the HTTP 500 window's start and end
//     down <time> / up <time>                   the SMTP outage's start and end
//
// arrival is when the request or the message's end of data was read; due is the notification's
// publishTs - alertDelay (both seconds in alertgw's JSON: docs/alerts.md), the time it was due,
// to the millisecond; a key or due that is missing is "-". stdout is flushed every 100 ms, whenever
// 1000 lines are waiting, and at SIGTERM or SIGINT (then exit 0).
//
// Faults on demand, for the report to show alertgw riding them out:
//   SIGUSR1 (--http): answer every request 500 "failing on purpose" for N seconds (30); another
//     SIGUSR1 in the window starts it again.
//   SIGUSR2 (--smtp): go down for N seconds (30): the listener closes at once (connections are
//     refused), each session ends at its next command boundary with 421 (a message whose DATA is
//     coming in is received and answered first), then the listener opens again.
//
// The SMTP side is a small RFC 5321 server for libcurl's client: EHLO (PIPELINING, 8BITMIME,
// SIZE; no STARTTLS, no AUTH), HELO, MAIL, RCPT (every recipient accepted), DATA, RSET, NOOP,
// QUIT; anything else 502. Pipelined commands are answered in order, in one write.
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// ---- output ----------------------------------------------------------------------------------

// Lines written since the last flush: a burst of thousands a second reaches the log file in
// blocks of 1000 rather than waiting for the 100 ms timer with the whole burst in memory.
int unflushed_lines = 0;

void flush_output() {
    std::fflush(stdout);
    unflushed_lines = 0;
}

void line_written() {
    if (++unflushed_lines >= 1000) flush_output();
}

timeval wall_clock() {
    timeval now{};
    gettimeofday(&now, nullptr);
    return now;
}

std::string_view or_dash(std::string_view text) { return text.empty() ? "-" : text; }

// `down 1764460900.123456`, `fail …`: the moments a report marks on its time line.
void note_event(const char* what) {
    const timeval now = wall_clock();
    std::printf("%s %ld.%06ld\n", what, static_cast<long>(now.tv_sec),
                static_cast<long>(now.tv_usec));
    line_written();
}

void flush_every(asio::steady_timer& timer) {
    timer.expires_after(std::chrono::milliseconds(100));
    timer.async_wait([&timer](error_code error) {
        if (error) return;
        flush_output();
        flush_every(timer);
    });
}

// Listening on 127.0.0.1:port with SO_REUSEADDR, so a restarted sink (or the SMTP listener
// after an outage) binds again at once; the backlog takes a whole fleet connecting at once.
void listen_on(tcp::acceptor& acceptor, unsigned short port) {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(4096);
}

// ---- HTTP: the webhook target ----------------------------------------------------------------

// The notification's due time, publishTs - alertDelay with milliseconds, or "-" when the body
// is not a JSON object holding both numbers. alertDelay is in seconds (rounded to milliseconds),
// like publishTs: docs/alerts.md, "The notification".
std::string due_text(const std::string& body) {
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (!json.is_object()) return "-";
    const auto publish = json.find("publishTs");
    const auto delay = json.find("alertDelay");
    if (publish == json.end() || delay == json.end() || !publish->is_number() ||
        !delay->is_number()) {
        return "-";
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.3f", publish->get<double>() - delay->get<double>());
    return text;
}

// The 500 window SIGUSR1 opens: the webhook target failing, as a real one does at times.
class fail_window {
public:
    fail_window(asio::io_context& io, std::chrono::seconds length) : timer_(io), length_(length) {}

    bool failing() const { return failing_; }

    void start() {
        if (!failing_) note_event("fail");
        failing_ = true;
        // The generation tells the wait of this window from a wait that an earlier SIGUSR1
        // started and that had already completed when this one came (it cannot be cancelled).
        const unsigned generation = ++generation_;
        timer_.expires_after(length_);
        timer_.async_wait([this, generation](error_code error) {
            if (error || generation != generation_) return;
            failing_ = false;
            note_event("ok");
        });
    }

private:
    asio::steady_timer timer_;
    std::chrono::seconds length_;
    bool failing_ = false;
    unsigned generation_ = 0;
};

class http_connection : public std::enable_shared_from_this<http_connection> {
public:
    http_connection(tcp::socket socket, const fail_window& window)
        : socket_(std::move(socket)), window_(window) {}

    void read() {
        request_ = {};
        http::async_read(socket_, buffer_, request_,
                         [self = shared_from_this()](error_code error, std::size_t) {
                             if (!error) self->answer();
                         });
    }

private:
    void answer() {
        arrival_ = wall_clock();
        const auto key = request_["Idempotency-Key"];
        key_.assign(key.data(), key.size());
        failed_ = window_.failing();
        response_ = {failed_ ? http::status::internal_server_error : http::status::ok,
                     request_.version()};
        response_.set(http::field::content_type, "text/plain");
        response_.body() = failed_ ? "failing on purpose" : "ok";
        // Parsed only for the line, and only for a request it accepts.
        due_ = failed_ ? std::string() : due_text(request_.body());
        response_.keep_alive(request_.keep_alive());
        response_.prepare_payload();
        http::async_write(socket_, response_,
                          [self = shared_from_this()](error_code error, std::size_t) {
                              if (error) return;  // never answered: not counted
                              self->log();
                              if (self->response_.keep_alive()) {
                                  self->read();
                              } else {
                                  self->socket_.shutdown(tcp::socket::shutdown_send, error);
                              }
                          });
    }

    void log() {
        const std::string_view key = or_dash(key_);
        if (failed_) {
            std::printf("hook500 %.*s %ld.%06ld\n", static_cast<int>(key.size()), key.data(),
                        static_cast<long>(arrival_.tv_sec), static_cast<long>(arrival_.tv_usec));
        } else {
            std::printf("hook %.*s %ld.%06ld %s\n", static_cast<int>(key.size()), key.data(),
                        static_cast<long>(arrival_.tv_sec), static_cast<long>(arrival_.tv_usec),
                        due_.c_str());
        }
        line_written();
    }

    tcp::socket socket_;
    const fail_window& window_;
    boost::beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    http::response<http::string_body> response_;
    timeval arrival_{};
    std::string key_;
    std::string due_;
    bool failed_ = false;
};

void accept_http(tcp::acceptor& acceptor, const fail_window& window) {
    acceptor.async_accept([&acceptor, &window](error_code error, tcp::socket socket) {
        if (!error) {
            socket.set_option(tcp::no_delay(true), error);
            std::make_shared<http_connection>(std::move(socket), window)->read();
        }
        accept_http(acceptor, window);
    });
}

// ---- SMTP: the mail server -------------------------------------------------------------------

constexpr std::size_t max_line = 1000;                 // a command line with its CRLF (RFC 5321)
constexpr std::size_t max_message = 10 * 1024 * 1024;  // what EHLO's SIZE announces

bool same_nocase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

bool starts_nocase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && same_nocase(text.substr(0, prefix.size()), prefix);
}

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

// MAIL FROM's SIZE=n parameter (RFC 1870), 0 when absent: a message announced too big is
// refused before its data is sent.
std::size_t announced_size(std::string_view args) {
    std::size_t at = 0;
    while ((at = args.find(' ', at)) != std::string_view::npos) {
        const std::string_view rest = args.substr(++at);
        if (!starts_nocase(rest, "SIZE=")) continue;
        std::size_t size = 0;
        std::from_chars(rest.data() + 5, rest.data() + rest.size(), size);
        return size;
    }
    return 0;
}

class smtp_session;

// The listener and the outage SIGUSR2 starts. Sessions are tracked by weak pointer, so that one
// ending needs nothing from the server (sessions can outlive it when the io_context is torn
// down).
class smtp_server {
public:
    smtp_server(asio::io_context& io, unsigned short port, std::chrono::seconds down_length)
        : acceptor_(io), timer_(io), port_(port), down_length_(down_length) {}

    void open() {
        listen_on(acceptor_, port_);
        accept();
    }

    bool down() const { return down_; }

    void go_down();

private:
    void accept();
    void reopen();
    void track(const std::shared_ptr<smtp_session>& session) {
        // Sweep the ended sessions out now and then: the list stays about twice the open ones.
        if (sessions_.size() >= sweep_at_) {
            sessions_.erase(std::remove_if(sessions_.begin(), sessions_.end(),
                                           [](const auto& s) { return s.expired(); }),
                            sessions_.end());
            sweep_at_ = std::max<std::size_t>(256, 2 * sessions_.size());
        }
        sessions_.push_back(session);
    }

    tcp::acceptor acceptor_;
    asio::steady_timer timer_;
    unsigned short port_;
    std::chrono::seconds down_length_;
    bool down_ = false;
    unsigned generation_ = 0;
    std::vector<std::weak_ptr<smtp_session>> sessions_;
    std::size_t sweep_at_ = 256;
};

// One SMTP connection. Input is handled a line at a time from a buffer, so pipelined commands
// are answered in order; the replies to everything buffered go out in one write. A message's
// line waits for the write that carries its 250.
class smtp_session : public std::enable_shared_from_this<smtp_session> {
public:
    smtp_session(tcp::socket socket, const smtp_server& server)
        : socket_(std::move(socket)), server_(server) {}

    void start() {
        reply("220 fleet-sink ESMTP");
        flush_replies();
        read();
    }

    // The server went down: a session between commands ends now; one receiving DATA ends after
    // answering it (process() checks again then).
    void go_down() {
        if (closing_ || receiving_data_) return;
        end_with("421 fleet-sink shutting down");
        flush_replies();
    }

private:
    struct accepted_mail {
        std::string key;
        timeval arrival;
        int recipients;
    };

    void read() {
        reading_ = true;
        socket_.async_read_some(asio::buffer(chunk_),
                                [self = shared_from_this()](error_code error, std::size_t size) {
                                    self->reading_ = false;
                                    if (error) {
                                        self->closing_ = true;  // the client is gone
                                        return;
                                    }
                                    self->input_.append(self->chunk_.data(), size);
                                    self->process();
                                    self->flush_replies();
                                    // A client that pipelines without reading its replies waits
                                    // until they are written.
                                    if (!self->closing_ && self->replies_.size() < 65536) {
                                        self->read();
                                    }
                                });
    }

    // Every complete line of the input, then the limits on the incomplete rest.
    void process() {
        std::size_t at = 0;
        while (!closing_) {
            if (!receiving_data_ && server_.down()) {
                end_with("421 fleet-sink shutting down");
                break;
            }
            const std::size_t end = input_.find('\n', at);
            if (end == std::string::npos) break;
            std::string_view line(input_.data() + at, end - at);
            const std::size_t length = end + 1 - at;
            at = end + 1;
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            if (receiving_data_) {
                data_line(line, length);
            } else if (length > max_line) {
                end_with("500 line too long");
            } else {
                command(line);
            }
        }
        input_.erase(0, at);
        if (closing_) return;
        // A line without its end yet: bounded like a whole one.
        if (!receiving_data_ && input_.size() > max_line) end_with("500 line too long");
        if (receiving_data_ && input_.size() > max_message) end_with("552 message too big");
    }

    void command(std::string_view line) {
        const std::string_view verb = line.substr(0, line.find(' '));
        const std::string_view args =
            verb.size() < line.size() ? trimmed(line.substr(verb.size() + 1)) : "";
        if (same_nocase(verb, "EHLO") || same_nocase(verb, "HELO")) {
            hello(same_nocase(verb, "EHLO"), args);
        } else if (same_nocase(verb, "MAIL")) {
            mail(args);
        } else if (same_nocase(verb, "RCPT")) {
            recipient(args);
        } else if (same_nocase(verb, "DATA")) {
            data(args);
        } else if (same_nocase(verb, "RSET")) {
            reset();
            reply("250 ok");
        } else if (same_nocase(verb, "NOOP")) {
            reply("250 ok");
        } else if (same_nocase(verb, "QUIT")) {
            end_with("221 fleet-sink closing");
        } else {
            reply("502 command not implemented");
        }
    }

    void hello(bool extended, std::string_view domain) {
        if (domain.empty()) return reply("501 a domain is required");
        reset();
        greeted_ = true;
        // libcurl reads the extensions from the 250- lines, and sends SIZE= when offered.
        if (extended) {
            reply("250-fleet-sink\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 SIZE 10485760");
        } else {
            reply("250 fleet-sink");
        }
    }

    void mail(std::string_view args) {
        if (!greeted_) return reply("503 send EHLO or HELO first");
        if (in_transaction_) return reply("503 nested MAIL command");
        if (!starts_nocase(args, "FROM:")) return reply("501 syntax: MAIL FROM:<address>");
        if (announced_size(args) > max_message) return reply("552 message too big");
        in_transaction_ = true;
        reply("250 ok");
    }

    void recipient(std::string_view args) {
        if (!in_transaction_) return reply("503 need MAIL before RCPT");
        if (!starts_nocase(args, "TO:")) return reply("501 syntax: RCPT TO:<address>");
        ++recipients_;
        reply("250 ok");
    }

    void data(std::string_view args) {
        if (!args.empty()) return reply("501 DATA takes no arguments");
        if (recipients_ == 0) return reply("503 need RCPT before DATA");
        receiving_data_ = true;
        in_headers_ = true;
        message_size_ = 0;
        key_.clear();
        reply("354 end data with <CR><LF>.<CR><LF>");
    }

    // One line of the message (without its line end): the dedup key is looked for in the
    // header part, up to the first empty line. A message over the size limit is read to its end
    // all the same, and refused then, as the client waits for the answer only after the dot.
    void data_line(std::string_view line, std::size_t length) {
        if (line == ".") return end_of_data();
        if (!line.empty() && line.front() == '.') line.remove_prefix(1);  // dot-stuffing
        message_size_ += length;
        if (!in_headers_) return;
        if (line.empty()) {
            in_headers_ = false;
        } else if (starts_nocase(line, "X-Alert-Dedup-Key:")) {
            key_ = trimmed(line.substr(18));
        }
    }

    void end_of_data() {
        const timeval arrival = wall_clock();
        receiving_data_ = false;
        if (message_size_ > max_message) {
            reply("552 message too big");
        } else {
            reply("250 ok");
            logs_.push_back({key_.empty() ? std::string("-") : key_, arrival, recipients_});
        }
        reset();
    }

    void reset() {
        in_transaction_ = false;
        recipients_ = 0;
    }

    void reply(std::string_view text) {
        replies_ += text;
        replies_ += "\r\n";
    }

    // The last reply: the connection closes once it is written.
    void end_with(std::string_view text) {
        reply(text);
        closing_ = true;
    }

    void flush_replies() {
        if (writing_ || replies_.empty()) return;
        writing_ = true;
        std::swap(replies_, written_);
        std::swap(logs_, written_logs_);
        asio::async_write(socket_, asio::buffer(written_),
                          [self = shared_from_this()](error_code error, std::size_t) {
                              self->on_written(error);
                          });
    }

    void on_written(error_code error) {
        writing_ = false;
        written_.clear();
        if (error) {  // the client may not have the 250s: their messages are not counted
            closing_ = true;
            socket_.close(error);
            return;
        }
        for (const accepted_mail& m : written_logs_) {
            std::printf("mail %s %ld.%06ld %d\n", m.key.c_str(),
                        static_cast<long>(m.arrival.tv_sec), static_cast<long>(m.arrival.tv_usec),
                        m.recipients);
            line_written();
        }
        written_logs_.clear();
        if (!replies_.empty()) return flush_replies();
        if (closing_) {
            socket_.shutdown(tcp::socket::shutdown_both, error);
            socket_.close(error);  // also ends a read still waiting
        } else if (!reading_) {
            read();
        }
    }

    tcp::socket socket_;
    const smtp_server& server_;
    std::array<char, 16384> chunk_;
    std::string input_;
    std::string replies_, written_;
    std::vector<accepted_mail> logs_, written_logs_;
    bool reading_ = false;
    bool writing_ = false;
    bool closing_ = false;
    bool greeted_ = false;
    bool in_transaction_ = false;
    bool receiving_data_ = false;
    bool in_headers_ = false;
    int recipients_ = 0;
    std::size_t message_size_ = 0;
    std::string key_;
};

void smtp_server::accept() {
    acceptor_.async_accept([this](error_code error, tcp::socket socket) {
        if (error == asio::error::operation_aborted || !acceptor_.is_open()) return;  // down
        if (!error) {
            socket.set_option(tcp::no_delay(true), error);
            auto session = std::make_shared<smtp_session>(std::move(socket), *this);
            track(session);
            session->start();
        }
        accept();
    });
}

void smtp_server::go_down() {
    if (!down_) {
        down_ = true;
        error_code ignored;
        acceptor_.close(ignored);  // what waits in the backlog is refused with it
        note_event("down");
        for (const auto& weak : sessions_) {
            if (const auto session = weak.lock()) session->go_down();
        }
        sessions_.clear();
    }
    // Another SIGUSR2 while down starts the N seconds again (see fail_window for generation_).
    const unsigned generation = ++generation_;
    timer_.expires_after(down_length_);
    timer_.async_wait([this, generation](error_code error) {
        if (!error && generation == generation_) reopen();
    });
}

void smtp_server::reopen() {
    try {
        listen_on(acceptor_, port_);
    } catch (const boost::system::system_error& e) {
        // Taken meanwhile: try again shortly rather than give up the benchmark's mail.
        std::fprintf(stderr, "fleet_sink: cannot listen again on port %u: %s\n", port_, e.what());
        error_code ignored;
        acceptor_.close(ignored);
        timer_.expires_after(std::chrono::seconds(1));
        timer_.async_wait([this, generation = generation_](error_code error) {
            if (!error && generation == generation_) reopen();
        });
        return;
    }
    down_ = false;
    note_event("up");
    accept();
}

// ---- main ------------------------------------------------------------------------------------

struct options {
    bool smtp = false;
    unsigned short port = 0;
    unsigned seconds = 30;  // --fail-seconds or --down-seconds
};

template <typename Number>
bool parse_number(std::string_view text, Number& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

bool parse_options(int argc, char** argv, options& out) {
    if (argc != 3 && argc != 5) return false;
    const std::string_view mode = argv[1];
    if (mode != "--http" && mode != "--smtp") return false;
    out.smtp = mode == "--smtp";
    if (!parse_number(argv[2], out.port)) return false;
    if (argc == 3) return true;
    return std::string_view(argv[3]) == (out.smtp ? "--down-seconds" : "--fail-seconds") &&
           parse_number(argv[4], out.seconds);
}

}  // namespace

int main(int argc, char** argv) {
    options opts;
    if (!parse_options(argc, argv, opts)) {
        std::fprintf(stderr, "usage: fleet_sink --http PORT [--fail-seconds N]\n"
                             "       fleet_sink --smtp PORT [--down-seconds N]\n");
        return 2;
    }
    static char out_buffer[1 << 20];  // the lines go out in blocks, never a line at a time
    std::setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);

    asio::io_context io;
    const std::chrono::seconds seconds(opts.seconds);
    fail_window window(io, seconds);
    smtp_server mail(io, opts.port, seconds);
    tcp::acceptor http_acceptor(io);
    if (opts.smtp) {
        mail.open();
    } else {
        listen_on(http_acceptor, opts.port);
        accept_http(http_acceptor, window);
    }
    asio::steady_timer timer(io);
    flush_every(timer);

    // Both USR signals in either mode: the one for the other mode is ignored, not fatal.
    asio::signal_set signals(io, SIGTERM, SIGINT);
    signals.add(SIGUSR1);
    signals.add(SIGUSR2);
    std::function<void(error_code, int)> on_signal = [&](error_code error, int number) {
        if (error) return;
        if (number == SIGTERM || number == SIGINT) return io.stop();
        if (number == SIGUSR1 && !opts.smtp) window.start();
        if (number == SIGUSR2 && opts.smtp) mail.go_down();
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    io.run();
    flush_output();
    return 0;
}
