-- uses: core, thread-life
-- Sweeper: hands the thread of a worker that is gone (its presence expired) to the others without
-- waiting out its lease, but only while that worker still holds it under that fence. A worker that
-- merely froze is fenced out when it wakes: its renewal and its commit find the thread no longer its.
-- Returns: {RING, epoch} | {OK} (the owner or fence changed meanwhile: nothing to do)
local st = redis.call('HMGET', K.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= A.owner or st[3] ~= A.fence then return { STATUS.OK } end
return { STATUS.RING, reschedule(K, A.member, now_ms()) }
