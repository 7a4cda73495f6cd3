-- uses: core, replies
-- The notice of a batch that defer-5.lua put back, sent by the worker that put it back once the batch
-- has waited long enough, when no worker has tried it since (a worker whose agent cannot start takes
-- no threads, so none may): only while `batch` is still in flight, not running and not yet noticed.
-- Returns: {OK, 1 when the notice was queued}
local st = redis.call('HMGET', K.state, 'status', 'batch', 'read', 'acked', 'deferred', 'noticed')
if st[1] == 'running' or st[2] ~= A.batch or st[3] == st[4] or st[5] ~= A.batch or st[6] == A.batch then
  return { STATUS.OK, 0 }
end
enqueue_replies(K, A.member, A.notice, now_ms())
redis.call('HSET', K.state, 'noticed', A.batch)
return { STATUS.OK, 1 }
