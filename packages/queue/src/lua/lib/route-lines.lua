-- Weighted fair dispatch between the routes of a pool (docs/adr/0063). A route's doorbells enter the
-- pool's shared queue at most `quantum` at a time (its weight times `base`); the others wait in the
-- route's line, oldest first, and enter one by one as the route's doorbells are taken off the queue.
-- A busy route thus has only its quantum ahead of a quiet route's doorbell, however long its line.
-- A doorbell let in that is no longer in the queue without having been taken as such (lost on its way,
-- or taken by a worker of a version before lines) holds its place until the sweeper finds it gone
-- (route-line-move with it), or for `ttl_ms` at most.
-- A route with a limit on concurrent turns (docs/adr/0062, 0064) lets a doorbell in only with one of
-- its turn slots, held for its thread until its turn takes it: while every slot is taken its line
-- waits, rather than each doorbell being taken and put back. A doorbell that has waited `told_ms` goes
-- in anyway, to be put back with a notice to its thread.
-- KEYS: weights (hash: route -> weight), admitted (zset: member -> when let in),
--       line (zset: member -> when it joined, in arrival order),
--       epochs (hash: member -> the epoch it is rung with, while in the line or let in),
--       limits (hash: route -> turns at once), running (zset: member -> until when its slot is held).
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

-- Whether the line's head `member`, waiting since `since`, may go in as far as the route's turn limit
-- goes; if so, a slot is held for it for `ttl_ms`, unless its thread holds one already.
local function turn_slot_for(K, limit, member, since, now, ttl_ms, told_ms)
  if limit < 1 or redis.call('ZSCORE', K.running, member) then return true end
  if redis.call('ZCARD', K.running) < limit then
    redis.call('ZADD', K.running, now + ttl_ms, member)
    -- Never shorter than the turns' own slots in the same key (turn-slot-take-3.lua).
    redis.call('PEXPIRE', K.running, LINE_TTL_MS)
    return true
  end
  return now - since >= told_ms
end

-- Lets in the line's oldest doorbells while the route has room; returns them as member, epoch pairs,
-- for the caller to add to the shared queue.
local function let_in(K, route, base, ttl_ms, told_ms, now)
  local weight = tonumber(redis.call('HGET', K.weights, route) or '1') or 1
  local limit = tonumber(redis.call('HGET', K.limits, route) or '0') or 0
  if limit > 0 then redis.call('ZREMRANGEBYSCORE', K.running, '-inf', now) end
  local room = weight * base - redis.call('ZCARD', K.admitted)
  local due = {}
  while room > 0 do
    local head = redis.call('ZRANGE', K.line, 0, 0, 'WITHSCORES')
    if head[1] == nil or not turn_slot_for(K, limit, head[1], tonumber(head[2]), now, ttl_ms, told_ms) then
      break
    end
    redis.call('ZREM', K.line, head[1])
    redis.call('ZADD', K.admitted, now, head[1])
    due[#due + 1] = head[1]
    due[#due + 1] = redis.call('HGET', K.epochs, head[1])
    room = room - 1
  end
  if #due > 0 then redis.call('PEXPIRE', K.admitted, ttl_ms) end
  return due
end
