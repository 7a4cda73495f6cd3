-- uses: core, dead, replies
-- Reply delivery: the reply `id` was still undeliverable after the retry horizon. It moves to the
-- thread's dead replies (kept for an operator to re-drive) and the replies behind it go on. The failed
-- attempt that gave it up counts among its `attempts`; its `error` is the dead reply's reason, by which
-- the bucket's dead replies are grouped (by its class), within `deadTtlMs`, `deadMaxPerThread` and
-- `deadMaxPerBucket` (lib/dead.lua's dead_add).
-- Returns: {OK} | {FENCED}
if not holds_reply_lock(K, A.owner) then return { STATUS.FENCED } end
local reply = reply_head(K, A.id)
local now = now_ms()
if reply then
  redis.call('LPOP', K.replies)
  reply.attempts = (tonumber(reply.attempts) or 0) + 1
  reply.lastError = A.error
  reply.reason = A.error
  reply.deadAt = now
  dead_add(dead_reply_set(K), A.member, A.id, reply, now, dead_bounds(A))
end
after_reply(K, A.member, now)
redis.call('DEL', K.replyLock)
return { STATUS.OK }
