-- uses: core
-- Batches: reading one from the inbox within its caps, its id and type, handing it to its holder.

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
