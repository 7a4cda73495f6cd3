-- uses: core, dead
-- An operator drops one dead reply for good (it is never delivered).
-- Returns: {OK} | {NOT_FOUND}
if not dead_take(dead_reply_set(K), A.member, A.id) then
  return { STATUS.NOT_FOUND }
end
return { STATUS.OK }
