// curl_transport.cpp — see curl_transport.hpp.
#include "gateway/transport/curl_transport.hpp"

#include <stdexcept>

#include "gateway/transport/attempt_outcome.hpp"
#include "gateway/transport/curl_transfer.hpp"

namespace alerts::gateway {

namespace {

/// STARTTLS: tried whenever the server offers it, required with --smtp-require-tls; the
/// server's certificate always verified (against --smtp-ca-file when given).
void secure_smtp(CURL* easy, const smtp_target& smtp) {
    curl_easy_setopt(easy, CURLOPT_USE_SSL,
                     static_cast<long>(smtp.require_tls ? CURLUSESSL_ALL : CURLUSESSL_TRY));
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!smtp.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, smtp.ca_file.c_str());
    if (!smtp.user.empty()) curl_easy_setopt(easy, CURLOPT_USERNAME, smtp.user.c_str());
    if (!smtp.password.empty()) curl_easy_setopt(easy, CURLOPT_PASSWORD, smtp.password.c_str());
}

std::string transport_error(CURLcode code, const transfer& item) {
    if (code == CURLE_OK) return {};
    std::string error = curl_easy_strerror(code);
    if (item.error_text[0]) error += std::string(": ") + item.error_text;
    return error;
}

}  // namespace

curl_transport::curl_transport(std::chrono::milliseconds timeout, long connection_cache)
    : multi_(curl_multi_init()), timeout_(timeout) {
    if (!multi_) throw std::runtime_error("cannot start libcurl");
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, connection_cache);
}

curl_transport::~curl_transport() {
    for (auto& [easy, item] : transfers_) {
        curl_multi_remove_handle(multi_, easy);
        curl_easy_cleanup(easy);
    }
    for (CURL* easy : idle_handles_) curl_easy_cleanup(easy);
    curl_multi_cleanup(multi_);
}

CURL* curl_transport::easy_handle() {
    if (idle_handles_.empty()) return curl_easy_init();
    CURL* easy = idle_handles_.back();
    idle_handles_.pop_back();
    curl_easy_reset(easy);
    return easy;
}

void curl_transport::send_email(delivery_request request, const smtp_target& smtp,
                                const std::string& from) {
    CURL* easy = easy_handle();
    auto item = std::make_unique<transfer>();
    item->email = true;
    item->mail_from = "<" + from + ">";
    for (const std::string& address : request.recipients) {
        item->recipients = curl_slist_append(item->recipients, ("<" + address + ">").c_str());
    }
    item->body = std::move(request.body);
    curl_easy_setopt(easy, CURLOPT_MAIL_FROM, item->mail_from.c_str());
    curl_easy_setopt(easy, CURLOPT_MAIL_RCPT, item->recipients);
    curl_easy_setopt(easy, CURLOPT_MAIL_RCPT_ALLLOWFAILS, 1L);  // 7.88's spelling
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, upload_body);
    curl_easy_setopt(easy, CURLOPT_READDATA, item.get());
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(item->body.size()));
    curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);  // to the watcher only: each RCPT's reply
    curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, watch_smtp);
    curl_easy_setopt(easy, CURLOPT_DEBUGDATA, item.get());
    secure_smtp(easy, smtp);
    item->entry_id = std::move(request.entry_id);
    item->target = request.target;
    begin(easy, std::move(item), smtp.url);
}

void curl_transport::send_webhook(delivery_request request, const webhook_target& webhook) {
    CURL* easy = easy_handle();
    auto item = std::make_unique<transfer>();
    item->body = std::move(request.body);
    for (const std::string& header :
         {std::string("Content-Type: application/json"), "Idempotency-Key: " + request.dedup_key,
          std::string("Expect:"), std::string("User-Agent: alertgw")}) {
        item->headers = curl_slist_append(item->headers, header.c_str());
    }
    if (!webhook.authorization.empty()) {
        const std::string header = "Authorization: " + webhook.authorization;
        item->headers = curl_slist_append(item->headers, header.c_str());
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, item->headers);
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, item->body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(item->body.size()));
    item->entry_id = std::move(request.entry_id);
    item->target = request.target;
    begin(easy, std::move(item), webhook.url);
}

void curl_transport::begin(CURL* easy, std::unique_ptr<transfer> item, const std::string& url) {
    const long timeout = static_cast<long>(timeout_.count());
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, item->error_text);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_response);
    curl_multi_add_handle(multi_, easy);
    transfers_.emplace(easy, std::move(item));
}

std::vector<delivery_report> curl_transport::collect() {
    int running = 0;
    curl_multi_perform(multi_, &running);
    std::vector<delivery_report> reports;
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
        if (message->msg == CURLMSG_DONE) {
            reports.push_back(finish(message->easy_handle, message->data.result));
        }
    }
    return reports;
}

delivery_report curl_transport::finish(CURL* easy, CURLcode code) {
    auto node = transfers_.extract(easy);
    curl_multi_remove_handle(multi_, easy);
    std::unique_ptr<transfer> item = std::move(node.mapped());
    long response = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response);
    const std::string error = transport_error(code, *item);
    delivery_report report{item->entry_id, item->target,
                           item->email ? email_outcome(error, response, std::move(item->refused))
                                       : webhook_outcome(error, response)};
    idle_handles_.push_back(easy);
    return report;
}

bool curl_transport::wait(int milliseconds, int extra_fd) {
    curl_waitfd extra{extra_fd, CURL_WAIT_POLLIN, 0};
    const unsigned int extras = extra_fd >= 0 ? 1 : 0;
    if (curl_multi_poll(multi_, extras ? &extra : nullptr, extras, milliseconds, nullptr) !=
        CURLM_OK) {
        return false;
    }
    return (extra.revents & CURL_WAIT_POLLIN) != 0;
}

}  // namespace alerts::gateway
