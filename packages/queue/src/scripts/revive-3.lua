-- Sweeper: re-rings a thread whose owner's lease expired, or whose doorbell was lost.
-- KEYS: 1 state, 2 run, 3 sched
-- ARGV: 1 thread member, 2 mode ('lease' | 'doorbell'), 3 expected epoch (doorbell mode)
-- Returns: {RING, epoch} | {OK} (nothing to do; stale index entries are removed)
local k = { state = KEYS[1], run = KEYS[2], sched = KEYS[3] }
local thread = ARGV[1]
local st = redis.call('HMGET', k.state, 'status', 'lease', 'epoch')
local now = now_ms()
if ARGV[2] == 'lease' then
  if st[1] ~= 'running' then
    redis.call('ZREM', k.run, thread)
    return { STATUS.OK }
  end
  if tonumber(st[2]) > now then
    redis.call('ZADD', k.run, st[2], thread)
    return { STATUS.OK }
  end
  return { STATUS.RING, reschedule(k, thread, now) }
end
if st[1] ~= 'scheduled' then
  redis.call('ZREM', k.sched, thread)
  return { STATUS.OK }
end
if st[3] ~= ARGV[3] then return { STATUS.OK } end
return { STATUS.RING, reschedule(k, thread, now) }
