-- uses: core
-- A turn of `thread` ended (or a thread of the line was passed over): its slot of the route is free, and
-- is held for `reserveMs` for the thread that has waited longest, which leaves the line to be woken
-- (docs/adr/0062). Held, so that no thread that never waited takes it first, and so that one woken a
-- moment before its own put-back is done still finds it when its doorbell rings.
-- KEYS: running (zset: thread -> until), waiting (zset: thread -> since). ARGV: thread, reserveMs.
-- Returns: {OK, the thread to wake, or ''}
redis.call('ZREM', K.running, A.thread)
local oldest = redis.call('ZPOPMIN', K.waiting)
if oldest[1] == nil then return { STATUS.OK, '' } end
redis.call('ZADD', K.running, now_ms() + tonumber(A.reserveMs), oldest[1])
return { STATUS.OK, oldest[1] }
