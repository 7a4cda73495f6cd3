-- uses: core, route-lines
-- Doorbells let in left the queue, so the route's line moves up (lib/route-lines.lua): `taken`, the
-- members a worker took off the queue to serve (one), or that the sweeper found gone from it (any
-- number), joined by ','; '' for none, which lets in what a line that stalled has room for.
-- ARGV: route, taken, base, ttlMs.
-- Returns: {OK, member, epoch, ...}: the doorbells to add to the shared queue now.
for member in string.gmatch(A.taken, '[^,]+') do
  if redis.call('ZREM', K.admitted, member) == 1 and not redis.call('ZSCORE', K.line, member) then
    redis.call('HDEL', K.epochs, member)
  end
end
return { STATUS.OK, unpack(let_in(K, A.route, tonumber(A.base), tonumber(A.ttlMs))) }
