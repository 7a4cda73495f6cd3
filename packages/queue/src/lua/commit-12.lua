-- Turn boundary: acks the in-flight batch, records it, then drains greedily or releases the thread.
-- The record keeps the batch's messages (bodies included) and the agent's reply, so a fresh agent
-- session can be given the conversation so far; a `cancelled` stop reason records it as cancelled.
-- The turn's reply and notices enter the thread's reply outbox in the same step (delivered afterwards,
-- whatever happens to the agent).
-- Returns: {NEXT, batch...} | {IDLE} | {PAUSED} | {YIELD, epoch} | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.FENCED } end
local now = now_ms()

-- Steering: what the steer script added to the batch but the running turn never received (the agent
-- refused it, the turn had ended) is not acknowledged; it leads the next batch.
if A.through ~= '' then
  local read = redis.call('HGET', K.state, 'read')
  if id_later(read, A.through) then redis.call('HSET', K.state, 'read', A.through) end
end

local status = 'complete'
if A.stopReason == 'cancelled' then status = 'cancelled' end
record_batch(K, A.thread, status, now, history_keep(A), { reply = A.reply, stopReason = A.stopReason })
enqueue_replies(K, A.member, A.outbound, now)
ack_batch(K)
return continue_after(K, A, now)
