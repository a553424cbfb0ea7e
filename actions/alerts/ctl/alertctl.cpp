// alertctl — the command-line client of alertgw's console (ctl_command.hpp says what it asks;
// this sends it with libcurl and prints the answer). Exit status: 0 done, 1 the console
// refused or could not be reached, 2 a bad command line.
#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "ctl/ctl_command.hpp"
#include "runtime/secret_file.hpp"

namespace {

using alerts::ctl::ctl_invocation;
using alerts::ctl::ctl_request;

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

struct reply {
    long status = 0;
    std::string body;
    std::string error;
};

reply send(const ctl_invocation& how, const ctl_request& request, const std::string& token) {
    reply r;
    CURL* curl = curl_easy_init();
    if (!curl) return {0, "", "cannot start libcurl"};
    const std::string url = how.url + request.path;
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    if (request.write && !token.empty()) {
        headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    }
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (!request.body.empty()) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    const CURLcode code = curl_easy_perform(curl);
    if (code != CURLE_OK) {
        r.error =
            std::string(curl_easy_strerror(code)) + (error[0] ? std::string(": ") + error : "");
    } else {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return r;
}

const char* env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

}  // namespace

int main(int argc, char** argv) {
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    ctl_invocation how;
    how.url = env_or("ALERTCTL_URL", how.url.c_str());
    how.token_file = env_or("ALERTCTL_TOKEN_FILE", "");
    try {
        how = alerts::ctl::parse_command(std::vector<std::string>(argv + 1, argv + argc), how, now);
    } catch (const alerts::ctl::usage_error& error) {
        const std::string what = error.what();
        if (what.empty()) {
            std::cout << alerts::ctl::usage();
            return 0;
        }
        std::cerr << "alertctl: " << what << "\n";
        return 2;
    }
    std::string token;
    bool writes = false;
    for (const ctl_request& r : how.requests) writes = writes || r.write;
    if (writes) {
        if (how.token_file.empty()) {
            std::cerr << "alertctl: this writes: give --token-file (or ALERTCTL_TOKEN_FILE), the "
                         "file alertgw's --console-token-file reads\n";
            return 2;
        }
        try {
            token = alerts::read_secret_file("--token-file", how.token_file);
        } catch (const std::exception& error) {
            std::cerr << "alertctl: " << error.what() << "\n";
            return 2;
        }
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = 0;
    for (const ctl_request& request : how.requests) {
        const reply r = send(how, request, token);
        if (!r.error.empty()) {
            std::cerr << "alertctl: " << how.url << ": " << r.error << "\n";
            status = 1;
            break;
        }
        const nlohmann::json answer = nlohmann::json::parse(r.body, nullptr, false);
        if (r.status >= 400 || answer.is_discarded()) {
            const std::string why = !answer.is_discarded() && answer.contains("error")
                                        ? answer["error"].get<std::string>()
                                        : r.body;
            std::cerr << "alertctl: " << request.method << " " << request.path << ": HTTP "
                      << r.status << ": " << why << "\n";
            status = 1;
            continue;  // the other ids of a replay or purge still go
        }
        std::cout << (how.json
                          ? answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                                "\n"
                          : alerts::ctl::render(request.view, answer, now));
    }
    curl_global_cleanup();
    return status;
}
