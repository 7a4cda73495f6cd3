-- uses: core
-- One worker's pass over one bucket, every `sweepIntervalMs`: the threads whose reply is due (every
-- worker delivers them), and, for the one worker that takes the bucket's lock for this interval, what
-- a sweep looks at: leases expired, leases running (their owners may be gone), doorbells waiting past
-- the grace period. One call instead of a lock, a clock read and four range reads; a bucket with no
-- running or scheduled thread is not locked at all, so an idle pass writes nothing.
-- Returns: {EMPTY} | {OK, now, #expired, expired..., #leased, leased..., #waiting, waiting..., #due, due...}
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', K.replydue, '-inf', now, 'LIMIT', 0, A.dueBatch)
local expired, leased, waiting = {}, {}, {}
if redis.call('EXISTS', K.run, K.sched) > 0
  and redis.call('SET', K.sweepLock, A.owner, 'PX', A.lockMs, 'NX') then
  expired = redis.call('ZRANGEBYSCORE', K.run, '-inf', now, 'LIMIT', 0, A.sweepBatch)
  leased = redis.call('ZRANGEBYSCORE', K.run, '(' .. now, '+inf', 'LIMIT', 0, A.sweepBatch)
  local before = now - tonumber(A.lostDoorbellAfterMs)
  waiting = redis.call('ZRANGEBYSCORE', K.sched, '-inf', before, 'LIMIT', 0, A.sweepBatch)
end
if #due + #expired + #leased + #waiting == 0 then return { STATUS.EMPTY } end
local reply = { STATUS.OK, now }
for _, list in ipairs({ expired, leased, waiting, due }) do
  reply[#reply + 1] = #list
  for i = 1, #list do reply[#reply + 1] = list[i] end
end
return reply
