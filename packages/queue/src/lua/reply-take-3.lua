-- uses: core, replies
-- Reply delivery: locks the thread's outbox for `owner` (or extends its lock) and hands over the
-- oldest reply. One deliverer per thread at a time is what keeps replies in commit order and each
-- part posted once.
-- Returns: {OK, reply JSON} | {BUSY} (another deliverer holds it) | {EMPTY} (nothing to deliver)
local holder = redis.call('GET', K.replyLock)
if holder and holder ~= A.owner then return { STATUS.BUSY } end
local head = redis.call('LINDEX', K.replies, 0)
if not head then
  redis.call('ZREM', K.replydue, A.member)
  if holder then redis.call('DEL', K.replyLock) end
  return { STATUS.EMPTY }
end
return { STATUS.OK, lock_reply_head(K, A.owner, A.lockMs) }
