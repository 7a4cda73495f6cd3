-- uses: core, dedup, receipts
-- An edit (`action` edit: the new `body` and `tokens`) or a delete of a platform message the thread
-- accepted. Its latest entry (its own, or that of an edit which came after dispatch) is changed only
-- while it is still buffered: after `read`, so no worker has it. Then an edit replaces the entry's body
-- in place (same id, same place in line) and a delete removes it. Once dispatched, nothing in the inbox
-- changes: the caller enqueues an edit as an event of its own, and a delete is only recorded. An edit
-- that would rewrite more than `rewriteMax` entries (itself and those behind it) or `rewriteMaxBytes` is
-- answered as dispatched too (the rewrite would hold Redis too long). `dedupMember` (the edit's or
-- delete's own identity) absorbs a redelivery.
-- Returns: {OK, stream id} | {DISPATCHED} | {NOT_FOUND} | {DUPLICATE, stream id}
local now = now_ms()
local seen = dedup_seen(K, A.dedupMember, now)
if seen then return { STATUS.DUPLICATE, seen } end
local receipt = read_receipt(K, A.messageId)
local target = receipt and not receipt.deleted and (receipt.editSid or receipt.sid)
if not target then return { STATUS.NOT_FOUND } end

local read = redis.call('HGET', K.state, 'read') or '0-0'
if not id_later(target, read) then
  if A.action == 'delete' then
    receipt.deleted = 'dispatched'
    write_receipt(K, A, A.messageId, receipt, now)
    dedup_remember(K, A.dedupMember, target, now, A.dedupTtlMs)
  end
  return { STATUS.DISPATCHED }
end
-- Buffered no more without being dispatched: dropped by /cancel-all or /reset.
if #redis.call('XRANGE', K.inbox, target, target) == 0 then return { STATUS.NOT_FOUND } end

if A.action == 'delete' then
  redis.call('XDEL', K.inbox, target)
  -- Removing an edit's own event leaves the original it edits dispatched.
  if target == receipt.sid then receipt.deleted = 'buffered' else receipt.deleted = 'dispatched' end
else
  local changes = { body = A.body, tok = A.tokens }
  if not rewrite_entry(K.inbox, target, changes, tonumber(A.rewriteMax), tonumber(A.rewriteMaxBytes)) then
    return { STATUS.DISPATCHED }
  end
  receipt.edits = (receipt.edits or 0) + 1
end
write_receipt(K, A, A.messageId, receipt, now)
dedup_remember(K, A.dedupMember, target, now, A.dedupTtlMs)
return { STATUS.OK, target }
