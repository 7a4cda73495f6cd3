-- Shared by the scripts: each gets the top-level declarations its code names, with those they name,
-- then its `K` and `A` tables: its KEYS and ARGV by name, in the order script-calls.ts declares them
-- (lua-lib.ts). So in column 0 only: `local` starting a declaration (one name), the comment above it,
-- and the `end` or `}` closing it; everything inside is indented. Conventions:
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

-- Appends a doorbell to a list workers pop (a worker's own, a bucket's ready list); the list outlives
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

-- Entry fields, in XADD order: seq, id, tok, org, at, body, lane.
local function entry_field(entry, position)
  return entry[2][position * 2]
end

-- Entries written before lanes existed have no lane field: they share the empty lane.
local function entry_lane(entry)
  return entry_field(entry, 7) or ''
end

-- The caps of the thread's next batch: the arguments', and `alone` (the state's field, as the caller
-- read it), the last message of a batch that was split (split_batch): up to it, batches take one
-- message each.
local function batch_caps(a, alone)
  return { msgs = tonumber(a.maxMessages), tokens = tonumber(a.maxTokens), lanes = a.lanes == '1',
    alone = alone }
end

-- Greedy batch after `after`: at most caps.msgs entries and caps.tokens tokens, and with caps.lanes
-- only the entries of the first entry's lane up to the next change of lane (so per-thread FIFO holds).
-- The first entry is always taken, so an oversized message travels alone and is never truncated; up to
-- caps.alone it travels alone whatever its size.
local function read_batch(inbox, after, caps)
  local entries = redis.call('XRANGE', inbox, '(' .. after, '+', 'COUNT', caps.msgs)
  if caps.alone and #entries > 1 and not id_later(entries[1][1], caps.alone) then
    return { entries[1] }
  end
  local batch, tokens = {}, 0
  for i = 1, #entries do
    local tok = tonumber(entry_field(entries[i], 3))
    if i > 1 and tokens + tok > caps.tokens then break end
    if i > 1 and caps.lanes and entry_lane(entries[i]) ~= entry_lane(entries[1]) then break end
    tokens = tokens + tok
    batch[#batch + 1] = entries[i]
  end
  return batch
end

local function batch_type(entries, redelivered)
  if redelivered then return 'Continuation' end
  local agent = false
  for i = 1, #entries do
    local origin = entry_field(entries[i], 4)
    if origin == 'user' then return 'UserRequest' end
    if origin == 'agent' then agent = true end
  end
  if agent then return 'AgentToAgent' end
  return 'SystemTrigger'
end

-- 64-bit, time-ordered, unique: 40 bits of ms since 2025-01-01, 14 bits of a per-bucket counter,
-- 10 bits of bucket number; rendered as 16 hex digits so string order is numeric order.
local BATCH_EPOCH_MS = 1735689600000
local function new_batch_id(batchseq_key, bucket, now)
  local counter = redis.call('INCR', batchseq_key) % 16384
  return string.format('%010x%06x', now - BATCH_EPOCH_MS, counter * 1024 + bucket)
end

-- Flat reply for a batch: code, fence, batch id, type, deliveries, lease expiry, session generation,
-- count, then per entry the stream id followed by its six fields.
local function batch_reply(code, fence, batch_id, btype, deliveries, lease, generation, entries)
  local reply = { code, fence, batch_id, btype, deliveries, lease, generation, #entries }
  for i = 1, #entries do
    reply[#reply + 1] = entries[i][1]
    for p = 1, 6 do reply[#reply + 1] = entry_field(entries[i], p) end
  end
  return reply
end

-- Hands a freshly formed batch to `owner` under `fence`, which it writes (a claim's new fence is written
-- here). `held`: the state's `alone` and `generation`, and for a batch delivered again its `batch` and
-- `deliveries`, as the caller read them (in the HMGET it starts with, which saves a read of each here).
-- A batch in flight with no delivery counted (put back before any prompt reached an agent: defer-5.lua)
-- keeps its id but is not a continuation: no agent has seen it.
local function start_batch(k, thread, owner, fence, lease_ms, bucket, now, entries, redelivered, code, held)
  local batch_id, deliveries
  local seen_before = false
  if redelivered then
    batch_id = held.batch
    deliveries = (tonumber(held.deliveries) or 0) + 1
    seen_before = deliveries > 1
  else
    batch_id = new_batch_id(k.batchseq, bucket, now)
    deliveries = 1
  end
  -- A part of a batch that was split (split_batch) carries messages delivered before: a continuation.
  local split_part = held.alone and not id_later(entries[1][1], held.alone)
  local btype = batch_type(entries, seen_before or split_part)
  local lease = now + lease_ms
  redis.call('HSET', k.state, 'status', 'running', 'owner', owner, 'fence', fence, 'lease', lease,
    'read', entries[#entries][1], 'batch', batch_id, 'btype', btype, 'claimed', now, 'deliveries', deliveries)
  redis.call('ZADD', k.run, lease, thread)
  return batch_reply(code, fence, batch_id, btype, deliveries, lease, tonumber(held.generation) or 0, entries)
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

-- Records the thread's latest activity in its bucket's activity index (the operators' list of threads),
-- dropping members whose keys have expired meanwhile (no activity for `idle_ms`).
local function note_activity(k, member, now, idle_ms)
  redis.call('ZADD', k.activity, now, member)
  trim_before(k.activity, now - idle_ms, TRIM_PER_WRITE)
end

local function set_idle(k, thread, now, idle_ms)
  redis.call('HSET', k.state, 'status', 'idle', 'turns', 0)
  redis.call('ZREM', k.run, thread)
  redis.call('ZREM', k.sched, thread)
  note_activity(k, thread, now, idle_ms)
end

-- An idle thread with nothing buffered or in flight: its state, inbox, history, gate and receipts expire
-- `idle_ms` from now unless a message comes first (enqueue persists them again; its dedup index never
-- outlives `idle_ms` either). Memory stays bounded by the threads active within that time.
local function expire_idle(k, idle_ms)
  redis.call('PEXPIRE', k.state, idle_ms)
  redis.call('PEXPIRE', k.inbox, idle_ms)
  redis.call('PEXPIRE', k.history, idle_ms)
  redis.call('PEXPIRE', k.gate, idle_ms)
  redis.call('PEXPIRE', k.receipts, idle_ms)
  redis.call('PEXPIRE', k.receiptOrder, idle_ms)
end

-- A thread that holds a message again: nothing of it expires while the message waits or runs (only an
-- idle thread's keys do, expire_idle), and a state written afresh (its keys had expired) starts with
-- nothing read or acknowledged, as the claim expects. Only expire_idle gives these keys a TTL, to all six
-- at once, and only this takes them off, all six at once (write_receipt adds one to the receipts only
-- while the state has one or is gone): so a state without a TTL means none has one and its `acked` is
-- set, and a thread that already holds messages costs one PTTL here instead of seven commands.
-- `ttl`: the state's PTTL, when the caller has read it already.
local function keep_alive(k, ttl)
  ttl = ttl or redis.call('PTTL', k.state)
  if ttl == -1 then return end
  -- -2: no state (a new thread, or its keys expired); usually none of the others is there either.
  if ttl ~= -2 or redis.call('EXISTS', k.gate, k.inbox, k.history, k.receipts, k.receiptOrder) > 0 then
    redis.call('PERSIST', k.gate)
    redis.call('PERSIST', k.inbox)
    redis.call('PERSIST', k.history)
    redis.call('PERSIST', k.receipts)
    redis.call('PERSIST', k.receiptOrder)
  end
  if ttl == -2 then
    redis.call('HSET', k.state, 'acked', '0-0', 'read', '0-0')
    return
  end
  redis.call('PERSIST', k.state)
  if redis.call('HEXISTS', k.state, 'acked') == 0 then
    redis.call('HSET', k.state, 'acked', '0-0', 'read', '0-0')
  end
end

-- Puts the thread back in line for a new doorbell; `not_before` lets the sweeper wait for a delay.
local function reschedule(k, thread, not_before)
  local epoch = redis.call('HINCRBY', k.state, 'epoch', 1)
  redis.call('HSET', k.state, 'status', 'scheduled', 'turns', 0)
  redis.call('ZREM', k.run, thread)
  redis.call('ZADD', k.sched, not_before, thread)
  return epoch
end

-- The state fields a turn's end reads (the holder's check, the batch's record, its acknowledgement and
-- what comes next), by name, in one HMGET: the commit reads them once and hands the table on. Of what
-- is written meanwhile, ack_batch sets `acked` and `alone` in it too; nothing reads the table after
-- continue_after, which writes the state for the next turn.
local function batch_state(k)
  local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence', 'acked', 'read', 'batch', 'btype',
    'claimed', 'deliveries', 'alone', 'paused', 'generation')
  return { status = st[1], owner = st[2], fence = st[3], acked = st[4], read = st[5], batch = st[6],
    btype = st[7], claimed = st[8], deliveries = st[9], alone = st[10], paused = st[11], generation = st[12] }
end

-- Marks the in-flight batch done: acked catches up with read and the inbox drops the batch's
-- `entries` (record_batch's). By id, not by XTRIM MINID: an edit writes the entries behind it again
-- under their ids (rewrite_entry), after the deleted originals that XDEL leaves in place while their
-- node holds other entries, and XTRIM stops at the first entry past its bound, deleted or not, so it
-- would leave a rewritten entry of the batch in the inbox. Past the last message of a split batch,
-- batches are whole again.
-- `state`: the commit's batch_state, whose `acked` and `alone` this updates (continue_after reads them
-- next); other callers pass nil.
local function ack_batch(k, entries, state)
  state = state or batch_state(k)
  local read = state.read
  redis.call('HSET', k.state, 'acked', read, 'deliveries', 0, 'failures', 0)
  state.acked = read
  if state.alone and not id_later(state.alone, read) then
    redis.call('HDEL', k.state, 'alone')
    state.alone = nil
  end
  delete_entries(k.inbox, entries)
  return read
end

-- After a batch is acked: pause, release when empty (in the same script as the emptiness check, so
-- no wakeup can be lost), yield after `yieldAfterTurns` consecutive turns, or hand over the next batch.
-- `state`: as ack_batch left it (the commit's), or nil to read it.
local function continue_after(k, a, now, state)
  local thread = a.member
  local st = state or batch_state(k)
  local idle_ms = tonumber(a.idleTtlMs)
  if st.paused == '1' then
    set_idle(k, thread, now, idle_ms)
    return { STATUS.PAUSED }
  end
  local entries = read_batch(k.inbox, st.acked, batch_caps(a, st.alone))
  if #entries == 0 then
    set_idle(k, thread, now, idle_ms)
    expire_idle(k, idle_ms)
    return { STATUS.IDLE }
  end
  local turns = redis.call('HINCRBY', k.state, 'turns', 1)
  if turns >= tonumber(a.yieldAfterTurns) then
    return { STATUS.YIELD, reschedule(k, thread, now) }
  end
  return start_batch(k, thread, a.owner, tonumber(a.fence), tonumber(a.leaseMs), tonumber(a.bucket), now,
    entries, false, STATUS.NEXT, { alone = st.alone, generation = st.generation })
end

-- The messages of inbox entries as kept in history records and dead letters, bodies included.
local function message_records(entries)
  local messages = {}
  for i = 1, #entries do
    local e = entries[i]
    messages[i] = { sid = e[1], seq = tonumber(entry_field(e, 1)), id = entry_field(e, 2),
      tok = tonumber(entry_field(e, 3)), origin = entry_field(e, 4), at = tonumber(entry_field(e, 5)),
      body = entry_field(e, 6), lane = entry_lane(e) }
  end
  return messages
end

-- Adds `by` to the count of `reason` in a bucket's reason counts (dead letters, dead replies); a reason
-- counted down to nothing leaves the hash.
local function count_reason(reasons, reason, by)
  if reason == nil then return end
  if redis.call('HINCRBY', reasons, reason, by) <= 0 then redis.call('HDEL', reasons, reason) end
end

-- Dead letters and dead replies (docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md) ---------

-- A reason's class: what stays of it once its variable parts are out, so that one cause makes one group
-- however many pids, ids and paths it names. Only its first line counts (what follows is a stderr tail);
-- a word holding a digit becomes <n> (a number) or <id>, a path <path>, a URL <url>; 200 bytes at most.
local function reason_class(reason)
  local line = string.sub(string.match(reason or '', '^[^\n]*'), 1, 1000)
  local class = string.gsub(line, '%S+', function(word)
    local lead, core, trail = string.match(word, '^([%(%[{<"\']*)(.-)([%)%]}>"\'.,;:!?]*)$')
    local shape
    if string.find(core, '^%a[%w+.-]*://') then
      shape = '<url>'
    elseif string.find(core, '^~?%.?%.?/') then
      shape = '<path>'
    elseif string.find(core, '^[-+]?%d[%d,]*%.?%d*$') then
      shape = '<n>'
    elseif string.find(core, '%d') then
      shape = '<id>'
    else
      return word
    end
    return lead .. shape .. trail
  end)
  return string.sub(string.match(class, '^(.-)[%s:]*$'), 1, 200)
end

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

-- Retention of the history stream: max records, max age in ms (it expires with the thread: expire_idle).
local function history_keep(a)
  return { count = tonumber(a.historyMax), age_ms = tonumber(a.historyMaxAgeMs) }
end

-- Appends a record of the in-flight batch to the thread's history stream, then trims it by count and
-- by age (stream ids are Redis-clock milliseconds, so MINID is an age cut). `status` says how the
-- batch ended: complete | cancelled (committed) | failed (will be retried) | dead (dead-lettered).
-- Returns the batch's entries. Must run before ack_batch, which drops them from the inbox.
-- `state`: the caller's batch_state, or nil to read it.
local function record_batch(k, thread_id, status, now, keep, extra, state)
  local st = state or batch_state(k)
  local entries = redis.call('XRANGE', k.inbox, '(' .. st.acked, st.read)
  if #entries == 0 then return entries end
  local record = { batchId = st.batch, thread = thread_id, fence = tonumber(st.fence), type = st.btype,
    status = status, claimedAt = tonumber(st.claimed), endedAt = now,
    deliveries = tonumber(st.deliveries) or 0, messages = message_records(entries) }
  for key, value in pairs(extra) do record[key] = value end
  redis.call('XADD', k.history, '*', 'record', cjson.encode(record))
  redis.call('XTRIM', k.history, 'MAXLEN', keep.count)
  redis.call('XTRIM', k.history, 'MINID', string.format('%d', math.max(0, now - keep.age_ms)))
  return entries
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

-- Appends a turn's outbound messages (a JSON array of {id, payload}) to the thread's reply outbox,
-- in the same script that commits the batch: a reply exists exactly when its batch is committed.
-- The thread becomes due for delivery now unless it already waits for a retry of an older reply,
-- which must go first. Returns how many it appended.
local function enqueue_replies(k, member, outbound, now)
  local items = cjson.decode(outbound)
  for i = 1, #items do
    redis.call('RPUSH', k.replies, cjson.encode({ id = items[i].id, payload = items[i].payload, at = now,
      attempts = 0 }))
  end
  if #items > 0 then redis.call('ZADD', k.replydue, 'NX', now, member) end
  return #items
end

-- Locks the thread's outbox for its deliverer `owner` (or extends the lock) and returns its head.
local function lock_reply_head(k, owner, lock_ms)
  redis.call('SET', k.replyLock, owner, 'PX', lock_ms)
  return redis.call('LINDEX', k.replies, 0)
end

-- The reply deliverer's lock on a thread's outbox: it must still be `owner`'s.
local function holds_reply_lock(k, owner)
  return redis.call('GET', k.replyLock) == owner
end

-- The head of the outbox, when it is the reply `id`.
local function reply_head(k, id)
  local head = redis.call('LINDEX', k.replies, 0)
  if not head then return nil end
  local reply = cjson.decode(head)
  if reply.id ~= id then return nil end
  return reply
end

-- After the head left the outbox: due again at once when more wait, else off the due index.
local function after_reply(k, member, now)
  local left = redis.call('LLEN', k.replies)
  if left > 0 then redis.call('ZADD', k.replydue, now, member)
  else redis.call('ZREM', k.replydue, member) end
  return left
end

-- The dedup window of a thread (docs/adr/0023-broker-cost.md) ----------------------------------------

-- One index per thread instead of a key per message: `dedup` maps an idempotency key (as thread-keys.ts's
-- dedupMember shortens it) to the stream id it was accepted at, `dedupUntil` scores it by expiry. A key
-- past its expiry counts as unseen whether or not it has been trimmed yet.
local function dedup_seen(k, key, now)
  local expiry = redis.call('ZSCORE', k.dedupUntil, key)
  if expiry and tonumber(expiry) > now then return redis.call('HGET', k.dedup, key) end
  return false
end

-- Remembers `key` as accepted at `sid` for `window_ms`, trims expired keys, and lets the whole index
-- expire with its latest key: the window is the same for every key, so that is `window_ms` from now.
-- `fresh`: the index did not exist, so there is nothing to trim.
local function dedup_remember(k, key, sid, now, window_ms, fresh)
  if not fresh then
    local expired = trim_before(k.dedupUntil, now, TRIM_PER_WRITE)
    if #expired > 0 then redis.call('HDEL', k.dedup, unpack(expired)) end
  end
  redis.call('HSET', k.dedup, key, sid)
  redis.call('ZADD', k.dedupUntil, now + tonumber(window_ms), key)
  redis.call('PEXPIRE', k.dedup, window_ms)
  redis.call('PEXPIRE', k.dedupUntil, window_ms)
end

-- A control command's delivery (docs/adr/0042-control-commands-once-per-delivery.md): whether it is the
-- first within the thread's dedup window, remembered (as `command`) if so. Called by the script that
-- applies the command, before it acts: a retry, or a second delivery racing the first, then finds it and
-- applies nothing; a delivery whose script never ran (Redis down) left nothing, so its retry applies.
-- `key` '' (an admin action sent without an Idempotency-Key) is always first and never remembered.
local function first_delivery(k, key, command, now, window_ms)
  if key == '' then return true end
  if dedup_seen(k, key, now) then return false end
  dedup_remember(k, key, command, now, window_ms, false)
  return true
end

-- Receipts and edits of buffered messages (docs/adr/0019-edits-deletes-and-receipts.md) ---------------

-- A receipt is a small JSON record per platform message id: `sid` (its inbox entry), `edits` (edits
-- applied in place while it was buffered), `editSid` (the latest edit that came after dispatch, as an
-- event of its own), `deleted` ('buffered' | 'dispatched'), `refused` (why ingress refused it).
local function read_receipt(k, message_id)
  local raw = redis.call('HGET', k.receipts, message_id)
  if raw then return cjson.decode(raw) end
  return nil
end

-- Steering (docs/adr/0040): the entries a steer took into the batch after `through`, the last one the
-- running turn received, up to `read` (the agent refused them, or the turn had ended) go back in line:
-- `read` returns to `through`. A delete that came while they were taken was recorded as one of a
-- dispatched message (revise-8.lua cannot tell a taken entry from a received one); now that they are
-- buffered again it removes them, as it would have then. `read` is the state's, as the caller read it.
local function untake(k, through, read)
  if not id_later(read, through) then return end
  local entries = redis.call('XRANGE', k.inbox, '(' .. through, read)
  for i = 1, #entries do
    local sid, message_id = entries[i][1], entry_field(entries[i], 2)
    local receipt = read_receipt(k, message_id)
    if receipt and receipt.deleted == 'dispatched' and (receipt.editSid or receipt.sid) == sid then
      redis.call('XDEL', k.inbox, sid)
      -- As revise-8.lua: removing an edit's own event leaves the original it edits dispatched.
      if sid == receipt.sid then
        receipt.deleted = 'buffered'
        redis.call('HSET', k.receipts, message_id, cjson.encode(receipt))
      end
    end
  end
  redis.call('HSET', k.state, 'read', through)
end

-- At most `receiptsMax` receipts per thread, the oldest dropped first. While the thread holds a message
-- (its state has no TTL) they are kept, so an edit still finds a buffered message however long it
-- waits; otherwise they expire `receiptTtlMs` (at most the idle time) after the latest write.
-- `kept_alive`: the caller has just kept the thread alive (keep_alive), so its state has no TTL.
-- `first`: the thread had no receipts, so this one cannot be over the bound.
local function write_receipt(k, a, message_id, receipt, now, kept_alive, first)
  redis.call('HSET', k.receipts, message_id, cjson.encode(receipt))
  redis.call('ZADD', k.receiptOrder, 'NX', now, message_id)
  -- Indexed by message id for the operators' search (docs/adr/0028-finding-a-message-without-its-thread.md);
  -- a member whose receipt is gone is skipped by the reader, and one past the TTL trimmed here.
  local indexed = message_id .. '/' .. a.member
  redis.call('ZADD', k.receiptids, 0, indexed)
  redis.call('ZADD', k.receiptidsage, now, indexed)
  local old = trim_before(k.receiptidsage, now - tonumber(a.receiptTtlMs), TRIM_PER_WRITE)
  if #old > 0 then redis.call('ZREM', k.receiptids, unpack(old)) end
  local over = first and 0 or redis.call('ZCARD', k.receiptOrder) - tonumber(a.receiptsMax)
  if over > 0 then
    local dropped = redis.call('ZPOPMIN', k.receiptOrder, over)
    for i = 1, #dropped, 2 do redis.call('HDEL', k.receipts, dropped[i]) end
  end
  if not kept_alive and redis.call('PTTL', k.state) ~= -1 then
    redis.call('PEXPIRE', k.receipts, a.receiptTtlMs)
    redis.call('PEXPIRE', k.receiptOrder, a.receiptTtlMs)
  end
end

-- Records that a message addressed to us was refused (a gate, the backlog cap), unless it was accepted
-- meanwhile (a platform retry that got in), whose receipt says so.
local function receipt_refused(k, a, reason, now)
  local receipt = read_receipt(k, a.messageId)
  if receipt and receipt.sid then return end
  write_receipt(k, a, a.messageId, { refused = reason }, now)
end

-- Records an accepted message at `sid`: a new one, or (`edit`) an edit that came after dispatch. Only
-- enqueue accepts, after its keep_alive; `fresh`: the thread had no keys (so no receipts) before.
local function receipt_accepted(k, a, sid, now, fresh)
  local receipt = { sid = sid }
  if a.edit == '1' then
    receipt = (not fresh and read_receipt(k, a.messageId)) or {}
    receipt.editSid = sid
  end
  write_receipt(k, a, a.messageId, receipt, now, true, fresh)
end

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

-- Replaces the fields named in `changes` of inbox entry `sid`, keeping its id and so its place in line.
-- A stream entry cannot be changed, so the entries from `sid` on are deleted and added again under
-- their own ids: XSETID lowers the stream's last id for that and restores it after, so no id is ever
-- issued twice. The work is proportional to the entries behind `sid` and their size, so it is done
-- only within `max_entries` and `max_bytes` of bodies; past them it returns false and changes nothing.
local function rewrite_entry(inbox, sid, changes, max_entries, max_bytes)
  local tail = redis.call('XRANGE', inbox, sid, '+', 'COUNT', max_entries + 1)
  if #tail > max_entries then return false end
  local bytes = 0
  for i = 1, #tail do
    local fields = tail[i][2]
    for f = 2, #fields, 2 do bytes = bytes + #fields[f] end
  end
  if bytes > max_bytes then return false end
  local last = stream_last_id(inbox)
  delete_entries(inbox, tail)
  local before = id_before(sid)
  redis.call('XSETID', inbox, before, 'MAXDELETEDID', before)
  local fields = tail[1][2]
  for i = 1, #fields, 2 do
    if changes[fields[i]] ~= nil then fields[i + 1] = changes[fields[i]] end
  end
  for i = 1, #tail do redis.call('XADD', inbox, tail[i][1], unpack(tail[i][2])) end
  redis.call('XSETID', inbox, last)
  return true
end
