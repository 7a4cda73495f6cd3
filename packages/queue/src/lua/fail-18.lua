-- uses: core, thread-life, history, dead, replies
-- A turn failed: retry the same batch later, or after `max failures` split it (with `split`, when it
-- holds several messages: lib/dead.lua's split_batch, retried one message at a time) or dead-letter it and
-- move on. Either way the attempt is recorded in history (status failed or dead), never as complete.
-- A dead-lettered batch's notices (`outboundIfDead`) enter the reply outbox with it; the dead letters
-- keep their bounds (`deadTtlMs`, `deadMaxPerThread`, `deadMaxPerBucket`: lib/dead.lua's dead_add).
-- Returns: {RETRY, epoch, delay ms} | {SPLIT, epoch, delay ms} | what commit returns after
-- dead-lettering | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.FENCED } end
local now = now_ms()
local keep = history_keep(A)
local failures = redis.call('HINCRBY', K.state, 'failures', 1)
if failures < tonumber(A.maxFailures) then
  record_batch(K, A.thread, 'failed', now, keep, { reason = A.reason, failures = failures })
  local delay = tonumber(A.retryDelayMs)
  return { STATUS.RETRY, reschedule(K, A.member, now + delay), delay }
end
if A.split == '1' and split_batch(K, A.thread, A.reason, now, keep) then
  local delay = tonumber(A.retryDelayMs)
  return { STATUS.SPLIT, reschedule(K, A.member, now + delay), delay }
end
dead_letter(K, A.member, A.thread, A.reason, now, keep, dead_bounds(A))
enqueue_replies(K, A.member, A.outboundIfDead, now)
return continue_after(K, A, now)
