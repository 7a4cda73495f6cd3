-- Stops dispatching new turns for a thread; a running turn finishes and commits, then the thread idles.
-- KEYS: 1 state
-- Returns: {OK}
redis.call('HSET', KEYS[1], 'paused', '1')
return { STATUS.OK }
