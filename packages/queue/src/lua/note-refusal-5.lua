-- uses: core, receipts
-- Records that ingress refused a message addressed to us before its enqueue (lib/receipts.lua's receipt_refused).
-- Returns: {OK}
receipt_refused(K, A, A.reason, now_ms())
return { STATUS.OK }
