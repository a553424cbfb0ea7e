// redis_scripts.hpp — the Lua script of the Redis store's commit (see redis_store.hpp).
//   KEYS: the due set, the device counter, N device keys, then the id keys to remember
//   ARGV: N, the id TTL, then per device: the record as read ("" = absent), the new record,
//         the due time ("" = no hold pending)
// Returns {1, pending holds, device records} when written, {0, {conflicting indices}} when
// some record changed since it was read (and then nothing is written).
#pragma once

namespace alerts {

inline constexpr const char* REDIS_COMMIT_SCRIPT = R"lua(
local n = tonumber(ARGV[1])
local conflicts = {}
for i = 1, n do
  local current = redis.call('GET', KEYS[2 + i]) or ''
  if current ~= ARGV[3 * i] then conflicts[#conflicts + 1] = i end
end
if #conflicts > 0 then return {0, conflicts} end
local created = 0
for i = 1, n do
  local key = KEYS[2 + i]
  if ARGV[3 * i] == '' then created = created + 1 end
  redis.call('SET', key, ARGV[3 * i + 1])
  if ARGV[3 * i + 2] == '' then
    redis.call('ZREM', KEYS[1], key)
  else
    redis.call('ZADD', KEYS[1], ARGV[3 * i + 2], key)
  end
end
for j = n + 3, #KEYS do redis.call('SET', KEYS[j], '1', 'EX', ARGV[2]) end
if created > 0 then redis.call('INCRBY', KEYS[2], created) end
return {1, redis.call('ZCARD', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0')}
)lua";

}  // namespace alerts
