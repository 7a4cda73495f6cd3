-- uses: core
-- A turn of `thread` ended: its slot of the route is free, and the thread that has waited longest for
-- one leaves the line, to be woken (docs/adr/0062).
-- KEYS: running (zset: thread -> until), waiting (zset: thread -> since). ARGV: thread.
-- Returns: {OK, the thread to wake, or ''}
redis.call('ZREM', K.running, A.thread)
local oldest = redis.call('ZPOPMIN', K.waiting)
return { STATUS.OK, oldest[1] or '' }
