-- Reply delivery: the reply `id` was still undeliverable after the retry horizon. It moves to the
-- thread's dead replies (kept for an operator to re-drive) and the replies behind it go on.
-- Returns: {OK} | {FENCED}
if not holds_reply_lock(K, A.owner) then return { STATUS.FENCED } end
local reply = reply_head(K, A.id)
local now = now_ms()
if reply then
  redis.call('LPOP', K.replies)
  reply.reason = A.reason
  reply.deadAt = now
  redis.call('RPUSH', K.deadReplies, cjson.encode(reply))
  redis.call('ZADD', K.deadreplyindex, now, A.member)
end
after_reply(K, A.member, now)
redis.call('DEL', K.replyLock)
return { STATUS.OK }
