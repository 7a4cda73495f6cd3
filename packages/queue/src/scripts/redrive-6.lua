-- Re-drives one dead-lettered batch: its messages are appended to the inbox again (in their original
-- order, behind whatever is already waiting) and the thread is rung when idle.
-- Returns: {RING, epoch, count} | {QUEUED, count} | {NOT_FOUND}
local records = redis.call('LRANGE', K.dead, 0, -1)
for i = 1, #records do
  local record = cjson.decode(records[i])
  if record.batchId == A.batchId then
    redis.call('LREM', K.dead, 1, records[i])
    if redis.call('LLEN', K.dead) == 0 then redis.call('ZREM', K.deadindex, A.member) end
    local now = now_ms()
    for _, m in ipairs(record.messages) do
      local seq = redis.call('HINCRBY', K.state, 'seq', 1)
      redis.call('XADD', K.inbox, '*', 'seq', seq, 'id', m.id, 'tok', m.tok, 'org', m.origin, 'at', now,
        'body', m.body, 'lane', m.lane or '')
    end
    local st = redis.call('HMGET', K.state, 'status', 'paused')
    if (st[1] == false or st[1] == 'idle') and st[2] ~= '1' then
      return { STATUS.RING, reschedule(K, A.member, now), #record.messages }
    end
    return { STATUS.QUEUED, #record.messages }
  end
end
return { STATUS.NOT_FOUND }
