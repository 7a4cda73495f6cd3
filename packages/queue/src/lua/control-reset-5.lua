-- uses: core, dead, dedup
-- `/reset` (and the admin API's reset): as cancel-all, and the thread's batch history goes and its
-- generation is bumped, which tells workers to start a fresh agent session. Once per delivery
-- (lib/dedup.lua's first_delivery), in one script with its effects: a retry cannot drop the messages that arrived since,
-- nor cancel a later turn. The delivery is remembered even for a thread Redis knows nothing of, whose
-- retry could otherwise reset the conversation a message started meanwhile; no state is created for it.
-- KEYS: state, inbox, history, dedup, dedupUntil
-- ARGV: dedupMember ('' for none), dedupTtlMs, controlChannel, thread
-- Returns: {OK, dropped count, generation} | {NOT_FOUND} | {DUPLICATE}
if not first_delivery(K, A.dedupMember, 'reset', now_ms(), A.dedupTtlMs) then return { STATUS.DUPLICATE } end
if redis.call('EXISTS', K.state) == 0 then return { STATUS.NOT_FOUND } end
local dropped = drop_buffered(K)
redis.call('DEL', K.history)
local generation = redis.call('HINCRBY', K.state, 'generation', 1)
redis.call('PUBLISH', A.controlChannel, cjson.encode({ thread = A.thread, action = 'cancel' }))
return { STATUS.OK, dropped, generation }
