-- uses: core
-- The thread's dedup window: each idempotency key seen, and when it expires.

-- The dedup window of a thread (docs/adr/0023-broker-cost.md) ----------------------------------------

-- One index per thread instead of a key per message: `dedup` maps an idempotency key (as thread-keys.ts's
-- dedupMember shortens it) to the stream id it was accepted at, `dedupUntil` scores it by expiry. A key
-- past its expiry counts as unseen whether or not it has been trimmed yet.
local function dedup_seen(k, key, now)
  local expiry = redis.call('ZSCORE', k.dedupUntil, key)
  if expiry and tonumber(expiry) > now then return redis.call('HGET', k.dedup, key) end
  return false
end

-- Remembers `key` as accepted at `sid` for `window_ms`, trims expired keys, and lets the whole index
-- expire with its latest key: the window is the same for every key, so that is `window_ms` from now.
-- `fresh`: the index did not exist, so there is nothing to trim.
local function dedup_remember(k, key, sid, now, window_ms, fresh)
  if not fresh then
    local expired = trim_before(k.dedupUntil, now, TRIM_PER_WRITE)
    if #expired > 0 then redis.call('HDEL', k.dedup, unpack(expired)) end
  end
  redis.call('HSET', k.dedup, key, sid)
  redis.call('ZADD', k.dedupUntil, now + tonumber(window_ms), key)
  redis.call('PEXPIRE', k.dedup, window_ms)
  redis.call('PEXPIRE', k.dedupUntil, window_ms)
end

-- A control command's delivery (docs/adr/0042-control-commands-once-per-delivery.md): whether it is the
-- first within the thread's dedup window, remembered (as `command`) if so. Called by the script that
-- applies the command, before it acts: a retry, or a second delivery racing the first, then finds it and
-- applies nothing; a delivery whose script never ran (Redis down) left nothing, so its retry applies.
-- `key` '' (an admin action sent without an Idempotency-Key) is always first and never remembered.
local function first_delivery(k, key, command, now, window_ms)
  if key == '' then return true end
  if dedup_seen(k, key, now) then return false end
  dedup_remember(k, key, command, now, window_ms, false)
  return true
end
