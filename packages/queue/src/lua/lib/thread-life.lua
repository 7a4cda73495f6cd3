-- uses: core, batches
-- A thread's life between turns: activity and expiry, scheduling, and what a turn's end does to its
-- state (acknowledging the batch, then pausing, releasing, yielding or handing over the next one).

-- Records the thread's latest activity in its bucket's activity index (the operators' list of threads),
-- dropping members whose keys have expired meanwhile (no activity for `idle_ms`).
local function note_activity(k, member, now, idle_ms)
  redis.call('ZADD', k.activity, now, member)
  trim_before(k.activity, now - idle_ms, TRIM_PER_WRITE)
end

local function set_idle(k, thread, now, idle_ms)
  redis.call('HSET', k.state, 'status', 'idle', 'turns', 0)
  redis.call('ZREM', k.run, thread)
  redis.call('ZREM', k.sched, thread)
  note_activity(k, thread, now, idle_ms)
end

-- An idle thread with nothing buffered or in flight: its state, inbox, history, gate and receipts expire
-- `idle_ms` from now unless a message comes first (enqueue persists them again; its dedup index never
-- outlives `idle_ms` either). Memory stays bounded by the threads active within that time.
local function expire_idle(k, idle_ms)
  redis.call('PEXPIRE', k.state, idle_ms)
  redis.call('PEXPIRE', k.inbox, idle_ms)
  redis.call('PEXPIRE', k.history, idle_ms)
  redis.call('PEXPIRE', k.gate, idle_ms)
  redis.call('PEXPIRE', k.receipts, idle_ms)
  redis.call('PEXPIRE', k.receiptOrder, idle_ms)
end

-- A thread that holds a message again: nothing of it expires while the message waits or runs (only an
-- idle thread's keys do, expire_idle), and a state written afresh (its keys had expired) starts with
-- nothing read or acknowledged, as the claim expects. Only expire_idle gives these keys a TTL, to all six
-- at once, and only this takes them off, all six at once (write_receipt adds one to the receipts only
-- while the state has one or is gone): so a state without a TTL means none has one and its `acked` is
-- set, and a thread that already holds messages costs one PTTL here instead of seven commands.
-- `ttl`: the state's PTTL, when the caller has read it already.
local function keep_alive(k, ttl)
  ttl = ttl or redis.call('PTTL', k.state)
  if ttl == -1 then return end
  -- -2: no state (a new thread, or its keys expired); usually none of the others is there either.
  if ttl ~= -2 or redis.call('EXISTS', k.gate, k.inbox, k.history, k.receipts, k.receiptOrder) > 0 then
    redis.call('PERSIST', k.gate)
    redis.call('PERSIST', k.inbox)
    redis.call('PERSIST', k.history)
    redis.call('PERSIST', k.receipts)
    redis.call('PERSIST', k.receiptOrder)
  end
  if ttl == -2 then
    redis.call('HSET', k.state, 'acked', '0-0', 'read', '0-0')
    return
  end
  redis.call('PERSIST', k.state)
  if redis.call('HEXISTS', k.state, 'acked') == 0 then
    redis.call('HSET', k.state, 'acked', '0-0', 'read', '0-0')
  end
end

-- Puts the thread back in line for a new doorbell; `not_before` lets the sweeper wait for a delay.
local function reschedule(k, thread, not_before)
  local epoch = redis.call('HINCRBY', k.state, 'epoch', 1)
  redis.call('HSET', k.state, 'status', 'scheduled', 'turns', 0)
  redis.call('ZREM', k.run, thread)
  redis.call('ZADD', k.sched, not_before, thread)
  return epoch
end

-- The state fields that say who holds the thread and what its in-flight batch is, by name: what the
-- holder's check and the batch's record read. A snapshot: read it again after writing the state.
local function batch_state(k)
  local st = redis.call('HMGET', k.state, 'status', 'owner', 'fence', 'acked', 'read', 'batch', 'btype',
    'claimed', 'deliveries', 'alone', 'paused', 'generation')
  return { status = st[1], owner = st[2], fence = st[3], acked = st[4], read = st[5], batch = st[6],
    btype = st[7], claimed = st[8], deliveries = st[9], alone = st[10], paused = st[11], generation = st[12] }
end

-- Marks the in-flight batch done: acked catches up with read and the inbox drops the batch's
-- `entries` (record_batch's). By id, not by XTRIM MINID: an edit writes the entries behind it again
-- under their ids (rewrite_entry), after the deleted originals that XDEL leaves in place while their
-- node holds other entries, and XTRIM stops at the first entry past its bound, deleted or not, so it
-- would leave a rewritten entry of the batch in the inbox. Past the last message of a split batch,
-- batches are whole again.
local function ack_batch(k, entries)
  local st = redis.call('HMGET', k.state, 'read', 'alone')
  local read, alone = st[1], st[2]
  redis.call('HSET', k.state, 'acked', read, 'deliveries', 0, 'failures', 0)
  if alone and not id_later(alone, read) then redis.call('HDEL', k.state, 'alone') end
  delete_entries(k.inbox, entries)
  return read
end

-- After a batch is acked: pause, release when empty (in the same script as the emptiness check, so
-- no wakeup can be lost), yield after `yieldAfterTurns` consecutive turns, or hand over the next batch.
local function continue_after(k, a, now)
  local thread = a.member
  local st = batch_state(k)
  local idle_ms = tonumber(a.idleTtlMs)
  if st.paused == '1' then
    set_idle(k, thread, now, idle_ms)
    return { STATUS.PAUSED }
  end
  local entries = read_batch(k.inbox, st.acked, batch_caps(a, st.alone))
  if #entries == 0 then
    set_idle(k, thread, now, idle_ms)
    expire_idle(k, idle_ms)
    return { STATUS.IDLE }
  end
  local turns = redis.call('HINCRBY', k.state, 'turns', 1)
  if turns >= tonumber(a.yieldAfterTurns) then
    return { STATUS.YIELD, reschedule(k, thread, now) }
  end
  return start_batch(k, thread, a.owner, tonumber(a.fence), tonumber(a.leaseMs), tonumber(a.bucket), now,
    entries, false, STATUS.NEXT, { alone = st.alone, generation = st.generation })
end
