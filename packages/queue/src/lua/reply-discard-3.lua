-- An operator drops one dead reply for good (it is never delivered).
-- Returns: {OK} | {NOT_FOUND}
if not take_record(K.deadReplies, K.deadreplyindex, K.deadreplyreasons, A.member, 'id', A.id) then
  return { STATUS.NOT_FOUND }
end
return { STATUS.OK }
