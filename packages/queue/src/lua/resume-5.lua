-- uses: core, thread-life
-- Lifts a pause; rings the thread when it is idle with messages waiting. A thread Redis knows nothing
-- of is not created.
-- Returns: {RING, epoch} | {OK} | {NOT_FOUND}
if redis.call('EXISTS', K.state) == 0 then return { STATUS.NOT_FOUND } end
redis.call('HSET', K.state, 'paused', '0')
redis.call('ZREM', K.paused, A.member)
local st = redis.call('HMGET', K.state, 'status', 'acked')
if st[1] ~= false and st[1] ~= 'idle' then return { STATUS.OK } end
if #redis.call('XRANGE', K.inbox, '(' .. (st[2] or '0-0'), '+', 'COUNT', 1) == 0 then return { STATUS.OK } end
return { STATUS.RING, reschedule(K, A.member, now_ms()) }
