// redis_scripts.hpp — the Lua script of the Redis store's commit (see redis_store.hpp).
//   KEYS: the due set, the device counter, the creations log, N device keys, then the id keys
//         to remember
//   ARGV: N, the id TTL, the creations log's length (approximate MAXLEN), then per device: the
//         record as read ("" = absent), the new record, the due time ("" = no hold pending)
// Returns {1, pending holds, device records} when written, {0, {conflicting indices}} when
// some record changed since it was read (and then nothing is written).
//
// Every commit that creates records appends one entry to the creations log (a stream):
// n = the device counter after it, c = how many it created, then k = each created key. A
// container that saw a device without a record reads it again only when the log names it
// (or when the log cannot show that nothing was created: see redis_store.cpp).
#pragma once

namespace alerts {

inline constexpr const char* REDIS_COMMIT_SCRIPT = R"lua(
local n = tonumber(ARGV[1])
local conflicts = {}
for i = 1, n do
  local current = redis.call('GET', KEYS[3 + i]) or ''
  if current ~= ARGV[1 + 3 * i] then conflicts[#conflicts + 1] = i end
end
if #conflicts > 0 then return {0, conflicts} end
local created = {}
for i = 1, n do
  local key = KEYS[3 + i]
  if ARGV[1 + 3 * i] == '' then created[#created + 1] = key end
  redis.call('SET', key, ARGV[2 + 3 * i])
  if ARGV[3 + 3 * i] == '' then
    redis.call('ZREM', KEYS[1], key)
  else
    redis.call('ZADD', KEYS[1], ARGV[3 + 3 * i], key)
  end
end
for j = n + 4, #KEYS do redis.call('SET', KEYS[j], '1', 'EX', ARGV[2]) end
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
if #created > 0 then
  total = redis.call('INCRBY', KEYS[2], #created)
  local entry = {'XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'n', total, 'c', #created}
  for _, key in ipairs(created) do
    entry[#entry + 1] = 'k'
    entry[#entry + 1] = key
  end
  redis.call(unpack(entry))
end
return {1, redis.call('ZCARD', KEYS[1]), total}
)lua";

}  // namespace alerts
