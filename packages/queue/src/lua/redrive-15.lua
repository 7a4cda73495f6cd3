-- uses: core, thread-life, dead
-- Re-drives one dead-lettered batch: its messages are appended to the inbox again (in their original
-- order, behind whatever is already waiting) and the thread is rung when idle. Its keys may have
-- expired while it was idle (dead letters do not): they live again as for a new message. The dead
-- letter is found by its item, whatever the bucket holds (lib/dead.lua's dead_take).
-- Returns: {RING, epoch, count} | {QUEUED, count} | {NOT_FOUND}
local record = dead_take(dead_letter_set(K), A.member, A.batchId)
if not record then return { STATUS.NOT_FOUND } end
local now = now_ms()
keep_alive(K)
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
