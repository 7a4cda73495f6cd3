-- uses: core, thread-life, history, replies, receipts
-- Turn boundary: acks the in-flight batch, records it, then drains greedily or releases the thread.
-- The record keeps the batch's messages (bodies included) and the agent's reply, so a fresh agent
-- session can be given the conversation so far; a `cancelled` stop reason records it as cancelled.
-- One script for all of it because each part must happen with the others or not at all:
--   * the holder's check first: a fenced-out worker changes nothing;
--   * the steer's untaken messages go back before the ack, or they would be acknowledged unseen;
--   * the record, the replies and the ack together: a batch is acknowledged exactly when its history
--     record and its replies exist (the replies are delivered afterwards, whatever happens to the agent);
--   * `session` (JSON, or ''): the agent session this turn was answered on, recorded under this lease's
--     fence, so a fenced-out worker cannot record one;
--   * `usage` (JSON, or ''): what the turn spent, kept in the record;
--   * release or the next batch in the same step as the inbox's emptiness check, or a message arriving
--     in between would wait for the sweeper (a lost wakeup, ADR 0002).
-- Delivering the replies is not part of it: the worker takes them from the outbox (reply-take-3.lua).
-- Returns: {NEXT, batch...} | {IDLE} | {PAUSED} | {YIELD, epoch} | {FENCED}.
local st = batch_state(K)
if st.status ~= 'running' or st.owner ~= A.owner or st.fence ~= A.fence then return { STATUS.FENCED } end
local now = now_ms()

-- Steering: what the steer script added to the batch but the running turn never received (the agent
-- refused it, the turn had ended) is not acknowledged; it leads the next batch, unless it was deleted
-- meanwhile (lib/receipts.lua's untake).
if A.through ~= '' and id_later(st.read, A.through) then
  untake(K, A.through, st.read)
  st = batch_state(K)
end

local status = 'complete'
if A.stopReason == 'cancelled' then status = 'cancelled' end
local outcome = { reply = A.reply, stopReason = A.stopReason }
if A.usage ~= '' then outcome.usage = cjson.decode(A.usage) end
local entries = record_batch(K, A.thread, status, now, history_keep(A), outcome, st)
if A.session ~= '' then
  local s = cjson.decode(A.session)
  redis.call('HSET', K.session, 'sessionId', s.sessionId, 'agent', s.agent, 'cwd', s.cwd,
    'generation', s.generation, 'worker', A.owner, 'fence', A.fence, 'savedAt', now)
  redis.call('PEXPIRE', K.session, A.idleTtlMs)
end
enqueue_replies(K, A.member, A.outbound, now)
ack_batch(K, entries)
return continue_after(K, A, now)
