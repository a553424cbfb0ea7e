// curl_transfer.hpp — one transfer's state, owned by curl_transport while libcurl works on
// it: the body it uploads, the lists libcurl reads, the error buffer, and (SMTP) the replies
// to each RCPT TO, watched through libcurl's debug callback since libcurl reports only the
// last one.
#pragma once

#include <curl/curl.h>

#include <string>
#include <vector>

#include "gateway/ledger/attempt_result.hpp"

namespace alerts::gateway {

struct transfer {
    std::string entry_id;
    std::size_t target = 0;
    bool email = false;
    std::string body;
    std::size_t sent = 0;
    curl_slist* headers = nullptr;
    curl_slist* recipients = nullptr;
    char error_text[CURL_ERROR_SIZE] = {};
    std::string mail_from;        // "<addr>": libcurl keeps the pointer
    std::string recipient_asked;  // the address of the RCPT TO awaiting its reply
    std::vector<refused_recipient> refused;

    transfer() = default;
    transfer(const transfer&) = delete;
    transfer& operator=(const transfer&) = delete;
    ~transfer();
};

/// libcurl callbacks (userdata: the transfer).
std::size_t discard_response(char* data, std::size_t size, std::size_t count, void* user);
std::size_t upload_body(char* buffer, std::size_t size, std::size_t count, void* user);
int watch_smtp(CURL* easy, curl_infotype kind, char* data, std::size_t size, void* user);

/// The server's reply lines seen while `item` waited for an RCPT TO answer: a 4xx or 5xx
/// one refuses that recipient (exposed for tests).
void note_smtp_line(transfer& item, bool from_server, const std::string& line);

}  // namespace alerts::gateway
