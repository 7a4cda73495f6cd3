-- Heartbeat: extends the lease only while owner and fence still match.
-- KEYS: 1 state, 2 run
-- ARGV: 1 thread member, 2 owner, 3 fence, 4 lease ms
-- Returns: {OK, lease expiry} | {FENCED}
local st = redis.call('HMGET', KEYS[1], 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= ARGV[2] or st[3] ~= ARGV[3] then return { STATUS.FENCED } end
local lease = now_ms() + tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'lease', lease)
redis.call('ZADD', KEYS[2], lease, ARGV[1])
return { STATUS.OK, lease }
