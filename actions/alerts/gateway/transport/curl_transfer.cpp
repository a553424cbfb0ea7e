// curl_transfer.cpp — see curl_transfer.hpp.
#include "gateway/transport/curl_transfer.hpp"

#include <algorithm>
#include <cctype>

namespace alerts::gateway {

transfer::~transfer() {
    if (headers) curl_slist_free_all(headers);
    if (recipients) curl_slist_free_all(recipients);
}

std::size_t discard_response(char*, std::size_t size, std::size_t count, void*) {
    return size * count;
}

std::size_t upload_body(char* buffer, std::size_t size, std::size_t count, void* user) {
    auto* item = static_cast<transfer*>(user);
    const std::size_t length = std::min(size * count, item->body.size() - item->sent);
    std::copy_n(item->body.data() + item->sent, length, buffer);
    item->sent += length;
    return length;
}

namespace {

constexpr std::string_view RCPT = "RCPT TO:<";

bool is_final_reply(const std::string& line) {
    return line.size() >= 4 && std::isdigit(static_cast<unsigned char>(line[0])) &&
           std::isdigit(static_cast<unsigned char>(line[1])) &&
           std::isdigit(static_cast<unsigned char>(line[2])) && line[3] == ' ';
}

}  // namespace

void note_smtp_line(transfer& item, bool from_server, const std::string& line) {
    if (!from_server) {
        const bool asks = line.size() > RCPT.size() &&
                          std::equal(RCPT.begin(), RCPT.end(), line.begin(),
                                     [](char a, char b) { return a == std::toupper(b); });
        item.recipient_asked = asks ? line.substr(RCPT.size(), line.find('>') - RCPT.size()) : "";
        return;
    }
    if (item.recipient_asked.empty() || !is_final_reply(line)) return;
    const long code = std::stol(line.substr(0, 3));
    if (code >= 400) item.refused.push_back({item.recipient_asked, code, line.substr(4)});
    item.recipient_asked.clear();
}

int watch_smtp(CURL*, curl_infotype kind, char* data, std::size_t size, void* user) {
    if (kind != CURLINFO_HEADER_IN && kind != CURLINFO_HEADER_OUT) return 0;
    auto* item = static_cast<transfer*>(user);
    const std::string text(data, size);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) note_smtp_line(*item, kind == CURLINFO_HEADER_IN, line);
        start = end + 1;
    }
    return 0;
}

}  // namespace alerts::gateway
