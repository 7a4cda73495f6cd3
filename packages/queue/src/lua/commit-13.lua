-- Turn boundary: acks the in-flight batch, records it, then drains greedily or releases the thread.
-- The record keeps the batch's messages (bodies included) and the agent's reply, so a fresh agent
-- session can be given the conversation so far; a `cancelled` stop reason records it as cancelled.
-- The turn's reply and notices enter the thread's reply outbox in the same step (delivered afterwards,
-- whatever happens to the agent). With `lockMs` > 0 the committing worker also takes the first of them
-- for delivery when nothing waits ahead of it and no deliverer holds the outbox: it is locked to
-- `owner` and handed back with its posted parts (`firstParts`: a streamed placeholder), which saves
-- the take and the parts read that would follow the commit.
-- `session` (JSON, or ''): the agent session this turn was answered on, recorded as the thread's under
-- this lease's fence, so a fenced-out worker cannot record one and the record costs no call of its own.
-- Returns: {NEXT, batch..., taken} | {IDLE, taken} | {PAUSED, taken} | {YIELD, epoch, taken} |
-- {FENCED}, where `taken` is two elements: the reply JSON and its parts' HGETALL as JSON, or two ''.
-- The state is read once, here; record_batch, ack_batch and continue_after take it from this table.
local st = batch_state(K)
if st.status ~= 'running' or st.owner ~= A.owner or st.fence ~= A.fence then return { STATUS.FENCED } end
local now = now_ms()

-- Steering: what the steer script added to the batch but the running turn never received (the agent
-- refused it, the turn had ended) is not acknowledged; it leads the next batch, unless it was deleted
-- meanwhile (lib.lua's untake).
if A.through ~= '' and id_later(st.read, A.through) then
  untake(K, A.through, st.read)
  st.read = A.through
end

local status = 'complete'
if A.stopReason == 'cancelled' then status = 'cancelled' end
local entries = record_batch(K, A.thread, status, now, history_keep(A),
  { reply = A.reply, stopReason = A.stopReason }, st)
if A.session ~= '' then
  local s = cjson.decode(A.session)
  redis.call('HSET', K.session, 'sessionId', s.sessionId, 'agent', s.agent, 'cwd', s.cwd,
    'generation', s.generation, 'worker', A.owner, 'fence', A.fence, 'savedAt', now)
  redis.call('PEXPIRE', K.session, A.idleTtlMs)
end
local added = enqueue_replies(K, A.member, A.outbound, now)
local taken, parts = '', ''
if added > 0 and tonumber(A.lockMs) > 0 and redis.call('LLEN', K.replies) == added
  and not redis.call('GET', K.replyLock) then
  taken = lock_reply_head(K, A.owner, A.lockMs)
  parts = cjson.encode(redis.call('HGETALL', K.firstParts))
end
ack_batch(K, entries, st)
local result = continue_after(K, A, now, st)
result[#result + 1] = taken
result[#result + 1] = parts
return result
