-- uses: core, history
-- What the operators' overview counts in one bucket, in one call: threads running, runnable (due now),
-- scheduled (waiting for a retry's delay), paused, with activity within the idle time, dead letters
-- and dead replies, and their counts by reason class (lib/history.lua's reason_class). The counts by raw
-- reason of items the previous layout kept (`deadreasons`, `deadreplyreasons`) join their class until
-- those items are moved (dead_migrate). A bucket holds a few classes, not one per item: the call's
-- work does not grow with the items.
-- Returns: {OK, now, running, runnable, scheduled, paused, active, dead letters, dead replies,
--           #pairs, class, count, ..., #pairs, class, count, ...}
local now = now_ms()
local reply = { STATUS.OK, now,
  redis.call('ZCARD', K.run),
  redis.call('ZCOUNT', K.sched, '-inf', now),
  redis.call('ZCOUNT', K.sched, '(' .. now, '+inf'),
  redis.call('ZCARD', K.paused),
  redis.call('ZCARD', K.activity),
  redis.call('ZCARD', K.deadindex),
  redis.call('ZCARD', K.deadreplyindex) }
for _, set in ipairs({ { K.deadclasses, K.deadreasons }, { K.deadreplyclasses, K.deadreplyreasons } }) do
  local counts, order = {}, {}
  local function add(class, count)
    if counts[class] == nil then
      counts[class] = 0
      order[#order + 1] = class
    end
    counts[class] = counts[class] + tonumber(count)
  end
  local classes = redis.call('HGETALL', set[1])
  for i = 1, #classes, 2 do add(classes[i], classes[i + 1]) end
  local legacy = redis.call('HGETALL', set[2])
  for i = 1, #legacy, 2 do add(reason_class(legacy[i]), legacy[i + 1]) end
  reply[#reply + 1] = #order
  for _, class in ipairs(order) do
    reply[#reply + 1] = class
    reply[#reply + 1] = counts[class]
  end
end
return reply
