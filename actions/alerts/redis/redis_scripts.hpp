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
// Extras (commit_args.hpp: the console's devices-now hash and per-device histories) follow the
// notifications when a commit has any: written last, each on its own.
// Returns {1, pending holds, device records, outbox entries dropped over the cap, {indices of
// device keys that held another type}, extras that failed} when written, {0, {conflicting indices}}
// when some record changed since it was read (and then nothing is written).
//
// All or nothing (docs/alerts.md, "All or nothing"): Redis does not undo a script that fails
// half-way, so the script is in two parts. The first only reads and checks: the records
// (compare-and-set), the types of the due set, the device counter and the outbox, the
// counter's value, its own arguments; any surprise answers an error before the first write.
// The second only writes. Its first write is the outbox's first entry: should it fail (no id
// left, or Redis refusing the script's first write: maxmemory), nothing is written; should it
// take an id in the last millisecond possible (the ids after it could run out), it is deleted
// again and the commit refused. The writes after it cannot fail on what was checked: SET (any
// type), ZADD/ZREM on a sorted set (or none) with checked scores, INCRBY on a checked counter,
// XADD on the outbox, and no Lua limit in reach (every call has a fixed number of arguments
// but the creations log's XADD, which takes at most 1,000 keys: 2,010 values, where Lua's
// unpack stops near 8,000). The creations log's XADD may fail (the log is no stream, or has no
// id left) without harm: it is a pcall, the counter is then ahead of the log, and the readers
// stop trusting the log (redis_store_read.cpp). Redis refuses a script's write for lack of memory
// only while the script has written nothing. A device key of another type (not a string: MGET
// read it as no record) counts as no record: the first change of that device replaces it, and
// the reply names it.
//
// Every commit that creates records appends entries to the creations log (a stream), each
// naming at most 1,000 keys: n = the device counter after it, c = how many it created,
// then k = each created key. A container that saw a device without a record reads it again
// only when the log names it (or when the log cannot show that nothing was created: see
// redis_store_read.cpp).
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
local function whole(text, low, high)
  if type(text) ~= 'string' or not string.match(text, '^%d+$') or #text > 15 then return nil end
  local v = tonumber(text)
  if v < low or v > high then return nil end
  return v
end
local function integer(text)
  if not string.match(text, '^%-?%d+$') or #text > 16 then return nil end
  return tonumber(text)
end
local function refuse(what)
  return redis.error_reply('ERR alerts commit refused, nothing written: ' .. what)
end
local n, ttl, loglen = whole(ARGV[1], 0, 1e9), whole(ARGV[2], 1, 1e9), whole(ARGV[3], 0, 1e12)
local m, cap, above = whole(ARGV[4], 0, 1e9), whole(ARGV[5], 0, 1e12), whole(ARGV[6], 0, 1e12)
local c = whole(ARGV[7], 0, 1e9)
if not (n and ttl and loglen and m and cap and above and c) then return refuse('bad arguments') end
local base = 7
local checks = base + 3 * n
local at = checks + 2 * c
local extras = at + 2 * m
local x = 0
if #ARGV > extras then
  x = whole(ARGV[extras + 1], 1, 1e9)
  if not (x and whole(ARGV[extras + 3], 1, 1e6) and whole(ARGV[extras + 4], 1, 1e9)) then
    return refuse('bad extras')
  end
end
if #KEYS < 4 + n + c or (#ARGV ~= extras and #ARGV ~= extras + 4 + 3 * x) then
  return refuse('bad argument counts')
end
local function score_ok(text)
  if text == '' then return true end
  local v = tonumber(text)
  return v ~= nil and v == v and not string.find(text, '^%s')
end
local replaced = {}
local function record_at(k)
  local value = redis.pcall('GET', KEYS[k])
  if type(value) == 'table' then
    if k - 4 <= n then replaced[#replaced + 1] = k - 4 end
    return ''
  end
  return value or ''
end
local conflicts = {}
local created = {}
for i = 1, n do
  if record_at(4 + i) ~= ARGV[base + 3 * i - 2] then conflicts[#conflicts + 1] = i end
  if ARGV[base + 3 * i - 2] == '' then created[#created + 1] = KEYS[4 + i] end
  if not score_ok(ARGV[base + 3 * i]) then return refuse('bad due time') end
end
for i = 1, c do
  if record_at(4 + n + i) ~= ARGV[checks + 2 * i - 1] then conflicts[#conflicts + 1] = n + i end
  if not score_ok(ARGV[checks + 2 * i]) then return refuse('bad due time') end
end
if #conflicts > 0 then return {0, conflicts} end
local function wrong(k, want)
  local t = redis.call('TYPE', KEYS[k])['ok']
  if t == 'none' or t == want then return nil end
  return KEYS[k] .. ' is a ' .. t .. ', not a ' .. want
end
local problem = wrong(1, 'zset') or (#created > 0 and wrong(2, 'string')) or
  (m > 0 and wrong(4, 'stream'))
if problem then return refuse(problem) end
local counter = redis.pcall('GET', KEYS[2])
local total = type(counter) == 'string' and integer(counter) or nil
if #created > 0 and counter and not total then
  return refuse(KEYS[2] .. ' holds no device count')
end
total = total or 0
-- Writes only from here on. The outbox's first: an outbox with no id left (or Redis refusing
-- the script's first write) refuses it; an id in the last millisecond possible is taken back.
if m > 0 then
  local first = redis.pcall('XADD', KEYS[4], '*', 'key', ARGV[at + 1], 'n', ARGV[at + 2])
  if type(first) == 'table' then return refuse(KEYS[4] .. ': ' .. first['err']) end
  if string.find(first, '18446744073709551615-', 1, true) == 1 then
    redis.call('XDEL', KEYS[4], first)
    return refuse(KEYS[4] .. ' has no stream id left')
  end
  for j = 2, m do
    redis.call('XADD', KEYS[4], '*', 'key', ARGV[at + 2 * j - 1], 'n', ARGV[at + 2 * j])
  end
end
for i = 1, n do
  local key = KEYS[4 + i]
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
for j = n + c + 5, #KEYS do redis.call('SET', KEYS[j], '1', 'EX', ttl) end
local chunk = 1000
for from = 1, #created, chunk do
  local last = math.min(from + chunk - 1, #created)
  total = redis.call('INCRBY', KEYS[2], last - from + 1)
  local entry = {'XADD', KEYS[3], 'MAXLEN', '~', loglen, '*', 'n', total, 'c', last - from + 1}
  for i = from, last do
    entry[#entry + 1] = 'k'
    entry[#entry + 1] = created[i]
  end
  redis.pcall(unpack(entry))  -- failed (not a stream, no id left): the readers reset
end
local dropped = 0
if m > 0 then
  local len = redis.call('XLEN', KEYS[4])
  if len > above then
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
    if len > cap then
      dropped = redis.call('XTRIM', KEYS[4], 'MAXLEN', cap)
    end
  end
end
-- The console's state and explanations, last: each a command of its own (pcall), so a key of
-- another type costs its own write only; the reply counts those that failed.
local failed = 0
if x > 0 then
  local nowkey, keep, ttl2 = ARGV[extras + 2], tonumber(ARGV[extras + 3]), ARGV[extras + 4]
  for i = 0, x - 1 do
    local op, k, v = ARGV[extras + 5 + 3 * i], ARGV[extras + 6 + 3 * i], ARGV[extras + 7 + 3 * i]
    local r
    if op == 'H' then
      r = redis.pcall('HSET', nowkey, k, v)
    elseif op == 'D' then
      r = redis.pcall('HDEL', nowkey, k)
    else
      r = redis.pcall('LPUSH', k, v)
      if type(r) ~= 'table' then
        redis.call('LTRIM', k, 0, keep - 1)
        redis.call('EXPIRE', k, ttl2)
      end
    end
    if type(r) == 'table' then failed = failed + 1 end
  end
end
return {1, redis.call('ZCARD', KEYS[1]), total, dropped, replaced, failed}
)lua";

}  // namespace alerts
