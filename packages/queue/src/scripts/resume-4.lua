-- Lifts a pause; rings the thread when it is idle with messages waiting.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched
-- ARGV: 1 thread member
-- Returns: {RING, epoch} | {OK}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4] }
redis.call('HSET', k.state, 'paused', '0')
local st = redis.call('HMGET', k.state, 'status', 'acked')
if st[1] ~= false and st[1] ~= 'idle' then return { STATUS.OK } end
if #redis.call('XRANGE', k.inbox, '(' .. (st[2] or '0-0'), '+', 'COUNT', 1) == 0 then return { STATUS.OK } end
return { STATUS.RING, reschedule(k, ARGV[1], now_ms()) }
