-- uses: core, dead
-- Puts a dead reply back in the thread's outbox (behind what waits there now) with a fresh horizon.
-- Returns: {OK} | {NOT_FOUND}
local reply = dead_take(dead_reply_set(K), A.member, A.id)
if not reply then return { STATUS.NOT_FOUND } end
local now = now_ms()
redis.call('RPUSH', K.replies, cjson.encode({ id = reply.id, payload = reply.payload, at = now, attempts = 0 }))
redis.call('ZADD', K.replydue, 'NX', now, A.member)
return { STATUS.OK }
