-- uses: core, thread-life, replies
-- The turn could not start for a reason outside its batch (its agent did not start: the fleet's fault,
-- not the messages'): the batch goes back in line after a delay that doubles with each deferral, up to
-- `maxDelayMs`. It counts as neither a failure nor, when no prompt of this delivery reached an agent
-- (`reachedAgent` 0), a delivery, so it is never dead-lettered for it and its next run may load the
-- thread's session. Once the batch has waited `noticeAfterMs` since it was first put back (or since
-- `waitingSince`, when its wait began earlier, in its route's line; 0: none), `notice` enters the reply
-- outbox, once per batch (notice-deferred-3.lua sends it when nobody tries the batch).
-- Returns: {DEFERRED, epoch, delay ms, ms since first put back, 1 when the notice was queued now}
--   | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence', 'batch', 'deliveries', 'deferred',
  'deferrals', 'deferredAt', 'noticed')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.FENCED } end
local now = now_ms()
local batch = st[4]
local deferrals, since = 1, now
if st[6] == batch then
  deferrals = tonumber(st[7]) + 1
  since = tonumber(st[8])
elseif tonumber(A.waitingSince) > 0 then
  -- Its wait began before this first put-back (in its route's line): it counts from then.
  since = math.min(now, tonumber(A.waitingSince))
end
local delay = math.min(tonumber(A.baseDelayMs) * 2 ^ (deferrals - 1), tonumber(A.maxDelayMs))
redis.call('HSET', K.state, 'deferred', batch, 'deferrals', deferrals, 'deferredAt', since)
if A.reachedAgent ~= '1' then
  redis.call('HSET', K.state, 'deliveries', math.max(0, (tonumber(st[5]) or 1) - 1))
end
local noticed = 0
if st[9] ~= batch and now - since >= tonumber(A.noticeAfterMs) then
  enqueue_replies(K, A.member, A.notice, now)
  redis.call('HSET', K.state, 'noticed', batch)
  noticed = 1
end
return { STATUS.DEFERRED, reschedule(K, A.member, now + delay), delay, now - since, noticed }
