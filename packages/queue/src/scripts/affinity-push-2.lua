-- Session affinity: hands a doorbell straight to the worker that holds the thread's live agent
-- session while that worker announces itself alive and taking doorbells (worker-presence.ts): with a
-- free turn slot ('1') it runs the thread at once; with every slot busy ('busy') it pops the doorbell
-- when a slot frees, which under load comes sooner than the fallback and spares the thread a new agent
-- session. The caller always adds a shared-queue doorbell as well (delayed by the affinity wait when
-- this one was handed over), so a worker that dies or stalls after this point delays the thread,
-- never strands it.
-- Returns: {OK} handed over | {NOT_FOUND} the worker is gone or shutting down
local presence = redis.call('GET', K.presence)
if presence ~= '1' and presence ~= 'busy' then return { STATUS.NOT_FOUND } end
redis.call('RPUSH', K.doorbells, A.doorbell)
redis.call('PEXPIRE', K.doorbells, A.ttlMs)
return { STATUS.OK }
