-- What the operators' overview counts in one bucket, in one call: threads running, runnable (due now),
-- scheduled (waiting for a retry's delay), paused, with activity within the idle time, dead letters
-- and dead replies, and their counts by reason.
-- Returns: {OK, now, running, runnable, scheduled, paused, active, dead letters, dead replies,
--           #pairs, reason, count, ..., #pairs, reason, count, ...}
local now = now_ms()
local reply = { STATUS.OK, now,
  redis.call('ZCARD', K.run),
  redis.call('ZCOUNT', K.sched, '-inf', now),
  redis.call('ZCOUNT', K.sched, '(' .. now, '+inf'),
  redis.call('ZCARD', K.paused),
  redis.call('ZCARD', K.activity),
  redis.call('ZCARD', K.deadindex),
  redis.call('ZCARD', K.deadreplyindex) }
for _, reasons in ipairs({ K.deadreasons, K.deadreplyreasons }) do
  local fields = redis.call('HGETALL', reasons)
  reply[#reply + 1] = #fields / 2
  for i = 1, #fields do reply[#reply + 1] = fields[i] end
end
return reply
