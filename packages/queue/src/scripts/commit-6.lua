-- Turn boundary: acks the in-flight batch, records it, then drains greedily or releases the thread.
-- The record keeps the batch's messages (bodies included) and the agent's reply, so a fresh agent
-- session can be given the conversation so far; a `cancelled` stop reason records it as cancelled.
-- KEYS: 1 state, 2 inbox, 3 run, 4 sched, 5 history, 6 batchseq
-- ARGV: 1 thread member, 2 owner, 3 fence, 4 lease ms, 5 max messages, 6 max tokens, 7 lanes, 8 bucket,
--       9 yield after turns, 10 history max records, 11 history max age ms, 12 thread id,
--       13 reply text, 14 stop reason
-- Returns: {NEXT, fence, batch id, type, deliveries, lease, generation, n, entries...} | {IDLE} | {PAUSED}
--        | {YIELD, epoch} | {FENCED}
local k = { state = KEYS[1], inbox = KEYS[2], run = KEYS[3], sched = KEYS[4], history = KEYS[5],
  batchseq = KEYS[6] }
local thread, owner, fence = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence')
if st[1] ~= 'running' or st[2] ~= owner or st[3] ~= fence then return { STATUS.FENCED } end
local now = now_ms()

local status = 'complete'
if ARGV[14] == 'cancelled' then status = 'cancelled' end
record_batch(k, ARGV[12], status, now, history_keep(ARGV[10], ARGV[11]),
  { reply = ARGV[13], stopReason = ARGV[14] })
ack_batch(k)

return continue_after(k, thread, owner, tonumber(fence), tonumber(ARGV[4]), tonumber(ARGV[8]), now,
  batch_caps(ARGV[5], ARGV[6], ARGV[7]), tonumber(ARGV[9]))
