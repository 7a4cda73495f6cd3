-- uses: core
-- Completes an operator action of the audit log: its outcome (JSON: ok | failed | partial, with its
-- result) is kept under the entry's `id`, written before the action was done, with when it ended (on
-- Redis's clock, as the entry's own time). Outcomes are kept for the latest `keep` actions to end, the
-- oldest dropped first: the log itself keeps fewer entries than that.
-- KEYS: outcomes (hash: entry id -> outcome), order (list: entry ids in the order they ended).
-- Returns: {OK}
local outcome = cjson.decode(A.outcome)
outcome.completedAt = now_ms()
redis.call('HSET', K.outcomes, A.id, cjson.encode(outcome))
redis.call('RPUSH', K.order, A.id)
local over = redis.call('LLEN', K.order) - tonumber(A.keep)
if over > 0 then redis.call('HDEL', K.outcomes, unpack(redis.call('LPOP', K.order, over))) end
return { STATUS.OK }
