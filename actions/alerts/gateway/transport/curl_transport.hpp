// curl_transport.hpp — every delivery in flight at once on one libcurl multi handle: an
// e-mail per notification over SMTP (STARTTLS when offered or required, credentials, each
// refused recipient reported on its own) and a POST per webhook. Knows nothing of Redis or
// retries: it starts what it is given and reports each end as an attempt_result.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gateway/ledger/attempt_result.hpp"
#include "gateway/options.hpp"

namespace alerts::gateway {

struct delivery_request {
    std::string entry_id;
    std::size_t target = 0;
    std::string body;                     // the e-mail's text, or the webhook's JSON
    std::vector<std::string> recipients;  // e-mail
    std::string dedup_key;                // the webhook's Idempotency-Key
};

struct delivery_report {
    std::string entry_id;
    std::size_t target = 0;
    attempt_result result;
};

struct transfer;  // one easy handle and what it reads and writes (curl_transfer.hpp)

class curl_transport {
public:
    curl_transport(std::chrono::milliseconds timeout, long connection_cache);
    ~curl_transport();
    curl_transport(const curl_transport&) = delete;
    curl_transport& operator=(const curl_transport&) = delete;

    void send_email(delivery_request request, const smtp_target& smtp, const std::string& from);
    void send_webhook(delivery_request request, const webhook_target& webhook);
    /// Moves every transfer on; returns those that ended.
    std::vector<delivery_report> collect();
    /// Waits for activity on a transfer or for `extra_fd` (unless -1) to be readable, at most
    /// `milliseconds`; returns whether `extra_fd` is readable.
    bool wait(int milliseconds, int extra_fd = -1);
    int in_flight() const { return static_cast<int>(transfers_.size()); }

private:
    CURL* easy_handle();
    void begin(CURL* easy, std::unique_ptr<transfer> item, const std::string& url);
    delivery_report finish(CURL* easy, CURLcode code);

    CURLM* multi_ = nullptr;
    std::chrono::milliseconds timeout_;
    std::unordered_map<CURL*, std::unique_ptr<transfer>> transfers_;
    std::vector<CURL*> idle_handles_;
};

}  // namespace alerts::gateway
