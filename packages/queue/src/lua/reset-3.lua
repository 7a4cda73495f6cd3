-- Forgets a thread's conversation: drops buffered messages and batch history and bumps the
-- generation, which tells workers to start a fresh agent session. The in-flight batch is left to its
-- turn (cancelling it is the worker's business), so one turn per thread still holds. A thread Redis
-- knows nothing of has nothing to forget: no state is created for it (it would never expire).
-- Returns: {OK, dropped count, generation} | {NOT_FOUND}
if redis.call('EXISTS', K.state) == 0 then return { STATUS.NOT_FOUND } end
local dropped = drop_buffered(K)
redis.call('DEL', K.history)
return { STATUS.OK, dropped, redis.call('HINCRBY', K.state, 'generation', 1) }
