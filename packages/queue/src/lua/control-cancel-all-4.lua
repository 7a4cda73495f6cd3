-- uses: core, dead, dedup
-- `/cancel-all` (and the admin API's cancel-all): drops the messages waiting behind the in-flight batch
-- (never the batch itself) and tells whichever worker runs the thread's turn to stop it. Once per
-- delivery (lib/dedup.lua's first_delivery), in one script with the drop and the cancel: a retry cannot drop
-- the messages that arrived since, nor cancel a later turn.
-- KEYS: state, inbox, dedup, dedupUntil
-- ARGV: dedupMember ('' for none), dedupTtlMs, controlChannel, thread
-- Returns: {OK, dropped count} | {DUPLICATE}
if not first_delivery(K, A.dedupMember, 'cancel-all', now_ms(), A.dedupTtlMs) then
  return { STATUS.DUPLICATE }
end
local dropped = drop_buffered(K)
redis.call('PUBLISH', A.controlChannel, cjson.encode({ thread = A.thread, action = 'cancel' }))
return { STATUS.OK, dropped }
