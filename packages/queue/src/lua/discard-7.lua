-- uses: core, dead
-- An operator drops one dead-lettered batch for good (its messages are not re-driven).
-- Returns: {OK, message count} | {NOT_FOUND}
local record = dead_take(dead_letter_set(K), A.member, A.batchId)
if not record then return { STATUS.NOT_FOUND } end
return { STATUS.OK, #record.messages }
