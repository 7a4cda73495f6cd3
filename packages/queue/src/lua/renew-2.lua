-- uses: core
-- Heartbeat: extends the lease only while owner and fence still match.
-- Returns: {OK, lease expiry} | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.FENCED } end
local lease = now_ms() + tonumber(A.leaseMs)
redis.call('HSET', K.state, 'lease', lease)
redis.call('ZADD', K.run, lease, A.member)
return { STATUS.OK, lease }
