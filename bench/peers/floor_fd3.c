/* floor_fd3: the least an action process can do behind our proxy, for bench/ceiling. It
 * accepts pipelining in its ack, then for each read(2) of stdin (as many request lines as the
 * proxy has written) writes all their answers, {"greeting":"Hello, Mike!"}, to fd 3 in one
 * write(2). No JSON is parsed and nothing is computed: what is left of a request's cost is
 * the proxy's, the kernel's and the pipes'.
 *
 *   - SENTINELS=1 in its environment: the end-of-activation sentinel on stdout and on stderr
 *     after each activation, one write(2) each, before the answers, as the C++ launcher
 *     wrote them when pipelined before issue 39 (exact log boundaries: each activation's logs
 *     between its own sentinels);
 *   - SENTINELS=batch: the same sentinels, but those of one read's activations in one
 *     write(2) per stream, before their answers, as the launcher now writes a batch (still
 *     exact: this action logs nothing, and the launcher keeps each activation's lines before
 *     its own sentinel in the same buffer);
 *   - without it, no sentinel at all: OpenWhisk's log collection would wait for them, so
 *     this is a measurement, never a way to run an action.
 * Request lines split across reads are counted when their newline arrives. Exits 0 at the end
 * of stdin, 1 when a write fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char ANSWER[] = "{\"greeting\":\"Hello, Mike!\"}\n";
static const char SENTINEL[] = "XXX_THE_END_OF_A_WHISK_ACTIVATION_XXX\n";

/* write_all: the whole buffer to fd, through short writes and EINTR; 0 on success. */
static int write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

static char input[1 << 16];
static char answers[(sizeof input) * (sizeof ANSWER - 1)];
static char marks[(sizeof input) * (sizeof SENTINEL - 1)];

int main(void) {
    const char* ack = getenv("__OW_WAIT_FOR_ACK");
    const char* offer = getenv("ACTIONLOOP_PIPELINE");
    const char* mode = getenv("SENTINELS");
    const int sentinels = mode != NULL && strcmp(mode, "batch") != 0;
    const int batched = mode != NULL && strcmp(mode, "batch") == 0;
    if (ack != NULL && *ack != '\0') {
        const char* line = offer != NULL && strcmp(offer, "1") == 0
                               ? "{\"ok\":true,\"pipeline\":true}\n"
                               : "{\"ok\":true}\n";
        if (write_all(3, line, strlen(line)) != 0) return 1;
    }
    for (;;) {
        ssize_t n = read(0, input, sizeof input);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        size_t size = 0;
        for (const char* p = input; (p = memchr(p, '\n', (size_t)(input + n - p))) != NULL; ++p) {
            if (sentinels && (write_all(1, SENTINEL, sizeof SENTINEL - 1) != 0 ||
                              write_all(2, SENTINEL, sizeof SENTINEL - 1) != 0)) {
                return 1;
            }
            memcpy(answers + size, ANSWER, sizeof ANSWER - 1);
            size += sizeof ANSWER - 1;
        }
        if (batched && size > 0) {
            const size_t count = size / (sizeof ANSWER - 1);
            for (size_t i = 0; i < count; ++i) {
                memcpy(marks + i * (sizeof SENTINEL - 1), SENTINEL, sizeof SENTINEL - 1);
            }
            const size_t bytes = count * (sizeof SENTINEL - 1);
            if (write_all(1, marks, bytes) != 0 || write_all(2, marks, bytes) != 0) return 1;
        }
        if (size > 0 && write_all(3, answers, size) != 0) return 1;
    }
}
