-- uses: batches, thread-life
-- The history stream: one record per batch that ended, with its messages, and why batches failed.

-- The messages of inbox entries as kept in history records and dead letters, bodies included.
local function message_records(entries)
  local messages = {}
  for i = 1, #entries do
    local e = entries[i]
    messages[i] = { sid = e[1], seq = tonumber(entry_field(e, 1)), id = entry_field(e, 2),
      tok = tonumber(entry_field(e, 3)), origin = entry_field(e, 4), at = tonumber(entry_field(e, 5)),
      body = entry_field(e, 6), lane = entry_lane(e) }
  end
  return messages
end

-- Adds `by` to the count of `reason` in a bucket's reason counts (dead letters, dead replies); a reason
-- counted down to nothing leaves the hash.
local function count_reason(reasons, reason, by)
  if reason == nil then return end
  if redis.call('HINCRBY', reasons, reason, by) <= 0 then redis.call('HDEL', reasons, reason) end
end

-- Dead letters and dead replies (docs/adr/0043-dead-letters-bounded-and-grouped-by-class.md) ---------

-- A reason's class: what stays of it once its variable parts are out, so that one cause makes one group
-- however many pids, ids and paths it names. Only its first line counts (what follows is a stderr tail);
-- a word holding a digit becomes <n> (a number) or <id>, a path <path>, a URL <url>; 200 bytes at most.
local function reason_class(reason)
  local line = string.sub(string.match(reason or '', '^[^\n]*'), 1, 1000)
  local class = string.gsub(line, '%S+', function(word)
    local lead, core, trail = string.match(word, '^([%(%[{<"\']*)(.-)([%)%]}>"\'.,;:!?]*)$')
    local shape
    if string.find(core, '^%a[%w+.-]*://') then
      shape = '<url>'
    elseif string.find(core, '^~?%.?%.?/') then
      shape = '<path>'
    elseif string.find(core, '^[-+]?%d[%d,]*%.?%d*$') then
      shape = '<n>'
    elseif string.find(core, '%d') then
      shape = '<id>'
    else
      return word
    end
    return lead .. shape .. trail
  end)
  return string.sub(string.match(class, '^(.-)[%s:]*$'), 1, 200)
end

-- Retention of the history stream: max records, max age in ms (it expires with the thread: expire_idle).
local function history_keep(a)
  return { count = tonumber(a.historyMax), age_ms = tonumber(a.historyMaxAgeMs) }
end

-- Appends a record of the in-flight batch to the thread's history stream, then trims it by count and
-- by age (stream ids are Redis-clock milliseconds, so MINID is an age cut). `status` says how the
-- batch ended: complete | cancelled (committed) | failed (will be retried) | dead (dead-lettered).
-- Returns the batch's entries. Must run before ack_batch, which drops them from the inbox.
-- `state`: the caller's batch_state snapshot, or nil to read it.
local function record_batch(k, thread_id, status, now, keep, extra, state)
  local st = state or batch_state(k)
  local entries = redis.call('XRANGE', k.inbox, '(' .. st.acked, st.read)
  if #entries == 0 then return entries end
  local record = { batchId = st.batch, thread = thread_id, fence = tonumber(st.fence), type = st.btype,
    status = status, claimedAt = tonumber(st.claimed), endedAt = now,
    deliveries = tonumber(st.deliveries) or 0, messages = message_records(entries) }
  for key, value in pairs(extra) do record[key] = value end
  redis.call('XADD', k.history, '*', 'record', cjson.encode(record))
  redis.call('XTRIM', k.history, 'MAXLEN', keep.count)
  redis.call('XTRIM', k.history, 'MINID', string.format('%d', math.max(0, now - keep.age_ms)))
  return entries
end
