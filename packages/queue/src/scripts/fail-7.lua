-- A turn failed: retry the same batch later, or after `max failures` dead-letter it and move on.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 batchseq, 6 dead, 7 deadindex
-- ARGV: 1 thread member, 2 owner, 3 fence, 4 reason, 5 max failures, 6 retry delay ms, 7 lease ms,
--       8 max messages, 9 max tokens, 10 bucket, 11 yield after turns, 12 thread id
-- Returns: {RETRY, epoch, delay ms} | what commit returns after dead-lettering | {FENCED}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4], batchseq = KEYS[5],
  dead = KEYS[6], deadindex = KEYS[7] }
local thread, owner, fence = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= owner or st[3] ~= fence then return { STATUS.FENCED } end
local now = now_ms()
local failures = redis.call('HINCRBY', k.state, 'failures', 1)
if failures < tonumber(ARGV[5]) then
  local delay = tonumber(ARGV[6])
  return { STATUS.RETRY, reschedule(k, thread, now + delay), delay }
end
dead_letter(k, thread, ARGV[12], ARGV[4], now)
return continue_after(k, thread, owner, tonumber(fence), tonumber(ARGV[7]), tonumber(ARGV[10]), now,
  tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[11]))
