-- uses: core, thread-life, history
-- Dead letters and dead replies: the bucket's bounded dead sets, and how a batch ends up there.

-- A bucket keeps each of its two dead sets in five keys, each item `<thread member>/<id>` (a batch id,
-- a reply id): `index` (items by when they died), `records` (item -> JSON), `threads` (items scored 0:
-- a thread's are one prefix range, in id order, which is time order), `classof` (item -> its reason
-- class), `classes` (class -> count); `evicted` counts what the TTL and the caps dropped, by
-- `<kind>:<cause>`. `legacy` and `legacyReasons` are where the previous layout kept a thread's items:
-- a JSON list of its own, counted by raw reason; only the scripts that take or move items declare them.
-- Whatever a set holds, one item costs a few O(log n) commands to add, find or remove.
local function dead_letter_set(k)
  return { kind = 'letters', id = 'batchId', index = k.deadindex, records = k.deadrecords,
    threads = k.deadthreads, classof = k.deadclassof, classes = k.deadclasses, evicted = k.deadevicted,
    legacy = k.dead, legacyReasons = k.deadreasons }
end

local function dead_reply_set(k)
  return { kind = 'replies', id = 'id', index = k.deadreplyindex, records = k.deadreplyrecords,
    threads = k.deadreplythreads, classof = k.deadreplyclassof, classes = k.deadreplyclasses,
    evicted = k.deadevicted, legacy = k.deadReplies, legacyReasons = k.deadreplyreasons }
end

-- A set as the scripts serving both kinds declare it (dead-trim, dead-migrate): by generic key names.
local function dead_set(k, kind)
  return { kind = kind, id = kind == 'letters' and 'batchId' or 'id', index = k.index, records = k.records,
    threads = k.threads, classof = k.classof, classes = k.classes, evicted = k.evicted, legacy = k.legacy,
    legacyReasons = k.legacyReasons }
end

-- How long an item is kept, and how many of them one thread and one bucket keep (the fleet's cap is
-- spread over the buckets, whose keys may live on different Cluster nodes).
local function dead_bounds(a)
  return { ttl_ms = tonumber(a.deadTtlMs), per_thread = tonumber(a.deadMaxPerThread),
    per_bucket = tonumber(a.deadMaxPerBucket) }
end

-- The `threads` range of one thread's items ('0' is the byte after '/'; a member holds no '/').
local function thread_items(member)
  return '[' .. member .. '/', '(' .. member .. '0'
end

-- Writes `record` as the set's `item`, died at `at`, its reason's class computed here once.
local function dead_put(d, item, record, at)
  local class = reason_class(record.reason)
  record.reasonClass = class
  redis.call('HSET', d.records, item, cjson.encode(record))
  redis.call('HSET', d.classof, item, class)
  redis.call('ZADD', d.index, at, item)
  redis.call('ZADD', d.threads, 0, item)
  redis.call('HINCRBY', d.classes, class, 1)
end

-- Removes `item` and its count in its class; returns its record's JSON, or nil when the set does not
-- hold it (gone already, or still in the previous layout: dead_migrate moves that first).
local function dead_remove(d, item)
  local json = redis.call('HGET', d.records, item)
  if not json then return nil end
  count_reason(d.classes, redis.call('HGET', d.classof, item), -1)
  redis.call('HDEL', d.records, item)
  redis.call('HDEL', d.classof, item)
  redis.call('ZREM', d.index, item)
  redis.call('ZREM', d.threads, item)
  return json
end

-- Drops `items`, counting those it held as evicted by `cause` (ttl | cap).
local function dead_evict(d, items, cause)
  local evicted = 0
  for i = 1, #items do
    if dead_remove(d, items[i]) then evicted = evicted + 1 end
  end
  if evicted > 0 then redis.call('HINCRBY', d.evicted, d.kind .. ':' .. cause, evicted) end
  return evicted
end

-- Drops at most `limit` items past the TTL, then at most `limit` of the oldest past the bucket's cap.
-- Returns how many for each cause, and whether the limit left some.
local function dead_trim(d, now, bounds, limit)
  local expired = redis.call('ZRANGE', d.index, '-inf', string.format('(%d', now - bounds.ttl_ms),
    'BYSCORE', 'LIMIT', 0, limit)
  local over = redis.call('ZCARD', d.index) - bounds.per_bucket
  local oldest = {}
  if over > 0 then oldest = redis.call('ZRANGE', d.index, 0, math.min(over, limit) - 1) end
  return dead_evict(d, expired, 'ttl'), dead_evict(d, oldest, 'cap'), #expired == limit or over > limit
end

-- Adds a thread's item and keeps the bounds: the thread's oldest past its cap go, and a few of the
-- bucket's past the TTL or its cap (the rest at the next write, or the workers' periodic trim).
local function dead_add(d, member, id, record, now, bounds)
  dead_put(d, member .. '/' .. id, record, now)
  dead_trim(d, now, bounds, TRIM_PER_WRITE)
  local lo, hi = thread_items(member)
  local over = redis.call('ZLEXCOUNT', d.threads, lo, hi) - bounds.per_thread
  if over > 0 then
    local oldest = redis.call('ZRANGE', d.threads, lo, hi, 'BYLEX', 'LIMIT', 0, math.min(over, TRIM_PER_WRITE))
    dead_evict(d, oldest, 'cap')
  end
end

-- Moves a thread's items from the previous layout into the set, once. An item of that layout is also
-- in `index` unless it predates it; its count by raw reason then leaves `legacyReasons`.
local function dead_migrate(d, member)
  if redis.call('EXISTS', d.legacy) == 0 then return end
  for _, json in ipairs(redis.call('LRANGE', d.legacy, 0, -1)) do
    local record = cjson.decode(json)
    local item = member .. '/' .. record[d.id]
    if redis.call('ZSCORE', d.index, item) then count_reason(d.legacyReasons, record.reason, -1) end
    dead_put(d, item, record, tonumber(record.deadAt) or 0)
  end
  redis.call('DEL', d.legacy)
end

-- Takes a thread's item `id` out (a re-drive, a discard); returns its record, or nil. The record is
-- read before anything is removed: one that cannot be read fails the script and stays as it was.
local function dead_take(d, member, id)
  dead_migrate(d, member)
  local item = member .. '/' .. id
  local json = redis.call('HGET', d.records, item)
  if not json then return nil end
  local record = cjson.decode(json)
  dead_remove(d, item)
  return record
end

-- Moves the in-flight batch, bodies included, to the dead letters so it can be re-driven (within
-- `bounds`: dead_bounds), and records it in history as dead.
local function dead_letter(k, thread, thread_id, reason, now, keep, bounds)
  local st = redis.call('HMGET', k.state, 'batch', 'deliveries', 'failures')
  local entries = record_batch(k, thread_id, 'dead', now, keep, { reason = reason })
  if #entries > 0 then
    dead_add(dead_letter_set(k), thread, st[1], { batchId = st[1], thread = thread_id, reason = reason,
      deadAt = now, deliveries = tonumber(st[2]) or 0, failures = tonumber(st[3]) or 0,
      messages = message_records(entries) }, now, bounds)
  end
  ack_batch(k, entries)
end

-- A batch of several messages that keeps failing is not dead-lettered whole (docs/adr/0033): it is
-- recorded as failed and taken back, and the thread's next batches carry one message each up to its
-- last one (`alone`), so only a message that fails on its own is set aside, and in order. Returns
-- false for a batch of one message, which the caller dead-letters.
local function split_batch(k, thread_id, reason, now, keep)
  local st = redis.call('HMGET', k.state, 'acked', 'read', 'failures')
  local first_two = redis.call('XRANGE', k.inbox, '(' .. st[1], st[2], 'COUNT', 2)
  if #first_two < 2 then return false end
  record_batch(k, thread_id, 'failed', now, keep,
    { reason = reason, failures = tonumber(st[3]) or 0, split = true })
  redis.call('HSET', k.state, 'alone', st[2], 'read', st[1], 'failures', 0, 'deliveries', 0)
  return true
end

-- Deletes every inbox entry after `read`, i.e. everything buffered behind the in-flight batch.
local function drop_buffered(k)
  local read = redis.call('HGET', k.state, 'read') or '0-0'
  local dropped = 0
  while true do
    local entries = redis.call('XRANGE', k.inbox, '(' .. read, '+', 'COUNT', 500)
    if #entries == 0 then return dropped end
    dropped = dropped + delete_entries(k.inbox, entries)
  end
end
