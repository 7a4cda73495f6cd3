-- uses: core
-- Paces writes to one place (a channel, a bot) across the fleet by the generic cell rate algorithm.
-- K.tat holds the theoretical arrival time of the next write: each write reserves the next slot and
-- goes when it comes, so writers from every worker are served in the order they asked; up to `burst`
-- go at once after a quiet spell. A draft (`draft` = 1) takes a slot only when one is free now.
-- KEYS: tat (string: ms on Redis's clock). ARGV: intervalMs, burst, draft.
-- Returns: {OK, waitMs} (a slot is reserved; go after waitMs) | {BUSY, waitMs} (a draft: no slot now)
local now = now_ms()
local interval = tonumber(A.intervalMs)
local tat = math.max(tonumber(redis.call('GET', K.tat) or now), now)
local at = math.max(now, tat - interval * (tonumber(A.burst) - 1))
if A.draft == '1' and at > now then return { STATUS.BUSY, at - now } end
redis.call('SET', K.tat, tat + interval, 'PX', tat + interval - now + 1000)
return { STATUS.OK, at - now }
