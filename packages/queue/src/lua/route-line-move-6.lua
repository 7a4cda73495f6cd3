-- uses: core, route-lines
-- Doorbells let in left the queue, so the route's line moves up (lib/route-lines.lua): `left`, each
-- `member:epoch`, joined by ',': the one a worker took off the queue to serve, or those the sweeper
-- found gone from it; '' for none, which lets in what a line that stalled has room for. A doorbell
-- counts as gone only for the epoch it was let in with, so an older job of its thread, taken late or
-- again, does not free the place of the newer one. A turn slot held for a doorbell taken is held only
-- `graceMs` more: its turn takes it at once, unless the doorbell found nothing to serve.
-- ARGV: route, left, base, ttlMs, toldMs, graceMs.
-- Returns: {OK, member, epoch, ...}: the doorbells to add to the shared queue now.
local now, ttl = now_ms(), tonumber(A.ttlMs)
for member, epoch in string.gmatch(A.left, '([^,:]+):(%d+)') do
  if redis.call('ZSCORE', K.admitted, member) and redis.call('HGET', K.epochs, member) == epoch then
    forget(K, member)
    -- Held for the doorbell, not yet by a turn (which holds its slot for longer than a let-in lasts).
    local until_ms = tonumber(redis.call('ZSCORE', K.running, member))
    if until_ms and until_ms <= now + ttl then
      redis.call('ZADD', K.running, 'XX', now + tonumber(A.graceMs), member)
    end
  end
end
forget_old(K, now, ttl)
return { STATUS.OK, unpack(let_in(K, A.route, tonumber(A.base), ttl, tonumber(A.toldMs), now)) }
