-- A turn failed: retry the same batch later, or after `max failures` dead-letter it and move on.
-- Either way the attempt is recorded in history (status failed or dead), never as complete.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 batchseq, 6 dead, 7 deadindex, 8 history
-- ARGV: 1 thread member, 2 owner, 3 fence, 4 reason, 5 max failures, 6 retry delay ms, 7 lease ms,
--       8 max messages, 9 max tokens, 10 lanes, 11 bucket, 12 yield after turns, 13 thread id,
--       14 history max records, 15 history max age ms
-- Returns: {RETRY, epoch, delay ms} | what commit returns after dead-lettering | {FENCED}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4], batchseq = KEYS[5],
  dead = KEYS[6], deadindex = KEYS[7], history = KEYS[8] }
local thread, owner, fence = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= owner or st[3] ~= fence then return { STATUS.FENCED } end
local now = now_ms()
local keep = history_keep(ARGV[14], ARGV[15])
local failures = redis.call('HINCRBY', k.state, 'failures', 1)
if failures < tonumber(ARGV[5]) then
  record_batch(k, ARGV[13], 'failed', now, keep, { reason = ARGV[4], failures = failures })
  local delay = tonumber(ARGV[6])
  return { STATUS.RETRY, reschedule(k, thread, now + delay), delay }
end
dead_letter(k, thread, ARGV[13], ARGV[4], now, keep)
return continue_after(k, thread, owner, tonumber(fence), tonumber(ARGV[7]), tonumber(ARGV[11]), now,
  batch_caps(ARGV[8], ARGV[9], ARGV[10]), tonumber(ARGV[12]))
