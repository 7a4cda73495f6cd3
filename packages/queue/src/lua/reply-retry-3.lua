-- uses: core, replies
-- Reply delivery: the reply `id` could not be delivered; it stays at the head, and the thread is due
-- again after `delayMs` (replies behind it wait: order per thread). The lock is released.
-- Returns: {OK} | {FENCED}
if not holds_reply_lock(K, A.owner) then return { STATUS.FENCED } end
local reply = reply_head(K, A.id)
if reply then
  reply.attempts = (tonumber(reply.attempts) or 0) + 1
  reply.lastError = A.error
  redis.call('LSET', K.replies, 0, cjson.encode(reply))
end
redis.call('ZADD', K.replydue, now_ms() + tonumber(A.delayMs), A.member)
redis.call('DEL', K.replyLock)
return { STATUS.OK }
