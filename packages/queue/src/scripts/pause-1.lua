-- Stops dispatching new turns for a thread; a running turn finishes and commits, then the thread idles.
-- Returns: {OK}
redis.call('HSET', K.state, 'paused', '1')
return { STATUS.OK }
