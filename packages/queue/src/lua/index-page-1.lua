-- uses: core
-- One page of one of a bucket's indexes (threads by state, dead letters, dead replies) for the admin
-- API: members in score order (`order` asc or desc) within [`min`, `max`] (Redis score bounds, where
-- `now` and `(now` stand for Redis's clock), after the cursor `afterScore`, `afterMember` ('' on the
-- first page). Members sharing a score are in byte order, as Redis keeps them, so the cursor's own
-- score is resumed after its member. It reads at most `limit` members plus those tied with the cursor:
-- the work of a page does not grow with the index.
-- Returns: {OK, now, member, score, member, score, ...}
local now = now_ms()
local function bound(b)
  if b == 'now' then return string.format('%d', now) end
  if b == '(now' then return string.format('(%d', now) end
  return b
end
-- Byte order, as Redis orders members (Lua's own comparison follows the server's locale).
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local lo, hi = bound(A.min), bound(A.max)
local limit = tonumber(A.limit)
local desc = A.order == 'desc'
local after = tonumber(A.afterScore)
local ties = 0
if after then
  local at = A.afterScore
  ties = redis.call('ZCOUNT', K.index, at, at)
  if desc then hi = at else lo = at end
end
local range
if desc then
  range = redis.call('ZRANGE', K.index, hi, lo, 'BYSCORE', 'REV', 'LIMIT', 0, limit + ties, 'WITHSCORES')
else
  range = redis.call('ZRANGE', K.index, lo, hi, 'BYSCORE', 'LIMIT', 0, limit + ties, 'WITHSCORES')
end
local reply = { STATUS.OK, now }
local taken = 0
for i = 1, #range, 2 do
  local member, score = range[i], range[i + 1]
  local passed = false
  if after and tonumber(score) == after then
    if desc then passed = not before(member, A.afterMember) else passed = not before(A.afterMember, member) end
  end
  if not passed and taken < limit then
    reply[#reply + 1] = member
    reply[#reply + 1] = score
    taken = taken + 1
  end
end
return reply
