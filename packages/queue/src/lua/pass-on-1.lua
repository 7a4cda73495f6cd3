-- uses: core
-- A worker whose slots are all busy passes on the doorbells handed to it (its own list) that have
-- waited longer than the affinity wait, oldest first, so that another worker runs those threads; the
-- caller rings the shared queue with each. 0 passes on every one (a worker shutting down). Items
-- without `at` (pushed by an older version) count as overdue.
-- Returns: {OK, doorbell...}
local due = now_ms() - tonumber(A.waitMs)
local passed = { STATUS.OK }
while true do
  local head = redis.call('LINDEX', K.doorbells, 0)
  if not head then break end
  local at = tonumber(cjson.decode(head).at) or 0
  if at > due then break end
  redis.call('LPOP', K.doorbells)
  passed[#passed + 1] = head
end
return passed
