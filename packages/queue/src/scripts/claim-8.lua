-- Doorbell start: leases the thread to `owner` under a new fence and hands over its first batch.
-- A batch a previous owner left in flight comes first, unchanged (same batch id), so FIFO holds.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 batchseq, 6 dead, 7 deadindex, 8 history
-- ARGV: 1 thread member, 2 doorbell epoch, 3 owner, 4 lease ms, 5 max messages, 6 max tokens, 7 lanes,
--       8 bucket, 9 max deliveries, 10 thread id, 11 history max records, 12 history max age ms
-- Returns: {CLAIMED, fence, batch id, type, deliveries, lease, generation, n, entries...} | {STALE}
--        | {BUSY, ms until the lease expires} | {EMPTY} | {PAUSED}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4], batchseq = KEYS[5],
  dead = KEYS[6], deadindex = KEYS[7], history = KEYS[8] }
local thread = ARGV[1]
local st = redis.call('HMGET', k.state, 'status', 'epoch', 'lease', 'paused', 'read', 'acked')
if st[2] ~= ARGV[2] or st[1] == false or st[1] == 'idle' then return { STATUS.STALE } end
local now = now_ms()
if st[1] == 'running' and tonumber(st[3]) > now then return { STATUS.BUSY, tonumber(st[3]) - now } end
if st[4] == '1' then
  set_idle(k, thread)
  return { STATUS.PAUSED }
end

local fence = redis.call('HINCRBY', k.state, 'fence', 1)
redis.call('ZREM', k.sched, thread)
local lease_ms, bucket = tonumber(ARGV[4]), tonumber(ARGV[8])
local caps = batch_caps(ARGV[5], ARGV[6], ARGV[7])

if st[5] ~= st[6] then
  local deliveries = tonumber(redis.call('HGET', k.state, 'deliveries')) or 0
  if deliveries >= tonumber(ARGV[9]) then
    -- A batch that keeps killing its owners must not block the thread forever.
    dead_letter(k, thread, ARGV[10], 'delivered ' .. deliveries .. ' times without completing', now,
      history_keep(ARGV[11], ARGV[12]))
  else
    local entries = redis.call('XRANGE', k.inbox, '(' .. st[6], st[5])
    if #entries > 0 then
      return start_batch(k, thread, ARGV[3], fence, lease_ms, bucket, now, entries, true, STATUS.CLAIMED)
    end
    redis.call('HSET', k.state, 'read', st[6])
  end
end

local acked = redis.call('HGET', k.state, 'acked')
local entries = read_batch(k.inbox, acked, caps)
if #entries == 0 then
  set_idle(k, thread)
  return { STATUS.EMPTY }
end
return start_batch(k, thread, ARGV[3], fence, lease_ms, bucket, now, entries, false, STATUS.CLAIMED)
