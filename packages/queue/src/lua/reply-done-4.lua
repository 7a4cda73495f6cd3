-- Reply delivery: the reply `id` reached the platform; it leaves the outbox with the record of its
-- posted parts, and the lock is released (the deliverer takes the next reply, if any, like anyone
-- else would). Left behind, the parts record would outlive an idle thread's other keys.
-- Returns: {OK, replies left} | {FENCED} (the lock expired and another deliverer took over). With
-- none left the deliverer stops here, without a take that would only find the outbox empty.
if not holds_reply_lock(K, A.owner) then return { STATUS.FENCED } end
if reply_head(K, A.id) then redis.call('LPOP', K.replies) end
redis.call('DEL', K.postedParts)
local left = after_reply(K, A.member, now_ms())
redis.call('DEL', K.replyLock)
return { STATUS.OK, left }
