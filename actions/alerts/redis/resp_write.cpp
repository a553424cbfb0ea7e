// resp_write.cpp — see resp_write.hpp.
#include "redis/resp_write.hpp"

#include <charconv>

#include "redis/redis_records.hpp"

namespace alerts {

void resp_count(std::string& out, char kind, std::size_t n) {
    char buf[24];
    buf[0] = kind;
    const auto r = std::to_chars(buf + 1, buf + sizeof buf, n);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
    out.append("\r\n");
}

void resp_arg(std::string& out, std::string_view a) {
    resp_count(out, '$', a.size());
    out.append(a);
    out.append("\r\n");
}

void resp_head(std::string& out, std::size_t args, std::string_view command) {
    out.clear();
    resp_count(out, '*', args);
    resp_arg(out, command);
}

void resp_device_key(std::string& out, std::string_view prefix, std::string_view account,
                     std::string_view device) {
    resp_count(out, '$', redis_device_key_size(prefix, account, device));
    append_redis_device_key(out, prefix, account, device);
    out.append("\r\n");
}

void resp_id_key(std::string& out, std::string_view prefix, std::uint64_t id_hash) {
    resp_count(out, '$', prefix.size() + 18);  // "i:" and 16 hex digits
    append_redis_id_key(out, prefix, id_hash);
    out.append("\r\n");
}

}  // namespace alerts
