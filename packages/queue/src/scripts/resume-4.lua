-- Lifts a pause; rings the thread when it is idle with messages waiting.
-- Returns: {RING, epoch} | {OK}
redis.call('HSET', K.state, 'paused', '0')
local st = redis.call('HMGET', K.state, 'status', 'acked')
if st[1] ~= false and st[1] ~= 'idle' then return { STATUS.OK } end
if #redis.call('XRANGE', K.inbox, '(' .. (st[2] or '0-0'), '+', 'COUNT', 1) == 0 then return { STATUS.OK } end
return { STATUS.RING, reschedule(K, A.member, now_ms()) }
