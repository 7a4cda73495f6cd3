-- Session affinity: hands a doorbell straight to the worker that holds the thread's live agent
-- session while that worker announces itself alive and taking doorbells ('1', worker-presence.ts). It
-- runs the doorbell in its next free slot: at once when one is free, and under load, when a slot frees,
-- which comes sooner than the fallback and spares the thread a new agent session. The caller always
-- adds a shared-queue doorbell as well (delayed by the affinity wait when this one was handed over),
-- so a worker that dies or stalls after this point delays the thread, never strands it.
-- Returns: {OK} handed over | {NOT_FOUND} the worker is gone or shutting down
if redis.call('GET', K.presence) ~= '1' then return { STATUS.NOT_FOUND } end
push_doorbell(K.doorbells, A.doorbell, A.ttlMs)
return { STATUS.OK }
