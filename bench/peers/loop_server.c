/* loop_server MODE PORT: a bare single-threaded HTTP/1.1 keep-alive server on 127.0.0.1:PORT
 * that answers every request with the hello action's JSON, for bench/uring. No action behind
 * it: it measures what the way a loop enters the kernel is worth on this machine, with the
 * parsing and the answers the same in every mode.
 *
 *   epoll  a readiness loop, as nginx and the proxy's Asio loop: epoll_wait, then per ready
 *          connection one recv(2) and one send(2) of its answers;
 *   uring  io_uring (liburing): every connection always has a receive queued; a completed
 *          receive queues the send of its answers and the next receive, and one
 *          io_uring_enter per loop turn submits them all and waits for the next completions.
 *          The ring is set up with SINGLE_ISSUER and DEFER_TASKRUN where the kernel has them
 *          (completions are then run only when the loop asks for them), else COOP_TASKRUN,
 *          else plain.
 *
 * A request is its header up to the blank line and Content-Length bytes of body; pipelined
 * requests are answered together. Exits 1 when it cannot listen or set up its ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char ANSWER[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n"
    "{\"greeting\":\"Hello, Mike!\"}\n";

enum { IN_CAP = 1 << 16, OUT_CAP = 1 << 17, MAX_CONNS = 4096 };

struct conn {
    int fd;
    size_t in_len;
    size_t out_len;   /* answers waiting, from out[0] */
    size_t out_sent;  /* uring: out[out_sent, out_flight) is being sent */
    size_t out_flight;
    int ops;          /* uring: operations queued on it */
    int closing;
    char in[IN_CAP];
    char out[OUT_CAP];
};

static struct conn* conns[MAX_CONNS];

/* content_length: the Content-Length of the header in [head, end), 0 without one. */
static size_t content_length(const char* head, const char* end) {
    static const char NAME[] = "\r\ncontent-length:";
    const size_t n = sizeof NAME - 1;
    for (const char* p = head; p + n <= end; ++p) {
        if (*p == '\r' && strncasecmp(p, NAME, n) == 0) return strtoul(p + n, NULL, 10);
    }
    return 0;
}

/* answer_requests: answers every whole request in c->in (appended to c->out) and keeps the
 * rest; -1 when the connection is past its buffers. */
static int answer_requests(struct conn* c) {
    size_t used = 0;
    for (;;) {
        const char* start = c->in + used;
        const char* end = memmem(start, c->in_len - used, "\r\n\r\n", 4);
        if (end == NULL) break;
        const size_t whole = (size_t)(end + 4 - start) + content_length(start, end);
        if (whole > c->in_len - used) break;
        if (c->out_len + sizeof ANSWER - 1 > OUT_CAP) return -1;
        memcpy(c->out + c->out_len, ANSWER, sizeof ANSWER - 1);
        c->out_len += sizeof ANSWER - 1;
        used += whole;
    }
    memmove(c->in, c->in + used, c->in_len - used);
    c->in_len -= used;
    return c->in_len == IN_CAP ? -1 : 0;
}

static int listen_on(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, SOMAXCONN) != 0) {
        perror("loop_server: listen");
        exit(1);
    }
    return fd;
}

static struct conn* open_conn(int fd) {
    if (fd >= MAX_CONNS) {
        close(fd);
        return NULL;
    }
    const int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    struct conn* c = calloc(1, sizeof *c);
    c->fd = fd;
    conns[fd] = c;
    return c;
}

static void free_conn(struct conn* c) {
    conns[c->fd] = NULL;
    close(c->fd);
    free(c);
}

/* send_all: epoll mode's blocking fallback for an answer the socket cannot take at once. */
static int send_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, -1);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

static void serve_epoll(int listener) {
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
    struct epoll_event ready[256];
    for (;;) {
        const int n = epoll_wait(ep, ready, 256, -1);
        for (int i = 0; i < n; ++i) {
            const int fd = ready[i].data.fd;
            if (fd == listener) {
                int s;
                while ((s = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (open_conn(s) == NULL) continue;
                    struct epoll_event add = {.events = EPOLLIN, .data.fd = s};
                    epoll_ctl(ep, EPOLL_CTL_ADD, s, &add);
                }
                continue;
            }
            struct conn* c = conns[fd];
            const ssize_t got = recv(fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (got <= 0 || (c->in_len += (size_t)got, answer_requests(c)) != 0 ||
                send_all(fd, c->out, c->out_len) != 0) {
                free_conn(c);  /* closing the descriptor removes it from the epoll set */
                continue;
            }
            c->out_len = 0;
        }
    }
}

enum { OP_ACCEPT = 1, OP_RECV = 2, OP_SEND = 3 };

static struct io_uring_sqe* next_sqe(struct io_uring* ring) {
    struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
    if (sqe == NULL) {  /* the submission queue is full: hand it to the kernel now */
        io_uring_submit(ring);
        sqe = io_uring_get_sqe(ring);
    }
    return sqe;
}

static void queue_recv(struct io_uring* ring, struct conn* c) {
    struct io_uring_sqe* sqe = next_sqe(ring);
    io_uring_prep_recv(sqe, c->fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
    io_uring_sqe_set_data64(sqe, ((uint64_t)c->fd << 8) | OP_RECV);
    ++c->ops;
}

/* queue_send: sends what waits in c->out after what is in flight, unless a send is. */
static void queue_send(struct io_uring* ring, struct conn* c) {
    if (c->out_flight > c->out_sent || c->out_len == c->out_sent) return;
    struct io_uring_sqe* sqe = next_sqe(ring);
    io_uring_prep_send(sqe, c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, ((uint64_t)c->fd << 8) | OP_SEND);
    c->out_flight = c->out_len;
    ++c->ops;
}

static void queue_accept(struct io_uring* ring, int listener) {
    struct io_uring_sqe* sqe = next_sqe(ring);
    io_uring_prep_accept(sqe, listener, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, ((uint64_t)listener << 8) | OP_ACCEPT);
}

static void finish_op(struct conn* c) {
    if (--c->ops == 0 && c->closing) free_conn(c);
}

static void serve_uring(int listener) {
    struct io_uring ring;
    const unsigned tries[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                              IORING_SETUP_COOP_TASKRUN, 0};
    int err = -EINVAL;
    for (size_t i = 0; i < sizeof tries / sizeof tries[0] && err < 0; ++i) {
        err = io_uring_queue_init(4096, &ring, tries[i]);
    }
    if (err < 0) {
        fprintf(stderr, "loop_server: io_uring_queue_init: %s\n", strerror(-err));
        exit(1);
    }
    queue_accept(&ring, listener);
    for (;;) {
        io_uring_submit_and_wait(&ring, 1);
        struct io_uring_cqe* cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            ++seen;
            const uint64_t data = io_uring_cqe_get_data64(cqe);
            const int fd = (int)(data >> 8), res = cqe->res;
            if ((data & 0xff) == OP_ACCEPT) {
                struct conn* c = res >= 0 ? open_conn(res) : NULL;
                if (c != NULL) queue_recv(&ring, c);
                queue_accept(&ring, listener);
                continue;
            }
            struct conn* c = conns[fd];
            if ((data & 0xff) == OP_SEND) {
                if (res <= 0) {
                    c->closing = 1;
                } else {
                    c->out_sent += (size_t)res;
                    c->out_flight = c->out_sent;  /* a short send resumes from here */
                    if (c->out_sent == c->out_len) c->out_sent = c->out_len = c->out_flight = 0;
                    if (!c->closing) queue_send(&ring, c);
                }
                finish_op(c);
                continue;
            }
            if (res <= 0 || c->closing) {
                c->closing = 1;
            } else {
                c->in_len += (size_t)res;
                if (answer_requests(c) != 0) {
                    c->closing = 1;
                } else {
                    queue_send(&ring, c);
                    queue_recv(&ring, c);
                }
            }
            finish_op(c);
        }
        io_uring_cq_advance(&ring, seen);
    }
}

int main(int argc, char** argv) {
    if (argc != 3 || (strcmp(argv[1], "epoll") != 0 && strcmp(argv[1], "uring") != 0)) {
        fprintf(stderr, "usage: loop_server epoll|uring PORT\n");
        return 2;
    }
    const int listener = listen_on(atoi(argv[2]));
    if (strcmp(argv[1], "epoll") == 0) {
        serve_epoll(listener);
    } else {
        serve_uring(listener);
    }
    return 0;
}
