-- Accepts one message into a thread's inbox; rings the thread when it was idle.
-- KEYS: 1 state, 2 inbox, 3 sched, 4 dedup (idempotency key of this message), 5 gate
-- ARGV: 1 thread member, 2 message id, 3 tokens, 4 origin, 5 body, 6 backlog cap, 7 dedup ttl ms, 8 lane,
--       9 gate ttl ms
-- The gate hash (read by ingress's gates) records, with the acceptance itself, that we are involved in
-- the thread and how many agent messages came in a row (a user message ends the run: loop guard).
-- Returns: {RING, stream id, seq, epoch, last owner or ''} | {QUEUED, stream id, seq}
--        | {DUPLICATE, stream id} | {BACKLOG_FULL, backlog}
-- The last owner is the worker that ran the thread's latest turn: the likely holder of its live agent
-- session, which the doorbell prefers (session affinity).
local k = { state = KEYS[1], inbox = KEYS[2], sched = KEYS[3] }
local seen = redis.call('GET', KEYS[4])
if seen then return { STATUS.DUPLICATE, seen } end
local backlog = redis.call('XLEN', k.inbox)
if backlog >= tonumber(ARGV[6]) then return { STATUS.BACKLOG_FULL, backlog } end

local seq = redis.call('HINCRBY', k.state, 'seq', 1)
local now = now_ms()
local sid = redis.call('XADD', k.inbox, '*', 'seq', seq, 'id', ARGV[2], 'tok', ARGV[3], 'org', ARGV[4],
  'at', now, 'body', ARGV[5], 'lane', ARGV[8])
redis.call('SET', KEYS[4], sid, 'PX', ARGV[7])
redis.call('HSET', KEYS[5], 'involved', '1')
if ARGV[4] == 'agent' then redis.call('HINCRBY', KEYS[5], 'botTurns', 1)
else redis.call('HSET', KEYS[5], 'botTurns', '0') end
redis.call('PEXPIRE', KEYS[5], ARGV[9])

local st = redis.call('HMGET', k.state, 'status', 'paused', 'acked', 'owner')
if not st[3] then redis.call('HSET', k.state, 'acked', '0-0', 'read', '0-0') end
if (st[1] == false or st[1] == 'idle') and st[2] ~= '1' then
  local epoch = redis.call('HINCRBY', k.state, 'epoch', 1)
  redis.call('HSET', k.state, 'status', 'scheduled', 'turns', 0)
  redis.call('ZADD', k.sched, now, ARGV[1])
  return { STATUS.RING, sid, seq, epoch, st[4] or '' }
end
return { STATUS.QUEUED, sid, seq }
