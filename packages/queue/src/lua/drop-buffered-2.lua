-- Drops the messages waiting behind the in-flight batch; the in-flight batch itself is untouched.
-- Returns: {OK, dropped count}
return { STATUS.OK, drop_buffered(K) }
