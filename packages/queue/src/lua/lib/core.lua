-- What every script stands on: the status codes its replies start with (status.ts mirrors them),
-- Redis time, stream ids, and trimming. Conventions all the scripts keep:
--   * the state hash of a thread holds: status (idle|scheduled|running), epoch, fence, owner, lease,
--     read, acked, seq, turns, paused, deliveries, failures, batch, btype, claimed, generation, alone,
--     steer (the batch whose holder steers: steer-3.lua), deferred, deferrals, deferredAt and noticed
--     (the batch put back because its agent did not start, how often, since when, and whether the
--     thread was told: defer-5.lua);
--   * the in-flight batch is the inbox range (acked, read];
--   * inbox entries are written with fields in a fixed order (see enqueue), read positionally here;
--   * arguments shared by several scripts carry the same name everywhere: `member` (the thread as it
--     appears in keys and indexes), `thread` (its id, for records), `owner`, `fence`, `leaseMs`, the
--     batch caps `maxMessages`, `maxTokens`, `lanes` (1: a batch ends where the sender changes),
--     `bucket`, `yieldAfterTurns`, history retention `historyMax`, `historyMaxAgeMs`, and `idleTtlMs`
--     (how long a thread's keys outlive its last activity);
--   * every batch that ends (committed, failed, dead-lettered) leaves a record in the history stream;
--   * all time comes from Redis TIME so that every worker agrees on lease expiry.

local STATUS = {
  OK = 0, RING = 1, QUEUED = 2, DUPLICATE = 3, GATED = 4, CLAIMED = 10, STALE = 11, BUSY = 12, EMPTY = 13,
  PAUSED = 14, NEXT = 20, YIELD = 21, IDLE = 22, RETRY = 23, SPLIT = 24, BATCH_FULL = 25, DEFERRED = 26,
  NOT_FOUND = 30, DISPATCHED = 31,
  BACKLOG_FULL = -1, FENCED = -2,
}

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Appends a doorbell to the list a worker pops (its own: session affinity); the list outlives
-- its last push by `ttl_ms`, so one nobody pops any more goes away.
local function push_doorbell(list, doorbell, ttl_ms)
  redis.call('RPUSH', list, doorbell)
  redis.call('PEXPIRE', list, ttl_ms)
end

-- Deletes stream `entries` (as XRANGE returns them) by id, 500 ids a call (Lua's unpack has a limit);
-- returns how many it deleted.
local function delete_entries(stream, entries)
  local deleted = 0
  for first = 1, #entries, 500 do
    local ids = {}
    for i = first, math.min(first + 499, #entries) do ids[#ids + 1] = entries[i][1] end
    deleted = deleted + redis.call('XDEL', stream, unpack(ids))
  end
  return deleted
end

local function parse_id(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

-- Whether stream id `a` comes after `b`.
local function id_later(a, b)
  local a_ms, a_seq = parse_id(a)
  local b_ms, b_seq = parse_id(b)
  return a_ms > b_ms or (a_ms == b_ms and a_seq > b_seq)
end

-- Removes at most `limit` members of the sorted set `key` scored `before` or lower, and returns them.
local function trim_before(key, before, limit)
  local old = redis.call('ZRANGEBYSCORE', key, '-inf', before, 'LIMIT', 0, limit)
  if #old > 0 then redis.call('ZREM', key, unpack(old)) end
  return old
end

-- At most this many expired members leave an index (dedup keys, activity, receipt ids) per write: more
-- than the one a write adds, so they are cleared faster than they can pile up, and few, so one write
-- never does a long cleanup.
local TRIM_PER_WRITE = 32

-- Largest stream id strictly smaller than `id` (a real entry's id is never 0-0).
local function id_before(id)
  local ms, seq = parse_id(id)
  if seq > 0 then return string.format('%d-%d', ms, seq - 1) end
  return string.format('%d', ms - 1) .. '-18446744073709551615'
end

local function stream_last_id(stream)
  local info = redis.call('XINFO', 'STREAM', stream)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then return info[i + 1] end
  end
  error('XINFO STREAM gave no last-generated-id')
end
