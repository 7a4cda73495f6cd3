-- uses: core, batches
-- Receipts: where each message went (accepted, refused, taken into a batch), and rewriting an inbox
-- entry for an edit.

-- Receipts and edits of buffered messages (docs/adr/0019-edits-deletes-and-receipts.md) ---------------

-- A receipt is a small JSON record per platform message id: `sid` (its inbox entry), `edits` (edits
-- applied in place while it was buffered), `editSid` (the latest edit that came after dispatch, as an
-- event of its own), `deleted` ('buffered' | 'dispatched'), `refused` (why ingress refused it).
local function read_receipt(k, message_id)
  local raw = redis.call('HGET', k.receipts, message_id)
  if raw then return cjson.decode(raw) end
  return nil
end

-- Steering (docs/adr/0040): the entries a steer took into the batch after `through`, the last one the
-- running turn received, up to `read` (the agent refused them, or the turn had ended) go back in line:
-- `read` returns to `through`. A delete that came while they were taken was recorded as one of a
-- dispatched message (revise-8.lua cannot tell a taken entry from a received one); now that they are
-- buffered again it removes them, as it would have then. `read` is the state's, as the caller read it.
local function untake(k, through, read)
  if not id_later(read, through) then return end
  local entries = redis.call('XRANGE', k.inbox, '(' .. through, read)
  for i = 1, #entries do
    local sid, message_id = entries[i][1], entry_field(entries[i], 2)
    local receipt = read_receipt(k, message_id)
    if receipt and receipt.deleted == 'dispatched' and (receipt.editSid or receipt.sid) == sid then
      redis.call('XDEL', k.inbox, sid)
      -- As revise-8.lua: removing an edit's own event leaves the original it edits dispatched.
      if sid == receipt.sid then
        receipt.deleted = 'buffered'
        redis.call('HSET', k.receipts, message_id, cjson.encode(receipt))
      end
    end
  end
  redis.call('HSET', k.state, 'read', through)
end

-- At most `receiptsMax` receipts per thread, the oldest dropped first. While the thread holds a message
-- (its state has no TTL) they are kept, so an edit still finds a buffered message however long it
-- waits; otherwise they expire `receiptTtlMs` (at most the idle time) after the latest write.
-- `kept_alive`: the caller has just kept the thread alive (keep_alive), so its state has no TTL.
-- `first`: the thread had no receipts, so this one cannot be over the bound.
local function write_receipt(k, a, message_id, receipt, now, kept_alive, first)
  redis.call('HSET', k.receipts, message_id, cjson.encode(receipt))
  redis.call('ZADD', k.receiptOrder, 'NX', now, message_id)
  -- Indexed by message id for the operators' search (docs/adr/0028-finding-a-message-without-its-thread.md);
  -- a member whose receipt is gone is skipped by the reader, and one past the TTL trimmed here.
  local indexed = message_id .. '/' .. a.member
  redis.call('ZADD', k.receiptids, 0, indexed)
  redis.call('ZADD', k.receiptidsage, now, indexed)
  local old = trim_before(k.receiptidsage, now - tonumber(a.receiptTtlMs), TRIM_PER_WRITE)
  if #old > 0 then redis.call('ZREM', k.receiptids, unpack(old)) end
  local over = first and 0 or redis.call('ZCARD', k.receiptOrder) - tonumber(a.receiptsMax)
  if over > 0 then
    local dropped = redis.call('ZPOPMIN', k.receiptOrder, over)
    for i = 1, #dropped, 2 do redis.call('HDEL', k.receipts, dropped[i]) end
  end
  if not kept_alive and redis.call('PTTL', k.state) ~= -1 then
    redis.call('PEXPIRE', k.receipts, a.receiptTtlMs)
    redis.call('PEXPIRE', k.receiptOrder, a.receiptTtlMs)
  end
end

-- Records that a message addressed to us was refused (a gate, the backlog cap), unless it was accepted
-- meanwhile (a platform retry that got in), whose receipt says so.
local function receipt_refused(k, a, reason, now)
  local receipt = read_receipt(k, a.messageId)
  if receipt and receipt.sid then return end
  write_receipt(k, a, a.messageId, { refused = reason }, now)
end

-- Records an accepted message at `sid`: a new one, or (`edit`) an edit that came after dispatch. Only
-- enqueue accepts, after its keep_alive; `fresh`: the thread had no keys (so no receipts) before.
local function receipt_accepted(k, a, sid, now, fresh)
  local receipt = { sid = sid }
  if a.edit == '1' then
    receipt = (not fresh and read_receipt(k, a.messageId)) or {}
    receipt.editSid = sid
  end
  write_receipt(k, a, a.messageId, receipt, now, true, fresh)
end

-- Replaces the fields named in `changes` of inbox entry `sid`, keeping its id and so its place in line.
-- A stream entry cannot be changed, so the entries from `sid` on are deleted and added again under
-- their own ids: XSETID lowers the stream's last id for that and restores it after, so no id is ever
-- issued twice. The work is proportional to the entries behind `sid` and their size, so it is done
-- only within `max_entries` and `max_bytes` of bodies; past them it returns false and changes nothing.
local function rewrite_entry(inbox, sid, changes, max_entries, max_bytes)
  local tail = redis.call('XRANGE', inbox, sid, '+', 'COUNT', max_entries + 1)
  if #tail > max_entries then return false end
  local bytes = 0
  for i = 1, #tail do
    local fields = tail[i][2]
    for f = 2, #fields, 2 do bytes = bytes + #fields[f] end
  end
  if bytes > max_bytes then return false end
  local last = stream_last_id(inbox)
  delete_entries(inbox, tail)
  local before = id_before(sid)
  redis.call('XSETID', inbox, before, 'MAXDELETEDID', before)
  local fields = tail[1][2]
  for i = 1, #fields, 2 do
    if changes[fields[i]] ~= nil then fields[i + 1] = changes[fields[i]] end
  end
  for i = 1, #tail do redis.call('XADD', inbox, tail[i][1], unpack(tail[i][2])) end
  redis.call('XSETID', inbox, last)
  return true
end
