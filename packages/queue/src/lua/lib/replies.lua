-- The thread's reply outbox: committed replies and notices waiting for delivery, and its lock.

-- Appends a turn's outbound messages (a JSON array of {id, payload}) to the thread's reply outbox,
-- in the same script that commits the batch: a reply exists exactly when its batch is committed.
-- The thread becomes due for delivery now unless it already waits for a retry of an older reply,
-- which must go first. Returns how many it appended.
local function enqueue_replies(k, member, outbound, now)
  local items = cjson.decode(outbound)
  for i = 1, #items do
    redis.call('RPUSH', k.replies, cjson.encode({ id = items[i].id, payload = items[i].payload, at = now,
      attempts = 0 }))
  end
  if #items > 0 then redis.call('ZADD', k.replydue, 'NX', now, member) end
  return #items
end

-- Locks the thread's outbox for its deliverer `owner` (or extends the lock) and returns its head.
local function lock_reply_head(k, owner, lock_ms)
  redis.call('SET', k.replyLock, owner, 'PX', lock_ms)
  return redis.call('LINDEX', k.replies, 0)
end

-- The reply deliverer's lock on a thread's outbox: it must still be `owner`'s.
local function holds_reply_lock(k, owner)
  return redis.call('GET', k.replyLock) == owner
end

-- The head of the outbox, when it is the reply `id`.
local function reply_head(k, id)
  local head = redis.call('LINDEX', k.replies, 0)
  if not head then return nil end
  local reply = cjson.decode(head)
  if reply.id ~= id then return nil end
  return reply
end

-- After the head left the outbox: due again at once when more wait, else off the due index.
local function after_reply(k, member, now)
  local left = redis.call('LLEN', k.replies)
  if left > 0 then redis.call('ZADD', k.replydue, now, member)
  else redis.call('ZREM', k.replydue, member) end
  return left
end
