-- Turn boundary: acks the in-flight batch, records it, then drains greedily or releases the thread.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 history, 6 batchseq
-- ARGV: 1 thread member, 2 owner, 3 fence, 4 lease ms, 5 max messages, 6 max tokens, 7 bucket,
--       8 yield after turns, 9 history limit, 10 thread id
-- Returns: {NEXT, fence, batch id, type, deliveries, lease, generation, n, entries...} | {IDLE} | {PAUSED}
--        | {YIELD, epoch} | {FENCED}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4], history = KEYS[5],
  batchseq = KEYS[6] }
local thread, owner, fence = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence', 'acked', 'read', 'batch', 'btype',
  'claimed', 'deliveries')
if st[1] ~= 'running' or st[2] ~= owner or st[3] ~= fence then return { STATUS.FENCED } end
local now = now_ms()

local entries = redis.call('XRANGE', k.inbox, '(' .. st[4], st[5])
local messages = {}
for i = 1, #entries do
  messages[i] = { sid = entries[i][1], seq = tonumber(entry_field(entries[i], 1)), id = entry_field(entries[i], 2) }
end
redis.call('LPUSH', k.history, cjson.encode({ batchId = st[6], thread = ARGV[10], fence = tonumber(fence),
  type = st[7], claimedAt = tonumber(st[8]), committedAt = now, deliveries = tonumber(st[9]),
  messages = messages }))
redis.call('LTRIM', k.history, 0, tonumber(ARGV[9]) - 1)
ack_batch(k)

return continue_after(k, thread, owner, tonumber(fence), tonumber(ARGV[4]), tonumber(ARGV[7]), now,
  tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8]))
