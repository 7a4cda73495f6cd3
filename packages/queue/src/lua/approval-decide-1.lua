-- uses: core
-- Settles a permission request put to the people of a thread, once: answered (by whom, with which
-- option), timed out, cancelled with its turn, or ended (its turn was gone when the answer came).
-- Only a request still pending is settled; a second click, or an answer racing its time-out, finds it
-- settled and is told how.
-- KEYS: approval (hash). ARGV: state, optionId, by.
-- Returns: {OK} | {BUSY, state, optionId, by} | {NOT_FOUND}
local current = redis.call('HMGET', K.approval, 'state', 'optionId', 'by')
if not current[1] then return { STATUS.NOT_FOUND } end
if current[1] ~= 'pending' then return { STATUS.BUSY, current[1], current[2] or '', current[3] or '' } end
redis.call('HSET', K.approval, 'state', A.state, 'optionId', A.optionId, 'by', A.by, 'settledAt', now_ms())
return { STATUS.OK }
