-- Puts a dead reply back in the thread's outbox (behind what waits there now) with a fresh horizon.
-- Returns: {OK} | {NOT_FOUND}
local dead = redis.call('LRANGE', K.deadReplies, 0, -1)
for i = 1, #dead do
  local reply = cjson.decode(dead[i])
  if reply.id == A.id then
    redis.call('LREM', K.deadReplies, 1, dead[i])
    if redis.call('LLEN', K.deadReplies) == 0 then redis.call('ZREM', K.deadreplyindex, A.member) end
    local now = now_ms()
    redis.call('RPUSH', K.replies, cjson.encode({ id = reply.id, payload = reply.payload, at = now, attempts = 0 }))
    redis.call('ZADD', K.replydue, 'NX', now, A.member)
    return { STATUS.OK }
  end
end
return { STATUS.NOT_FOUND }
