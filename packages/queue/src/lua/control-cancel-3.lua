-- uses: core, dedup
-- `/cancel` (and the admin API's cancel): whichever worker runs the thread's turn is told to stop it, on
-- the control channel; the waiting messages are kept. Once per delivery (lib/dedup.lua's first_delivery): the
-- record of the delivery and the cancel are one script, so a retry cannot cancel a later turn, and a
-- cancel is never recorded without being published.
-- KEYS: state, dedup, dedupUntil
-- ARGV: dedupMember ('' for none), dedupTtlMs, controlChannel, thread
-- Returns: {OK, the thread's status ('' when Redis knows nothing of it)} | {DUPLICATE}
if not first_delivery(K, A.dedupMember, 'cancel', now_ms(), A.dedupTtlMs) then return { STATUS.DUPLICATE } end
redis.call('PUBLISH', A.controlChannel, cjson.encode({ thread = A.thread, action = 'cancel' }))
return { STATUS.OK, redis.call('HGET', K.state, 'status') or '' }
