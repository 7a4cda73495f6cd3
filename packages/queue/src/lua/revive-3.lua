-- uses: core, thread-life
-- Sweeper: re-rings a thread whose owner's lease expired, or whose doorbell was lost.
-- `mode` is 'lease' or 'doorbell'; in doorbell mode only the expected epoch is re-rung.
-- Returns: {RING, epoch} | {OK} (nothing to do; stale index entries are removed)
local thread = A.member
local st = redis.call('HMGET', K.state, 'status', 'lease', 'epoch')
local now = now_ms()
if A.mode == 'lease' then
  if st[1] ~= 'running' then
    redis.call('ZREM', K.run, thread)
    return { STATUS.OK }
  end
  if tonumber(st[2]) > now then
    redis.call('ZADD', K.run, st[2], thread)
    return { STATUS.OK }
  end
  return { STATUS.RING, reschedule(K, thread, now) }
end
if st[1] ~= 'scheduled' then
  redis.call('ZREM', K.sched, thread)
  return { STATUS.OK }
end
if st[3] ~= A.epoch then return { STATUS.OK } end
return { STATUS.RING, reschedule(K, thread, now) }
