-- Graceful hand-back (shutdown, or a turn given up): the thread gets a fresh epoch and doorbell;
-- the in-flight batch stays in flight and is re-delivered first.
-- KEYS: 1 state, 2 run, 3 sched
-- ARGV: 1 thread member, 2 owner, 3 fence
-- Returns: {RING, epoch} | {FENCED}
local k = { state = KEYS[1], run = KEYS[2], sched = KEYS[3] }
local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= ARGV[2] or st[3] ~= ARGV[3] then return { STATUS.FENCED } end
return { STATUS.RING, reschedule(k, ARGV[1], now_ms()) }
