-- Weighted fair dispatch between the routes of a pool (docs/adr/0063). A route's doorbells enter the
-- pool's shared queue at most `quantum` at a time (its weight times `base`); the others wait in the
-- route's line, oldest first, and enter one by one as the route's doorbells are taken off the queue.
-- A busy route thus has only its quantum ahead of a quiet route's doorbell, however long its line.
-- A doorbell let in that is no longer in the queue without having been taken as such (lost on its way,
-- or taken by a worker of a version before lines) holds its place until the sweeper finds it gone
-- (route-line-move with it), or for `ttl_ms` at most.
-- KEYS: weights (hash: route -> weight), admitted (zset: member -> when let in),
--       line (zset: member -> when it joined, in arrival order),
--       epochs (hash: member -> the epoch it is rung with, while in the line or let in).
-- A member is in the line or let in, never both.

local LINE_TTL_MS = 24 * 3600 * 1000

-- The let-in doorbell of `member` no longer counts against its route.
local function forget(K, member)
  if redis.call('ZREM', K.admitted, member) == 1 and not redis.call('ZSCORE', K.line, member) then
    redis.call('HDEL', K.epochs, member)
  end
end

-- Forgets the doorbells let in more than `ttl_ms` ago.
local function forget_old(K, now, ttl_ms)
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', K.admitted, '-inf', now - ttl_ms)) do
    forget(K, member)
  end
end

-- Lets in the line's oldest doorbells while the route has room; returns them as member, epoch pairs,
-- for the caller to add to the shared queue.
local function let_in(K, route, base, ttl_ms, now)
  local weight = tonumber(redis.call('HGET', K.weights, route) or '1') or 1
  local room = weight * base - redis.call('ZCARD', K.admitted)
  local due = {}
  while room > 0 do
    local head = redis.call('ZPOPMIN', K.line)
    if head[1] == nil then break end
    redis.call('ZADD', K.admitted, now, head[1])
    due[#due + 1] = head[1]
    due[#due + 1] = redis.call('HGET', K.epochs, head[1])
    room = room - 1
  end
  if #due > 0 then redis.call('PEXPIRE', K.admitted, ttl_ms) end
  return due
end
