-- uses: core, route-lines
-- A thread's doorbell rings on its route's line (lib/route-lines.lua): it joins the line, or, rung
-- again, keeps its place there with the newer epoch; then the line's oldest are let in while there is
-- room. A thread whose doorbell is in the queue already is let in again at once with its new epoch
-- (claim ignores the older one).
-- KEYS: as lib/route-lines.lua, and routes (set: the pool's routes that had a line).
-- ARGV: route, member, epoch, base, ttlMs.
-- Returns: {OK, member, epoch, ...}: the doorbells to add to the shared queue now.
if redis.call('ZSCORE', K.admitted, A.member) then
  redis.call('ZADD', K.admitted, now_ms(), A.member)
  redis.call('HSET', K.epochs, A.member, A.epoch)
  return { STATUS.OK, A.member, A.epoch }
end
if not redis.call('ZSCORE', K.line, A.member) then
  -- Scored by arrival, one apart at least, so that doorbells rung in the same millisecond keep their order.
  local tail = redis.call('ZRANGE', K.line, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', K.line, math.max(now_ms(), (tonumber(tail) or 0) + 1), A.member)
end
redis.call('HSET', K.epochs, A.member, A.epoch)
redis.call('SADD', K.routes, A.route)
redis.call('PEXPIRE', K.line, LINE_TTL_MS)
redis.call('PEXPIRE', K.epochs, LINE_TTL_MS)
return { STATUS.OK, unpack(let_in(K, A.route, tonumber(A.base), tonumber(A.ttlMs))) }
