-- uses: core, batches, thread-life, history, dead
-- Doorbell start: leases the thread to `owner` under a new fence and hands over its first batch.
-- A batch a previous owner left in flight comes first, unchanged (same batch id), so FIFO holds;
-- one delivered `maxDeliveries` times is split (lib/dead.lua's split_batch) or, alone, dead-lettered.
-- Returns: {CLAIMED, batch...} | {STALE} | {BUSY, ms until the lease expires} | {EMPTY} | {PAUSED}
local thread = A.member
local st = redis.call('HMGET', K.state, 'status', 'epoch', 'lease', 'paused', 'read', 'acked', 'alone',
  'generation', 'batch', 'deliveries', 'fence')
if st[2] ~= A.epoch or st[1] == false or st[1] == 'idle' then return { STATUS.STALE } end
local now = now_ms()
if st[1] == 'running' and tonumber(st[3]) > now then return { STATUS.BUSY, tonumber(st[3]) - now } end
if st[4] == '1' then
  set_idle(K, thread, now, tonumber(A.idleTtlMs))
  return { STATUS.PAUSED }
end

-- The new fence is written with the batch (start_batch), or at once on any other way out.
local fence = (tonumber(st[11]) or 0) + 1
redis.call('ZREM', K.sched, thread)
local lease_ms, bucket = tonumber(A.leaseMs), tonumber(A.bucket)
local held = { alone = st[7], generation = st[8], batch = st[9], deliveries = st[10] }
local acked = st[6]

if st[5] ~= acked then
  local deliveries = tonumber(held.deliveries) or 0
  if deliveries >= tonumber(A.maxDeliveries) then
    -- The batch's record carries the fence it was last held under.
    redis.call('HSET', K.state, 'fence', fence)
    -- A batch that keeps killing its owners must not block the thread forever: split, one message
    -- that does so alone is set aside.
    local reason = 'delivered ' .. deliveries .. ' times without completing'
    if not split_batch(K, A.thread, reason, now, history_keep(A)) then
      dead_letter(K, thread, A.thread, reason, now, history_keep(A), dead_bounds(A))
    end
    -- Both moved the thread on: what was read is acknowledged or split off.
    local after = redis.call('HMGET', K.state, 'acked', 'alone')
    acked, held.alone = after[1], after[2]
  else
    local entries = redis.call('XRANGE', K.inbox, '(' .. acked, st[5])
    if #entries > 0 then
      return start_batch(K, thread, A.owner, fence, lease_ms, bucket, now, entries, true, STATUS.CLAIMED, held)
    end
    redis.call('HSET', K.state, 'read', acked)
  end
end

local entries = read_batch(K.inbox, acked, batch_caps(A, held.alone))
if #entries == 0 then
  redis.call('HSET', K.state, 'fence', fence)
  set_idle(K, thread, now, tonumber(A.idleTtlMs))
  expire_idle(K, tonumber(A.idleTtlMs))
  return { STATUS.EMPTY }
end
return start_batch(K, thread, A.owner, fence, lease_ms, bucket, now, entries, false, STATUS.CLAIMED, held)
