/* hello_fd3: the hello action in plain C, speaking the ActionLoop protocol directly (no
 * launcher), so that the upstream Go proxy and ours run the very same action in bench/run.
 *
 *   - when __OW_WAIT_FOR_ACK is set, writes {"ok":true} on fd 3 first (no pipelining offer:
 *     both proxies then send one activation at a time);
 *   - then, for every line on stdin ({"value":{"name":"Mike"},...}), writes one line
 *     {"greeting":"Hello, Mike!"} on fd 3 with a single write(2); "stranger" when the line
 *     has no "name" string. The name's JSON text is copied as it is (escapes included), so
 *     the answer is valid JSON whatever the name holds;
 *   - exits 0 at the end of stdin, 1 when fd 3 cannot be written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* find_name: the text between the quotes of the first "name":"…" in line (escapes kept),
 * or NULL. *size receives its length. */
static const char* find_name(const char* line, size_t* size) {
    const char* key = strstr(line, "\"name\"");
    if (key == NULL) return NULL;
    const char* p = key + 6;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p++ != ':') return NULL;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p++ != '"') return NULL;
    const char* start = p;
    while (*p != '\0' && *p != '"') p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
    if (*p != '"') return NULL;
    *size = (size_t)(p - start);
    return start;
}

int main(void) {
    static const char ack[] = "{\"ok\":true}\n";
    static const char prefix[] = "{\"greeting\":\"Hello, ";
    static const char suffix[] = "!\"}\n";
    const char* wait_for_ack = getenv("__OW_WAIT_FOR_ACK");
    if (wait_for_ack != NULL && *wait_for_ack != '\0' &&
        write_all(3, ack, sizeof ack - 1) != 0) {
        return 1;
    }
    char* line = NULL;
    size_t capacity = 0;
    char* answer = NULL;
    size_t answer_capacity = 0;
    while (getline(&line, &capacity, stdin) > 0) {
        size_t name_size = 8;
        const char* name = find_name(line, &name_size);
        if (name == NULL) name = "stranger", name_size = 8;
        size_t size = sizeof prefix - 1 + name_size + sizeof suffix - 1;
        if (size > answer_capacity) {
            char* bigger = realloc(answer, size);
            if (bigger == NULL) return 1;
            answer = bigger, answer_capacity = size;
        }
        memcpy(answer, prefix, sizeof prefix - 1);
        memcpy(answer + sizeof prefix - 1, name, name_size);
        memcpy(answer + sizeof prefix - 1 + name_size, suffix, sizeof suffix - 1);
        if (write_all(3, answer, size) != 0) return 1;
    }
    free(line);
    free(answer);
    return 0;
}
