-- Reply delivery: the reply `id` reached the platform; it leaves the outbox. The lock stays with its
-- owner, which goes on to the next reply.
-- Returns: {OK} | {FENCED} (the lock expired and another deliverer took over)
if not holds_reply_lock(K, A.owner) then return { STATUS.FENCED } end
if reply_head(K, A.id) then redis.call('LPOP', K.replies) end
after_reply(K, A.member, now_ms())
return { STATUS.OK }
