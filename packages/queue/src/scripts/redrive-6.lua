-- Re-drives one dead-lettered batch: its messages are appended to the inbox again (in their original
-- order, behind whatever is already waiting) and the thread is rung when idle.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 dead, 6 deadindex
-- ARGV: 1 thread member, 2 batch id
-- Returns: {RING, epoch, count} | {QUEUED, count} | {NOT_FOUND}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4] }
local records = redis.call('LRANGE', KEYS[5], 0, -1)
for i = 1, #records do
  local record = cjson.decode(records[i])
  if record.batchId == ARGV[2] then
    redis.call('LREM', KEYS[5], 1, records[i])
    if redis.call('LLEN', KEYS[5]) == 0 then redis.call('ZREM', KEYS[6], ARGV[1]) end
    local now = now_ms()
    for _, m in ipairs(record.messages) do
      local seq = redis.call('HINCRBY', k.state, 'seq', 1)
      redis.call('XADD', k.inbox, '*', 'seq', seq, 'id', m.id, 'tok', m.tok, 'org', m.origin, 'at', now,
        'body', m.body, 'lane', m.lane or '')
    end
    local st = redis.call('HMGET', k.state, 'status', 'paused')
    if (st[1] == false or st[1] == 'idle') and st[2] ~= '1' then
      return { STATUS.RING, reschedule(k, ARGV[1], now), #record.messages }
    end
    return { STATUS.QUEUED, #record.messages }
  end
end
return { STATUS.NOT_FOUND }
