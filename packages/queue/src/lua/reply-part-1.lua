-- uses: core
-- Reply delivery: part `part` of a reply reached the platform as message `messageId`. Kept until the
-- reply is done (reply-done deletes it) or `retentionMs`, so a retried reply edits what was posted
-- instead of posting it twice. One script rather than MULTI/HSET/PEXPIRE/EXEC: a round trip of one
-- command, written for every reply part.
-- Returns: {OK}
redis.call('HSET', K.postedParts, A.part, A.messageId)
redis.call('PEXPIRE', K.postedParts, A.retentionMs)
return { STATUS.OK }
