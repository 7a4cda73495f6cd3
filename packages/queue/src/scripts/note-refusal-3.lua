-- Records that ingress refused a message addressed to us (a gate, the backlog cap), unless the
-- message was accepted meanwhile (a platform retry that got in), whose receipt says so.
-- Returns: {OK}
local receipt = read_receipt(K, A.messageId)
if receipt and receipt.sid then return { STATUS.OK } end
write_receipt(K, A, A.messageId, { refused = A.reason }, now_ms())
return { STATUS.OK }
