-- uses: core, replies
-- Reply delivery: the reply `id` reached the platform; it leaves the outbox with the record of its
-- posted parts (left behind, the record would outlive an idle thread's other keys). `part` and
-- `messageId`, when given, are the last part the attempt posted: its record and the done are one call,
-- and a deliverer that lost the lock meanwhile still records it, so whoever holds the outbox now edits
-- that part rather than posting it again. With `lockMs` > 0 and replies left, the lock is kept and the
-- next reply handed over (a take in the same call); otherwise the lock is released.
-- Returns: {OK, replies left[, next reply JSON]} | {FENCED} (the lock expired and another deliverer
-- took over). With none left the deliverer stops here, without a take that would only find the outbox
-- empty.
if not holds_reply_lock(K, A.owner) then
  if A.part ~= '' then
    redis.call('HSET', K.postedParts, A.part, A.messageId)
    redis.call('PEXPIRE', K.postedParts, A.retentionMs)
  end
  return { STATUS.FENCED }
end
if reply_head(K, A.id) then redis.call('LPOP', K.replies) end
redis.call('DEL', K.postedParts)
local left = after_reply(K, A.member, now_ms())
if left > 0 and tonumber(A.lockMs) > 0 then
  return { STATUS.OK, left, lock_reply_head(K, A.owner, A.lockMs) }
end
redis.call('DEL', K.replyLock)
return { STATUS.OK, left }
