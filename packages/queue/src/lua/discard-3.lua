-- An operator drops one dead-lettered batch for good (its messages are not re-driven).
-- Returns: {OK, message count} | {NOT_FOUND}
local record = take_record(K.dead, K.deadindex, K.deadreasons, A.member, 'batchId', A.batchId)
if not record then return { STATUS.NOT_FOUND } end
return { STATUS.OK, #record.messages }
