-- uses: core
-- Stops dispatching new turns for a thread; a running turn finishes and commits, then the thread idles.
-- Messages keep arriving and wait (enqueue rings no paused thread). The thread joins its bucket's
-- paused index. A thread Redis knows nothing of (never seen, or expired) is not created.
-- Returns: {OK} | {NOT_FOUND}
if redis.call('EXISTS', K.state) == 0 then return { STATUS.NOT_FOUND } end
redis.call('HSET', K.state, 'paused', '1')
redis.call('ZADD', K.paused, 'NX', now_ms(), A.member)
return { STATUS.OK }
