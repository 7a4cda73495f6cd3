-- Session affinity: hands a doorbell straight to the worker that holds the thread's live agent
-- session, but only while that worker announces itself alive with a free turn slot. The caller always
-- adds a shared-queue doorbell as well (delayed by the affinity wait when this one was handed over),
-- so a worker that dies or stalls after this point delays the thread, never strands it.
-- KEYS: 1 presence of the preferred worker, 2 its doorbell list
-- ARGV: 1 doorbell (JSON), 2 list ttl ms
-- Returns: {OK} handed over | {NOT_FOUND} the worker is gone or busy
if redis.call('GET', KEYS[1]) ~= '1' then return { STATUS.NOT_FOUND } end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return { STATUS.OK }
