-- uses: core, dead
-- The workers' periodic trim of one dead set of one bucket (`kind`: letters | replies), for what no
-- write trimmed since: at most `limit` items past `deadTtlMs`, and at most `limit` of the oldest past
-- `deadMaxPerBucket`, each counted in `evicted` (lib/dead.lua's dead_trim).
-- KEYS: the set's index, records, threads, classof, classes; evicted.
-- Returns: {OK, evicted past the TTL, evicted past the cap, 1 when the limit left some | 0}
local ttl, cap, more = dead_trim(dead_set(K, A.kind), now_ms(), dead_bounds(A), tonumber(A.limit))
return { STATUS.OK, ttl, cap, more and 1 or 0 }
