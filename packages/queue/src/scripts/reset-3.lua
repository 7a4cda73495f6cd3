-- Forgets a thread's conversation: drops buffered messages and batch history and bumps the
-- generation, which tells workers to start a fresh agent session. The in-flight batch is left to its
-- turn (cancelling it is the worker's business), so one turn per thread still holds.
-- KEYS: 1 state, 2 inbox, 3 history
-- Returns: {OK, dropped count, generation}
local dropped = drop_buffered({ state = KEYS[1], inbox = KEYS[2] })
redis.call('DEL', KEYS[3])
return { STATUS.OK, dropped, redis.call('HINCRBY', KEYS[1], 'generation', 1) }
