-- uses: core
-- Session affinity: hands a doorbell straight to the worker that holds the thread's live agent
-- session while that worker announces itself alive and taking doorbells ('1', worker-presence.ts). It
-- runs the doorbell in its next free slot: at once when one is free, and under load, when a slot frees.
-- A doorbell that waits there longer than the affinity wait is passed on to the shared queue by that
-- worker (pass-on); one left by a worker that died or froze is re-rung by the sweeper. `at` is what
-- both go by.
-- Returns: {OK} handed over | {NOT_FOUND} the worker is gone or shutting down
if redis.call('GET', K.presence) ~= '1' then return { STATUS.NOT_FOUND } end
local doorbell = cjson.encode({ thread = A.thread, epoch = tonumber(A.epoch), at = now_ms() })
push_doorbell(K.doorbells, doorbell, A.ttlMs)
return { STATUS.OK }
