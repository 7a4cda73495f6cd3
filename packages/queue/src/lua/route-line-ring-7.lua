-- uses: core, route-lines
-- A thread's doorbell rings on its route's line (lib/route-lines.lua): it joins the line, or, rung
-- again, keeps its place there with the newer epoch; then the line's oldest are let in while there is
-- room. A thread whose doorbell was let in already is let in again at once with its newer epoch (claim
-- ignores the older one). A ring older than the one the thread holds adds nothing.
-- KEYS: as lib/route-lines.lua, and routes (set: the pool's routes that had a line).
-- ARGV: route, member, epoch, base, ttlMs, toldMs.
-- Returns: {OK, member, epoch, ...}: the doorbells to add to the shared queue now.
local now, ttl = now_ms(), tonumber(A.ttlMs)
forget_old(K, now, ttl)
local held = tonumber(redis.call('HGET', K.epochs, A.member))
if held and tonumber(A.epoch) <= held then return { STATUS.OK } end
redis.call('HSET', K.epochs, A.member, A.epoch)
redis.call('PEXPIRE', K.epochs, LINE_TTL_MS)
if redis.call('ZSCORE', K.admitted, A.member) then
  redis.call('ZADD', K.admitted, now, A.member)
  redis.call('PEXPIRE', K.admitted, ttl)
  return { STATUS.OK, A.member, A.epoch }
end
if not redis.call('ZSCORE', K.line, A.member) then
  -- Scored by arrival, one apart at least, so that doorbells rung in the same millisecond keep their order.
  local tail = redis.call('ZRANGE', K.line, -1, -1, 'WITHSCORES')[2]
  redis.call('ZADD', K.line, math.max(now, (tonumber(tail) or 0) + 1), A.member)
end
redis.call('SADD', K.routes, A.route)
redis.call('PEXPIRE', K.line, LINE_TTL_MS)
return { STATUS.OK, unpack(let_in(K, A.route, tonumber(A.base), ttl, tonumber(A.toldMs), now)) }
