// redis_client.cpp — hiredis (0.14) calls behind redis_client.
#include "redis/redis_client.hpp"

#include <algorithm>

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <variant>

namespace alerts {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
    return tv;
}

// The reply functions of every connection: hiredis's own, but a nil inside an array (most of
// an MGET over a fleet's device keys: devices without a record) allocates nothing: its element
// is a null pointer. A top-level nil is hiredis's object, as callers expect.
char nested_nil;
redisReplyObjectFunctions default_functions;
redisReplyObjectFunctions functions;

void* create_nil(const redisReadTask* task) {
    if (!task->parent) return default_functions.createNil(task);
    static_cast<redisReply*>(task->parent->obj)->element[task->idx] = nullptr;
    return &nested_nil;  // not null (that would be out of memory); never freed nor returned
}

void use_functions(redisContext* ctx) {
    static const bool INIT = [ctx] {
        default_functions = *ctx->reader->fn;
        functions = default_functions;
        functions.createNil = create_nil;
        return true;
    }();
    (void)INIT;
    ctx->reader->fn = &functions;
}

}  // namespace

redis_client::redis_client(redis_url url, std::chrono::milliseconds timeout)
    : url_(std::move(url)), label_(url_.text), timeout_(timeout) {
    // hiredis writes with write(2): a Redis gone mid-command must be an EPIPE error (then an
    // error answer), not a SIGPIPE that kills the action process.
    std::signal(SIGPIPE, SIG_IGN);
}

redis_client::~redis_client() { disconnect(); }

void redis_client::disconnect() {
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
    queued_ = 0;
}

void redis_client::fail(const std::string& what) {
    std::string message = "redis " + label_ + ": " + what;
    if (ctx_ && ctx_->err) message += ": " + std::string(ctx_->errstr);
    disconnect();
    throw redis_unavailable(message);
}

void redis_client::error_reply(std::string_view text) {
    disconnect();  // the rest of a pipeline is not worth reading
    std::string message = "redis " + label_ + ": " + std::string(text);
    for (std::string_view failover : {"READONLY", "LOADING", "MASTERDOWN"}) {
        if (text.substr(0, failover.size()) == failover) throw redis_unavailable(message);
    }
    throw redis_error(message);
}

void redis_client::time_out(const char* doing) {
    disconnect();
    throw redis_timeout("redis " + label_ + ": timed out " + doing +
                        " (ALERT_REDIS_TIMEOUT_MS: " + std::to_string(timeout_.count()) + " ms)");
}

std::chrono::milliseconds redis_client::time_left(const char* doing) {
    if (!deadline_) return timeout_;
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) time_out(doing);
    return left;
}

void redis_client::open(const std::string& host, int port, const std::string& socket) {
    const timeval tv = to_timeval(time_left("connecting"));
    ctx_ = socket.empty() ? redisConnectWithTimeout(host.c_str(), port, tv)
                          : redisConnectUnixWithTimeout(socket.c_str(), tv);
    if (!ctx_) throw redis_error("redis " + label_ + ": cannot allocate a connection");
    if (ctx_->err) {
        if (errno == ETIMEDOUT) time_out("connecting");
        fail("cannot connect");
    }
    use_functions(ctx_);
    // A bound for blocking writes; read_reply waits for replies itself, within the time left.
    if (redisSetTimeout(ctx_, to_timeval(timeout_)) != REDIS_OK) fail("cannot set the time-out");
    ++connections_;
}

void redis_client::connect() {
    if (url_.sentinels.empty()) {
        open(url_.host, url_.port, url_.socket);
    } else {
        const redis_address primary = discover();
        label_ = url_.text + " (" + primary.host + ":" + std::to_string(primary.port) + ")";
        open(primary.host, primary.port, {});
    }
    authenticate_and_check();
    if (url_.db != 0) {
        const std::string db = std::to_string(url_.db);
        append({"SELECT", db});
        reply();
    }
}

namespace {

// What a refused AUTH says: who tried, Redis's answer, where the credentials come from; never
// the password.
std::string auth_refused(const std::string& user, std::string_view answer, const char* name) {
    return std::string("AUTH ") + (user.empty() ? "with a password" : "as user '" + user + "'") +
           " refused: " + std::string(answer) + " (check " + name + "_USER and " + name +
           "_PASSWORD or " + name + "_PASSWORD_FILE)";
}

}  // namespace

// AUTH when a password is set (as ALERT_REDIS_USER when set: an ACL user); with sentinels,
// ROLE: the address they gave must be the primary (a sentinel may still name the old one
// while a failover is under way).
void redis_client::authenticate_and_check() {
    if (!url_.password.empty()) {
        if (url_.user.empty()) {
            append({"AUTH", url_.password});
        } else {
            append({"AUTH", url_.user, url_.password});
        }
        const redis_reply auth = reply_or_error();
        if (auth->type == REDIS_REPLY_ERROR) {
            error_reply(
                auth_refused(url_.user, std::string_view(auth->str, auth->len), "ALERT_REDIS"));
        }
    }
    if (url_.sentinels.empty()) return;
    append({"ROLE"});
    const redis_reply role = reply();
    const redisReply* r = role.get();
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || !r->element[0] ||
        r->element[0]->type != REDIS_REPLY_STRING) {
        fail("unexpected reply to ROLE");
    }
    const std::string kind(r->element[0]->str, r->element[0]->len);
    if (kind != "master") {
        fail("the sentinels named a server that is not the primary (ROLE: " + kind + ")");
    }
}

namespace {

// One command on a sentinel's connection, hiredis's blocking call; null when it failed.
redis_reply sentinel_command(redisContext* c, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const std::string& a : args) {
        argv.push_back(a.c_str());
        lens.push_back(a.size());
    }
    return redis_reply(static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

// The primary a sentinel's reply to SENTINEL get-master-addr-by-name names; else why not.
std::variant<redis_address, std::string> primary_of(const redisReply* r,
                                                    const std::string& master) {
    if (r->type == REDIS_REPLY_ERROR) return std::string(r->str, r->len);
    if (r->type == REDIS_REPLY_NIL) return "does not know a primary named '" + master + "'";
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !r->element[0] || !r->element[1] ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING) {
        return std::string("unexpected reply to SENTINEL get-master-addr-by-name");
    }
    redis_address primary;
    primary.host.assign(r->element[0]->str, r->element[0]->len);
    primary.port = std::atoi(r->element[1]->str);
    if (primary.port <= 0 || primary.port > 65535) return std::string("named an invalid port");
    return primary;
}

}  // namespace

// One sentinel, within `left`: the primary it names, or what went wrong.
std::variant<redis_address, std::string> redis_client::ask_sentinel(
    const redis_address& s, std::chrono::milliseconds left) {
    const timeval tv = to_timeval(std::min(left, timeout_));
    redisContext* c = redisConnectWithTimeout(s.host.c_str(), s.port, tv);
    if (!c) return std::string("cannot allocate a connection");
    const std::unique_ptr<redisContext, void (*)(redisContext*)> owned(c, redisFree);
    if (c->err) return std::string("cannot connect: ") + c->errstr;
    redisSetTimeout(c, tv);
    if (!url_.sentinel_password.empty()) {
        const redis_reply auth = sentinel_command(
            c, url_.sentinel_user.empty()
                   ? std::vector<std::string>{"AUTH", url_.sentinel_password}
                   : std::vector<std::string>{"AUTH", url_.sentinel_user, url_.sentinel_password});
        if (!auth) return "AUTH failed: " + std::string(c->errstr);
        if (auth->type == REDIS_REPLY_ERROR) {
            return auth_refused(url_.sentinel_user, {auth->str, auth->len}, "ALERT_REDIS_SENTINEL");
        }
    }
    const redis_reply r = sentinel_command(c, {"SENTINEL", "get-master-addr-by-name", url_.master});
    if (!r) return std::string("no answer: ") + c->errstr;
    return primary_of(r.get(), url_.master);
}

redis_address redis_client::discover() {
    std::string tried;
    for (std::size_t i = 0; i < url_.sentinels.size(); ++i) {
        const redis_address s = url_.sentinels[i];
        std::chrono::milliseconds left = timeout_;
        if (deadline_) {
            left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ -
                                                                std::chrono::steady_clock::now());
        }
        std::variant<redis_address, std::string> answer =
            left.count() > 0 ? ask_sentinel(s, left) : std::string("not asked: out of time");
        if (auto* primary = std::get_if<redis_address>(&answer)) {
            // The sentinel that answered is asked first next time (Sentinel's client
            // guidelines).
            const auto at = url_.sentinels.begin() + static_cast<std::ptrdiff_t>(i);
            std::rotate(url_.sentinels.begin(), at, at + 1);
            return std::move(*primary);
        }
        if (!tried.empty()) tried += "; ";
        tried += s.host + ":" + std::to_string(s.port) + ": " + std::get<std::string>(answer);
    }
    label_ = url_.text;
    throw redis_unavailable("redis " + url_.text + ": no sentinel named the primary (tried " +
                            tried + ")");
}

void redis_client::append(const std::vector<std::string_view>& args) {
    if (!ctx_) connect();
    argv_.clear();
    lens_.clear();
    for (std::string_view a : args) {
        argv_.push_back(a.data());
        lens_.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(argv_.size()), argv_.data(), lens_.data()) !=
        REDIS_OK) {
        fail("cannot queue a command");
    }
    ++queued_;
}

void redis_client::append_resp(std::initializer_list<std::string_view> pieces) {
    if (!ctx_) connect();
    // hiredis copies formatted commands into its output buffer as they are: consecutive pieces
    // make one command.
    for (std::string_view p : pieces) {
        if (redisAppendFormattedCommand(ctx_, p.data(), p.size()) != REDIS_OK) {
            fail("cannot queue a command");
        }
    }
    ++queued_;
}

redis_reply redis_client::reply_or_error() {
    if (!ctx_ || queued_ == 0) throw redis_error("redis " + label_ + ": no command queued");
    void* raw = read_reply();
    --queued_;
    return redis_reply(static_cast<redisReply*>(raw));
}

void redis_client::send_queued() {
    if (!ctx_) throw redis_error("redis " + label_ + ": not connected");
    for (int done = sdslen(ctx_->obuf) == 0; !done;) {  // sent already: nothing to write
        const timeval tv = to_timeval(time_left("sending a command"));
        if (::setsockopt(ctx_->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) {
            fail("cannot set the time-out");
        }
        if (redisBufferWrite(ctx_, &done) != REDIS_OK) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) time_out("sending a command");
            fail("cannot send");
        }
    }
}

void* redis_client::read_reply() {
    // hiredis's redisGetReply, with each write and wait bounded by the time left rather than
    // by a whole time-out each (a blocked Redis would otherwise cost one time-out per read).
    void* raw = nullptr;
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) fail("unreadable reply");
    if (raw) return raw;
    send_queued();
    while (!raw) {
        pollfd p{ctx_->fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(time_left("waiting for a reply").count()));
        if (ready < 0) {
            if (errno == EINTR) continue;
            fail("cannot wait for a reply");
        }
        if (ready == 0) time_out("waiting for a reply");
        if (redisBufferRead(ctx_) != REDIS_OK) fail("no reply");
        if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) fail("unreadable reply");
    }
    return raw;
}

redis_reply redis_client::reply() {
    redis_reply r = reply_or_error();
    if (r->type == REDIS_REPLY_ERROR) error_reply(std::string(r->str, r->len));
    return r;
}

std::vector<redis_reply> redis_client::replies(std::size_t n) {
    ++round_trips_;
    std::vector<redis_reply> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(reply());
    return out;
}

}  // namespace alerts
