-- uses: core
-- A turn of `thread` on `route` asks for one of the route's turn slots across the fleet (docs/adr/0062).
-- A route without a limit always has one, and nothing is kept. A slot is held until it is freed or
-- `ttlMs` has passed, so the slots of a worker that died come back in time. A thread that finds none
-- waits in the route's line, oldest first, to be woken as a slot is freed.
-- KEYS: limits (hash: route -> turns), running (zset: thread -> until), waiting (zset: thread -> since).
-- ARGV: route, thread, ttlMs.
-- Returns: {OK, limit or 0} | {BUSY, limit, threads waiting}
local limit = tonumber(redis.call('HGET', K.limits, A.route) or '0') or 0
if limit < 1 then return { STATUS.OK, 0 } end
local now = now_ms()
local ttl = tonumber(A.ttlMs)
redis.call('ZREMRANGEBYSCORE', K.running, '-inf', now)
if redis.call('ZSCORE', K.running, A.thread) or redis.call('ZCARD', K.running) < limit then
  redis.call('ZADD', K.running, now + ttl, A.thread)
  redis.call('PEXPIRE', K.running, ttl)
  redis.call('ZREM', K.waiting, A.thread)
  return { STATUS.OK, limit }
end
redis.call('ZADD', K.waiting, 'NX', now, A.thread)
redis.call('PEXPIRE', K.waiting, 24 * 3600 * 1000)
return { STATUS.BUSY, limit, redis.call('ZCARD', K.waiting) }
