-- Drops the messages waiting behind the in-flight batch; the in-flight batch itself is untouched.
-- KEYS: 1 state, 2 inbox
-- Returns: {OK, dropped count}
return { STATUS.OK, drop_buffered({ state = KEYS[1], inbox = KEYS[2] }) }
