-- uses: core, thread-life
-- Graceful hand-back (shutdown, or a turn given up): the thread gets a fresh epoch and doorbell;
-- the in-flight batch stays in flight and is re-delivered first.
-- Returns: {RING, epoch} | {FENCED}
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.FENCED } end
return { STATUS.RING, reschedule(K, A.member, now_ms()) }
