-- uses: core, thread-life, dedup, receipts
-- Accepts one message into a thread's inbox; rings the thread when it was idle.
-- The gate hash (read by ingress's gates) records, with the acceptance itself, that we are involved in
-- the thread and how many agent messages came in a row (a user message ends the run: loop guard).
-- The gate's conditions on that state are checked here too (`requireInvolved`: refuse unless we took
-- part in the thread; `maxBotTurns`, when not '': refuse once that many agent messages came in a row),
-- so ingress needs one round trip per message. A retry of an accepted message is a duplicate first,
-- whatever the gate now says; a refusal in a conversation that is ours (the loop guard, the backlog cap)
-- is kept as the message's receipt.
-- Every acceptance is the thread's latest activity, for the operators' list of threads (`activity`).
-- Returns: {RING, stream id, seq, epoch, last owner or ''} | {QUEUED, stream id, seq}
--        | {DUPLICATE, stream id} | {BACKLOG_FULL, backlog} | {GATED, refusal}
-- RING: the thread went from idle to scheduled under a new epoch, and the caller rings its doorbell
-- (wake/ring.ts), preferring the last owner: the worker that ran the thread's latest turn, the likely
-- holder of its live agent session (session affinity, docs/adr/0051).
local now = now_ms()
-- A thread none of whose keys exist (a new one, or one whose keys all expired) has no dedup window, gate,
-- backlog, receipts or state to read: its first message skips those reads.
local ttl = redis.call('PTTL', K.state)
local fresh = ttl == -2
  and redis.call('EXISTS', K.gate, K.inbox, K.history, K.receipts, K.receiptOrder, K.dedupUntil) == 0
local seen = not fresh and dedup_seen(K, A.dedupMember, now)
if seen then return { STATUS.DUPLICATE, seen } end
local gate = fresh and {} or redis.call('HMGET', K.gate, 'involved', 'botTurns')
if A.requireInvolved == '1' and gate[1] ~= '1' then return { STATUS.GATED, 'not-addressed' } end
if A.maxBotTurns ~= '' and (tonumber(gate[2]) or 0) >= tonumber(A.maxBotTurns) then
  receipt_refused(K, A, 'bot-turn-limit', now)
  return { STATUS.GATED, 'bot-turn-limit' }
end
local backlog = fresh and 0 or redis.call('XLEN', K.inbox)
if backlog >= tonumber(A.maxBacklog) then
  receipt_refused(K, A, 'backlog-full', now)
  return { STATUS.BACKLOG_FULL, backlog }
end

-- Before the state's first write: keep_alive tells a thread already kept alive by the state's TTL. A
-- fresh thread has nothing to keep alive; its state's first write (the ring below) starts it at 0-0.
if not fresh then keep_alive(K, ttl) end
-- One read of the state for the sequence number and the ring below (nothing between changes them).
local st = fresh and {}
  or redis.call('HMGET', K.state, 'status', 'paused', 'owner', 'steer', 'batch', 'seq', 'epoch')
local seq = (tonumber(st[6]) or 0) + 1
local sid = redis.call('XADD', K.inbox, '*', 'seq', seq, 'id', A.messageId, 'tok', A.tokens, 'org', A.origin,
  'at', now, 'body', A.body, 'lane', A.lane)
-- The dedup window is at most the idle time (its own keys expire with it).
dedup_remember(K, A.dedupMember, sid, now, A.dedupTtlMs, fresh)
receipt_accepted(K, A, sid, now, fresh)
-- Written only when it changes: a person's messages in a thread we are in leave the gate as it is.
if A.origin == 'agent' then
  if gate[1] ~= '1' then redis.call('HSET', K.gate, 'involved', '1') end
  redis.call('HINCRBY', K.gate, 'botTurns', 1)
elseif gate[1] ~= '1' or gate[2] ~= '0' then
  redis.call('HSET', K.gate, 'involved', '1', 'botTurns', '0')
end
note_activity(K, A.member, now, tonumber(A.idleTtlMs))

if (not st[1] or st[1] == 'idle') and st[2] ~= '1' then
  local epoch = (tonumber(st[7]) or 0) + 1
  -- A fresh state starts with nothing read or acknowledged, as keep_alive would have written it.
  local start = fresh and { 'acked', '0-0', 'read', '0-0' } or {}
  redis.call('HSET', K.state, 'seq', seq, 'epoch', epoch, 'status', 'scheduled', 'turns', 0, unpack(start))
  redis.call('ZADD', K.sched, now, A.member)
  return { STATUS.RING, sid, seq, epoch, st[3] or '' }
end
redis.call('HSET', K.state, 'seq', seq)
-- A running turn whose holder steers (the steer script armed it for this batch) hears of the arrival on
-- the control channel; a thread that does not steer never has `steer` set, so it costs nothing more.
if st[1] == 'running' and st[4] and st[4] == st[5] then
  redis.call('PUBLISH', A.controlChannel, cjson.encode({ thread = A.thread, action = 'steer' }))
end
return { STATUS.QUEUED, sid, seq }
