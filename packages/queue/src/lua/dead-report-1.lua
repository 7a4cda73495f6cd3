-- uses: core
-- What the TTL and the caps evicted from a bucket's dead sets since the last report, by `<kind>:<cause>`
-- (whoever calls it says so in the log, once for every eviction however many workers ask): the totals
-- stay for the metrics, the reported part is remembered beside them.
-- KEYS: evicted.
-- Returns: {OK, field, count, ...} for each field with some unreported
local totals = redis.call('HGETALL', K.evicted)
local reply = { STATUS.OK }
for i = 1, #totals, 2 do
  local field = totals[i]
  if not string.find(field, ':reported$') then
    local total = tonumber(totals[i + 1])
    local reported = tonumber(redis.call('HGET', K.evicted, field .. ':reported')) or 0
    if total > reported then
      reply[#reply + 1] = field
      reply[#reply + 1] = total - reported
      redis.call('HSET', K.evicted, field .. ':reported', total)
    end
  end
end
return reply
