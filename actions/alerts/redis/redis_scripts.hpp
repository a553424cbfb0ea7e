// redis_scripts.hpp — the Lua script of the Redis store's commit (see redis_store.hpp).
//   KEYS: the due set, the device counter, the creations log, the outbox, N device keys, C
//         checked device keys, then the id keys to remember
//   ARGV: N, the id TTL, the creations log's length (approximate MAXLEN), M (notifications),
//         the outbox's cap, the outbox's length above which the script trims it, C, then per
//         device: the record as read ("" = absent), the new record, the due time ("" = no hold
//         pending), then per checked device: the record as read and the due time, then per
//         notification: its dedupKey and its JSON
// A checked device (a bridge or camera of a written one) is compared like the written ones,
// not written; only its due time is set.
// Returns {1, pending holds, device records, outbox entries dropped over the cap} when written,
// {0, {conflicting indices}} when some record changed since it was read (and then nothing is
// written).
//
// Every commit that creates records appends one entry to the creations log (a stream):
// n = the device counter after it, c = how many it created, then k = each created key. A
// container that saw a device without a record reads it again only when the log names it
// (or when the log cannot show that nothing was created: see redis_store.cpp).
//
// The outbox (docs/alerts.md, "The outbox stream"): the same script that changes the state
// appends one entry per notification, XADD <outbox> * key <dedupKey> n <JSON>, so a
// notification is in the outbox exactly when its state change is in Redis. Past the trim
// length the script trims the entries every consumer group has acknowledged (below the oldest
// entry pending in a group, or up to the last one delivered to a group with none pending); no
// group: nothing is trimmed. Past the cap (with no gateway, or one far behind) the oldest
// entries are dropped whatever the groups, and the action logs a warning.
#pragma once

namespace alerts {

inline constexpr const char* REDIS_COMMIT_SCRIPT = R"lua(
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[4])
local c = tonumber(ARGV[7])
local base = 7
local checks = base + 3 * n
local conflicts = {}
for i = 1, n do
  local current = redis.call('GET', KEYS[4 + i]) or ''
  if current ~= ARGV[base + 3 * i - 2] then conflicts[#conflicts + 1] = i end
end
for i = 1, c do
  local current = redis.call('GET', KEYS[4 + n + i]) or ''
  if current ~= ARGV[checks + 2 * i - 1] then conflicts[#conflicts + 1] = n + i end
end
if #conflicts > 0 then return {0, conflicts} end
local created = {}
for i = 1, n do
  local key = KEYS[4 + i]
  if ARGV[base + 3 * i - 2] == '' then created[#created + 1] = key end
  redis.call('SET', key, ARGV[base + 3 * i - 1])
  if ARGV[base + 3 * i] == '' then
    redis.call('ZREM', KEYS[1], key)
  else
    redis.call('ZADD', KEYS[1], ARGV[base + 3 * i], key)
  end
end
for i = 1, c do
  if ARGV[checks + 2 * i] == '' then
    redis.call('ZREM', KEYS[1], KEYS[4 + n + i])
  else
    redis.call('ZADD', KEYS[1], ARGV[checks + 2 * i], KEYS[4 + n + i])
  end
end
for j = n + c + 5, #KEYS do redis.call('SET', KEYS[j], '1', 'EX', ARGV[2]) end
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
local dropped = 0
if m > 0 then
  local at = checks + 2 * c
  for j = 1, m do
    redis.call('XADD', KEYS[4], '*', 'key', ARGV[at + 2 * j - 1], 'n', ARGV[at + 2 * j])
  end
  local len = redis.call('XLEN', KEYS[4])
  if len > tonumber(ARGV[6]) then
    local function before(a, b)
      local am, as = string.match(a, '^(%d+)-(%d+)$')
      local bm, bs = string.match(b, '^(%d+)-(%d+)$')
      am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
      return am < bm or (am == bm and as < bs)
    end
    local floor = nil
    for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[4])) do
      local f = {}
      for k = 1, #g, 2 do f[g[k]] = g[k + 1] end
      local point = f['last-delivered-id']
      if tonumber(f['pending']) > 0 then
        point = redis.call('XPENDING', KEYS[4], f['name'])[2]
      end
      if floor == nil or before(point, floor) then floor = point end
    end
    if floor ~= nil then
      redis.call('XTRIM', KEYS[4], 'MINID', floor)
      len = redis.call('XLEN', KEYS[4])
    end
    if len > tonumber(ARGV[5]) then
      dropped = redis.call('XTRIM', KEYS[4], 'MAXLEN', ARGV[5])
    end
  end
end
return {1, redis.call('ZCARD', KEYS[1]), total, dropped}
)lua";

}  // namespace alerts
