-- uses: core, dead
-- Moves one thread's dead letters or dead replies (`kind`) from the previous layout, a JSON list of the
-- thread's own counted by raw reason in its bucket, into the bucket's set (lib/dead.lua's dead_migrate); a
-- thread that has none left there costs one EXISTS. Readers call it before reading a thread's items.
-- KEYS: the thread's legacy list, the bucket's legacyReasons; the set's index, records, threads,
-- classof, classes.
-- Returns: {OK}
dead_migrate(dead_set(K, A.kind), A.member)
return { STATUS.OK }
